// Status and Result: how every fallible call in the runtime reports failure.
//
// Inside the runtime, functions return Status or Result<T> and never throw. The user-facing C++
// API (tensors, nn, training) turns a bad status into the one exception type, switchyard::Error,
// through throw_if_error() / value_or_throw(), so there is exactly one place that throws.
//
// Threads: Status, Result and Error are plain values.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace switchyard {

// Mirrors sy_status in plugin_abi.h value for value, so codes cross the ABI unchanged.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
};

// "INVALID_ARGUMENT" and so on.
const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "RESOURCE_EXHAUSTED: requested 1.0 GiB ..." (or "OK").
  std::string to_string() const;
  // Prepends context: "loading plugin x: <message>". An OK status stays OK.
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status ok_status() {
  return {};
}
inline Status invalid_argument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status not_found(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status failed_precondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status unimplemented(std::string m) {
  return {StatusCode::kUnimplemented, std::move(m)};
}
inline Status unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status internal_error(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}
inline Status resource_exhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status data_loss(std::string m) {
  return {StatusCode::kDataLoss, std::move(m)};
}

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(state_).ok()) state_ = Status(StatusCode::kInternal, "Result from OK");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(state_); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

// The one exception type of the user-facing API.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status)
      : std::runtime_error(status.to_string()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// The only place that throws.
[[noreturn]] void throw_error(const Status& status);

inline void throw_if_error(const Status& status) {
  if (!status.ok()) throw_error(status);
}

template <typename T>
T value_or_throw(Result<T> result) {
  if (!result.ok()) throw_error(result.status());
  return std::move(result).value();
}

}  // namespace switchyard

#define SY_STATUS_CONCAT_INNER(a, b) a##b
#define SY_STATUS_CONCAT(a, b) SY_STATUS_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define SY_RETURN_IF_ERROR(expr)                     \
  do {                                               \
    ::switchyard::Status sy_status_tmp_ = (expr);    \
    if (!sy_status_tmp_.ok()) return sy_status_tmp_; \
  } while (false)

// `SY_ASSIGN_OR_RETURN(auto x, make_x());` declares x from the Result's value or returns its
// status.
#define SY_ASSIGN_OR_RETURN(lhs, expr) \
  SY_ASSIGN_OR_RETURN_IMPL(SY_STATUS_CONCAT(sy_result_, __LINE__), lhs, expr)
#define SY_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#pragma GCC visibility pop
