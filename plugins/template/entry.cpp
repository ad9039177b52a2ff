// The template plugin: the documented starting point for a new backend (docs/writing-a-backend.md).
//
// It builds, loads, reports one device named "template" whose memory is plain host memory and
// whose queues run each call at once, and supports no op yet: `switchyard conformance --backend
// template` runs and reports every op as skipped. Every other call answers SY_STATUS_UNIMPLEMENTED
// with a message pointing at the guide. To start a backend, copy this folder (plugins/template,
// or <prefix>/share/switchyard/template from an install), rename the plugin in CMakeLists.txt and
// in kDescriptor, and replace the stubs one by one (plugins/reference shows a complete, plain
// implementation).
//
// Only the ABI header is included, so a backend can also be built out of tree.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "switchyard/plugin_abi.h"

// Handles are pointers to the plugin's own structs, declared by plugin_abi.h in the global
// namespace. Here: a device with nothing in it, buffers of host memory, and queues that run every
// call before returning (so queue_finish has nothing to wait for). A real backend keeps its
// driver's context, allocations and streams in them.
struct sy_device_s {};
struct sy_buffer_s {
  std::vector<unsigned char> bytes;
};
struct sy_queue_s {};

namespace {

constexpr const char* kGuide =
    "the template plugin is a skeleton: see docs/writing-a-backend.md to turn it into a backend";

// The ABI asks for one message per thread for the last failed call; a thread_local is enough.
thread_local std::string t_last_error;

sy_status unimplemented(const char* function) {
  t_last_error = std::string("template: ") + function + " is not implemented; " + kGuide;
  return SY_STATUS_UNIMPLEMENTED;
}

const char* template_last_error_message() {
  return t_last_error.c_str();
}

// A real backend asks its driver here and returns UNAVAILABLE with the reason when the driver is
// missing. Every entry point catches all exceptions in a real backend (plugins/reference/entry.cpp,
// guarded()); here only the error messages could throw (bad_alloc), which a real backend guards.
sy_status template_device_count(uint32_t* count) {
  if (count == nullptr) return SY_STATUS_INVALID_ARGUMENT;
  *count = 1;
  return SY_STATUS_OK;
}

sy_status template_device_properties(uint32_t index, sy_device_properties* props) {
  if (props == nullptr || index != 0) {
    t_last_error = "template: there is exactly one device, index 0";
    return SY_STATUS_NOT_FOUND;
  }
  // Fill a full struct, then copy only as much as the host's struct holds.
  sy_device_properties full{};
  full.struct_size = props->struct_size;
  full.type = SY_DEVICE_TYPE_OTHER;
  std::snprintf(full.name, sizeof(full.name), "%s", "template");
  std::snprintf(full.vendor, sizeof(full.vendor), "%s", "switchyard");
  std::snprintf(full.details, sizeof(full.details), "%s", kGuide);
  const size_t host_size = props->struct_size;
  std::memcpy(props, &full, host_size < sizeof(full) ? host_size : sizeof(full));
  return SY_STATUS_OK;
}

// A real backend parses its options here: its own keys, plus the ABI's standard option
// `deterministic` ("true"/"false"), which every plugin must accept (see sy_option in
// plugin_abi.h), and reports what is in effect through the optional device_settings slot.
sy_status template_device_create(uint32_t index, const sy_option* options, size_t count,
                                 sy_device* out_device) {
  if (out_device == nullptr || index != 0) return SY_STATUS_INVALID_ARGUMENT;
  *out_device = nullptr;
  for (size_t i = 0; i < count; ++i) {
    if (std::strcmp(options[i].key, "deterministic") != 0) {
      t_last_error = std::string("template: unknown option '") + options[i].key +
                     "', expected only: deterministic";
      return SY_STATUS_INVALID_ARGUMENT;
    }
  }
  *out_device = new (std::nothrow) sy_device_s{};
  return *out_device == nullptr ? SY_STATUS_RESOURCE_EXHAUSTED : SY_STATUS_OK;
}

void template_device_destroy(sy_device device) {
  delete device;
}

sy_status template_buffer_allocate(sy_device, uint64_t size, sy_buffer* out_buffer) {
  if (out_buffer == nullptr) return SY_STATUS_INVALID_ARGUMENT;
  try {  // no exception may cross the ABI: bad_alloc becomes RESOURCE_EXHAUSTED
    *out_buffer = new sy_buffer_s{std::vector<unsigned char>(size)};
    return SY_STATUS_OK;
  } catch (const std::bad_alloc&) {
    t_last_error = "template: out of host memory allocating " + std::to_string(size) + " bytes";
    return SY_STATUS_RESOURCE_EXHAUSTED;
  }
}

void template_buffer_release(sy_device, sy_buffer buffer) {
  delete buffer;
}

sy_status template_queue_create(sy_device, sy_queue* out_queue) {
  if (out_queue == nullptr) return SY_STATUS_INVALID_ARGUMENT;
  *out_queue = new (std::nothrow) sy_queue_s{};
  return *out_queue == nullptr ? SY_STATUS_RESOURCE_EXHAUSTED : SY_STATUS_OK;
}

void template_queue_destroy(sy_device, sy_queue queue) {
  delete queue;
}

sy_status template_queue_finish(sy_device, sy_queue) {
  return SY_STATUS_OK;  // every call already ran
}

// The range [offset, offset + size) must lie inside the buffer.
bool in_bounds(const sy_buffer_s* buffer, uint64_t offset, uint64_t size) {
  return buffer != nullptr && offset <= buffer->bytes.size() &&
         size <= buffer->bytes.size() - offset;
}

sy_status template_buffer_write(sy_device, sy_queue, sy_buffer dst, uint64_t offset,
                                const void* src, uint64_t size) {
  if (!in_bounds(dst, offset, size) || (src == nullptr && size > 0)) {
    t_last_error = "template: buffer_write outside the buffer";
    return SY_STATUS_INVALID_ARGUMENT;
  }
  if (size > 0) std::memcpy(dst->bytes.data() + offset, src, size);
  return SY_STATUS_OK;
}

sy_status template_buffer_read(sy_device, sy_queue, sy_buffer src, uint64_t offset, void* dst,
                               uint64_t size) {
  if (!in_bounds(src, offset, size) || (dst == nullptr && size > 0)) {
    t_last_error = "template: buffer_read outside the buffer";
    return SY_STATUS_INVALID_ARGUMENT;
  }
  if (size > 0) std::memcpy(dst, src->bytes.data() + offset, size);
  return SY_STATUS_OK;
}

// supports_op decides fallback and test skipping: answer 1 only for what dispatch really runs.
int template_supports_op(sy_device, uint32_t, uint32_t) {
  return 0;
}
sy_status template_dispatch(sy_device, sy_queue, const sy_op_call*) {
  return unimplemented("dispatch");
}

// Optional slots (host_address, events, memory pool control) are left NULL: the core supplies a
// default or reports UNIMPLEMENTED itself.
const sy_plugin_functions kFunctions = {template_last_error_message,
                                        template_device_count,
                                        template_device_properties,
                                        template_device_create,
                                        template_device_destroy,
                                        template_buffer_allocate,
                                        template_buffer_release,
                                        nullptr,  // buffer_host_address
                                        template_queue_create,
                                        template_queue_destroy,
                                        template_queue_finish,
                                        template_buffer_write,
                                        template_buffer_read,
                                        nullptr,  // event_create
                                        nullptr,  // event_destroy
                                        nullptr,  // event_record
                                        nullptr,  // event_synchronize
                                        nullptr,  // event_elapsed_ms
                                        template_supports_op,
                                        template_dispatch,
                                        nullptr,  // memory_stats
                                        nullptr,  // memory_reset_peak
                                        nullptr,  // memory_empty_cache
                                        nullptr,  // memory_set_limit
                                        nullptr,  // device_settings
                                        nullptr,  // queue_capture_begin (native replay)
                                        nullptr,  // queue_capture_end
                                        nullptr,  // graph_launch
                                        nullptr,  // graph_destroy
                                        nullptr,  // graph_update
                                        {}};

const sy_plugin_descriptor kDescriptor = {
    SY_ABI_VERSION,
    sizeof(sy_plugin_descriptor),
    "template",  // must match the file name libswitchyard-template.so
    "0.1.0",
    "skeleton backend: the starting point documented in docs/writing-a-backend.md",
    0,  // capabilities: SY_CAP_HOST_MEMORY, SY_CAP_ASYNC, SY_CAP_DEVICE_TIMING as they apply
    {},
    &kFunctions};

}  // namespace

extern "C" {
SY_DEFINE_PLUGIN_ENTRY(kDescriptor)
}
