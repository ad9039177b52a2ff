// Plugins that are broken on purpose, one per FIXTURE_* definition, to prove the loader's
// behaviour. Each is built from this one file so the differences stay visible side by side.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "switchyard/plugin_abi.h"

#ifdef FIXTURE_MISSING_DEPENDENCY
extern "C" int sy_fixture_dependency_value(void);  // lives in a library nobody can find
#endif
#ifdef FIXTURE_UNDEFINED_SYMBOL
extern "C" int sy_fixture_symbol_that_does_not_exist(void);  // defined nowhere
#endif

namespace {

thread_local const char* g_last_error = "";

const char* last_error_message() {
  return g_last_error;
}

sy_status device_count(uint32_t* count) {
#ifdef FIXTURE_NO_DRIVER
  g_last_error = "libfixture-driver.so.1: cannot open shared object file (fixture)";
  return SY_STATUS_UNAVAILABLE;
#else
  *count = 1;
  return SY_STATUS_OK;
#endif
}

sy_status device_properties(uint32_t, sy_device_properties* props) {
  std::strcpy(props->name, "fixture device");
  props->type = SY_DEVICE_TYPE_CPU;
  props->memory_total_bytes = 1u << 20;
  return SY_STATUS_OK;
}

sy_status device_create(uint32_t, const sy_option*, size_t, sy_device* out) {
  *out = reinterpret_cast<sy_device>(new int(0));
  return SY_STATUS_OK;
}
void device_destroy(sy_device device) {
  delete reinterpret_cast<int*>(device);
}

sy_status buffer_allocate(sy_device, uint64_t size, sy_buffer* out) {
  *out = reinterpret_cast<sy_buffer>(std::calloc(1, size == 0 ? 1 : size));
  return SY_STATUS_OK;
}
void buffer_release(sy_device, sy_buffer buffer) {
  std::free(buffer);
}
sy_status queue_create(sy_device, sy_queue* out) {
  *out = reinterpret_cast<sy_queue>(new int(0));
  return SY_STATUS_OK;
}
void queue_destroy(sy_device, sy_queue queue) {
  delete reinterpret_cast<int*>(queue);
}
sy_status queue_finish(sy_device, sy_queue) {
  return SY_STATUS_OK;
}
sy_status buffer_write(sy_device, sy_queue, sy_buffer dst, uint64_t off, const void* src,
                       uint64_t size) {
  std::memcpy(reinterpret_cast<char*>(dst) + off, src, size);
  return SY_STATUS_OK;
}
sy_status buffer_read(sy_device, sy_queue, sy_buffer src, uint64_t off, void* dst, uint64_t size) {
  std::memcpy(dst, reinterpret_cast<const char*>(src) + off, size);
  return SY_STATUS_OK;
}
int supports_op(sy_device, uint32_t op, uint32_t dtype) {
  return (op == SY_OP_ADD || op == SY_OP_MATMUL) && dtype == SY_DTYPE_F32;
}
// Claims success and computes nothing: the smoke test must catch a device like this.
sy_status dispatch(sy_device, sy_queue, const sy_op_call*) {
  return SY_STATUS_OK;
}

const sy_plugin_functions kFunctions = {last_error_message,
                                        device_count,
                                        device_properties,
                                        device_create,
                                        device_destroy,
                                        buffer_allocate,
                                        buffer_release,
                                        nullptr,
                                        queue_create,
                                        queue_destroy,
                                        queue_finish,
                                        buffer_write,
                                        buffer_read,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        supports_op,
                                        dispatch,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        {}};

const sy_plugin_descriptor kDescriptor = {
#ifdef FIXTURE_WRONG_ABI
    SY_ABI_VERSION + 41,
#else
    SY_ABI_VERSION,
#endif
    sizeof(sy_plugin_descriptor),
    FIXTURE_NAME,
    "0.0.1",
    "a plugin broken on purpose for tests",
    0,
    {},
    &kFunctions};

}  // namespace

#ifndef FIXTURE_NO_ENTRY
extern "C" SY_PLUGIN_EXPORT const sy_plugin_descriptor* switchyard_plugin_entry(uint32_t) {
#if defined(FIXTURE_THROWS)
  throw std::runtime_error("fixture entry throws on purpose");
#elif defined(FIXTURE_CRASHES)
  std::raise(SIGSEGV);
#elif defined(FIXTURE_MISSING_DEPENDENCY)
  (void)sy_fixture_dependency_value();
#elif defined(FIXTURE_UNDEFINED_SYMBOL)
  (void)sy_fixture_symbol_that_does_not_exist();
#endif
  return &kDescriptor;
}
#else
extern "C" SY_PLUGIN_EXPORT int not_a_switchyard_entry(void) {
  return 0;
}
#endif
