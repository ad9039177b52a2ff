// Helpers for the configuration tests.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/config.h"

namespace switchyard::testing {

inline std::string config_data_file(const std::string& name) {
  return std::string(SWITCHYARD_SOURCE_DIR) + "/tests/config/data/" + name;
}

// The status of loading `text` as "cfg.yaml"; OK when it loaded.
inline Status config_status(const std::string& text,
                            const std::vector<std::string>& overrides = {}) {
  return Config::load_string(text, "cfg.yaml", overrides).status();
}

// Sets an environment variable for the lifetime of the guard, then restores the old value.
class ScopedEnvironment {
 public:
  ScopedEnvironment(std::string name, const std::optional<std::string>& value)
      : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) {
      setenv(name_.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ~ScopedEnvironment() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace switchyard::testing
