// RunOperator against a scripted executor: what a user sees when a case
// passes, fails, crashes, hangs or poisons the device, when the
// implementation does not import or the lint refuses it, and how executors
// are restarted, pooled and refused when tainted.
#include "runner/verify/operator_run.h"

#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <set>

#include "runner/verify/case_runs.h"
#include "runner/verify/executor_session.h"
#include "tests/support/fake_executor.h"

namespace opverify {
namespace {

using nlohmann::json;
using testing::FakeExecutor;
using testing::FakeExecutorScript;
using testing::FakeHandler;
using testing::FakeReply;
using testing::Outputs;
namespace proto = executor_protocol;

FakeReply Loaded(int case_count) {
  proto::LoadReply load;
  load.case_count = case_count;
  load.backend = "cpu";
  return FakeReply::Ok(json(load));
}

// A case run whose output matches the reference.
FakeReply Matches(int index) {
  proto::RunCaseReply reply;
  reply.input_desc = json::array({{{"shape", {3}}, {"dtype", "float32"}, {"case", index}}});
  reply.input_dtypes = {"float32"};
  reply.input_digest = "inputs-" + std::to_string(index);
  reply.golden_device = "cpu";
  return FakeReply::Ok(json(reply), Outputs({1, 2, 3}, {1, 2, 3}));
}

// An executor that loads `case_count` cases, lints clean and runs every case right.
void Healthy(FakeExecutorScript* script, int case_count) {
  script->On("load", [case_count](const json&, const FakeExecutor&) { return Loaded(case_count); });
  script->On("lint", [](const json&, const FakeExecutor&) { return FakeReply::Ok({{"lint", {{"valid", true}}}}); });
  script->On("environment", [](const json&, const FakeExecutor&) {
    return FakeReply::Ok({{"environment", {{"device", {{"name", "fake device"}, {"backend", "cpu"}}}}}});
  });
  script->On("run_case", [](const json& request, const FakeExecutor&) { return Matches(request.at("index").get<int>()); });
}

OperatorSpec Spec() {
  OperatorSpec spec;
  spec.name = "add";
  spec.code.task_file = "/ops/add_torch.py";
  spec.code.impl_file = "/ops/add_triton_ascend_impl.py";
  spec.config.seeds = 1;
  return spec;
}

RunOptions Options(FakeExecutorScript* script) {
  RunOptions options;
  options.backend = "cpu";
  options.start_executor = script->Factory();
  return options;
}

std::vector<std::string> ErrorTypes(const OperatorOutcome& outcome) {
  std::vector<std::string> types;
  for (const CaseOutcome& c : outcome.cases) types.push_back(c.error_type);
  return types;
}

TEST(RunOperator, TheRuntimeEvidenceIsAskedForWithTheLintOff) {
  FakeExecutorScript script;
  Healthy(&script, 1);
  OperatorSpec spec = Spec();
  spec.config.lint = false;
  spec.config.library = {"mylib"};
  spec.config.python_path = {"/src/vendor"};
  RunOperator(spec, Options(&script));
  const json load = script.RequestsOf("load").at(0).request;
  EXPECT_TRUE(load.at("runtime_checks").get<bool>());  // its own switch
  EXPECT_EQ(load.at("library"), json::array({"mylib"}));
  EXPECT_EQ(load.at("python_path"), json::array({"/src/vendor"}));
  EXPECT_FALSE(load.contains("override"));
  EXPECT_TRUE(script.RequestsOf("lint").empty());
}

TEST(RunOperator, AnOverrideOperatorSendsItsEntryAndLintsItsEnableCallables) {
  FakeExecutorScript script;
  Healthy(&script, 2);
  OperatorSpec spec = Spec();
  spec.code.task_file = spec.code.impl_file = "";
  spec.config.library = {"mylib"};
  spec.code.override_spec = {{"op", "torch.softmax"},
                             {"enable", {{"enter", "mylib:on"}, {"exit", "mylib:off"}}},
                             {"args", json::array({{{"shape", {4}}}, -1})}};
  const OperatorOutcome outcome = RunOperator(spec, Options(&script));
  EXPECT_EQ(outcome.passed_cases(), 2);
  EXPECT_EQ(script.RequestsOf("load").at(0).request.at("override"), spec.code.override_spec);
  const json lint = script.RequestsOf("lint").at(0).request;
  EXPECT_EQ(lint.at("entries"), json::array({"mylib:on", "mylib:off"}));
  EXPECT_EQ(lint.at("library"), json::array({"mylib"}));
  EXPECT_EQ(lint.at("file"), "");
}

TEST(RunOperator, RunsEveryCaseInOneExecutorAfterTheLint) {
  FakeExecutorScript script;
  Healthy(&script, 3);
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(outcome.passed_cases(), 3);
  EXPECT_EQ(outcome.case_count, 3);
  EXPECT_EQ(script.started(), 1);
  std::vector<std::string> ops;
  for (const auto& sent : script.requests()) ops.push_back(proto::RequestOp(sent.request));
  EXPECT_EQ(ops, (std::vector<std::string>{"load", "lint", "environment", "run_case", "run_case", "run_case"}));
  EXPECT_EQ(script.RequestsOf("lint").at(0).request.at("file"), "/ops/add_triton_ascend_impl.py");
  EXPECT_EQ(script.RequestsOf("load").at(0).request.at("backend"), "cpu");
  EXPECT_EQ(outcome.cases.at(2).device_name, "fake device");
  EXPECT_EQ(outcome.cases.at(2).input_desc.at(0).at("case"), 2);
  // The probe runs once, before the first case.
  EXPECT_TRUE(script.RequestsOf("run_case").at(0).request.at("probe").get<bool>());
  EXPECT_FALSE(script.RequestsOf("run_case").at(1).request.at("probe").get<bool>());
}

TEST(RunOperator, HandsTheCallbackEachCaseWithItsTensors) {
  FakeExecutorScript script;
  Healthy(&script, 2);
  int seen = 0;
  RunOperator(Spec(), Options(&script), [&](const CaseOutcome& c) {
    ASSERT_EQ(c.tensors.size(), 1U);
    EXPECT_EQ(c.tensors[0].second.NumElements(), 3);
    ASSERT_NE(c.environment, nullptr);
    ++seen;
  });
  EXPECT_EQ(seen, 2);
}

TEST(RunOperator, AWrongOutputFailsItsCaseAloneAndKeepsTheExecutor) {
  FakeExecutorScript script;
  Healthy(&script, 3);
  script.On("run_case", [](const json& request, const FakeExecutor&) {
    if (request.at("index") != 1) return Matches(request.at("index").get<int>());
    return FakeReply::Ok({{"input_dtypes", {"float32"}}}, Outputs({1, 2, 3}, {1, 2, 30}));
  });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"", "AccuracyError", ""}));
  EXPECT_EQ(script.started(), 1);
}

