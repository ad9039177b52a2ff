// Helpers for the cuda plugin's tests: the plugin file, whether it was built here, and whether
// this process can open the NVIDIA driver (it cannot on a build machine without a GPU).
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/device.h"
#include "switchyard/plugin.h"
#include "test_support.h"

namespace switchyard::cuda_test {

// The build's plugin (or the one in $SWITCHYARD_TEST_PLUGIN_DIR, as test_support.h says).
inline std::string plugin_path() {
  return testing::plugin_file("cuda");
}

// The plugin is skipped at configure time when nvcc or cuda.h is missing; its tests then say so
// instead of failing.
inline bool plugin_built() {
  return std::filesystem::exists(plugin_path());
}

// "" when libcuda.so.1 can be opened here (a machine with the NVIDIA driver), else dlerror's text.
inline std::string driver_error() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return error != nullptr ? error : "libcuda.so.1 cannot be opened";
  }
  dlclose(handle);
  return "";
}

// True when libcuda.so.1 can be opened here.
inline bool driver_present() {
  return driver_error().empty();
}

inline std::shared_ptr<const Plugin> cuda_plugin() {
  static std::shared_ptr<const Plugin> plugin = value_or_throw(Plugin::load(plugin_path()));
  return plugin;
}

// The toolkit folder that holds include/cuda.h and the stub libraries: $CUDA_HOME, else the
// standard location.
inline std::filesystem::path toolkit_root() {
  const char* home = std::getenv("CUDA_HOME");
  if (home != nullptr && std::filesystem::exists(std::filesystem::path(home) / "include/cuda.h")) {
    return home;
  }
  return "/usr/local/cuda";
}

// The first existing path among `candidates` below the toolkit root, or "" if none exists.
inline std::string toolkit_file(const std::vector<std::string>& candidates) {
  for (const std::string& relative : candidates) {
    const auto path = toolkit_root() / relative;
    if (std::filesystem::exists(path)) return path.string();
  }
  return "";
}

}  // namespace switchyard::cuda_test
