// Status inside the CUDA plugin: the shared plugin_support Status (a code from plugin_abi.h plus a
// message). Nothing throws across the plugin boundary; the entry file turns a Status into an
// sy_status plus the thread's last error message with report() (boundary.h). Driver errors are
// converted by cu_check (driver.h).
#pragma once

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/format_bytes.h"
#include "switchyard/plugin_support/status.h"

namespace sy_cuda {

using sy_support::format_bytes;
using sy_support::internal_error;
using sy_support::invalid_argument;
using sy_support::last_error;
using sy_support::ok_status;
using sy_support::out_of_range;
using sy_support::report;
using sy_support::resource_exhausted;
using sy_support::Status;
using sy_support::unavailable;
using sy_support::unimplemented;

}  // namespace sy_cuda

#define SY_CUDA_RETURN_IF_ERROR(expr) SY_SUPPORT_RETURN_IF_ERROR(expr)
