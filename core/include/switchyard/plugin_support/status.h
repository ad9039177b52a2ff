// Status: how a plugin that reports failures as values (cuda, vulkan) passes them up to its ABI
// boundary. A Status is a code from plugin_abi.h plus a message; nothing throws across the
// boundary. An exported function ends with `return report(status);`, which records the message
// for the calling thread (the ABI's last_error_message slot returns last_error()) and returns the
// code.
//
// Part of plugin_support: header-only, depends only on the C++ standard library and plugin_abi.h,
// and may be included by plugins (docs/writing-a-backend.md, section 2).
#pragma once

#include <string>
#include <utility>

#include "switchyard/plugin_abi.h"

namespace sy_support {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(sy_status code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == SY_STATUS_OK; }
  sy_status code() const { return code_; }
  const std::string& message() const { return message_; }
  // Prepends "what: " to the message of a failed status.
  Status with_context(const std::string& what) const {
    if (ok()) return *this;
    return {code_, what + ": " + message_};
  }

 private:
  sy_status code_ = SY_STATUS_OK;
  std::string message_;
};

inline Status ok_status() {
  return {};
}
inline Status invalid_argument(std::string m) {
  return {SY_STATUS_INVALID_ARGUMENT, std::move(m)};
}
inline Status unimplemented(std::string m) {
  return {SY_STATUS_UNIMPLEMENTED, std::move(m)};
}
inline Status unavailable(std::string m) {
  return {SY_STATUS_UNAVAILABLE, std::move(m)};
}
inline Status internal_error(std::string m) {
  return {SY_STATUS_INTERNAL, std::move(m)};
}
inline Status resource_exhausted(std::string m) {
  return {SY_STATUS_RESOURCE_EXHAUSTED, std::move(m)};
}
inline Status out_of_range(std::string m) {
  return {SY_STATUS_OUT_OF_RANGE, std::move(m)};
}

// The calling thread's message for its last failure ("" after a success). Plugins are built with
// hidden visibility, so each plugin library has its own.
inline std::string& last_error_slot() {
  thread_local std::string message;
  return message;
}
inline void set_last_error(std::string message) {
  last_error_slot() = std::move(message);
}
inline const char* last_error() {
  return last_error_slot().c_str();
}

// Records the status's message for the calling thread and returns its code.
inline sy_status report(const Status& status) {
  set_last_error(status.ok() ? std::string() : status.message());
  return status.code();
}

}  // namespace sy_support

// Returns the Status of `expr` from the enclosing function when it failed.
#define SY_SUPPORT_RETURN_IF_ERROR(expr)                     \
  do {                                                       \
    ::sy_support::Status sy_support_status_ = (expr);        \
    if (!sy_support_status_.ok()) return sy_support_status_; \
  } while (false)