TEST(RunOperator, ACrashFailsItsCaseAndTheRestRunInANewExecutor) {
  FakeExecutorScript script;
  Healthy(&script, 3);
  script.On("run_case", [](const json& request, const FakeExecutor& executor) {
    if (request.at("index") == 1 && executor.id() == 1) return FakeReply::Died(SIGSEGV);
    return Matches(request.at("index").get<int>());
  });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"", "Crash", ""}));
  EXPECT_NE(outcome.cases[1].error_msg.find("SIGSEGV"), std::string::npos) << outcome.cases[1].error_msg;
  EXPECT_NE(outcome.cases[1].error_msg.find("executor output (tail)"), std::string::npos);
  EXPECT_EQ(script.started(), 2);
  // The new executor loads the operator again; the lint is not repeated.
  EXPECT_EQ(script.RequestsOf("load").size(), 2U);
  EXPECT_EQ(script.RequestsOf("lint").size(), 1U);
}

TEST(RunOperator, AHangIsATimeoutAndTheExecutorIsReplaced) {
  FakeExecutorScript script;
  Healthy(&script, 2);
  script.On("run_case", [](const json& request, const FakeExecutor& executor) {
    return executor.id() == 1 ? FakeReply::Timeout() : Matches(request.at("index"));
  });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"Timeout", ""}));
  EXPECT_EQ(script.started(), 2);
}

