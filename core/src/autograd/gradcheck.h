// Gradient checks: autograd's gradients against central finite differences.
//
// Public to the rest of the project (the conformance command and the tests run them on every
// backend), but not part of the installed API, so it lives beside the autograd sources.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/plugin_abi.h"
#include "switchyard/tensor.h"

namespace switchyard {

// A function of tensors whose gradient is checked; it must be deterministic.
using TensorFunction = std::function<Tensor(const std::vector<Tensor>&)>;

struct GradCheckOptions {
  double epsilon = 5e-3;             // central-difference step, in input units
  double relative_tolerance = 2e-2;  // of max(|analytic|, |numeric|)
  double absolute_tolerance = 2e-3;
  uint64_t seed = 7;  // for the projection weights
};

struct GradCheckResult {
  bool passed = false;
  double max_abs_error = 0.0;  // over every checked element
  std::string detail;          // the worst element: input, index, analytic and numeric values
};

// Checks the gradient of L = sum(f(inputs) * w), w a fixed pseudo-random projection, with respect
// to every float input: the autograd gradient against (L(x + eps) - L(x - eps)) / (2 eps) per
// element, evaluated in double on the host from the device's outputs. Integer inputs (labels,
// indices) are passed through unchanged. Inputs should be small (each element costs two calls of
// f) and away from kinks (relu at 0, ties at max) by more than epsilon. Throws on op errors.
GradCheckResult check_gradients(const TensorFunction& function, const std::vector<Tensor>& inputs,
                                const GradCheckOptions& options = {});

enum class GradCaseOutcome { kPassed, kFailed, kSkipped };
const char* grad_case_outcome_name(GradCaseOutcome outcome);  // "passed", "failed", "skipped"

struct GradCaseReport {
  std::string name;  // "conv2d/stride2_dilation2"
  std::string op;    // "conv2d"
  GradCaseOutcome outcome = GradCaseOutcome::kSkipped;
  double max_abs_error = 0.0;
  std::string reason;  // why failed or skipped
};

// The names of the built-in cases, one or more per differentiable op of ops.h.
std::vector<std::string> gradient_case_names();

// Runs every built-in case whose name contains `filter` (empty = all) in f32 on `device`. A case
// whose ops the device does not support (forward or backward) is skipped with the reason; an op
// error is a failed case with the error as reason. Never throws.
std::vector<GradCaseReport> run_gradient_checks(const std::shared_ptr<Device>& device,
                                                const std::string& filter = "",
                                                const GradCheckOptions& options = {});

}  // namespace switchyard
