#include "cublaslt.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace sy_cuda {
namespace {

struct CublasLtState {
  CublasLtApi api;
  Status status;
  std::string description;
};

bool resolve(void* handle, CublasLtApi* api, std::string* missing) {
#define SY_CUBLASLT_RESOLVE(name)                                          \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name)); \
  if (api->name == nullptr) *missing += std::string(missing->empty() ? "" : ", ") + #name;
  SY_CUBLASLT_SYMBOLS(SY_CUBLASLT_RESOLVE)
#undef SY_CUBLASLT_RESOLVE
  return missing->empty();
}

std::string path_of(void* handle, const char* fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return fallback;
  }
  return map->l_name;
}

CublasLtState load() {
  CublasLtState state;
  const char* disabled = std::getenv("SWITCHYARD_CUDA_NO_CUBLASLT");
  if (disabled != nullptr && std::string(disabled) == "1") {
    state.status = unavailable("cuBLASLt disabled by SWITCHYARD_CUDA_NO_CUBLASLT=1");
    state.description = state.status.message();
    return state;
  }
  std::string tried;
  for (const char* name : SY_CUBLASLT_LIBRARY_CANDIDATES) {
    dlerror();
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (why != nullptr ? why : name);
      continue;
    }
    std::string missing;
    if (!resolve(handle, &state.api, &missing)) {
      tried += std::string(tried.empty() ? "" : "; ") + name + " lacks " + missing;
      dlclose(handle);
      continue;
    }
    state.description = "cuBLASLt " + std::to_string(state.api.cublasLtGetVersion()) + " (" +
                        path_of(handle, name) + ")";
    return state;
  }
  state.api = CublasLtApi{};
  state.status = unavailable("cuBLASLt not found, using the plugin's own matmul kernel: " + tried);
  state.description = state.status.message();
  return state;
}

const CublasLtState& cublaslt_state() {
  static const CublasLtState state = load();
  return state;
}

}  // namespace

Status load_cublaslt(const CublasLtApi** out_api) {
  const CublasLtState& state = cublaslt_state();
  *out_api = state.status.ok() ? &state.api : nullptr;
  return state.status;
}

std::string cublaslt_description() {
  return cublaslt_state().description;
}

Status cublas_check(const CublasLtApi& api, cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return ok_status();
  const char* name = api.cublasLtGetStatusName(status);
  const char* text = api.cublasLtGetStatusString(status);
  return internal_error(std::string(what) + ": " + (name != nullptr ? name : "cublasStatus") +
                        " (" + (text != nullptr ? text : "") + ")");
}

}  // namespace sy_cuda
