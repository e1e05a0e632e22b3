// Expected failures as values (bad input, an unreadable file): a Status says
// what went wrong and where; Result<T> is a value or the Status why not.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace opverify {

class [[nodiscard]] Status {
 public:
  enum class Code { kOk, kInvalidInput, kNotFound, kIoError, kUnsupported, kInternal };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string message) { return {Code::kInvalidInput, std::move(message)}; }
  static Status NotFound(std::string message) { return {Code::kNotFound, std::move(message)}; }
  static Status IoError(std::string message) { return {Code::kIoError, std::move(message)}; }
  static Status Unsupported(std::string message) { return {Code::kUnsupported, std::move(message)}; }
  static Status Internal(std::string message) { return {Code::kInternal, std::move(message)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const { return ok() ? "OK" : message_; }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}              // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) { assert(!std::get<Status>(state_).ok()); }  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace opverify
