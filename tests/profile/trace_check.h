// Reading trace and report files in the profile tests, and the checks every trace event must pass
// whatever produced it (the fields Perfetto's JSON importer and chrome://tracing need).
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "profile/json_reader.h"

namespace switchyard::testing {

// Parses a whole file as strict JSON (throws on anything else).
inline JsonValue read_json_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return JsonReader(text.str()).parse();
}

inline bool is_kind(const JsonValue& object, const std::string& key, JsonValue::Kind kind) {
  return object.has(key) && object.at(key).kind == kind;
}

// Checks every event of a "traceEvents" array: name, ph, pid and tid on all; process and thread
// names ('M') carry args.name; complete events ('X') carry cat, ts and dur, both >= 0. Returns the
// complete events, in file order.
inline std::vector<const JsonValue*> checked_timed_events(const JsonValue& events) {
  using Kind = JsonValue::Kind;
  std::vector<const JsonValue*> timed;
  for (const JsonValue& e : events.items) {
    REQUIRE(e.kind == Kind::kObject);
    REQUIRE(is_kind(e, "name", Kind::kString));
    REQUIRE(is_kind(e, "ph", Kind::kString));
    REQUIRE(is_kind(e, "pid", Kind::kNumber));
    REQUIRE(is_kind(e, "tid", Kind::kNumber));
    const std::string& ph = e.at("ph").text;
    REQUIRE((ph == "X" || ph == "M"));
    if (ph == "M") {  // metadata (process and thread names) carries no time
      REQUIRE(is_kind(e, "args", Kind::kObject));
      CHECK(is_kind(e.at("args"), "name", Kind::kString));
      continue;
    }
    REQUIRE(is_kind(e, "ts", Kind::kNumber));
    REQUIRE(is_kind(e, "dur", Kind::kNumber));
    REQUIRE(is_kind(e, "cat", Kind::kString));
    CHECK(e.at("ts").number >= 0);
    CHECK(e.at("dur").number >= 0);
    timed.push_back(&e);
  }
  return timed;
}

}  // namespace switchyard::testing
