// The special-value conformance cases (core/src/conformance/cases_special.cpp) judge every backend
// against the reference, so the reference itself must give what docs/ops.md and PyTorch give.
// Each expectation below was read off PyTorch 1.13 (torch.sign, torch.softmax, max_pool2d,
// torch.relu/clamp, sum, argmax, ...) on the same inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "conformance/cases.h"
#include "conformance/execute.h"
#include "test_support.h"

namespace switchyard::conformance {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The reference's outputs for the named case, in row-major order.
std::vector<std::vector<double>> reference_outputs(const std::string& name) {
  for (const CaseDef& def : all_cases()) {
    if (def.name != name) continue;
    Generator gen(Generator::seed_for_case(0, def.name));
    const OpCase op_case = def.build(gen);
    std::shared_ptr<Device> device = testing::reference_device();
    auto result = execute_case(*device, op_case);
    REQUIRE(result.ok());
    std::vector<std::vector<double>> values;
    for (const HostTensor& t : result.value()) values.push_back(t.logical_values());
    return values;
  }
  FAIL("no case named " << name);
  return {};
}

// `expected` element by element: NaN where NaN, the same infinity, else within a relative 1e-6
// (or exactly where `exact`). Elements past expected.size() are not checked.
void check_values(const std::vector<double>& actual, const std::vector<double>& expected,
                  bool exact = true) {
  REQUIRE(actual.size() >= expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i << ": " << actual[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(actual[i]));
    } else if (exact || std::isinf(expected[i])) {
      CHECK(actual[i] == expected[i]);
    } else {
      CHECK(actual[i] == Approx(expected[i]).epsilon(1e-6).margin(1e-30));
    }
  }
}

TEST_CASE("special values: the reference's unary results are PyTorch's", "[conformance]") {
  // Inputs: NaN, inf, -inf, 0, -0, 1.5, -2.5, 1e30, -1e30, 100, -100.
  check_values(reference_outputs("relu/f32/special_values")[0],
               {kNan, kInf, 0, 0, 0, 1.5, 0, static_cast<double>(1e30f), 0, 100, 0});
  check_values(reference_outputs("sign/f32/special_values")[0], {0, 1, -1, 0, 0, 1, -1, 1, -1});
  check_values(reference_outputs("sigmoid/f32/special_values")[0], {kNan, 1, 0, 0.5, 0.5}, false);
  check_values(reference_outputs("tanh/f32/special_values")[0], {kNan, 1, -1, 0, 0}, false);
  // EXP of NaN, inf, -inf, 0, -0, 100 (past f32's range), -200.
  check_values(reference_outputs("exp/f32/special_values")[0], {kNan, kInf, 0, 1, 1, kInf, 0});
  // LOG of NaN, inf, -inf, 0, -0, -1.
  check_values(reference_outputs("log/f32/special_values")[0],
               {kNan, kInf, kNan, -kInf, -kInf, kNan});
  check_values(reference_outputs("sqrt/f32/special_values")[0], {kNan, kInf, kNan, 0, 0, kNan});
  // 60000 is finite in f16 and its exp is not.
  check_values(reference_outputs("exp/f16/special_values")[0], {kNan, kInf, 0, 1, 1, kInf, 0});
}

TEST_CASE("special values: reductions, softmax and max-pool as PyTorch's", "[conformance]") {
  // Rows: a NaN; +inf and -inf; +inf; all -inf; two NaNs and +inf; three 1e30 (finite in f32).
  check_values(reference_outputs("reduce_sum/f32/special_values")[0],
               {kNan, kNan, kInf, -kInf, kNan, 3e30 + 2}, false);
  check_values(reference_outputs("reduce_max/f32/special_values")[0],
               {kNan, kInf, kInf, -kInf, kNan, 1e30}, false);
  check_values(reference_outputs("argmax/f32/special_values")[0], {1, 0, 1, 0, 1, 0});
  check_values(reference_outputs("reduce_sum/f16/special_values")[0],
               {kNan, kNan, kInf, -kInf, kNan, kInf});
  // Rows: +inf; all -inf; [-inf, 1, -inf, 2]; a NaN; ordinary.
  check_values(reference_outputs("softmax/f32/special_values")[0],
               {kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, 0, 0.2689414213699951, 0,
                0.7310585786300049, kNan, kNan, kNan, kNan},
               false);
  check_values(reference_outputs("max_pool2d/f32/special_values")[0], {kNan, 2, -kInf, kInf});
  check_values(reference_outputs("avg_pool2d/f32/special_values")[0], {kNan, kInf, kNan, 0.5625},
               false);
}

TEST_CASE("special values: NaN passes CONV2D_FUSED's activations, as torch.relu and clamp",
          "[conformance]") {
  // x cycles NaN, inf, -inf, 0, 7, -0.5, 3, -8; the 1x1 depthwise convolution of weight 1 passes
  // it through the activation.
  check_values(reference_outputs("conv2d_fused/f32/special_values/relu")[0],
               {kNan, kInf, 0, 0, 7, 0, 3, 0});
  check_values(reference_outputs("conv2d_fused/f32/special_values/clip")[0],
               {kNan, 6, 0, 0, 6, 0, 3, 0});
  check_values(reference_outputs("conv2d_fused/f32/special_values/clip_infinite")[0],
               {kNan, 6, -kInf, 0, 6, -0.5, 3, -8});
  // SILU's inputs cycle NaN, 1.5, -2.5, 0, 7, -0.5, 3, -8 (no infinities: -inf * 0).
  const auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
  check_values(reference_outputs("conv2d_fused/f32/special_values/silu")[0],
               {kNan, silu(1.5), silu(-2.5), 0, silu(7.0), silu(-0.5), silu(3.0), silu(-8.0)},
               false);
}

