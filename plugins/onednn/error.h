// Errors inside the oneDNN plugin.
//
// Inside the plugin a failure is thrown as PluginError (from fail() only) and caught at the ABI
// boundary by guarded(), which turns it, a dnnl::error, or anything else into a status plus the
// thread-local message that last_error_message() returns. Nothing is thrown across the boundary.
#pragma once

#include <exception>
#include <sstream>
#include <string>
#include <utility>

#include "switchyard/plugin_abi.h"

namespace sy_onednn {

class PluginError : public std::exception {
 public:
  PluginError(sy_status code, std::string message) : code_(code), message_(std::move(message)) {}
  sy_status code() const { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  sy_status code_;
  std::string message_;
};

// Joins the arguments with operator<< into one string, for error messages.
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

[[noreturn]] void fail(sy_status code, const std::string& message);
[[noreturn]] inline void fail_invalid(const std::string& message) {
  fail(SY_STATUS_INVALID_ARGUMENT, message);
}

// The message of the last failed call on this thread ("" if none).
const char* last_error_message();
void set_last_error_message(const std::string& message);

// Runs `body` and converts every exception into a status, recording its message prefixed with
// `what` (the ABI function name). Never throws.
sy_status guard_exceptions(const char* what, void (*body)(void*), void* closure) noexcept;

template <typename Body>
sy_status guarded(const char* what, Body body) noexcept {
  return guard_exceptions(
      what, [](void* closure) { (*static_cast<Body*>(closure))(); }, &body);
}

}  // namespace sy_onednn
