// Status: how every fallible function inside the CUDA plugin reports failure. The entry file
// turns a Status into an sy_status plus the thread's last error message; nothing throws across
// the plugin boundary.
#pragma once

#include <string>
#include <utility>

#include "switchyard/plugin_abi.h"

namespace sy_cuda {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(sy_status code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == SY_STATUS_OK; }
  sy_status code() const { return code_; }
  const std::string& message() const { return message_; }

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
inline Status unavailable(std::string m) {
  return {SY_STATUS_UNAVAILABLE, std::move(m)};
}
inline Status unimplemented(std::string m) {
  return {SY_STATUS_UNIMPLEMENTED, std::move(m)};
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

// Records the message for the calling thread (read back through last_error_message) and returns
// the status code, so an exported function can end with `return report(status);`.
sy_status report(const Status& status);
const char* last_error_message();

// "1.5 MiB (1572864 bytes)": sizes in messages carry both forms.
std::string format_bytes(unsigned long long bytes);

}  // namespace sy_cuda

#define SY_CUDA_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::sy_cuda::Status sy_cuda_status_ = (expr);        \
    if (!sy_cuda_status_.ok()) return sy_cuda_status_; \
  } while (0)
