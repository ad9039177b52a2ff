// check_gradients and the driver that runs the built-in cases on one device.
#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "autograd/gradient_cases.h"
#include "support/random_bits.h"
#include "switchyard/autograd.h"
#include "switchyard/device.h"
#include "switchyard/dispatch.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"

namespace switchyard {

namespace {

// L = sum(out * w) in double, from the device's output.
double projected(const Tensor& out, const std::vector<double>& weights) {
  const std::vector<float> values = out.to_host_float();
  double total = 0.0;
  for (size_t i = 0; i < values.size(); ++i) total += static_cast<double>(values[i]) * weights[i];
  return total;
}

// Weights in [0.5, 1.5) with random signs, from SplitMix64 (support/random_bits.h) so every
// backend sees the same.
std::vector<double> projection_weights(int64_t count, uint64_t seed) {
  std::vector<double> weights(static_cast<size_t>(count));
  uint64_t state = seed;
  for (double& w : weights) {
    const double u = detail::unit_double(detail::splitmix64_next(state));
    w = (u < 0.5 ? -1.0 : 1.0) * (0.5 + 2.0 * std::fmod(u, 0.5));
  }
  return weights;
}

std::string describe_error(size_t input, size_t element, double analytic, double numeric) {
  char text[160];
  std::snprintf(text, sizeof(text), "input %zu element %zu: analytic %.6g, numeric %.6g", input,
                element, analytic, numeric);
  return text;
}

struct Worst {
  double ratio = -1.0;  // error / tolerance
};

}  // namespace

GradCheckResult check_gradients(const TensorFunction& function, const std::vector<Tensor>& inputs,
                                const GradCheckOptions& options) {
  std::vector<Tensor> leaves;
  for (const Tensor& input : inputs) {
    leaves.push_back(is_floating(input.dtype()) ? input.detach().clone().set_requires_grad(true)
                                                : input);
  }
  const Tensor out = function(leaves);
  const std::vector<double> weights = projection_weights(out.numel(), options.seed);
  std::vector<float> weights_f(weights.begin(), weights.end());
  const Tensor weight_tensor = Tensor::from_host(weights_f, out.shape(), out.device(), out.dtype());
  sum(mul(out, weight_tensor)).backward();

  GradCheckResult result;
  result.passed = true;
  Worst worst;
  NoGradGuard no_grad;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!is_floating(inputs[k].dtype())) continue;
    const Tensor grad = leaves[k].grad();
    const std::vector<float> analytic =
        grad.defined() ? grad.to_host_float() : std::vector<float>(inputs[k].numel(), 0.0f);
    std::vector<float> host = inputs[k].to_host_float();
    std::vector<Tensor> probe = inputs;
    auto evaluate = [&]() {
      probe[k] = Tensor::from_host(host, inputs[k].shape(), inputs[k].device(), inputs[k].dtype());
      return projected(function(probe), weights);
    };
    for (size_t j = 0; j < host.size(); ++j) {
      const float original = host[j];
      const auto plus = static_cast<float>(static_cast<double>(original) + options.epsilon);
      const auto minus = static_cast<float>(static_cast<double>(original) - options.epsilon);
      host[j] = plus;
      const double loss_plus = evaluate();
      host[j] = minus;
      const double loss_minus = evaluate();
      host[j] = original;
      const double numeric =
          (loss_plus - loss_minus) / (static_cast<double>(plus) - static_cast<double>(minus));
      const auto a = static_cast<double>(analytic[j]);
      const double error = std::abs(a - numeric);
      const double tolerance =
          options.absolute_tolerance +
          options.relative_tolerance * std::max(std::abs(a), std::abs(numeric));
      result.max_abs_error = std::max(result.max_abs_error, error);
      if (error / tolerance > worst.ratio) {
        worst.ratio = error / tolerance;
        result.detail = describe_error(k, j, a, numeric);
      }
      if (error > tolerance) result.passed = false;
    }
  }
  return result;
}

const char* grad_case_outcome_name(GradCaseOutcome outcome) {
  switch (outcome) {
    case GradCaseOutcome::kPassed:
      return "passed";
    case GradCaseOutcome::kFailed:
      return "failed";
    case GradCaseOutcome::kSkipped:
      return "skipped";
  }
  return "unknown";
}

std::vector<std::string> gradient_case_names() {
  std::vector<std::string> names;
  for (const GradientCase& c : gradient_cases()) names.push_back(c.name);
  return names;
}

namespace {

GradCaseReport run_case(const GradientCase& c, const std::shared_ptr<Device>& device,
                        const GradCheckOptions& options) {
  GradCaseReport report{c.name, c.op, GradCaseOutcome::kSkipped, 0.0, ""};
  for (sy_op op : c.required_ops) {
    if (!device->supports(op, SY_DTYPE_F32)) {
      report.reason = device->backend() + " does not support " + op_name(op) + " for f32";
      return report;
    }
  }
  try {
    GradCheckOptions case_options = options;
    case_options.epsilon = c.epsilon > 0.0 ? c.epsilon : options.epsilon;
    const GradCheckResult result = check_gradients(c.function, c.make_inputs(device), case_options);
    report.outcome = result.passed ? GradCaseOutcome::kPassed : GradCaseOutcome::kFailed;
    report.max_abs_error = result.max_abs_error;
    report.reason = result.passed ? "" : "worst: " + result.detail;
  } catch (const std::exception& error) {
    report.outcome = GradCaseOutcome::kFailed;
    report.reason = error.what();
  }
  return report;
}

}  // namespace

std::vector<GradCaseReport> run_gradient_checks(const std::shared_ptr<Device>& device,
                                                const std::string& filter,
                                                const GradCheckOptions& options) {
  std::vector<GradCaseReport> reports;
  for (const GradientCase& c : gradient_cases()) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    reports.push_back(run_case(c, device, options));
  }
  return reports;
}

}  // namespace switchyard
