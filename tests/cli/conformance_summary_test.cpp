// `switchyard conformance` ends with one row per op and dtype (passed / failed / skipped, with the
// reason for skipping) instead of a line per skipped case, and --json carries the same summary.
#include <catch2/catch.hpp>
#include <filesystem>

#include "backend_support.h"
#include "json_test_support.h"
#include "test_support.h"

using switchyard::testing::cli;
using switchyard::testing::Json;
using switchyard::testing::parse_json;
using switchyard::testing::run_command;
using switchyard::testing::skip_backend;

namespace {

// The template plugin is built into lib/switchyard-examples, next to the plugin folder.
const std::string kExamples = std::string(SWITCHYARD_TEST_PLUGIN_DIR) + "-examples";

bool template_built() {
  return std::filesystem::exists(kExamples + "/libswitchyard-template.so");
}

}  // namespace

TEST_CASE("conformance of the template: a table of skipped ops, no line per case", "[cli]") {
  if (!template_built()) {
    skip_backend("template", "its plugin is not built (SWITCHYARD_PLUGINS)");
    return;
  }
  const auto result = run_command("SWITCHYARD_PLUGIN_PATH=" + kExamples + " " + cli() +
                                  " conformance --backend template --filter relu --no-gradients");
  INFO(result.output);
  CHECK(result.exit_code == 1);  // nothing passed: nothing was shown to work
  CHECK(result.output ==
        "conformance of template:0 against the reference, per op:\n"
        "  op             dtype  passed  failed  skipped\n"
        "  relu           f32         0       0        6  skipped: backend template does not "
        "support relu for f32\n"
        "  relu           f16         0       0        4  skipped: backend template does not "
        "support relu for f16\n"
        "  relu           bf16        0       0        4  skipped: backend template does not "
        "support relu for bf16\n"
        "  relu_backward  f32         0       0        5  skipped: backend template does not "
        "support relu_backward for f32\n"
        "  relu_backward  f16         0       0        3  skipped: backend template does not "
        "support relu_backward for f16\n"
        "  relu_backward  bf16        0       0        3  skipped: backend template does not "
        "support relu_backward for bf16\n"
        "  conv2d_fused   f32         0       0        2  skipped: backend template does not "
        "support conv2d_fused for f32\n"
        "  conv2d_fused   f16         0       0        2  skipped: backend template does not "
        "support conv2d_fused for f16\n"
        "  conv2d_fused   bf16        0       0        2  skipped: backend template does not "
        "support conv2d_fused for bf16\n"
        "0 passed, 0 failed, 31 skipped\n"
        "switchyard conformance: no case passed on template:0 (every case was skipped)\n");
}

TEST_CASE("conformance fails when the filter matches no case", "[cli]") {
  const auto result = run_command(cli() + " conformance --backend reference --filter no-such-op");
  INFO(result.output);
  CHECK(result.exit_code == 1);
  CHECK(result.output.find("no case passed on reference:0 (no case matched)") != std::string::npos);
}

TEST_CASE("conformance --large checks GPU-sized ops on the host (small sizes here)", "[cli]") {
  const auto result = run_command(cli() +
                                  " conformance --backend reference --large --large-matmul 96"
                                  " --large-elements 8192 --json");
  INFO(result.output);
  CHECK(result.exit_code == 0);
  const Json report = parse_json(result.output);
  CHECK(report.at("failed").get<double>() == 0);
  CHECK(report.at("passed").get<double>() == 12);  // 3 matmuls, add, mul, 3 sums, 3 maxes, softmax
  for (const Json& c : report.at("cases")) {
    CHECK(c.at("name").get<std::string>().rfind("large/", 0) == 0);
  }
}

TEST_CASE("conformance --large fails a device that leaves its outputs unwritten", "[cli]") {
  // The wrongmath fixture claims success for ADD and MATMUL in f32 and computes nothing.
  const auto result = run_command(
      "SWITCHYARD_PLUGIN_PATH=" + switchyard::testing::fixture_dir("wrong") + " " + cli() +
      " conformance --backend wrongmath --large "
      "--large-matmul 64 --large-elements 4096");
  INFO(result.output);
  CHECK(result.exit_code == 1);
  CHECK(result.output.find("failed  large/matmul/f32/64^3  nmse inf (tolerance 1e-10)  element 0 "
                           "is -nan (never written, or not finite)") != std::string::npos);
  CHECK(result.output.find("failed  large/add/f32/4096  nmse 1 (tolerance 0)  4096 of 4096 "
                           "elements differ") != std::string::npos);
  CHECK(result.output.find("0 passed, 2 failed, 10 skipped") != std::string::npos);
}

TEST_CASE("conformance --large refuses sizes it cannot use", "[cli]") {
  const auto result = run_command(cli() +
                                  " conformance --backend reference --large "
                                  "--large-elements 5000");
  INFO(result.output);
  CHECK(result.exit_code == 1);
  CHECK(result.output.find("elements 5000 is not a positive multiple of 4096") !=
        std::string::npos);
}