TEST_CASE("special values: MATMUL, COPY and cross-entropy", "[conformance]") {
  // a's row 0 holds a NaN: every output of the row is NaN. Row 1 holds +inf, and column 0 of b is
  // zero: NaN there (inf * 0), an infinity in the other columns.
  const std::vector<double> product = reference_outputs("matmul/f32/special_values/5x8x6")[0];
  for (int j = 0; j < 6; ++j) CHECK(std::isnan(product[static_cast<size_t>(j)]));
  CHECK(std::isnan(product[6]));
  for (int j = 1; j < 6; ++j) CHECK(std::isinf(product[static_cast<size_t>(6 + j)]));
  for (size_t i = 12; i < product.size(); ++i) CHECK(std::isfinite(product[i]));  // rows 2-4
  // f32 -> f16: NaN, inf, -inf, 0, -0, 1e10 and -1e10 and +-70000 overflow, 65504 is the largest.
  check_values(reference_outputs("copy/f16/special_values/cast_from_f32")[0],
               {kNan, kInf, -kInf, 0, 0, kInf, -kInf, kInf, -kInf, 65504});
  const double masked_class =
      reference_outputs("cross_entropy/f32/special_values/masked_class")[0][0];
  CHECK(std::isfinite(masked_class));
  CHECK(reference_outputs("cross_entropy/f32/special_values/masked_label")[0][0] == kInf);
  CHECK(std::isnan(reference_outputs("cross_entropy/f32/special_values/nan")[0][0]));
  // A NaN in row 1 of the layer norm: its output row, mean and rstd are NaN; the others finite.
  const auto norm = reference_outputs("layer_norm/f32/special_values");
  for (int i = 0; i < 24; ++i) {
    CHECK(std::isnan(norm[0][static_cast<size_t>(i)]) == (i >= 8 && i < 16));
  }
  CHECK(std::isnan(norm[1][1]));
  CHECK(std::isfinite(norm[1][0]));
}

TEST_CASE("special values: a NaN stays in its own batch row", "[conformance]") {
  // LSTM and GRU, x [5 steps, 3 rows, 4] with a NaN at step 2 of row 0: y [5, 3, 6] is NaN for row
  // 0 from step 2 on and finite everywhere else; h_n's row 0 is NaN, rows 1 and 2 finite.
  for (const char* name :
       {"lstm_sequence/f32/special_values/5x3x4x6", "gru_sequence/f32/special_values/5x3x4x6"}) {
    INFO(name);
    const auto outputs = reference_outputs(name);
    for (int64_t t = 0; t < 5; ++t) {
      for (int64_t b = 0; b < 3; ++b) {
        for (int64_t j = 0; j < 6; ++j) {
          const double v = outputs[0][static_cast<size_t>((t * 3 + b) * 6 + j)];
          CHECK(std::isnan(v) == (b == 0 && t >= 2));
        }
      }
    }
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t j = 0; j < 6; ++j) {
        CHECK(std::isnan(outputs[1][static_cast<size_t>(b * 6 + j)]) == (b == 0));
      }
    }
  }
  // CONV2D: the NaN and the infinity are in image 0; image 1's outputs are all finite.
  const std::vector<double> y = reference_outputs("conv2d/f32/special_values")[0];
  int non_finite = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (i >= y.size() / 2) CHECK(std::isfinite(y[i]));
    non_finite += std::isfinite(y[i]) ? 0 : 1;
  }
  // Per output channel: the 9 outputs around the NaN at (2, 2) and the 9 around the inf at
  // (4, 4), which share (3, 3).
  CHECK(non_finite == 4 * 17);
}

TEST_CASE("special values: attention's fully masked query and a NaN query", "[conformance]") {
  // [1, 2 heads, 5 queries, 8]: head 0's query 2 has every key masked (out NaN, lse -inf), head
  // 1's query 3 has a NaN in q (out NaN; every score NaN, which the maximum skips, so its lse is
  // -inf as a fully masked query's, docs/ops.md); every other query is finite.
  for (const char* name : {"scaled_dot_product_attention/f32/special_values",
                           "scaled_dot_product_attention/f32/special_values/causal"}) {
    INFO(name);
    const auto outputs = reference_outputs(name);
    for (int64_t query = 0; query < 10; ++query) {
      const bool masked = query == 2, nan = query == 5 + 3;
      for (int64_t j = 0; j < 8; ++j) {
        CHECK(std::isnan(outputs[0][static_cast<size_t>(query * 8 + j)]) == (masked || nan));
      }
      const double lse = outputs[1][static_cast<size_t>(query)];
      CHECK((lse == -kInf) == (masked || nan));
      CHECK(std::isfinite(lse) == !(masked || nan));
    }
  }
}

}  // namespace
}  // namespace switchyard::conformance
