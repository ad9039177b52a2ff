// The checks every trace event must pass whatever produced it (the fields Perfetto's JSON importer
// and chrome://tracing need). The files are read with json_test_support.h.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "json_test_support.h"

namespace switchyard::testing {

// Checks every event of a "traceEvents" array: name, ph, pid and tid on all; process and thread
// names ('M') carry args.name; complete events ('X') carry cat, ts and dur, both >= 0. Returns the
// complete events, in file order.
inline std::vector<const Json*> checked_timed_events(const Json& events) {
  std::vector<const Json*> timed;
  for (const Json& e : events) {
    REQUIRE(e.is_object());
    REQUIRE(is_kind(e, "name", &Json::is_string));
    REQUIRE(is_kind(e, "ph", &Json::is_string));
    REQUIRE(is_kind(e, "pid", &Json::is_number));
    REQUIRE(is_kind(e, "tid", &Json::is_number));
    const std::string ph = e.at("ph").get<std::string>();
    REQUIRE((ph == "X" || ph == "M"));
    if (ph == "M") {  // metadata (process and thread names) carries no time
      REQUIRE(is_kind(e, "args", &Json::is_object));
      CHECK(is_kind(e.at("args"), "name", &Json::is_string));
      continue;
    }
    REQUIRE(is_kind(e, "ts", &Json::is_number));
    REQUIRE(is_kind(e, "dur", &Json::is_number));
    REQUIRE(is_kind(e, "cat", &Json::is_string));
    CHECK(e.at("ts").get<double>() >= 0);
    CHECK(e.at("dur").get<double>() >= 0);
    timed.push_back(&e);
  }
  return timed;
}

}  // namespace switchyard::testing
