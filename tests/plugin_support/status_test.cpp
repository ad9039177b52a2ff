// The rest of switchyard/plugin_support/: the Status the cuda and vulkan plugins report with,
// byte formatting, and the rule that plugins include no other switchyard header.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "switchyard/plugin_support/format_bytes.h"
#include "switchyard/plugin_support/status.h"
#include "test_support.h"

using switchyard::testing::read_text;

namespace {

sy_support::Status fail_then_continue(bool fail, int* reached) {
  SY_SUPPORT_RETURN_IF_ERROR(fail ? sy_support::out_of_range("step 1") : sy_support::ok_status());
  *reached = 2;
  return sy_support::ok_status();
}

}  // namespace

TEST_CASE("plugin Status: helpers, context, report and the thread's last error",
          "[plugin_support]") {
  CHECK(sy_support::ok_status().ok());
  CHECK(sy_support::invalid_argument("x").code() == SY_STATUS_INVALID_ARGUMENT);
  CHECK(sy_support::unimplemented("x").code() == SY_STATUS_UNIMPLEMENTED);
  CHECK(sy_support::unavailable("x").code() == SY_STATUS_UNAVAILABLE);
  CHECK(sy_support::internal_error("x").code() == SY_STATUS_INTERNAL);
  CHECK(sy_support::resource_exhausted("x").code() == SY_STATUS_RESOURCE_EXHAUSTED);
  CHECK(sy_support::out_of_range("x").code() == SY_STATUS_OUT_OF_RANGE);

  const sy_support::Status failed = sy_support::invalid_argument("bad shape");
  CHECK(failed.with_context("RELU").message() == "RELU: bad shape");
  CHECK(failed.with_context("RELU").code() == SY_STATUS_INVALID_ARGUMENT);
  CHECK(sy_support::ok_status().with_context("RELU").message().empty());

  CHECK(sy_support::report(failed) == SY_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(sy_support::last_error()) == "bad shape");
  CHECK(sy_support::report(sy_support::ok_status()) == SY_STATUS_OK);
  CHECK(std::string(sy_support::last_error()).empty());

  int reached = 1;
  const sy_support::Status early = fail_then_continue(true, &reached);
  CHECK(early.code() == SY_STATUS_OUT_OF_RANGE);
  CHECK(reached == 1);
  CHECK(fail_then_continue(false, &reached).ok());
  CHECK(reached == 2);
}

TEST_CASE("format_bytes gives the scale and the exact count", "[plugin_support]") {
  CHECK(sy_support::format_bytes(0) == "0 bytes");
  CHECK(sy_support::format_bytes(1023) == "1023 bytes");
  CHECK(sy_support::format_bytes(1024) == "1.0 KiB (1024 bytes)");
  CHECK(sy_support::format_bytes(1572864) == "1.5 MiB (1572864 bytes)");
  CHECK(sy_support::format_bytes(uint64_t{1} << 42) == "4.0 TiB (4398046511104 bytes)");
  CHECK(sy_support::format_bytes(UINT64_MAX) == "16.0 EiB (18446744073709551615 bytes)");
}

// docs/writing-a-backend.md, section 2: a plugin includes only the header-only, ABI-stable
// switchyard headers, plugin_abi.h and plugin_support/; plugin_support itself needs nothing else.
TEST_CASE("plugins include no switchyard header but plugin_abi.h and plugin_support/",
          "[plugin_support]") {
  namespace fs = std::filesystem;
  const fs::path source(SWITCHYARD_SOURCE_DIR);
  const std::regex include(R"(#\s*include\s*[<"](switchyard/[^>"]+)[>"])");
  const std::regex allowed(R"(switchyard/(plugin_abi\.h|plugin_support/[A-Za-z0-9_]+\.h))");
  std::vector<std::string> violations;
  size_t files = 0;
  for (const fs::path& root :
       {source / "plugins", source / "core/include/switchyard/plugin_support"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file()) continue;
      if (extension != ".h" && extension != ".cpp" && extension != ".cu" && extension != ".cuh") {
        continue;
      }
      ++files;
      const std::string text = read_text(entry.path());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), include);
           it != std::sregex_iterator(); ++it) {
        const std::string header = (*it)[1].str();
        if (!std::regex_match(header, allowed)) {
          violations.push_back(entry.path().string() + ": " + header);
        }
      }
    }
  }
  CHECK(files > 100);
  for (const std::string& violation : violations) UNSCOPED_INFO(violation);
  CHECK(violations.empty());
}
