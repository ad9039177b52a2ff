// The fallback line a run prints when `auto` lands below the first backend of the list: one short
// line, the full reasons left to `doctor` and `devices`, and still all of them with fallback:
// error.
#include <catch2/catch.hpp>

#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::fixture_dir;
using switchyard::testing::run_command;

namespace {

// A short training run on the list nodriver (no driver), wrongmath (fails the smoke test),
// reference, with `extra` before the command.
switchyard::testing::CommandResult run_with_fallback(const std::string& extra) {
  // Only stderr is kept: the run's own report goes to stdout.
  return run_command("(SWITCHYARD_PLUGIN_PATH=" + fixture_dir("wrong") +
                     " SWITCHYARD_BACKENDS=nodriver,wrongmath,reference " + extra + cli() +
                     " run " + SWITCHYARD_SOURCE_DIR + "/configs/iris-mlp.yaml" +
                     " --set train.epochs=1 --set train.checkpoint=none --set train.progress=none" +
                     " 2>&1 >/dev/null)");
}

}  // namespace

TEST_CASE("a run that falls back prints one short line naming the device", "[cli][fallback]") {
  const auto result = run_with_fallback("");
  INFO(result.output);
  CHECK(result.exit_code == 0);
  CHECK(result.output ==
        "switchyard: using reference:0 (nodriver: no driver; wrongmath: its device failed the "
        "probe)\n");
}

TEST_CASE("fallback: silent prints nothing and fallback: error keeps every reason",
          "[cli][fallback]") {
  const auto silent = run_with_fallback("SWITCHYARD_FALLBACK=silent ");
  CHECK(silent.exit_code == 0);
  CHECK(silent.output.empty());
  const auto error = run_with_fallback("SWITCHYARD_FALLBACK=error ");
  INFO(error.output);
  CHECK(error.exit_code != 0);
  CHECK(error.output ==
        "switchyard: error: using reference:0 (reference (plain C++)) instead of a higher-priority "
        "backend. Skipped: nodriver: device_count: libfixture-driver.so.1: cannot open shared "
        "object file (fixture); wrongmath: wrongmath:0 (fixture device): INTERNAL: the smoke test "
        "gave a wrong answer: add[0] = 0.000000 (expected 8.000000), matmul[0] = 0.000000 "
        "(expected 58.000000) (fallback: error)\n");
}
