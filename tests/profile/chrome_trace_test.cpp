// The Chrome trace file: strict JSON whatever the span names hold, the fields Perfetto and
// chrome://tracing need on every event, one event per op, and a device track where device time
// was measured.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "profile/profile_test_support.h"
#include "profile/trace_check.h"
#include "switchyard/ops.h"
#include "switchyard/profile.h"
#include "switchyard/tensor.h"

using namespace switchyard;
using switchyard::testing::checked_timed_events;
using switchyard::testing::is_kind;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::profile_device;
using switchyard::testing::read_json_file;

namespace {

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("switchyard-profile-test-" + std::to_string(::getpid())) / name;
}

// The events of category `category`, after the checks every event must pass; here every complete
// event also carries args.
std::vector<const Json*> check_events(const Json& events, const std::string& category) {
  std::vector<const Json*> found;
  for (const Json* e : checked_timed_events(events)) {
    REQUIRE(is_kind(*e, "args", &Json::is_object));
    if (e->at("cat") == category) found.push_back(e);
  }
  return found;
}

}  // namespace

TEST_CASE("the trace file is strict JSON with one complete event per op", "[profile][trace]") {
  const auto& device = profile_device();
  const Tensor a = Tensor::from_host({1, 2, 3, 4, 5, 6}, {2, 3}, device);
  const Tensor w = Tensor::from_host(std::vector<float>(12, 0.5f), {3, 4}, device);
  const std::string nasty =
      "quote \" backslash \\ newline \n tab \t bell \x07 bad \xff utf8 \xc3\xa9";
  Profiler profiler;
  {
    ProfileScope scope(profiler);
    auto span = profile_span(nasty);
    const Tensor m = matmul(a, w);
    const Tensor r = relu(m);
  }
  const std::filesystem::path path = temp_path("trace.json");
  const Status status = profiler.write_chrome_trace(path);
  REQUIRE(status.ok());
  // Written through a temporary file that is gone afterwards.
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path())) {
    CHECK(entry.path().filename() == "trace.json");
  }
  const Json trace = read_json_file(path);
  REQUIRE(trace.is_object());
  REQUIRE(is_kind(trace, "displayTimeUnit", &Json::is_string));
  CHECK(trace.at("displayTimeUnit") == "ms");
  REQUIRE(is_kind(trace, "traceEvents", &Json::is_array));
  const Json& events = trace.at("traceEvents");

  const auto ops = check_events(events, "op");
  REQUIRE(ops.size() == 2);
  CHECK(ops[0]->at("name") == "matmul");
  CHECK(ops[1]->at("name") == "relu");
  const Json& args = ops[0]->at("args");
  REQUIRE(is_kind(args, "input_shapes", &Json::is_array));
  REQUIRE(args.at("input_shapes").size() == 2);
  CHECK(args.at("input_shapes")[0] == "[2, 3]");
  CHECK(args.at("input_shapes")[1] == "[3, 4]");
  REQUIRE(args.at("output_shapes").size() == 1);
  CHECK(args.at("output_shapes")[0] == "[2, 4]");
  CHECK(args.at("input_dtypes")[0] == "f32");
  CHECK(args.at("output_dtypes")[0] == "f32");
  CHECK(args.at("backend") == "reference");
  CHECK(args.at("device") == "reference:0");
  REQUIRE(is_kind(args, "device_time_us", &Json::is_number));
  REQUIRE(is_kind(args, "fallback", &Json::is_boolean));
  CHECK_FALSE(args.at("fallback").get<bool>());
  CHECK(ops[0]->at("pid") == 1);

  const auto spans = check_events(events, "span");
  REQUIRE(spans.size() == 1);
  // The invalid byte became U+FFFD; everything else came back exactly.
  CHECK(spans[0]->at("name") ==
        "quote \" backslash \\ newline \n tab \t bell \x07 bad \xef\xbf\xbd utf8 \xc3\xa9");
  CHECK(spans[0]->at("ts").get<double>() <= ops[0]->at("ts").get<double>());

  bool host_named = false;
  for (const Json& e : events) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") {
      host_named = host_named || e.at("args").at("name") == "switchyard host";
    }
  }
  CHECK(host_named);
  CHECK(check_events(events, "device").empty());  // no measured device time on the reference
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("measured device time gets its own track in the trace", "[profile][trace]") {
  const Tensor x = Tensor::from_host({1, 2, 3, 4}, {4}, profile_device());
  ProfilerOptions options;
  options.device_timing = DeviceTiming::kAnyEvents;
  Profiler profiler(options);
  {
    ProfileScope scope(profiler);
    for (int i = 0; i < 4; ++i) (void)exp(x);
  }
  const std::filesystem::path path = temp_path("device.json");
  REQUIRE(profiler.write_chrome_trace(path).ok());
  const Json trace = read_json_file(path);
  const Json& events = trace.at("traceEvents");
  const auto host_ops = check_events(events, "op");
  const auto device_ops = check_events(events, "device");
  REQUIRE(host_ops.size() == 4);
  REQUIRE(device_ops.size() == 4);
  for (size_t i = 0; i < device_ops.size(); ++i) {
    CHECK(device_ops[i]->at("name") == "exp");
    CHECK(device_ops[i]->at("pid") != 1);
    CHECK(host_ops[i]->at("args").at("device_time_measured").get<bool>());
  }
  bool device_named = false;
  for (const Json& e : events) {
    if (e.at("ph") == "M" && e.at("pid") == device_ops[0]->at("pid")) {
      const std::string name = e.at("args").at("name").get<std::string>();
      device_named = device_named || name.rfind("device reference:0", 0) == 0;
    }
  }
  CHECK(device_named);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("a trace that cannot be written is an error naming the path", "[profile][trace]") {
  Profiler profiler;
  const Status status = profiler.write_chrome_trace("/proc/switchyard-no-such-dir/trace.json");
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find("/proc/switchyard-no-such-dir") != std::string::npos);
}