TEST_CASE("conformance rows count passed cases, gradients get rows of their own", "[cli]") {
  const auto result = run_command(cli() + " conformance --backend reference --filter layer_norm");
  INFO(result.output);
  CHECK(result.exit_code == 0);
  CHECK(result.output ==
        "conformance of reference:0 against the reference, per op:\n"
        "  op                     dtype  passed  failed  skipped\n"
        "  layer_norm             f32         6       0        0\n"
        "  layer_norm             f16         7       0        0\n"
        "  layer_norm             bf16        7       0        0\n"
        "  layer_norm_backward    f32         5       0        0\n"
        "  layer_norm_backward    f16         6       0        0\n"
        "  layer_norm_backward    bf16        6       0        0\n"
        "  layer_norm (gradient)  f32         2       0        0\n"
        "39 passed, 0 failed, 0 skipped\n");
}

TEST_CASE("conformance --json carries the per-op summary and every case", "[cli]") {
  if (!template_built()) {
    skip_backend("template", "its plugin is not built (SWITCHYARD_PLUGINS)");
    return;
  }
  // Only stdout: the closing "no case passed" line goes to stderr.
  const auto result = run_command("{ SWITCHYARD_PLUGIN_PATH=" + kExamples + " " + cli() +
                                  " conformance --backend template --filter relu --json "
                                  "2>/dev/null; }");
  INFO(result.output);
  CHECK(result.exit_code == 1);  // every case skipped
  const Json report = parse_json(result.output);
  CHECK(report.at("device").get<std::string>() == "template:0");
  // 31 forward cases (relu's special values and CONV2D_FUSED's relu ones among them) and the relu
  // gradient check.
  CHECK(report.at("skipped").get<double>() == 32);
  const Json& summary = report.at("summary");
  REQUIRE(summary.size() == 10);
  const Json& first = summary[0];
  CHECK(first.at("op").get<std::string>() == "relu");
  CHECK(first.at("dtype").get<std::string>() == "f32");
  CHECK(first.at("passed").get<double>() == 0);
  CHECK(first.at("skipped").get<double>() == 6);
  REQUIRE(first.at("skip_reasons").size() == 1);
  CHECK(first.at("skip_reasons")[0].get<std::string>() ==
        "backend template does not support relu for f32");
  CHECK(summary[9].at("op").get<std::string>() == "relu (gradient)");
  CHECK(report.at("cases").size() == 32);
}

TEST_CASE("conformance --drawn: cases drawn from the seed, named for what they drew", "[cli]") {
  const std::string command = cli() + " conformance --backend reference --no-gradients --json";
  const auto result = run_command(command + " --drawn 2 --seed 5 --filter /drawn");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const Json report = parse_json(result.output);
  // 2 for each op of the op set (docs/ops.md, "Tolerances"): 63 ops.
  CHECK(report["passed"] == 126);
  CHECK(report["failed"] == 0);
  for (const Json& c : report["cases"]) {
    const std::string name = c["name"];
    INFO(name);
    CHECK(
        (name.find("/drawn0/") != std::string::npos || name.find("/drawn1/") != std::string::npos));
  }
  const auto again = run_command(command + " --drawn 2 --seed 5 --filter /drawn");
  CHECK(again.output == result.output);
  const auto negative = run_command(command + " --drawn -1");
  CHECK(negative.exit_code == 2);
  CHECK(negative.output.find("--drawn -1: expected a number of cases >= 0") != std::string::npos);
}

// A CPU without AVX-512 runs other code than this machine: oneDNN's AVX2 kernels, or below AVX2
// its SSE4.1 ones, bf16 computed through f32 where oneDNN has no bf16 kernel, and the plugin's
// fallbacks for its own AVX-512 kernels (depthwise, 2x2 max pool, SiLU, Philox, the transposed
// sgemm path). ONEDNN_MAX_CPU_ISA caps oneDNN's ISA and, with it, the plugin's (cpu_info.h), so
// those paths are checked here, on the fixed table and on drawn cases. The SSE4.1 kernels crashed
// on a channels-last depthwise convolution with a residual until 2026-11-29 (conv.cpp,
// legacy_sum).
TEST_CASE("conformance on onednn with the ISA capped at AVX2 and at AVX: the paths of older CPUs",
          "[cli]") {
  if (switchyard::testing::optional_device("onednn") == nullptr) return;
  struct Cap {
    std::string isa;   // ONEDNN_MAX_CPU_ISA
    std::string name;  // oneDNN's name for it, as `devices` prints it
    bool supported;    // this CPU has it (else oneDNN runs a lower one)
  };
  for (const Cap& cap : {Cap{"AVX2", "avx2", __builtin_cpu_supports("avx2") != 0},
                         Cap{"AVX", "avx", __builtin_cpu_supports("avx") != 0}}) {
    const std::string& isa = cap.isa;
    INFO("ONEDNN_MAX_CPU_ISA=" << isa);
    const std::string capped = "ONEDNN_MAX_CPU_ISA=" + isa + " " + cli();
    const auto devices = run_command(capped + " devices");
    INFO(devices.output);
    REQUIRE(devices.exit_code == 0);
    CHECK(devices.output.find("ISA avx512") == std::string::npos);
    if (cap.supported) CHECK(devices.output.find("ISA " + cap.name + ";") != std::string::npos);
    // No AVX-512 ISA, so no oneDNN bf16 kernels: the details say so.
    CHECK(devices.output.find("f32 native, bf16 and f16 computed in f32") != std::string::npos);
    const auto result =
        run_command(capped + " conformance --backend onednn --drawn 10 --seed 3 --no-gradients");
    INFO(result.output.substr(result.output.size() > 4000 ? result.output.size() - 4000 : 0));
    CHECK(result.exit_code == 0);
    CHECK(result.output.find(" 0 failed") != std::string::npos);
  }
}
