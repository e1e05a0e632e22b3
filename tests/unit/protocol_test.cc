// The executor protocol: the messages on the wire, and the Python side
// (runner/executor/opverify_runtime/executor.py) agreeing with the C++ list:
// a handler for every request, and a protocol comment that names each
// request with the fields the C++ side sends.
#include "runner/executor/protocol.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace opverify::executor_protocol {
namespace {

using nlohmann::json;

std::string RuntimeFile(const std::string& name) {
  std::ifstream in(std::string(OPVERIFY_SOURCE_DIR) + "/runner/executor/opverify_runtime/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The module with the protocol comment and Session.
std::string ExecutorPy() { return RuntimeFile("executor.py"); }

struct DocumentedRequest {
  std::string op;
  std::set<std::string> required, optional;  // fields; "name?" is optional
};

// The "Requests" block of the module's docstring: "  op  {field, field?: ...}",
// a field list possibly continued on more deeply indented lines.
std::vector<DocumentedRequest> DocumentedRequests(const std::string& source) {
  std::vector<DocumentedRequest> out;
  std::istringstream lines(source.substr(0, source.find("\"\"\"", 3)));
  std::string line, fields;
  bool in_block = false;
  auto finish = [&] {
    if (out.empty()) return;
    int depth = 0;
    std::string field;
    auto take = [&] {
      static const std::regex field_name(R"(^\s*(\w+)(\??))");
      std::smatch m;
      if (std::regex_search(field, m, field_name)) {
        (m[2].length() > 0 ? out.back().optional : out.back().required).insert(m[1]);
      }
      field.clear();
    };
    for (char c : fields.substr(0, fields.find('}'))) {
      if (c == '[' || c == '(') ++depth;
      if (c == ']' || c == ')') --depth;
      if (c == ',' && depth == 0) {
        take();
      } else {
        field += c;
      }
    }
    take();
    fields.clear();
  };
  const std::regex request_line(R"(^  (\w+)\s+\{(.*)$)");
  while (std::getline(lines, line)) {
    if (line.rfind("Requests", 0) == 0) {
      in_block = true;
      continue;
    }
    if (!in_block) continue;
    std::smatch m;
    if (std::regex_match(line, m, request_line)) {
      finish();
      out.push_back({m[1], {}, {}});
      fields = m[2];
    } else if (line.rfind("   ", 0) == 0 && !out.empty()) {
      fields += line;
    } else if (!out.empty()) {
      break;  // the block ends at the first line that is neither
    }
  }
  finish();
  return out;
}

// Each request as the C++ side sends it, every optional field present.
std::map<std::string, json> FullRequests() {
  LoadRequest load;
  load.params = {json::object()};
  load.override_spec = {{"op", "torch.softmax"}};
  load.allow_torch = json::array({{{"op", "aten::sort"}, {"why", "a documented use"}}});
  LintRequest lint;
  lint.entries = {"pkg:enabled"};
  lint.allow_torch = load.allow_torch;
  lint.overrides = "torch.softmax";
  load.reference_as_impl = true;
  BenchMeasureRequest measure;
  measure.timing.max_repeats = 100;
  RunCaseRequest run;
  run.golden_sizes = {1};
  run.reference_writes = {"0"};
  return {{std::string(LoadRequest::kOp), load},
          {std::string(DescribeCasesRequest::kOp), DescribeCasesRequest{}},
          {std::string(RunCaseRequest::kOp), run},
          {std::string(EnvironmentRequest::kOp), EnvironmentRequest{}},
          {std::string(LintRequest::kOp), lint},
          {std::string(BenchPrepareRequest::kOp), BenchPrepareRequest{}},
          {std::string(BenchMeasureRequest::kOp), measure},
          {std::string(BenchReleaseRequest::kOp), BenchReleaseRequest{}},
          {std::string(BenchTransferRequest::kOp), BenchTransferRequest{}},
          {std::string(PingRequest::kOp), PingRequest{}}};
}

TEST(Protocol, EveryRequestHasAStructAndItsOp) {
  const std::map<std::string, json> requests = FullRequests();
  ASSERT_EQ(requests.size(), kRequestNames.size());
  for (std::string_view name : kRequestNames) {
    const auto found = requests.find(std::string(name));
    ASSERT_NE(found, requests.end()) << name;
    EXPECT_EQ(RequestOp(found->second), name);
  }
}

TEST(Protocol, RequestsOnTheWireAreAsTheExecutorReadsThem) {
  LoadRequest load;
  load.task_file = "/ops/relu_torch.py";
  load.impl_file = "/ops/relu_impl.py";
  load.seed = 7;
  load.edge_cases = true;
  EXPECT_EQ(json(load).dump(),
            R"({"backend":"auto","edge_cases":true,"ghost_replay":false,"golden_precision":"native",)"
            R"("impl_file":"/ops/relu_impl.py","library":[],"op":"load","python_path":[],)"
            R"("role":"both","runtime_checks":false,"seed":7,"task_file":"/ops/relu_torch.py"})");
  EXPECT_FALSE(json(load).contains("override"));  // null: a task and an implementation file
  load.override_spec = {{"op", "torch.softmax"}};
  EXPECT_EQ(json(load).get<LoadRequest>().override_spec, load.override_spec);
  load.params = {{{"n", 4}}};
  EXPECT_EQ(json(load).at("params"), json::parse(R"([{"n": 4}])"));

  RunCaseRequest run;
  run.index = 2;
  run.seed = 43;
  run.probe = true;
  EXPECT_EQ(json(run).dump(),
            R"({"check_determinism":false,"evidence":true,"index":2,"op":"run_case","probe":true,"seed":43})");
  // To an implementation's executor: what it may know of the reference's golden.
  run.golden_sizes = {6};
  run.reference_writes = {"0"};
  EXPECT_EQ(json(run).at("golden_sizes"), json::array({6}));
  EXPECT_EQ(json(run).get<RunCaseRequest>().reference_writes, run.reference_writes);
  LintRequest lint;
  lint.file = "/ops/relu_impl.py";
  lint.non_compute = true;
  lint.library = {"lib"};
  lint.python_path = {"/src"};
  EXPECT_EQ(json(lint).dump(),
            R"({"file":"/ops/relu_impl.py","library":["lib"],"non_compute":true,"op":"lint",)"
            R"("python_path":["/src"]})");
  EXPECT_EQ(json(EnvironmentRequest{}).dump(), R"({"op":"environment"})");

  BenchMeasureRequest measure;
  measure.side = "framework";
  EXPECT_FALSE(json(measure).contains("max_repeats"));  // 0: the executor's own default
  measure.timing.max_repeats = 200;
  EXPECT_EQ(json(measure).dump(),
            R"({"adaptive":false,"max_repeats":200,"max_seconds":60.0,"op":"bench_measure",)"
            R"("profile_iterations":10,"repeats":50,"rse_target":0.01,"side":"framework"})");
}

TEST(Protocol, RequestsReadBackAsSent) {
  RunCaseRequest run;
  run.index = 5;
  run.seed = 1ULL << 40;
  run.check_determinism = true;
  run.evidence = false;
  const auto back = json(run).get<RunCaseRequest>();
  EXPECT_EQ(back.index, 5);
  EXPECT_EQ(back.seed, 1ULL << 40);
  EXPECT_TRUE(back.check_determinism);
  EXPECT_FALSE(back.evidence);
}

TEST(Protocol, RepliesTakeDefaultsForWhatTheExecutorLeftOut) {
  // A failed load that had counted the cases.
  const auto load = json::parse(R"({"ok": false, "error_type": "ImportError", "case_count": 4})")
                        .get<LoadReply>();
  EXPECT_EQ(load.case_count, 4);
  EXPECT_TRUE(load.edge_cases.empty());
  const auto status =
      json::parse(R"({"ok": false, "error_type": "ImportError"})").get<ReplyStatus>();
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.error_type, "ImportError");
  EXPECT_FALSE(status.device_poisoned);
  // No reply at all (the executor died): every field its default.
  EXPECT_EQ(json().get<LoadReply>().case_count, 0);
  const auto run =
      json::parse(
          R"({"ok": true, "fallback_reason": null, "warnings": ["w"], "regression_type": 2})")
          .get<RunCaseReply>();
  EXPECT_FALSE(run.fallback_reason.has_value());
  EXPECT_EQ(run.warnings, std::vector<std::string>{"w"});
  EXPECT_EQ(run.regression_type, 2);
  EXPECT_TRUE(run.probe.is_null());
  const auto measure =
      json::parse(R"({"ok": true, "peak_memory_mb": null, "stats": {"median_ms": 1.5}})")
          .get<BenchMeasureReply>();
  EXPECT_FALSE(measure.peak_memory_mb.has_value());
  EXPECT_EQ(measure.stats.at("median_ms"), 1.5);
}

TEST(Protocol, TensorDescriptionsReadBackAsShipped) {
  const TensorDescription shipped{"bfloat16", {2, 3}, 128, 12};
  const auto back = json(shipped).get<TensorDescription>();
  EXPECT_EQ(back.dtype, "bfloat16");
  EXPECT_EQ(back.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(back.offset, 128);
  EXPECT_EQ(back.nbytes, 12);
}

TEST(PythonExecutor, HandlesEveryRequestAndNoOther) {
  // Session's handlers: its own, and the benchmark requests it inherits.
  const std::string source = ExecutorPy() + RuntimeFile("bench_requests.py");
  ASSERT_FALSE(ExecutorPy().empty());
  ASSERT_FALSE(RuntimeFile("bench_requests.py").empty());
  std::set<std::string> handled;
  const std::regex handler(R"(\n    def op_(\w+)\(self, request\):)");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), handler);
       it != std::sregex_iterator(); ++it) {
    handled.insert((*it)[1]);
  }
  const std::set<std::string> names(kRequestNames.begin(), kRequestNames.end());
  EXPECT_EQ(handled, names);
}

