// Names and messages from outside (a manifest, a store, an implementation's
// error) are data: shell quoting of the "run it again" commands (pasted into
// a real sh), terminal and Markdown escaping, and file names that stay put.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "reduce/run_model.h"
#include "reduce/text_escape.h"
#include "runner/common/file_name.h"
#include "runner/common/shell_quote.h"
#include "runner/common/terminal_text.h"
#include "runner/process/subprocess.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace opverify {
namespace {

TEST(ShellQuote, PlainWordsStayAndEverythingElseIsSingleQuoted) {
  EXPECT_EQ(ShellQuote("relu_ok"), "relu_ok");
  EXPECT_EQ(ShellQuote("/work/ops/a-1.2,x:y@z%+"), "/work/ops/a-1.2,x:y@z%+");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("~"), "'~'");
  EXPECT_EQ(ShellQuote("A=1"), "'A=1'");
  EXPECT_EQ(ShellQuote("$(reboot)`id`"), "'$(reboot)`id`'");
  EXPECT_EQ(ShellQuote("x'; touch INJECTED; echo '"), "'x'\\''; touch INJECTED; echo '\\'''");
  EXPECT_EQ(ShellCommand({"opverify", "verify", "--op_name", "it's"}),
            "opverify verify --op_name 'it'\\''s'");
}

// Runs `command` in `dir` with `opverify` and `opverify-batch` defined as
// shell functions that print each argument they get, NUL-terminated.
std::vector<std::string> PasteIntoSh(const std::string& command, const fs::path& dir) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c",
                  "opverify() { for a in \"$@\"; do printf '%s\\0' \"$a\"; done; }\n"
                  "opverify_batch() { opverify \"$@\"; }\n" +
                      command + "\n"};
  options.working_dir = dir.string();
  Result<CapturedRun> run = RunAndCapture(options, 30, 1, 1 << 20);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  if (!run.ok()) return {};
  EXPECT_TRUE(run->status.success()) << run->status.Describe() << ": " << run->output;
  std::vector<std::string> args;
  std::string::size_type begin = 0, end;
  while ((end = run->output.find('\0', begin)) != std::string::npos) {
    args.push_back(run->output.substr(begin, end - begin));
    begin = end + 1;
  }
  EXPECT_EQ(begin, run->output.size()) << "something else printed: " << run->output.substr(begin);
  return args;
}

// The repro command the reports print for a failing operator `name` whose
// task file is in `folder`.
std::string ReproFor(const std::string& name, const fs::path& folder) {
  CaseRecord facts;
  facts.kind = RecordKind::kOperator;
  facts.case_id = name + "/@operator/0";
  facts.op_name = name;
  facts.case_index = -1;
  facts.passed = true;
  facts.extra = {{"task_file", (folder / "op_torch.py").string()}, {"impl_name", "cpu_impl"}};
  CaseRecord failed;
  failed.case_id = name + "/#1";
  failed.op_name = name;
  failed.error_type = "AccuracyError";
  const RunModel run = BuildRunModel({facts, failed}, {}, json{{"backend", "cpu"}}, "/run");
  EXPECT_EQ(run.operators.size(), 1u);
  return run.operators.empty() ? "" : run.operators[0].repro;
}

fs::path Scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("opverify-text-safety-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ReproCommand, EveryByteOfAFolderNameArrivesIntactAndNothingElseRuns) {
  const fs::path scratch = Scratch("bytes");
  std::string folder_name, op_name;
  for (int b = 1; b <= 255; ++b) {
    op_name += static_cast<char>(b);
    if (b != '/') folder_name += static_cast<char>(b);  // the one byte a folder name cannot hold
  }
  const fs::path folder = scratch / folder_name;
  ASSERT_TRUE(fs::create_directory(folder));  // a real folder of that name
  const std::string repro = ReproFor(op_name, folder);
  const std::vector<std::string> args = PasteIntoSh(repro, scratch);
  const std::vector<std::string> expected = {"verify",       "--op_name",     op_name,
                                             "--verify_dir", folder.string(), "--triton_impl_name",
                                             "cpu_impl",     "--backend",     "cpu"};
  EXPECT_EQ(args, expected);
  fs::remove_all(scratch);
}

TEST(ReproCommand, TheIssuesInjectionFolderIsOnlyAName) {
  const fs::path scratch = Scratch("inject");
  const fs::path folder = scratch / "x'; touch INJECTED; echo '";
  fs::create_directory(folder);
  const std::string repro = ReproFor("op", folder);
  const std::vector<std::string> args = PasteIntoSh(repro, scratch);
  ASSERT_GE(args.size(), 5u);
  EXPECT_EQ(args[4], folder.string());
  EXPECT_FALSE(fs::exists(scratch / "INJECTED"));
  fs::remove_all(scratch);
}

