// Conformance: every op and dtype of one device checked against the reference plugin.
//
// The suite is compiled once and run against any device. Each case makes inputs with a fixed seed,
// runs the op on the target and on the reference device, and compares the outputs by normalised
// mean squared error, NMSE = sum((t - r)^2) / sum(r^2) (or the
// plain squared-error sum when sum(r^2) == 0), against the op's tolerance
// (docs/ops.md). A case the target does not support is reported as skipped with the reason, never
// as passed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/device.h"

namespace switchyard::conformance {

enum class Outcome { kPassed, kFailed, kSkipped };
const char* outcome_name(Outcome outcome);  // "passed", "failed", "skipped"

struct CaseResult {
  std::string name;   // "matmul/f32/transpose_b/batched", unique
  std::string op;     // "matmul"
  std::string dtype;  // "f32"
  Outcome outcome = Outcome::kSkipped;
  double nmse = 0.0;  // worst output; integer outputs report mismatches as 1.0 / 0.0
  double tolerance = 0.0;
  std::string reason;  // why failed or skipped
};

struct Report {
  std::string backend;
  std::string device_id;
  std::string device_settings;  // the target's settings line after the run (Device::settings)
  std::vector<CaseResult> cases;
  int passed() const;
  int failed() const;
  int skipped() const;
};

struct Options {
  std::string filter;  // only cases whose name contains this text; empty = all
  uint64_t seed = 1;
  // Drawn cases per op, after the fixed table (cases.h: drawn_cases); 0 =
  // none. Their shapes and parameters come from `seed` too.
  int drawn = 0;
};

// Runs every case. Never throws; a case that errors is a failed case with the status as reason.
Report run(Device& target, Device& reference, const Options& options = {});

// The large mode (`switchyard conformance --large`): a square matmul in f32, f16 and bf16,
// elementwise ops, reductions and a row softmax over `elements` elements, each checked on the host
// (core/src/conformance/large.cpp says how), without the reference backend. Sizes meant for a GPU:
// the defaults need about 2 GiB of device memory, and beyond_32bit adds an f16 ADD over
// 2^31 + 1027 elements (12 GiB on the device, 4 GiB on the host).
struct LargeOptions {
  int64_t matmul_size = 4096;           // M = N = K
  int64_t elements = int64_t{1} << 27;  // a positive multiple of 4096
  bool beyond_32bit = false;
  std::string filter;  // only cases whose name contains this text
  uint64_t seed = 1;
};

// Runs the large cases on `target`. Never throws; invalid options are one failed case.
Report run_large(Device& target, const LargeOptions& options = {});

// One row of the per-op summary: the cases of one op and dtype. Gradient checks (cases named
// "grad/...") have rows of their own, with op "<op> (gradient)".
struct OpSummary {
  std::string op;
  std::string dtype;
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  std::vector<std::string> skip_reasons;  // distinct, in case order
};

// The report's cases grouped by op and dtype, rows in the order of the cases.
std::vector<OpSummary> summarize_by_op(const Report& report);

}  // namespace switchyard::conformance
