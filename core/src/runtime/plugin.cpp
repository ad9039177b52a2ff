#include "switchyard/plugin.h"

#include <dlfcn.h>

#include <boost/dll/shared_library.hpp>

#include "switchyard/device.h"

namespace switchyard {
namespace {

constexpr const char* kPrefix = "libswitchyard-";
constexpr const char* kSuffix = ".so";

std::string bounded_string(const char* text, size_t max_length) {
  if (text == nullptr) return {};
  size_t length = 0;
  while (length < max_length && text[length] != '\0') ++length;
  return std::string(text, length);
}

DeviceType device_type_from_abi(uint32_t type) {
  switch (type) {
    case SY_DEVICE_TYPE_CPU:
      return DeviceType::kCpu;
    case SY_DEVICE_TYPE_GPU:
      return DeviceType::kGpu;
    case SY_DEVICE_TYPE_INTEGRATED_GPU:
      return DeviceType::kIntegratedGpu;
    case SY_DEVICE_TYPE_EMULATED:
      return DeviceType::kEmulated;
    default:
      return DeviceType::kOther;
  }
}

// The required slots; a plugin missing one is rejected at load time rather than crashing later.
Status check_required_functions(const sy_plugin_functions& f) {
  std::string missing;
  auto need = [&](const void* fn, const char* name) {
    if (fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  need(reinterpret_cast<const void*>(f.last_error_message), "last_error_message");
  need(reinterpret_cast<const void*>(f.device_count), "device_count");
  need(reinterpret_cast<const void*>(f.device_properties), "device_properties");
  need(reinterpret_cast<const void*>(f.device_create), "device_create");
  need(reinterpret_cast<const void*>(f.device_destroy), "device_destroy");
  need(reinterpret_cast<const void*>(f.buffer_allocate), "buffer_allocate");
  need(reinterpret_cast<const void*>(f.buffer_release), "buffer_release");
  need(reinterpret_cast<const void*>(f.queue_create), "queue_create");
  need(reinterpret_cast<const void*>(f.queue_destroy), "queue_destroy");
  need(reinterpret_cast<const void*>(f.queue_finish), "queue_finish");
  need(reinterpret_cast<const void*>(f.buffer_write), "buffer_write");
  need(reinterpret_cast<const void*>(f.buffer_read), "buffer_read");
  need(reinterpret_cast<const void*>(f.supports_op), "supports_op");
  need(reinterpret_cast<const void*>(f.dispatch), "dispatch");
  if (missing.empty()) return ok_status();
  return failed_precondition("the function table lacks required functions: " + missing);
}

// Boost.DLL clears dlerror() and reports only "Bad file descriptor". The text users need (which
// dependency is missing, which symbol is undefined) comes from dlopen itself, so ask it again.
std::string dlopen_error_text(const std::filesystem::path& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    dlclose(handle);
    return "the library loads with dlopen but Boost.DLL refused it";
  }
  const char* text = dlerror();
  return text != nullptr ? text : "dlopen failed without a message";
}

}  // namespace

struct Plugin::Library {
  boost::dll::shared_library library;
};

std::string plugin_name_from_path(const std::filesystem::path& path) {
  const std::string file = path.filename().string();
  const std::string prefix = kPrefix;
  const std::string suffix = kSuffix;
  if (file.size() <= prefix.size() + suffix.size()) return {};
  if (file.compare(0, prefix.size(), prefix) != 0) return {};
  if (file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) return {};
  return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
}

Result<std::shared_ptr<Plugin>> Plugin::load(const std::filesystem::path& path) {
  auto library = std::make_unique<Library>();
  boost::dll::fs::error_code error;
  // RTLD_NOW: an unresolved symbol is a load error here, not a crash on first call.
  // RTLD_NODELETE: the library stays mapped after the last Plugin is gone. Plugins start threads
  // we do not own (oneDNN's OpenMP pool, GPU driver threads); unmapping their code while those
  // threads idle in it crashes the process at exit. Boost.DLL passes the extra bit to dlopen.
  const auto mode = boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local |
                    static_cast<boost::dll::load_mode::type>(RTLD_NODELETE);
  library->library.load(path, mode, error);
  if (error) {
    return unavailable("cannot load '" + path.string() + "': " + dlopen_error_text(path));
  }
  if (!library->library.has(SY_PLUGIN_ENTRY_SYMBOL)) {
    return failed_precondition("'" + path.string() +
                               "' does not export " SY_PLUGIN_ENTRY_SYMBOL
                               "; it is not a switchyard plugin");
  }
  auto entry = library->library.get<const sy_plugin_descriptor*(uint32_t)>(SY_PLUGIN_ENTRY_SYMBOL);
  // The ABI forbids exceptions across the boundary; a plugin that throws anyway is rejected, not
  // allowed to unwind through the host.
  const sy_plugin_descriptor* descriptor = nullptr;
  try {
    descriptor = entry(SY_ABI_VERSION);
  } catch (const std::exception& e) {
    return failed_precondition("'" + path.string() +
                               "': " SY_PLUGIN_ENTRY_SYMBOL " threw an exception (" + e.what() +
                               "); plugins must not throw");
  } catch (...) {
    return failed_precondition("'" + path.string() +
                               "': " SY_PLUGIN_ENTRY_SYMBOL
                               " threw an exception; plugins must not throw");
  }
  if (descriptor == nullptr) {
    return failed_precondition("'" + path.string() + "' returned no descriptor for host ABI " +
                               std::to_string(SY_ABI_VERSION));
  }
  if (descriptor->abi_version != SY_ABI_VERSION) {
    return failed_precondition("'" + path.string() + "' was built for plugin ABI " +
                               std::to_string(descriptor->abi_version) +
                               " but this host speaks ABI " + std::to_string(SY_ABI_VERSION) +
                               "; rebuild the plugin");
  }
  if (descriptor->struct_size != sizeof(sy_plugin_descriptor)) {
    return failed_precondition("'" + path.string() + "' has a descriptor of " +
                               std::to_string(descriptor->struct_size) + " bytes, expected " +
                               std::to_string(sizeof(sy_plugin_descriptor)));
  }
  if (descriptor->functions == nullptr) {
    return failed_precondition("'" + path.string() + "' has no function table");
  }
  SY_RETURN_IF_ERROR(
      check_required_functions(*descriptor->functions).with_context("'" + path.string() + "'"));
  std::shared_ptr<Plugin> plugin(new Plugin());
  plugin->library_ = std::move(library);
  plugin->descriptor_ = descriptor;
  plugin->path_ = path;
  plugin->name_ = bounded_string(descriptor->name, 64);
  plugin->version_ = bounded_string(descriptor->plugin_version, 64);
  plugin->description_ = bounded_string(descriptor->description, 512);
  const std::string file_name = plugin_name_from_path(path);
  if (!file_name.empty() && file_name != plugin->name_) {
    return failed_precondition("'" + path.string() + "' calls itself '" + plugin->name_ +
                               "' but its file name says '" + file_name + "'");
  }
  return plugin;
}

Plugin::~Plugin() = default;

Status Plugin::check(sy_status code, const std::string& context) const {
  if (code == SY_STATUS_OK) return ok_status();
  const char* message = functions().last_error_message();
  std::string text = bounded_string(message, 4096);
  if (text.empty()) text = "(the plugin gave no message)";
  const int raw = static_cast<int>(code);
  const StatusCode status_code =
      (raw >= 0 && raw <= 15) ? static_cast<StatusCode>(raw) : StatusCode::kUnknown;
  return Status(status_code, name_ + ": " + context + ": " + text);
}

Result<uint32_t> Plugin::device_count() const {
  uint32_t count = 0;
  SY_RETURN_IF_ERROR(check(functions().device_count(&count), "device_count"));
  return count;
}

Result<DeviceInfo> Plugin::device_info(uint32_t index) const {
  sy_device_properties props{};
  props.struct_size = sizeof(props);
  SY_RETURN_IF_ERROR(check(functions().device_properties(index, &props), "device_properties"));
  DeviceInfo info;
  info.backend = name_;
  info.index = index;
  info.name = bounded_string(props.name, sizeof(props.name));
  info.vendor = bounded_string(props.vendor, sizeof(props.vendor));
  info.type = device_type_from_abi(props.type);
  info.driver_version = bounded_string(props.driver_version, sizeof(props.driver_version));
  info.runtime_version = bounded_string(props.runtime_version, sizeof(props.runtime_version));
  info.uuid = bounded_string(props.uuid, sizeof(props.uuid));
  info.bus_id = bounded_string(props.bus_id, sizeof(props.bus_id));
  info.details = bounded_string(props.details, sizeof(props.details));
  info.memory_total_bytes = props.memory_total_bytes;
  info.memory_free_bytes = props.memory_free_bytes;
  info.compute_units = props.compute_units;
  return info;
}

}  // namespace switchyard
