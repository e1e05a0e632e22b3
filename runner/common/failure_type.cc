#include "runner/common/failure_type.h"

#include <array>
#include <utility>

namespace opverify {
namespace {

// Every named kind and its text, once.
constexpr std::array<std::pair<FailureKind, std::string_view>, 25> kNames = {{
    {FailureKind::kAccuracyError, "AccuracyError"},
    {FailureKind::kShapeMismatch, "ShapeMismatch"},
    {FailureKind::kNaNMismatch, "NaNMismatch"},
    {FailureKind::kInfMismatch, "InfMismatch"},
    {FailureKind::kHiddenStateMismatch, "HiddenStateMismatch"},
    {FailureKind::kInputMismatch, "InputMismatch"},
    {FailureKind::kInputMutated, "InputMutated"},
    {FailureKind::kNondeterministic, "Nondeterministic"},
    {FailureKind::kGhostReplayUnchanged, "GhostReplayUnchanged"},
    {FailureKind::kSandboxViolation, "SandboxViolation"},
    {FailureKind::kCrash, "Crash"},
    {FailureKind::kTimeout, "Timeout"},
    {FailureKind::kRuntimeError, "RuntimeError"},
    {FailureKind::kImportError, "ImportError"},
    {FailureKind::kDeviceError, "DeviceError"},
    {FailureKind::kEnvironmentError, "EnvironmentError"},
    {FailureKind::kCompilationError, "CompilationError"},
    {FailureKind::kOutOfMemory, "OutOfMemory"},
    {FailureKind::kExecutorTainted, "ExecutorTainted"},
    {FailureKind::kLintError, "LintError"},
    {FailureKind::kReferenceError, "ReferenceError"},
    {FailureKind::kAssertionError, "AssertionError"},
    {FailureKind::kStopped, "Stopped"},
    {FailureKind::kPerformanceError, "PerformanceError"},
    {FailureKind::kOther, ""},
}};

}  // namespace

std::string_view FailureKindName(FailureKind kind) {
  for (const auto& [named, text] : kNames) {
    if (named == kind) return text;
  }
  return "";  // kNone
}

FailureType::FailureType(FailureKind kind) : kind_(kind), text_(FailureKindName(kind)) {}

FailureType FailureType::FromText(std::string_view text) {
  FailureType type;
  type.text_ = std::string(text);
  if (text.empty()) return type;
  type.kind_ = FailureKind::kOther;
  for (const auto& [named, name] : kNames) {
    if (!name.empty() && name == text) type.kind_ = named;
  }
  return type;
}

bool FailureType::CouldNotJudge() const {
  switch (kind_) {
    case FailureKind::kCrash:
    case FailureKind::kTimeout:
    case FailureKind::kImportError:
    case FailureKind::kDeviceError:
    case FailureKind::kEnvironmentError:
    case FailureKind::kReferenceError:  // the reference did not run: nothing to judge against
      return true;
    default:
      return false;
  }
}

}  // namespace opverify
