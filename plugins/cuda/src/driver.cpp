#include "driver.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

namespace sy_cuda {
namespace {

// cuda.h must map each API name to the versioned symbol in the table; a new toolkit that maps a
// name to a newer symbol fails here instead of calling the old entry point.
constexpr bool same_text(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}
#define SY_CUDA_STRINGIZE(x) #x
#define SY_CUDA_STRINGIZE_EXPANDED(x) SY_CUDA_STRINGIZE(x)
#define SY_CUDA_CHECK_MAPPING(api, symbol)                           \
  static_assert(same_text(SY_CUDA_STRINGIZE_EXPANDED(api), #symbol), \
                "cuda.h maps " #api " to a symbol other than " #symbol);
SY_CUDA_DRIVER_SYMBOLS(SY_CUDA_CHECK_MAPPING)
#undef SY_CUDA_CHECK_MAPPING

struct DriverState {
  DriverApi api;
  Status status;
  std::string path;
  int version = 0;
};

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string loaded_path(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return "libcuda.so.1";
  }
  return map->l_name;
}

Status resolve_symbols(void* handle, DriverApi* api, const std::string& path) {
  std::vector<std::string> missing;
#define SY_CUDA_RESOLVE(api_name, symbol)                                        \
  api->symbol = reinterpret_cast<decltype(api->symbol)>(dlsym(handle, #symbol)); \
  if (api->symbol == nullptr) missing.emplace_back(#symbol);
  SY_CUDA_DRIVER_SYMBOLS(SY_CUDA_RESOLVE)
#undef SY_CUDA_RESOLVE
  if (missing.empty()) return ok_status();
  std::string names;
  for (const auto& name : missing) names += (names.empty() ? "" : ", ") + name;
  return unavailable(path + " lacks " + names + "; the NVIDIA driver is older than the CUDA " +
                     version_text(CUDA_VERSION) + " API this plugin was built for");
}

DriverState load() {
  DriverState state;
  dlerror();
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    state.status = unavailable(std::string(why != nullptr ? why : "libcuda.so.1: dlopen failed") +
                               " (the NVIDIA driver is not installed or not on the library path)");
    return state;
  }
  state.path = loaded_path(handle);
  state.status = resolve_symbols(handle, &state.api, state.path);
  if (!state.status.ok()) return state;
  if (state.api.cuDriverGetVersion(&state.version) != CUDA_SUCCESS) state.version = 0;
  const CUresult init = state.api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const Status failed = cu_check(state.api, init, "cuInit(0)");
    state.status = unavailable(failed.message() + "; driver " + state.path + " (CUDA " +
                               version_text(state.version) + ")");
  }
  return state;
}

const DriverState& driver_state() {
  static const DriverState state = load();  // thread-safe, once per process
  return state;
}

}  // namespace

Status load_driver(const DriverApi** out_api) {
  const DriverState& state = driver_state();
  *out_api = state.status.ok() ? &state.api : nullptr;
  return state.status;
}

std::string driver_version_text() {
  return version_text(driver_state().version);
}
std::string driver_library_path() {
  return driver_state().path;
}
int driver_version() {
  return driver_state().version;
}

Status cu_check(const DriverApi& api, CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return ok_status();
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName == nullptr || api.cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (api.cuGetErrorString == nullptr || api.cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  std::string message(what);
  message += ": ";
  message += name != nullptr ? name : "CUresult " + std::to_string(static_cast<int>(result));
  if (text != nullptr) message += std::string(" (") + text + ")";
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return resource_exhausted(message);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      return unavailable(message);
    default:
      return internal_error(message);
  }
}

ContextScope::ContextScope(const DriverApi& api, CUcontext context) : api_(api) {
  status_ = cu_check(api_, api_.cuCtxPushCurrent_v2(context), "cuCtxPushCurrent");
}

ContextScope::~ContextScope() {
  if (!status_.ok()) return;
  CUcontext popped = nullptr;
  (void)api_.cuCtxPopCurrent_v2(&popped);
}

}  // namespace sy_cuda
