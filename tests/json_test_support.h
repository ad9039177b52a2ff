// Reading the JSON that switchyard writes (trace files, --json output, metrics files) in tests,
// strictly: the core's nlohmann-based parser (support/json_io.h) throws on a syntax error, invalid
// UTF-8, text after the value and a repeated member name, so output that a strict consumer would
// refuse fails the test.
#pragma once

#include <filesystem>
#include <string>

#include "support/json_io.h"
#include "test_support.h"

namespace switchyard::testing {

using Json = detail::Json;

inline Json parse_json(const std::string& text) {
  return detail::parse_strict_json(text);
}

inline Json read_json_file(const std::filesystem::path& path) {
  return parse_json(read_text(path));
}

// Whether `object` has a member `key` of the kind `is` tests, e.g. is_kind(e, "ts",
// &Json::is_number).
inline bool is_kind(const Json& object, const std::string& key, bool (Json::*is)() const noexcept) {
  return object.contains(key) && (object.at(key).*is)();
}

// The object of the array `list` whose string `field` is `value`; nullptr when there is none.
inline const Json* entry_with(const Json& list, const std::string& field,
                              const std::string& value) {
  for (const Json& item : list) {
    if (item.contains(field) && item.at(field) == value) return &item;
  }
  return nullptr;
}

}  // namespace switchyard::testing