TEST(ReproCommand, ASweptOperatorsBatchLineFiltersOnlyItselfAndStaysInTmp) {
  CaseRecord swept;
  swept.case_id = "a*b/#1";
  swept.op_name = "a*b/../x";
  swept.params = {{"n", 1}};
  const RunModel run = BuildRunModel({swept}, {}, json{{"manifest", "/m/j s.json"}}, "/run");
  const std::string repro = run.operators.at(0).repro;
  const fs::path scratch = Scratch("swept");
  const std::vector<std::string> args =
      PasteIntoSh(repro.substr(0, std::string("opverify-batch").size()) == "opverify-batch"
                      ? "opverify_batch" + repro.substr(std::string("opverify-batch").size())
                      : repro,
                  scratch);
  ASSERT_EQ(args.size(), 5u) << repro;
  EXPECT_EQ(args[0], "/m/j s.json");
  EXPECT_EQ(args[2], "a\\*b/../x");  // fnmatch(3) matches the name alone
  EXPECT_EQ(fs::path(args[4]).parent_path(), "/tmp");
  fs::remove_all(scratch);
}

TEST(TerminalSafe, StripsEscapesAndControlsButKeepsTextNewlinesAndTabs) {
  EXPECT_EQ(TerminalSafe("plain\ttext\nnext"), "plain\ttext\nnext");
  EXPECT_EQ(TerminalSafe("\x1b[31mred\x1b[0m"), "red");
  EXPECT_EQ(TerminalSafe("\x1b]0;owned title\x07"
                         "after"),
            "after");
  EXPECT_EQ(TerminalSafe("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "link");
  EXPECT_EQ(TerminalSafe("a\x1b"
                         "cb"),
            "ab");  // ESC c: reset the terminal
  EXPECT_EQ(TerminalSafe("over\rwrite\x08\x7f\x01"), "overwrite");
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "2Jgone"),
            "gone");                                        // 8-bit CSI
  EXPECT_EQ(TerminalSafe("\xe9\x94\x99"), "\xe9\x94\x99");  // 错
  EXPECT_EQ(TerminalSafe("\xff"), "\xef\xbf\xbd");
  EXPECT_EQ(TerminalSafe("cut\x1b["), "cut");
}

TEST(SafeFileName, HostileNamesBecomeOneHarmlessComponent) {
  EXPECT_EQ(SafeFileName("nightly"), "nightly");
  EXPECT_EQ(SafeFileName("nightly.v2"), "nightly.v2");
  EXPECT_EQ(SafeFileName("../../../../X"), "X");
  EXPECT_EQ(SafeFileName(".."), "job");
  EXPECT_EQ(SafeFileName(std::string("a\0b", 3)), "a_b");
  EXPECT_EQ(SafeFileName("a/b c"), "a_b_c");
  EXPECT_EQ(SafeFileName("-rf"), "rf");
  EXPECT_EQ(SafeFileName(".hidden"), "hidden");
  EXPECT_EQ(SafeFileName(std::string(300, 'n')).size(), 64u);
  EXPECT_EQ(SafeFileName("", 64, "operator"), "operator");
}

TEST(OperatorFolder, AManifestNameIsItselfAndAnyOtherNameStaysUnderOps) {
  EXPECT_EQ(OperatorFolder("relu_ok"), "relu_ok");
  const std::string evil = OperatorFolder("../../etc/x");
  EXPECT_EQ(evil.find('/'), std::string::npos) << evil;
  EXPECT_EQ(evil.rfind("etc_x-", 0), 0u) << evil;
  EXPECT_NE(OperatorFolder("<a>"), OperatorFolder("<b>"));  // the hash keeps them apart
}

TEST(MarkdownCell, HtmlAndControlBytesNeverReachTheRenderer) {
  EXPECT_EQ(MarkdownCell("<script>alert(1)</script> <!-- x"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &lt;!-- x");
  EXPECT_EQ(MarkdownCell("a|b\nc\x1b[2Jd\x01"), "a\\|b cd");
  EXPECT_EQ(MarkdownCell("&amp;"), "&amp;amp;");
  EXPECT_EQ(MarkdownCell("<<<<", 2), "&lt;&lt;...");  // cut first, then escaped
}

// GFM splits a row at each pipe a backslash does not escape: every pipe of a
// message is escaped, and so is a backslash, which would escape the pipe's.
TEST(MarkdownCell, PipesAndBackslashesKeepTheTableColumns) {
  EXPECT_EQ(MarkdownCell("|golden| - |actual| > 1e-3"), "\\|golden\\| - \\|actual\\| &gt; 1e-3");
  EXPECT_EQ(MarkdownCell("a\\|b"), "a\\\\\\|b");
  EXPECT_EQ(MarkdownCell("C:\\x"), "C:\\\\x");
}

TEST(MarkdownCode, NoBacktickEndsTheSpanEarly) {
  EXPECT_EQ(MarkdownCode("/runs/a"), "`/runs/a`");
  EXPECT_EQ(MarkdownCode("a`b``c"), "```a`b``c```");
  EXPECT_EQ(MarkdownCode("`x"), "`` `x ``");
  EXPECT_EQ(MarkdownCodeBlock("echo ```\n", "sh"), "````sh\necho ```\n\n````\n");
  EXPECT_EQ(MarkdownCodeBlock("a\x1b[2Jb", "sh"), "```sh\nab\n```\n");
}

}  // namespace
}  // namespace opverify
