// Plugin: one loaded backend library.
//
// Ownership: a Plugin is always held by std::shared_ptr. Every Device, Buffer and Queue made
// through it holds that pointer, so the library stays mapped while any object it made is alive.
//
// Threads: a Plugin may be shared. Calls that name no device may come from several threads at once
// (plugin_abi.h); calls for one device go through that Device's lock (device.h).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "switchyard/plugin_abi.h"
#include "switchyard/status.h"

namespace switchyard {

struct DeviceInfo;

class Plugin {
 public:
  // Loads the library with RTLD_NOW, resolves switchyard_plugin_entry, and checks the descriptor's
  // ABI version and size. Errors name the path and carry the full dlerror text.
  static Result<std::shared_ptr<Plugin>> load(const std::filesystem::path& path);

  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& description() const { return description_; }
  const std::filesystem::path& path() const { return path_; }
  uint64_t capabilities() const { return descriptor_->capabilities; }
  const sy_plugin_functions& functions() const { return *descriptor_->functions; }

  // Turns a plugin return code into a Status carrying the plugin's message for this thread.
  Status check(sy_status code, const std::string& context) const;

  Result<uint32_t> device_count() const;
  Result<DeviceInfo> device_info(uint32_t index) const;

 private:
  struct Library;
  Plugin() = default;

  std::unique_ptr<Library> library_;
  const sy_plugin_descriptor* descriptor_ = nullptr;
  std::filesystem::path path_;
  std::string name_;
  std::string version_;
  std::string description_;
};

// "reference" from ".../libswitchyard-reference.so"; empty if the file name does not match.
std::string plugin_name_from_path(const std::filesystem::path& path);

}  // namespace switchyard

#pragma GCC visibility pop
