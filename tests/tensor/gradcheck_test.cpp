// Every differentiable op's gradient against central finite differences on the reference backend.
#include <catch2/catch.hpp>

#include "autograd/gradcheck.h"
#include "switchyard/ops.h"
#include "tensor/tensor_test_support.h"

using namespace switchyard;
using switchyard::testing::tensor_of;
using switchyard::testing::test_device;

TEST_CASE("every built-in gradient case passes on the reference backend", "[gradcheck]") {
  const std::vector<GradCaseReport> reports = run_gradient_checks(test_device());
  REQUIRE(reports.size() == gradient_case_names().size());
  REQUIRE(reports.size() >= 40);
  for (const GradCaseReport& report : reports) {
    INFO(report.name << ": " << grad_case_outcome_name(report.outcome) << " " << report.reason
                     << " (max abs error " << report.max_abs_error << ")");
    CHECK(report.outcome == GradCaseOutcome::kPassed);
  }
}

TEST_CASE("the gradient check fails a function whose gradient is wrong", "[gradcheck]") {
  // x * detach(x) has the value x^2 but autograd sees only one factor: gradient x instead of 2x.
  const TensorFunction wrong = [](const std::vector<Tensor>& in) {
    return mul(in[0], in[0].detach());
  };
  const GradCheckResult result = check_gradients(wrong, {tensor_of({0.5, 1.0, -2.0}, {3})});
  CHECK_FALSE(result.passed);
  CHECK(result.max_abs_error > 0.4);
  CHECK_THAT(result.detail, Catch::Contains("analytic") && Catch::Contains("numeric"));
  const TensorFunction right = [](const std::vector<Tensor>& in) { return mul(in[0], in[0]); };
  CHECK(check_gradients(right, {tensor_of({0.5, 1.0, -2.0}, {3})}).passed);
}

TEST_CASE("a filter selects cases by name", "[gradcheck]") {
  const std::vector<GradCaseReport> reports = run_gradient_checks(test_device(), "conv2d/");
  REQUIRE(reports.size() == 2);
  for (const GradCaseReport& report : reports) CHECK(report.op == "conv2d");
}
