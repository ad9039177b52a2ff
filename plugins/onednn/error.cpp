#include "error.h"

#include <new>
#include <oneapi/dnnl/dnnl.hpp>

namespace sy_onednn {
namespace {

thread_local std::string t_last_error;

sy_status status_from_dnnl(dnnl_status_t status) {
  switch (status) {
    case dnnl_out_of_memory:
      return SY_STATUS_RESOURCE_EXHAUSTED;
    case dnnl_invalid_arguments:
      return SY_STATUS_INVALID_ARGUMENT;
    case dnnl_unimplemented:
      return SY_STATUS_UNIMPLEMENTED;
    default:
      return SY_STATUS_INTERNAL;
  }
}

}  // namespace

void fail(sy_status code, const std::string& message) {
  throw PluginError(code, message);
}

const char* last_error_message() {
  return t_last_error.c_str();
}

void set_last_error_message(const std::string& message) {
  t_last_error = message;
}

sy_status guard_exceptions(const char* what, void (*body)(void*), void* closure) noexcept {
  try {
    body(closure);
    return SY_STATUS_OK;
  } catch (const PluginError& e) {
    t_last_error = e.what();
    return e.code();
  } catch (const dnnl::error& e) {
    t_last_error = cat("onednn ", what, ": oneDNN error: ", e.what());
    return status_from_dnnl(e.status);
  } catch (const std::bad_alloc&) {
    t_last_error = cat("onednn ", what, ": out of host memory");
    return SY_STATUS_RESOURCE_EXHAUSTED;
  } catch (const std::exception& e) {
    t_last_error = cat("onednn ", what, ": internal error: ", e.what());
    return SY_STATUS_INTERNAL;
  } catch (...) {
    t_last_error = cat("onednn ", what, ": internal error: unknown exception");
    return SY_STATUS_INTERNAL;
  }
}

}  // namespace sy_onednn
