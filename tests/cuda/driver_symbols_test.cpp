// Build-machine check of the plugin's symbol tables: every versioned CUDA driver symbol in
// plugins/cuda/src/driver_symbols.h resolves in the toolkit's stub libcuda.so, and every cuBLASLt
// symbol in the toolkit's libcublasLt. The tables are included here, not copied.
//
// The stub has the soname libcuda.so.1 and answers every call with an error, so it is opened in
// a separate link-map namespace (dlmopen): the plugin's own dlopen("libcuda.so.1") in this process
// can never find it, and it is never on the run-time library path.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../../plugins/cuda/src/cublaslt_symbols.h"
#include "../../plugins/cuda/src/driver_symbols.h"
#include "backend_support.h"
#include "cuda_test_support.h"

namespace switchyard::cuda_test {
namespace {

std::vector<std::string> driver_symbol_names() {
  std::vector<std::string> names;
#define SY_TEST_DRIVER_NAME(api, symbol) names.emplace_back(#symbol);
  SY_CUDA_DRIVER_SYMBOLS(SY_TEST_DRIVER_NAME)
#undef SY_TEST_DRIVER_NAME
  return names;
}

std::vector<std::string> cublaslt_symbol_names() {
  std::vector<std::string> names;
#define SY_TEST_CUBLASLT_NAME(name) names.emplace_back(#name);
  SY_CUBLASLT_SYMBOLS(SY_TEST_CUBLASLT_NAME)
#undef SY_TEST_CUBLASLT_NAME
  return names;
}

std::string missing_symbols(void* handle, const std::vector<std::string>& names) {
  std::string missing;
  for (const std::string& name : names) {
    if (dlsym(handle, name.c_str()) == nullptr) missing += (missing.empty() ? "" : ", ") + name;
  }
  return missing;
}

TEST_CASE("every CUDA driver symbol of the plugin's table is in the toolkit's libcuda stub",
          "[cuda]") {
  const std::string stub =
      toolkit_file({"lib64/stubs/libcuda.so", "targets/x86_64-linux/lib/stubs/libcuda.so"});
  if (stub.empty()) {
    // Without a toolkit the plugin is not built either; with one, the stub must be there.
    REQUIRE_FALSE(plugin_built());
    testing::skip_backend("cuda",
                          "no CUDA toolkit stub libcuda.so below " + toolkit_root().string());
    return;
  }
  const std::vector<std::string> names = driver_symbol_names();
  CHECK(names.size() >= 30);
  void* handle = dlmopen(LM_ID_NEWLM, stub.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlmopen " << stub << ": " << (handle == nullptr ? dlerror() : "ok"));
  REQUIRE(handle != nullptr);
  const std::string missing = missing_symbols(handle, names);
  dlclose(handle);
  INFO(stub << " lacks: " << missing);
  CHECK(missing.empty());
  // The versioned names CUDA 13's cuda.h maps to are the ones in the table.
  CHECK(std::find(names.begin(), names.end(), "cuEventElapsedTime_v2") != names.end());
  CHECK(std::find(names.begin(), names.end(), "cuMemAlloc_v2") != names.end());
  CHECK(std::find(names.begin(), names.end(), "cuCtxPushCurrent_v2") != names.end());
}

TEST_CASE("every cuBLASLt symbol of the plugin's table is in the toolkit's libcublasLt", "[cuda]") {
  const std::string library = toolkit_file({"lib64/libcublasLt.so.13", "lib64/libcublasLt.so.12",
                                            "targets/x86_64-linux/lib/libcublasLt.so.13"});
  if (library.empty()) {
    testing::skip_backend("cuda", "no libcublasLt below " + toolkit_root().string() +
                                      "; the plugin uses its own matmul kernel");
    return;
  }
  void* handle = dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  INFO("dlopen " << library << ": " << (handle == nullptr ? dlerror() : "ok"));
  REQUIRE(handle != nullptr);
  const std::string missing = missing_symbols(handle, cublaslt_symbol_names());
  dlclose(handle);
  INFO(library << " lacks: " << missing);
  CHECK(missing.empty());
}

TEST_CASE("a name missing from the driver stub is reported", "[cuda]") {
  const std::string stub =
      toolkit_file({"lib64/stubs/libcuda.so", "targets/x86_64-linux/lib/stubs/libcuda.so"});
  if (stub.empty()) return;
  void* handle = dlmopen(LM_ID_NEWLM, stub.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  // Proves the check above can fail: an unversioned-only spelling that libcuda never exported.
  const std::string missing = missing_symbols(handle, {"cuMemAlloc_v2", "cuMemAlloc_v9"});
  dlclose(handle);
  CHECK(missing == "cuMemAlloc_v9");
}

}  // namespace
}  // namespace switchyard::cuda_test
