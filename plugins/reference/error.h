// Errors inside the reference plugin.
//
// Inside the plugin a failure is one exception type, thrown from raise() and caught only at the
// ABI boundary (entry.cpp), which turns it into a status code plus the thread's last-error message.
// This keeps the op code readable (validation reads as a list of requirements) while no exception
// ever crosses into the host.
#pragma once

#include <exception>
#include <string>

#include "switchyard/plugin_abi.h"

namespace sy_reference {

class PluginError : public std::exception {
 public:
  PluginError(sy_status status, std::string message)
      : status_(status), message_(std::move(message)) {}
  sy_status status() const { return status_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  sy_status status_;
  std::string message_;
};

// Throws PluginError; the single place the plugin raises an error.
[[noreturn]] void raise(sy_status status, std::string message);

// The calling thread's message for its last failed call ("" if none).
const char* last_error_message();
void set_last_error_message(std::string message);

}  // namespace sy_reference
