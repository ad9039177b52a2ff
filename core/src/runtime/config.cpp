// Config: reads a YAML file (or string), applies --set overrides, validates the result against the
// schema and fills RuntimeSettings. Nothing here throws: yaml-cpp's exceptions become statuses.
#include "switchyard/config.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "runtime/config_document.h"
#include "runtime/config_overrides.h"
#include "runtime/config_runtime.h"
#include "runtime/config_text.h"
#include "runtime/config_validate.h"

namespace switchyard {
namespace {

// At most this many problems are listed; the rest are counted.
constexpr std::size_t kMaxListedErrors = 20;

std::filesystem::path current_directory() {
  std::error_code error;
  std::filesystem::path path = std::filesystem::current_path(error);
  return error ? std::filesystem::path(".") : path;
}

Status errors_to_status(const std::vector<ConfigError>& errors) {
  std::string message;
  for (std::size_t i = 0; i < errors.size() && i < kMaxListedErrors; ++i) {
    if (i > 0) message += "\n";
    message += errors[i].text;
  }
  if (errors.size() > kMaxListedErrors) {
    message += "\n... and " + std::to_string(errors.size() - kMaxListedErrors) + " more errors";
  }
  return invalid_argument(message);
}

// Reads the whole file; NOT_FOUND when it does not exist.
Result<std::string> read_config_file(const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    return not_found("config file '" + path.string() + "' does not exist");
  }
  if (status.type() == std::filesystem::file_type::directory) {
    return invalid_argument("config file '" + path.string() +
                            "' is a directory, expected a YAML file");
  }
  // Refused by its size before a byte is read (config_text.h's bound).
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxConfigBytes) {
    return invalid_argument("config file '" + path.string() + "' is " + std::to_string(size) +
                            " bytes; at most " + std::to_string(kMaxConfigBytes) +
                            " are read (a configuration is a few kilobytes)");
  }
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    return Status(StatusCode::kPermissionDenied,
                  "cannot open config file '" + path.string() + "': " + std::strerror(errno));
  }
  // At most one byte past the bound is read, so that a FIFO or a device is bounded too.
  std::string text(kMaxConfigBytes + 1, '\0');
  stream.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (stream.bad()) return data_loss("cannot read config file '" + path.string() + "'");
  text.resize(static_cast<std::size_t>(stream.gcount()));
  if (text.size() > kMaxConfigBytes) {
    return invalid_argument("config file '" + path.string() + "' holds more than " +
                            std::to_string(kMaxConfigBytes) +
                            " bytes; at most that many are read (a configuration is a few "
                            "kilobytes)");
  }
  return text;
}

Result<std::shared_ptr<ConfigDocument>> build_document(const std::string& text,
                                                       const std::string& display_name,
                                                       const std::filesystem::path& directory,
                                                       const std::vector<std::string>& overrides) {
  auto document = std::make_shared<ConfigDocument>();
  document->file = display_name;
  document->directory = directory;
  SY_RETURN_IF_ERROR(parse_config_text(text, *document));
  for (const std::string& assignment : overrides) {
    SY_RETURN_IF_ERROR(apply_config_override(*document, assignment));
  }
  const std::vector<ConfigError> errors = validate_document(*document);
  if (!errors.empty()) return errors_to_status(errors);
  return document;
}

}  // namespace

Result<Config> Config::load_text(const std::string& text, const std::string& display_name,
                                 const std::filesystem::path& directory,
                                 const std::vector<std::string>& overrides) {
  try {
    SY_ASSIGN_OR_RETURN(std::shared_ptr<ConfigDocument> document,
                        build_document(text, display_name, directory, overrides));
    auto root = std::make_shared<ConfigNode::Impl>();
    root->document = document;
    root->node = document->root;
    root->present = true;
    root->location = node_location(*document, document->root, "");
    if (root->location.line == 0) root->location = {display_name, 1, 1};
    Config config;
    config.file_ = display_name;
    config.root_.impl_ = std::move(root);
    SY_RETURN_IF_ERROR(fill_runtime_settings(config.root_, directory, config.runtime_));
    return config;
  } catch (const std::exception& error) {
    // yaml-cpp may throw on a case the checks above did not foresee; never let it escape.
    return internal_error("loading config '" + display_name + "': " + error.what());
  }
}

Result<Config> Config::load_string(const std::string& text, const std::string& display_name,
                                   const std::vector<std::string>& overrides) {
  return load_text(text, display_name, current_directory(), overrides);
}

Result<Config> Config::load_string(const std::string& text, const std::string& display_name,
                                   const std::filesystem::path& directory,
                                   const std::vector<std::string>& overrides) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(directory, error);
  if (error) absolute = directory;
  return load_text(text, display_name, absolute.lexically_normal(), overrides);
}

Result<Config> Config::load_file(const std::filesystem::path& path,
                                 const std::vector<std::string>& overrides) {
  SY_ASSIGN_OR_RETURN(const std::string text, read_config_file(path));
  // Relative paths in the file resolve against its folder, not the current one.
  std::error_code error;
  std::filesystem::path directory = std::filesystem::absolute(path, error).parent_path();
  if (error) directory = path.parent_path();
  return load_text(text, path.string(), directory.lexically_normal(), overrides);
}

Config Config::defaults() {
  auto document = std::make_shared<ConfigDocument>();
  document->file = "<defaults>";
  document->directory = current_directory();
  auto root = std::make_shared<ConfigNode::Impl>();
  root->document = document;
  root->node = document->root;
  root->present = true;
  root->location = {document->file, 0, 0};
  Config config;
  config.file_ = document->file;
  config.root_.impl_ = std::move(root);
  return config;
}

std::filesystem::path Config::directory() const {
  if (root_.impl_ && root_.impl_->document) return root_.impl_->document->directory;
  return current_directory();
}

}  // namespace switchyard
