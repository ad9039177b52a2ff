// Status inside the Vulkan plugin: the shared plugin_support Status (a code from plugin_abi.h plus
// a message). Nothing in the plugin throws across the ABI; the entry files turn a Status into the
// sy_status return value and the thread-local message with report(). This file adds the
// conversion of failed Vulkan calls.
#pragma once

#include <string>

#include <vulkan/vulkan_core.h>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/format_bytes.h"
#include "switchyard/plugin_support/status.h"

namespace sy_vk {

using sy_support::format_bytes;
using sy_support::internal_error;
using sy_support::invalid_argument;
using sy_support::last_error;
using sy_support::ok_status;
using sy_support::report;
using sy_support::resource_exhausted;
using sy_support::set_last_error;
using sy_support::Status;
using sy_support::unavailable;
using sy_support::unimplemented;

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and so on.
const char* vk_result_name(VkResult result);

// Converts a failed Vulkan call right where it happened: out-of-memory results become
// RESOURCE_EXHAUSTED, a lost device UNAVAILABLE, everything else INTERNAL; the message names the
// call.
Status vk_failure(VkResult result, const std::string& call);

}  // namespace sy_vk

#define SY_VK_RETURN_IF_ERROR(expr) SY_SUPPORT_RETURN_IF_ERROR(expr)

// Calls a Vulkan function returning VkResult and returns a converted Status when it fails.
#define SY_VK_CALL(call_expr, call_name)                                                           \
  do {                                                                                             \
    VkResult sy_vk_result_tmp_ = (call_expr);                                                      \
    if (sy_vk_result_tmp_ != VK_SUCCESS) return ::sy_vk::vk_failure(sy_vk_result_tmp_, call_name); \
  } while (false)