TEST_CASE("the JSON reader rejects what strict parsers reject", "[profile][json]") {
  const char* const bad[] = {
      "{\"a\": 1,}",
      "[1, 2,]",
      "{\"a\": NaN}",
      "{\"a\": 01}",
      "\"tab\tinside\"",
      "\"bad \\x escape\"",
      "{\"a\": 1} extra",
      "{\"a\": 1} {}",
      "{\"a\": 1, \"a\": 2}",
      "[{\"x\": {\"b\": 1, \"c\": 2, \"b\": 3}}]",  // a repeated name in a nested object
      "\"\xff\"",
      "\"\xc0\xaf\"",  // an overlong encoding of '/'
      "\"\\ud800\"",   // an unpaired surrogate
      "[1.]",
      "{a: 1}",
      "",
  };
  for (const char* text : bad) {
    INFO(text);
    CHECK_THROWS(parse_json(text));
  }
  const Json ok = parse_json("{\"a\": [1, -2.5e3, true, null, \"\\u00e9\\n\"]}\n");
  REQUIRE(ok.at("a").size() == 5);
  CHECK(ok.at("a")[1].get<double>() == -2500);
  CHECK(ok.at("a")[4] == "\xc3\xa9\n");
  // The same name in two different objects is no repetition.
  const Json siblings = parse_json("[{\"k\": 1}, {\"k\": 2, \"o\": {\"k\": 3}}]");
  CHECK(siblings[1].at("o").at("k") == 3);
}

TEST_CASE("the JSON writer gives valid JSON for any string and number", "[profile][json]") {
  const Json value{{"name", "bad \xff byte"},
                   {"nan", std::nan("")},
                   {"inf", std::numeric_limits<double>::infinity()}};
  const std::string text = switchyard::detail::json_text(value);
  CHECK(text == "{\"name\":\"bad \xef\xbf\xbd byte\",\"nan\":null,\"inf\":null}");
  CHECK(parse_json(text).at("name") == "bad \xef\xbf\xbd byte");
}