TEST(RunOperator, APoisonedDeviceRestartsTheExecutorAnOrdinaryErrorDoesNot) {
  FakeExecutorScript script;
  Healthy(&script, 3);
  script.On("run_case", [](const json& request, const FakeExecutor& executor) {
    if (request.at("index") == 0) return FakeReply::Error("RuntimeError", "ModelNew raised");
    if (request.at("index") == 1 && executor.id() == 1) {
      return FakeReply::Error("DeviceError", "an illegal memory access was encountered", /*device_poisoned=*/true);
    }
    return Matches(request.at("index").get<int>());
  });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"RuntimeError", "DeviceError", ""}));
  EXPECT_EQ(outcome.cases[1].error_msg, "an illegal memory access was encountered");
  EXPECT_EQ(script.started(), 2);
  EXPECT_EQ(script.RequestsOf("run_case").back().executor, 2);
}

TEST(RunOperator, AnImplementationThatDoesNotImportFailsEveryCaseWithItsInputs) {
  FakeExecutorScript script;
  Healthy(&script, 2);
  script.On("load", [](const json&, const FakeExecutor&) {
    return FakeReply::Error("ImportError", "No module named 'triton_kernels'", false, {{"case_count", 2}});
  });
  script.On("describe_cases", [](const json&, const FakeExecutor&) {
    return FakeReply::Ok(json(proto::DescribeCasesReply{json::array({json::array({"a"}), json::array({"b"})})}));
  });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"ImportError", "ImportError"}));
  EXPECT_EQ(outcome.cases[1].input_desc, json::array({"b"}));
  EXPECT_NE(outcome.cases[0].error_msg.find("triton_kernels"), std::string::npos);
  EXPECT_TRUE(script.RequestsOf("run_case").empty());
}

TEST(RunOperator, AnExecutorThatCannotStartFailsTheOperator) {
  FakeExecutorScript script;
  script.FailStarts("opverify-executor: no such file");
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  ASSERT_EQ(outcome.cases.size(), 1U);
  EXPECT_EQ(outcome.cases[0].error_type, "RuntimeError");
  EXPECT_NE(outcome.cases[0].error_msg.find("no such file"), std::string::npos);
}

// bwrap's own set-up failing (a host socket it was to cover went away) ends
// the executor before it runs anything: started again, it is no one's failure.
FakeReply SandboxSetUpFails() {
  FakeReply died = FakeReply::Died(0);
  ExitStatus exited;
  exited.exited = true;
  exited.code = 1;
  died.exit = exited;
  died.detail = "the executor died (exit code 1)";
  died.log_tail = "bwrap: Can't mkdir parents for /tmp/ovsock-x/daemon.sock: Read-only file system\n";
  return died;
}

TEST(RunOperator, AnExecutorWhoseSandboxCouldNotBeSetUpIsStartedAgain) {
  FakeExecutorScript script;
  Healthy(&script, 2);
  script.On("load", [](const json&, const FakeExecutor& executor) {
    return executor.id() == 1 ? SandboxSetUpFails() : Loaded(2);
  });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(script.started(), 2);
}

TEST(RunOperator, ASandboxThatNeverSetsUpFailsTheOperatorAfterThreeStarts) {
  FakeExecutorScript script;
  Healthy(&script, 2);
  script.On("load", [](const json&, const FakeExecutor&) { return SandboxSetUpFails(); });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  ASSERT_FALSE(outcome.cases.empty());
  EXPECT_EQ(outcome.cases[0].error_type, "Crash");
  EXPECT_NE(outcome.cases[0].error_msg.find("bwrap: Can't mkdir parents"), std::string::npos)
      << outcome.cases[0].error_msg;
  EXPECT_TRUE(script.RequestsOf("run_case").empty());
}