TEST(PythonExecutor, ItsProtocolCommentListsEveryRequestWithTheFieldsSent) {
  const std::vector<DocumentedRequest> documented = DocumentedRequests(ExecutorPy());
  std::vector<std::string> ops;
  for (const auto& d : documented) ops.push_back(d.op);
  EXPECT_EQ(ops, std::vector<std::string>(kRequestNames.begin(), kRequestNames.end()));

  const std::map<std::string, json> requests = FullRequests();
  const std::map<std::string, json> minimal = {
      {"load", LoadRequest{}}, {"lint", LintRequest{}}, {"bench_measure", BenchMeasureRequest{}},
      {"run_case", RunCaseRequest{}}};
  for (const auto& d : documented) {
    const auto full = requests.find(d.op);
    ASSERT_NE(full, requests.end()) << d.op;
    std::set<std::string> sent, always;
    for (const auto& [key, value] : full->second.items()) sent.insert(key);
    sent.erase("op");
    const auto least = minimal.find(d.op);
    for (const auto& [key, value] : (least != minimal.end() ? least->second : full->second).items())
      always.insert(key);
    always.erase("op");
    std::set<std::string> all = d.required;
    all.insert(d.optional.begin(), d.optional.end());
    EXPECT_EQ(all, sent) << d.op << ": the comment's fields differ from those the C++ side sends";
    EXPECT_EQ(d.required, always) << d.op << ": a field marked '?' is one sent only sometimes";
  }
}

}  // namespace
}  // namespace opverify::executor_protocol
