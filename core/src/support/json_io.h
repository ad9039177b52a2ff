// JSON through nlohmann::json for the files switchyard writes and reads (trace, safetensors
// header) and for the CLI's --json output. Private to the core, the CLI and the tests: the library
// header is heavy, so no public header includes it.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::detail {

// Objects keep their members in the order they were added or read, so output reads as written.
using Json = nlohmann::ordered_json;

// `value` as JSON text, on one line (indent < 0) or indented. Strings that are not valid UTF-8
// (user-given span names, file paths) have each bad byte written as U+FFFD instead of throwing,
// and NaN and infinities come out as null, so the text is always valid JSON.
inline std::string json_text(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// A member name that occurs twice in one object. nlohmann's parser accepts that silently (the last
// value wins), which would let a damaged file or a writer bug pass unnoticed.
class DuplicateJsonKey : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses `text` as exactly one JSON document (RFC 8259). Throws Json::parse_error on a syntax
// error, invalid UTF-8 or anything but whitespace after the value, and DuplicateJsonKey for a
// repeated member name.
inline Json parse_strict_json(std::string_view text) {
  std::vector<std::set<std::string>> open_objects;  // the member names met so far, per object
  const Json::parser_callback_t reject_duplicates = [&](int, Json::parse_event_t event,
                                                        Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      open_objects.pop_back();
    } else if (event == Json::parse_event_t::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second) {
        throw DuplicateJsonKey("duplicate member name '" + key + "'");
      }
    }
    return true;
  };
  return Json::parse(text, reject_duplicates);
}

}  // namespace switchyard::detail