// A death at load with other output is the implementation's: not started again.
TEST(RunOperator, AnExecutorThatDiesLoadingTheImplementationIsNotStartedAgain) {
  FakeExecutorScript script;
  Healthy(&script, 1);
  script.On("load", [](const json&, const FakeExecutor&) { return FakeReply::Died(SIGSEGV); });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  ASSERT_EQ(outcome.cases.size(), 1U);
  EXPECT_EQ(outcome.cases[0].error_type, "Crash");
  EXPECT_EQ(script.RequestsOf("load").size(), 1U);
}

TEST(RunOperator, ALintRefusalFailsEveryCaseWithItsRegressionType) {
  FakeExecutorScript script;
  Healthy(&script, 2);
  script.On("lint", [](const json&, const FakeExecutor&) {
    return FakeReply::Ok({{"lint", {{"valid", false}, {"regression_type", 3}}}});
  });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"LintError", "LintError"}));
  EXPECT_EQ(outcome.cases[0].regression_type, 3);
  EXPECT_TRUE(script.RequestsOf("run_case").empty());
}

TEST(RunOperator, AnExecutorThatCannotBeRestartedFailsTheRemainingCases) {
  FakeExecutorScript script;
  Healthy(&script, 3);
  script.On("load", [](const json&, const FakeExecutor& executor) {
    return executor.id() == 1 ? Loaded(3) : FakeReply::Error("DeviceError", "no device left");
  });
  script.On("run_case", [](const json&, const FakeExecutor&) { return FakeReply::Died(SIGKILL); });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"Crash", "DeviceError", "DeviceError"}));
  EXPECT_NE(outcome.cases[2].error_msg.find("restarting the executor"), std::string::npos);
}

TEST(RunOperator, AFailedProbeFailsTheRemainingCasesUnrun) {
  FakeExecutorScript script;
  Healthy(&script, 3);
  script.On("run_case", [](const json&, const FakeExecutor&) {
    return FakeReply::Error("HiddenStateMismatch", "buffer 'scale' differs");
  });
  const OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome),
            (std::vector<std::string>{"HiddenStateMismatch", "HiddenStateMismatch", "HiddenStateMismatch"}));
  EXPECT_EQ(script.RequestsOf("run_case").size(), 1U);
}

TEST(RunOperator, OutputsThatDifferBitForBitBetweenRepeatsAreNondeterministic) {
  FakeExecutorScript script;
  Healthy(&script, 1);
  int runs = 0;
  script.On("run_case", [&runs](const json&, const FakeExecutor&) {
    const double last = ++runs == 1 ? 3.0 : 3.0000003;  // both within tolerance of the reference
    return FakeReply::Ok({{"input_dtypes", {"float32"}}}, Outputs({1, 2, 3}, {1, 2, last}));
  });
  OperatorSpec spec = Spec();
  spec.config.repeat = 2;
  const OperatorOutcome outcome = RunOperator(spec, Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), (std::vector<std::string>{"Nondeterministic"}));
}

TEST(RunOperator, RunsEachExtraSeedBeforeTheBaseSeed) {
  FakeExecutorScript script;
  Healthy(&script, 1);
  OperatorSpec spec = Spec();
  spec.config.seed = 10;
  spec.config.seeds = 3;
  const OperatorOutcome outcome = RunOperator(spec, Options(&script));
  std::vector<std::uint64_t> seeds;
  for (const auto& sent : script.RequestsOf("run_case")) seeds.push_back(sent.request.at("seed").get<std::uint64_t>());
  EXPECT_EQ(seeds, (std::vector<std::uint64_t>{11, 12, 10}));
  EXPECT_EQ(outcome.cases.at(0).seed, 10U);
}

