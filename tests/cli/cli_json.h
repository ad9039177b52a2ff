// Reading the CLI's JSON output (devices/plugins/doctor --json, the metrics file) in tests with
// the strict reader of profile/json_reader.h, instead of searching the text: a field is looked
// up in the object it belongs to, and output that is not valid JSON fails the test.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "profile/json_reader.h"

namespace switchyard::testing {

inline JsonValue parse_json(const std::string& text) {
  return JsonReader(text).parse();
}

// The object of the array `list` whose string `field` is `value`; nullptr when there is none.
inline const JsonValue* entry_with(const JsonValue& list, const std::string& field,
                                   const std::string& value) {
  for (const JsonValue& item : list.items) {
    if (item.has(field) && item.at(field).text == value) return &item;
  }
  return nullptr;
}

// Writes `text` to a file named `name` in the system's temporary folder; returns its path.
inline std::string write_temp_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace switchyard::testing
