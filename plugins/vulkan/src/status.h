// Status inside the Vulkan plugin: a code from plugin_abi.h plus a message. Nothing in the plugin
// throws across the ABI; the entry file turns a Status into the sy_status return value and the
// thread-local message that last_error_message() hands to the host.
#pragma once

#include <string>
#include <utility>

#include <vulkan/vulkan_core.h>

#include "switchyard/plugin_abi.h"

namespace sy_vk {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(sy_status code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == SY_STATUS_OK; }
  sy_status code() const { return code_; }
  const std::string& message() const { return message_; }
  // Prepends "what: " to the message of a failed status.
  Status with_context(const std::string& what) const;

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

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and so on.
const char* vk_result_name(VkResult result);

// Converts a failed Vulkan call right where it happened: out-of-memory results become
// RESOURCE_EXHAUSTED, a lost device UNAVAILABLE, everything else INTERNAL; the message names the
// call.
Status vk_failure(VkResult result, const std::string& call);

// Byte counts in messages: "1048576 bytes (1.00 MiB)".
std::string format_bytes(unsigned long long bytes);

// The message for the calling thread's last failure (see plugin_entry.cpp).
void set_last_error(const std::string& message);
const char* last_error();

}  // namespace sy_vk

#define SY_VK_RETURN_IF_ERROR(expr)                        \
  do {                                                     \
    ::sy_vk::Status sy_vk_status_tmp_ = (expr);            \
    if (!sy_vk_status_tmp_.ok()) return sy_vk_status_tmp_; \
  } while (false)

// Calls a Vulkan function returning VkResult and returns a converted Status when it fails.
#define SY_VK_CALL(call_expr, call_name)                                                           \
  do {                                                                                             \
    VkResult sy_vk_result_tmp_ = (call_expr);                                                      \
    if (sy_vk_result_tmp_ != VK_SUCCESS) return ::sy_vk::vk_failure(sy_vk_result_tmp_, call_name); \
  } while (false)
