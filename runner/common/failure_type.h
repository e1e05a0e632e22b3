// The kinds of failure opverify itself names: the text of a failed case's
// error_type (the store's column, the reports' grouping, junit's type=...).
// The text on disk is the enum's name exactly ("Crash", "AccuracyError");
// text no kind has (an older file's, an executor's own exception name) is
// kept as it is, under FailureKind::kOther.
#pragma once

#include <string>
#include <string_view>

namespace opverify {

enum class FailureKind {
  kNone,  // "": the case passed
  // The judge's verdict on an output (runner/judge/judge.h).
  kAccuracyError,
  kShapeMismatch,
  kNaNMismatch,
  kInfMismatch,
  // A case's defences.
  kHiddenStateMismatch,   // the operator kept state between calls
  kInputMismatch,         // the executor's inputs differ from the reference's
  kInputMutated,          // the implementation wrote to an input
  kNondeterministic,      // two runs of one case differed
  kGhostReplayUnchanged,  // the ghost replay changed nothing
  kSandboxViolation,      // the implementation reached outside the sandbox
  // The executor and the implementation.
  kCrash,             // the executor died
  kTimeout,           // the case ran past its limit
  kRuntimeError,      // the implementation raised
  kImportError,       // the operator could not be imported
  kDeviceError,       // the accelerator failed
  kEnvironmentError,  // the executor's environment is not usable
  kCompilationError,
  kOutOfMemory,
  kExecutorTainted,   // the executor's state can no longer be trusted
  kLintError,         // the static lint refused the implementation
  kReferenceError,    // the reference (golden) itself failed
  kAssertionError,    // --seed-compat's name for the judge's mismatches
  kStopped,           // the rank abandoned the case (never stored)
  kPerformanceError,  // a performance gate was violated
  kOther,             // any other text, kept as read
};

// "AccuracyError", "Crash", ...; "" for kNone and kOther.
std::string_view FailureKindName(FailureKind kind);

// A failure's type: its kind and the text it is stored as.
class FailureType {
 public:
  FailureType() = default;        // kNone, ""
  FailureType(FailureKind kind);  // NOLINT(google-explicit-constructor): a kind is a type
  // The type stored as `text`: its kind, or kOther keeping the text.
  static FailureType FromText(std::string_view text);

  FailureKind kind() const { return kind_; }
  // The text on disk: FailureKindName's, or an kOther's own.
  const std::string& text() const { return text_; }
  // Judged and found wrong by the judge (the verdict on an output), as opposed
  // to a case that could not be judged at all (the executor or its
  // environment broke, or the reference did not run, so there is no golden
  // to judge against): JUnit's <failure> against <error>.
  bool CouldNotJudge() const;

  bool operator==(FailureKind kind) const { return kind_ == kind; }
  bool operator!=(FailureKind kind) const { return kind_ != kind; }
  bool operator==(const FailureType& other) const { return text_ == other.text_; }

 private:
  FailureKind kind_ = FailureKind::kNone;
  std::string text_;
};

}  // namespace opverify