TEST(RunOperator, SkippedCasesAreNeitherRunNorReported) {
  FakeExecutorScript script;
  Healthy(&script, 4);
  bool stop = false;  // as a stop signal arriving while case 1 runs
  script.On("run_case", [&stop](const json& request, const FakeExecutor&) {
    if (request.at("index") == 1) stop = true;
    return Matches(request.at("index").get<int>());
  });
  OperatorSpec spec = Spec();
  spec.skip_case = [&stop](int index, const std::string&) { return index == 0 || stop; };
  const OperatorOutcome outcome = RunOperator(spec, Options(&script));
  ASSERT_EQ(outcome.cases.size(), 1U);
  EXPECT_EQ(outcome.cases[0].index, 1);
  EXPECT_EQ(script.RequestsOf("run_case").size(), 1U);
}

TEST(ExecutorPool, AHealthyExecutorServesTheNextOperator) {
  FakeExecutorScript script;
  Healthy(&script, 1);
  ExecutorPool pool;
  RunOptions options = Options(&script);
  options.pool = &pool;
  EXPECT_EQ(RunOperator(Spec(), options).passed_cases(), 1);
  EXPECT_EQ(RunOperator(Spec(), options).passed_cases(), 1);
  EXPECT_EQ(script.started(), 1);
  EXPECT_EQ(script.RequestsOf("load").size(), 2U);
}

TEST(ExecutorPool, AnExecutorWhereACaseRaisedIsNotReused) {
  FakeExecutorScript script;
  Healthy(&script, 1);
  script.On("run_case", [](const json&, const FakeExecutor& executor) {
    return executor.id() == 1 ? FakeReply::Error("RuntimeError", "ModelNew raised") : Matches(0);
  });
  ExecutorPool pool;
  RunOptions options = Options(&script);
  options.pool = &pool;
  EXPECT_EQ(RunOperator(Spec(), options).passed_cases(), 0);
  EXPECT_EQ(RunOperator(Spec(), options).passed_cases(), 1);
  EXPECT_EQ(script.started(), 2);
}

TEST(ExecutorPool, ATaintedExecutorIsStoppedAndANewOneStarted) {
  FakeExecutorScript script;
  Healthy(&script, 1);
  // As opverify_runtime.executor does once an operator replaced part of torch.
  script.On("load", [](const json&, const FakeExecutor& executor) {
    if (executor.loads() > 0) {
      return FakeReply::Error(std::string(proto::kExecutorTainted), "an earlier operator replaced torch.add");
    }
    return Loaded(1);
  });
  ExecutorPool pool;
  RunOptions options = Options(&script);
  options.pool = &pool;
  EXPECT_EQ(RunOperator(Spec(), options).passed_cases(), 1);
  const OperatorOutcome second = RunOperator(Spec(), options);
  EXPECT_EQ(second.passed_cases(), 1);
  EXPECT_EQ(script.started(), 2);
  EXPECT_EQ(script.stopped(), 1);  // the tainted one; the new one is warm in the pool
  EXPECT_EQ(script.RequestsOf("run_case").back().executor, 2);
}

