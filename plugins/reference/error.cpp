#include "error.h"

#include <utility>

namespace sy_reference {
namespace {
thread_local std::string t_last_error_message;
}  // namespace

void raise(sy_status status, std::string message) {
  throw PluginError(status, std::move(message));
}

const char* last_error_message() {
  return t_last_error_message.c_str();
}

void set_last_error_message(std::string message) {
  t_last_error_message = std::move(message);
}

}  // namespace sy_reference