namespace boundary {

// Across the trust boundary: the reference executor ships the golden, the
// implementation's the actual; `digest` is the implementation's input digest.
void Split(FakeExecutorScript* script, std::vector<double> actual, std::string digest = "inputs-0") {
  script->AcrossTheBoundary();
  script->On("load", [](const json&, const FakeExecutor&) { return Loaded(1); });
  script->On("lint", [](const json&, const FakeExecutor&) { return FakeReply::Ok({{"lint", {{"valid", true}}}}); });
  script->On("environment", [](const json&, const FakeExecutor&) { return FakeReply::Ok({{"environment", {}}}); });
  script->On("run_case", [actual, digest](const json&, const FakeExecutor& executor) {
    proto::RunCaseReply reply;
    reply.input_dtypes = {"float32"};
    const bool reference = executor.role() == proto::kRoleReference;
    reply.input_digest = reference ? "inputs-0" : digest;
    reply.golden_device = "cpu";
    std::vector<testing::OwnedTensor> both = Outputs({1, 2, 3}, actual);
    std::vector<testing::OwnedTensor> shipped;
    shipped.push_back(std::move(both[reference ? 0 : 1]));
    if (reference) {
      reply.golden_sizes = {3};
      reply.writes_inputs = {"0"};
    }
    return FakeReply::Ok(json(reply), std::move(shipped));
  });
}

// The executor that loaded with `role`, by its id; 0 when none did.
int ExecutorOf(const FakeExecutorScript& script, std::string_view role) {
  for (const auto& sent : script.RequestsOf("load"))
    if (sent.request.value("role", "") == role) return sent.executor;
  return 0;
}

TEST(TrustBoundary, TheGoldenComesFromAnExecutorThatNeverLoadsTheImplementation) {
  FakeExecutorScript script;
  Split(&script, {1, 2, 3});
  OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  ASSERT_EQ(ErrorTypes(outcome), std::vector<std::string>{""});
  const int reference = ExecutorOf(script, proto::kRoleReference);
  const int implementation = ExecutorOf(script, proto::kRoleImplementation);
  ASSERT_NE(reference, 0);
  ASSERT_NE(implementation, 0);
  ASSERT_NE(reference, implementation);
  // The lint runs where the implementation was never imported.
  EXPECT_EQ(script.RequestsOf("lint").at(0).executor, reference);
  // The implementation is told the goldens' sizes and the reference's writes, nothing more.
  const auto runs = script.RequestsOf("run_case");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].executor, reference);
  EXPECT_FALSE(runs[0].request.value("probe", true));
  EXPECT_EQ(runs[1].executor, implementation);
  EXPECT_EQ(runs[1].request.at("golden_sizes"), json::array({3}));
  EXPECT_EQ(runs[1].request.at("reference_writes"), json::array({"0"}));
}

TEST(TrustBoundary, AWrongActualFailsAgainstTheReferencesGolden) {
  FakeExecutorScript script;
  Split(&script, {0, 0, 0});
  EXPECT_EQ(ErrorTypes(RunOperator(Spec(), Options(&script))), std::vector<std::string>{"AccuracyError"});
}

TEST(TrustBoundary, OtherInputsInTheImplementationsExecutorAreAnInputMismatch) {
  FakeExecutorScript script;
  Split(&script, {1, 2, 3}, "other-inputs");
  OperatorOutcome outcome = RunOperator(Spec(), Options(&script));
  EXPECT_EQ(ErrorTypes(outcome), std::vector<std::string>{std::string(proto::kInputMismatch)});
  EXPECT_NE(outcome.cases.at(0).error_msg.find("other-inputs"), std::string::npos);
}

TEST(TrustBoundary, OnlyTheReferenceExecutorServesTheNextOperator) {
  FakeExecutorScript script;
  Split(&script, {1, 2, 3});
  ExecutorPool pool;
  RunOptions options = Options(&script);
  options.pool = &pool;
  options.prestart = SparePrestart::kNever;  // OPVERIFY_NO_SPARE=1
  RunOperator(Spec(), options);
  RunOperator(Spec(), options);
  EXPECT_EQ(script.started(), 3);  // one reference, an implementation executor per operator
  const auto loads = script.RequestsOf("load");
  ASSERT_EQ(loads.size(), 4u);
  std::set<int> references, implementations;
  for (const auto& sent : loads)
    (sent.request.value("role", "") == proto::kRoleReference ? references : implementations).insert(sent.executor);
  EXPECT_EQ(references.size(), 1u);
  EXPECT_EQ(implementations.size(), 2u);
}

// The spare executors (ExecutorPool, docs/PERFORMANCE.md): started while an
// operator runs, handed to the next one when it asks with the same options.
namespace spare {

// Split's executors, which also answer a ping (a spare's readiness check) as
// `ping` says; executor ids start at 1 in the order of their starts.
RunOptions SpareOptions(
    FakeExecutorScript* script, ExecutorPool* pool,
    FakeHandler ping = [](const json&, const FakeExecutor&) { return FakeReply::Ok(); }) {
  Split(script, {1, 2, 3});
  script->On("ping", std::move(ping));
  RunOptions options = Options(script);
  options.pool = pool;
  options.prestart = SparePrestart::kOnOpen;
  return options;
}

// The requests `executor` was sent, by op, in order.
std::vector<std::string> OpsOf(const FakeExecutorScript& script, int executor) {
  std::vector<std::string> ops;
  for (const auto& sent : script.requests())
    if (sent.executor == executor) ops.push_back(sent.request.value("op", ""));
  return ops;
}

TEST(SpareExecutor, TheNextOperatorGetsOneStartedWhileThisOneRan) {
  FakeExecutorScript script;
  ExecutorPool pool;
  RunOptions options = SpareOptions(&script, &pool);
  const OperatorOutcome first = RunOperator(Spec(), options);
  EXPECT_EQ(first.passed_cases(), 1);
  EXPECT_FALSE(first.startup.value("spare", true));
  // Reference 1, implementation 2, then the spares 3 and 4 beside it.
  EXPECT_EQ(script.started(), 4);
  EXPECT_EQ(pool.spares(), ExecutorPool::kSpares);
  const OperatorOutcome second = RunOperator(Spec(), options);
  EXPECT_EQ(second.passed_cases(), 1);
  EXPECT_TRUE(second.startup.value("spare", false));
  EXPECT_EQ(ExecutorOf(script, proto::kRoleImplementation), 2);
  const auto loads = script.RequestsOf("load");
  EXPECT_EQ(loads.back().executor, 3);  // the oldest spare, asked nothing before its ping
  EXPECT_EQ(OpsOf(script, 3),
            (std::vector<std::string>{"ping", "load", "environment", "run_case"}));
  EXPECT_EQ(script.started(), 5);  // one more spare, none other
}

TEST(SpareExecutor, IsNeverHandedToTwoOperators) {
  FakeExecutorScript script;
  ExecutorPool pool;
  RunOptions options = SpareOptions(&script, &pool);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(RunOperator(Spec(), options).passed_cases(), 1);
  std::map<int, int> loads_of;  // executor -> its loads
  for (const auto& sent : script.RequestsOf("load")) ++loads_of[sent.executor];
  int implementations = 0;
  for (const auto& sent : script.RequestsOf("load")) {
    if (sent.request.value("role", "") != proto::kRoleImplementation) continue;
    ++implementations;
    EXPECT_EQ(loads_of[sent.executor], 1) << "executor " << sent.executor;
  }
  EXPECT_EQ(implementations, 4);
}

TEST(SpareExecutor, OneStartedWithOtherOptionsIsStoppedNotReused) {
  FakeExecutorScript script;
  ExecutorPool pool;
  RunOptions options = SpareOptions(&script, &pool);
  options.executor.env = {{"HOME", "/ranks/0/home"}};
  RunOperator(Spec(), options);
  const int stopped_before = script.stopped();
  RunOptions other = options;
  other.executor.env = {{"HOME", "/elsewhere/home"}};
  EXPECT_EQ(RunOperator(Spec(), other).passed_cases(), 1);
  // Both spares (HOME /ranks/0/home) stopped; a new executor with the new HOME.
  EXPECT_GE(script.stopped() - stopped_before, 2);
  const int implementation = script.RequestsOf("load").back().executor;
  EXPECT_GT(implementation, 4);
  EXPECT_EQ(OpsOf(script, implementation).front(), "load");  // started for it, not a spare
  EXPECT_EQ(OpsOf(script, 3), std::vector<std::string>{});
  EXPECT_EQ(OpsOf(script, 4), std::vector<std::string>{});
}

TEST(SpareExecutor, OneThatDiedOrHangsIsReplacedAndBlamesNobody) {
  for (const FakeReply& failed : {FakeReply::Died(SIGKILL), FakeReply::Timeout()}) {
    FakeExecutorScript script;
    ExecutorPool pool;
    RunOptions options =
        SpareOptions(&script, &pool, [failed](const json&, const FakeExecutor& executor) {
          return executor.id() == 3 ? failed : FakeReply::Ok();
        });
    RunOperator(Spec(), options);
    const OperatorOutcome second = RunOperator(Spec(), options);
    EXPECT_EQ(ErrorTypes(second), std::vector<std::string>{""});
    // Spare 3 failed its ping; spare 4 (as fresh) served the operator instead.
    EXPECT_EQ(OpsOf(script, 3), std::vector<std::string>{"ping"});
    EXPECT_EQ(script.RequestsOf("load").back().executor, 4);
    EXPECT_TRUE(second.startup.value("spare", false));
  }
}

TEST(SpareExecutor, TheAbRerunsAndTheSharedGoldenNeverTakeOne) {
  FakeExecutorScript script;
  ExecutorPool pool;
  RunOptions options = SpareOptions(&script, &pool);
  RunOperator(Spec(), options);
  ASSERT_EQ(pool.spares(), ExecutorPool::kSpares);
  const int started = script.started();
  const CaseOutcome alone = RunCaseAlone(Spec(), options, 0);
  EXPECT_TRUE(alone.passed);
  EXPECT_EQ(pool.spares(), ExecutorPool::kSpares);
  EXPECT_EQ(script.started(), started + 2);  // its own reference and implementation executors
  EXPECT_EQ(OpsOf(script, 3), std::vector<std::string>{});
  RunOptions shared = options;
  shared.shared_golden = true;
  RunOperator(Spec(), shared);
  EXPECT_EQ(OpsOf(script, 3), std::vector<std::string>{});
}

// The benchmark's session: no spare starts beside its timing, only once it is done.
TEST(SpareExecutor, ASessionThatPrestartsOnCloseStartsNoneWhileOpen) {
  FakeExecutorScript script;
  ExecutorPool pool;
  RunOptions options = SpareOptions(&script, &pool);
  options.prestart = SparePrestart::kOnClose;
  const OperatorSpec spec = Spec();
  {
    OperatorSession session(spec, options);
    ASSERT_TRUE(session.Open().succeeded());
    EXPECT_EQ(pool.spares(), 0u);
    EXPECT_EQ(script.started(), 2);
  }
  EXPECT_EQ(pool.spares(), ExecutorPool::kSpares);
  // The implementation's executor was stopped before the spares started.
  EXPECT_EQ(script.stopped(), 1);
}

TEST(SpareExecutor, NoneIsStartedWhenSwitchedOff) {
  FakeExecutorScript script;
  ExecutorPool pool;
  RunOptions options = SpareOptions(&script, &pool);
  options.prestart = SparePrestart::kNever;
  RunOperator(Spec(), options);
  EXPECT_EQ(pool.spares(), 0u);
  EXPECT_EQ(script.started(), 2);
}

}  // namespace spare
}  // namespace boundary
namespace seeds {

// A case's seeds are summed into one record: times add up as times, and the
// compile clock's counts stay counts (a count summed as a double reads back as
// no count at all: the reports' kernels compiled and served from the cache).
TEST(TakeRun, SeedsAddTheirTimesAndTheirKernelCounts) {
  CaseOutcome merged;
  for (int seed = 0; seed < 3; ++seed) {
    CaseOutcome run;
    run.passed = true;
    run.timings = {{"impl_ms", 1.5}, {"compile_ms", 2.0}, {"kernels_compiled", 2},
                   {"compile_cached_ms", 0.5}, {"kernels_cached", 1}};
    TakeRun(std::move(run), seed == 0, &merged);
  }
  EXPECT_DOUBLE_EQ(merged.timings["impl_ms"].get<double>(), 4.5);
  EXPECT_DOUBLE_EQ(merged.timings["compile_cached_ms"].get<double>(), 1.5);
  ASSERT_TRUE(merged.timings["kernels_compiled"].is_number_integer()) << merged.timings.dump();
  EXPECT_EQ(merged.timings["kernels_compiled"].get<int>(), 6);
  ASSERT_TRUE(merged.timings["kernels_cached"].is_number_integer());
  EXPECT_EQ(merged.timings["kernels_cached"].get<int>(), 3);
}

}  // namespace seeds
}  // namespace
}  // namespace opverify
