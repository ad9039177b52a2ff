// SCALED_DOT_PRODUCT_ATTENTION against the composed path it replaces (MATMUL, SOFTMAX, MATMUL):
// the same outputs and the same gradients of q, k and v, with and without masks (full additive,
// key padding with -inf, a [Tq, Tk] matrix), causal (square and with fewer queries than keys),
// dropout and the [B, T, H, D] views a projection split into heads is; in f32 on every backend
// that has the op, and in bf16 and f16 where the device stores them. MultiheadAttention and the
// Transformer encoder take the fused path and give the composed path's results, and the profile
// names the path. Bad input is refused with a message that says what is wrong.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "backend_support.h"
#include "nn/fused_test_support.h"
#include "switchyard/autograd.h"
#include "switchyard/nn.h"
#include "switchyard/nn_sequence.h"
#include "switchyard/profile.h"
#include "tensor/attention_internal.h"
#include "tensor/tensor_test_support.h"

namespace switchyard {
namespace {

using testing::max_abs_difference;
using testing::optional_device;
using testing::spans_of;

double max_abs(const Tensor& a) {
  double worst = 0.0;
  for (float v : a.to_host_float()) worst = std::max(worst, std::abs(static_cast<double>(v)));
  return worst;
}

enum class Mask { kNone, kFull, kPadding, kMatrix };

struct Variant {
  int64_t b, h, tq, tk, d, dv;
  bool causal;
  Mask mask;
  double dropout;
  bool split_heads;  // q, k, v as [B, T, H, D] storage permuted to [B, H, T, D]
};

std::string describe(const Variant& v) {
  return std::to_string(v.b) + "x" + std::to_string(v.h) + "x" + std::to_string(v.tq) + "x" +
         std::to_string(v.tk) + "x" + std::to_string(v.d) + "x" + std::to_string(v.dv) +
         (v.causal ? " causal" : "") + " mask=" + std::to_string(static_cast<int>(v.mask)) +
         " dropout=" + std::to_string(v.dropout) + (v.split_heads ? " split-heads" : "");
}

Tensor heads(const Variant& v, int64_t t, int64_t d, uint64_t seed,
             const std::shared_ptr<Device>& device, DType dtype) {
  if (v.split_heads) {
    return rand_uniform({v.b, t, v.h, d}, -1.5, 1.5, seed, 0, device)
        .to(dtype)
        .permute({0, 2, 1, 3});
  }
  return rand_uniform({v.b, v.h, t, d}, -1.5, 1.5, seed, 0, device).to(dtype);
}

Tensor make_mask(const Variant& v, const std::shared_ptr<Device>& device) {
  switch (v.mask) {
    case Mask::kFull:
      return rand_uniform({v.b, v.h, v.tq, v.tk}, -2.0, 2.0, 41, 0, device);
    case Mask::kPadding: {
      std::vector<float> values(static_cast<size_t>(v.b * v.tk), 0.0f);
      for (int64_t n = 0; n < v.b; ++n) {
        for (int64_t j = std::max<int64_t>(1, v.tk - n - 1); j < v.tk; ++j) {
          values[static_cast<size_t>(n * v.tk + j)] = -INFINITY;
        }
      }
      return Tensor::from_host(values, Shape{v.b, 1, 1, v.tk}, device);
    }
    case Mask::kMatrix:
      return rand_uniform({v.tq, v.tk}, -1.0, 1.0, 42, 0, device);
    case Mask::kNone:
      break;
  }
  return Tensor();
}

struct Result {
  Tensor out, dq, dk, dv;
  std::vector<std::string> spans;
};

Result run_variant(const Variant& v, const std::shared_ptr<Device>& device, DType dtype,
                   bool composed) {
  Tensor q = heads(v, v.tq, v.d, 1, device, dtype), k = heads(v, v.tk, v.d, 2, device, dtype);
  Tensor vv = heads(v, v.tk, v.dv, 3, device, dtype);
  for (Tensor* t : {&q, &k, &vv}) *t = t->detach().set_requires_grad(true);
  AttentionOptions options;
  options.attn_mask = make_mask(v, device);
  options.is_causal = v.causal;
  options.dropout_p = v.dropout;
  options.seed = 99;
  options.offset = 8;
  Result result;
  const auto run = [&] {
    result.out = scaled_dot_product_attention(q, k, vv, options);
    const Tensor weights = rand_uniform(result.out.shape(), -1.0, 1.0, 7, 0, device).to(dtype);
    sum(result.out * weights).backward();
  };
  if (composed) {
    detail::ComposedAttentionScope force_composed;
    result.spans = spans_of(run);
  } else {
    result.spans = spans_of(run);
  }
  result.dq = q.grad(), result.dk = k.grad(), result.dv = vv.grad();
  return result;
}

const Variant kVariants[] = {
    {1, 1, 1, 1, 1, 1, false, Mask::kNone, 0.0, false},
    {2, 3, 5, 7, 4, 6, false, Mask::kNone, 0.0, false},
    {2, 2, 9, 9, 8, 8, true, Mask::kNone, 0.0, true},
    {2, 2, 6, 11, 8, 8, false, Mask::kFull, 0.0, false},
    {3, 2, 7, 10, 16, 16, false, Mask::kPadding, 0.0, true},
    {2, 2, 12, 12, 8, 8, true, Mask::kMatrix, 0.0, false},
    {1, 2, 6, 20, 8, 8, true, Mask::kNone, 0.0, false},
    {2, 2, 8, 12, 8, 8, false, Mask::kNone, 0.3, false},
    {1, 4, 70, 70, 32, 32, true, Mask::kPadding, 0.1, true},
};

void check_device(const std::shared_ptr<Device>& device, DType dtype, double tolerance) {
  for (const Variant& v : kVariants) {
    INFO(describe(v) << " " << dtype_name(dtype) << " on " << device->info().name);
    const Result fused = run_variant(v, device, dtype, false);
    const Result composed = run_variant(v, device, dtype, true);
    CHECK(std::count(fused.spans.begin(), fused.spans.end(), "attention: fused") == 1);
    CHECK(std::count(composed.spans.begin(), composed.spans.end(), "attention: composed") == 1);
    CHECK(max_abs_difference(fused.out, composed.out) <= tolerance);
    CHECK(max_abs_difference(fused.dq, composed.dq) <= tolerance);
    CHECK(max_abs_difference(fused.dk, composed.dk) <= tolerance);
    CHECK(max_abs_difference(fused.dv, composed.dv) <= tolerance);
    CHECK(max_abs(fused.out) > 0.01);  // not vacuous
    CHECK(max_abs(fused.dv) > 0.01);
  }
}

void check_backend(const std::string& backend) {
  const std::shared_ptr<Device> device = optional_device(backend);
  if (device == nullptr) return;
  REQUIRE(device->supports(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, SY_DTYPE_F32));
  REQUIRE(device->supports(SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD, SY_DTYPE_F32));
  // f32 sums in different orders (and onednn's exp to 2e-7 relative) over values near 1.
  check_device(device, DType::kF32, 2e-5);
  // The fused op rounds each output once, the composed path every intermediate: a few ulps.
  if (device->supports(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, SY_DTYPE_BF16)) {
    check_device(device, DType::kBF16, 0.1);
  }
}

TEST_CASE("fused and composed attention agree on reference", "[nn][attention]") {
  check_backend("reference");
}

TEST_CASE("fused and composed attention agree on onednn", "[nn][attention][onednn]") {
  check_backend("onednn");
}

TEST_CASE("fused and composed attention agree on vulkan", "[nn][attention][vulkan]") {
  check_backend("vulkan");
}

TEST_CASE("MultiheadAttention and the Transformer encoder run one attention op",
          "[nn][attention]") {
  for (const std::string backend : {"reference", "onednn", "vulkan"}) {
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device == nullptr) continue;
    INFO(backend);
    InitContext init{device, InitScheme::kKaimingUniform, 5};
    TransformerEncoderOptions options;
    options.d_model = 16;
    options.nhead = 4;
    options.dim_feedforward = 32;
    options.dropout = 0.0;
    options.batch_first = true;
    TransformerEncoder encoder(init, options, 2);
    const Tensor x = rand_uniform({3, 7, 16}, -1.0, 1.0, 3, 0, device);
    AttentionMasks masks;
    masks.is_causal = true;
    masks.key_padding_mask = Tensor::from_host(
        std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1},
        Shape{3, 7}, device);
    Tensor fused, composed;
    const std::vector<std::string> spans = spans_of([&] { fused = encoder.encode(x, masks); });
    CHECK(std::count(spans.begin(), spans.end(), "attention: fused") == 2);
    {
      detail::ComposedAttentionScope force_composed;
      composed = encoder.encode(x, masks);
    }
    CHECK(max_abs_difference(fused, composed) <= 2e-5);
    // Training: dropout on the attention weights draws the same mask on both paths.
    TransformerEncoderOptions dropping = options;
    dropping.dropout = 0.25;
    TransformerEncoder a(init, dropping, 1);
    TransformerEncoder b(init, dropping, 1);
    b.load_state_dict(a.state_dict());
    const Tensor fused_train = a.encode(x, masks);
    Tensor composed_train;
    {
      detail::ComposedAttentionScope force_composed;
      composed_train = b.encode(x, masks);
    }
    CHECK(max_abs_difference(fused_train, composed_train) <= 2e-5);
  }
}

TEST_CASE("scaled_dot_product_attention refuses bad input", "[nn][attention]") {
  const std::shared_ptr<Device> device = optional_device("reference");
  if (device == nullptr) return;
  const Tensor q = rand_uniform({1, 2, 3, 4}, -1.0, 1.0, 1, 0, device);
  const Tensor k = rand_uniform({1, 2, 5, 4}, -1.0, 1.0, 2, 0, device);
  const Tensor v = rand_uniform({1, 2, 5, 4}, -1.0, 1.0, 3, 0, device);
  AttentionOptions options;
  options.attn_mask = zeros({3, 4}, device);
  CHECK_THROWS_WITH(scaled_dot_product_attention(q, k, v, options),
                    Catch::Contains("attn_mask [3, 4] does not broadcast to the scores "
                                    "[1, 2, 3, 5]"));
  const Tensor empty = rand_uniform({1, 2, 0, 4}, -1.0, 1.0, 1, 0, device);
  CHECK_THROWS_WITH(scaled_dot_product_attention(empty, k, v),
                    Catch::Contains("a sequence of length 0"));
  CHECK_THROWS_WITH(scaled_dot_product_attention(q, k.narrow(3, 0, 3), v),
                    Catch::Contains("k must be [B, H, Tk, D]"));
  AttentionOptions dropout;
  dropout.dropout_p = 1.0;
  CHECK_THROWS_WITH(scaled_dot_product_attention(q, k, v, dropout),
                    Catch::Contains("dropout_p must be in [0, 1)"));
  CHECK_THROWS_WITH(scaled_dot_product_attention(q.reshape({2, 3, 4}), k, v),
                    Catch::Contains("q must be [batch, heads, length, features]"));
}

TEST_CASE("a query with no key to attend gives NaN on both paths", "[nn][attention]") {
  // Query 0 has every key masked. The second shape has over 8 MB of scores per batch entry, so
  // onednn takes its tiled path there and its batched path in the first.
  struct Size {
    int64_t h, tq, tk;
  };
  for (const std::string backend : {"reference", "onednn", "vulkan"}) {
    const std::shared_ptr<Device> device = optional_device(backend);
    if (device == nullptr) continue;
    for (const Size size : {Size{1, 2, 3}, Size{2, 1100, 1000}}) {
      INFO(backend << " " << size.h << "x" << size.tq << "x" << size.tk);
      const Tensor q = rand_uniform({1, size.h, size.tq, 4}, -1.0, 1.0, 1, 0, device);
      const Tensor k = rand_uniform({1, size.h, size.tk, 4}, -1.0, 1.0, 2, 0, device);
      const Tensor v = rand_uniform({1, size.h, size.tk, 4}, -1.0, 1.0, 3, 0, device);
      std::vector<float> mask(static_cast<size_t>(size.tq * size.tk), 0.0f);
      std::fill(mask.begin(), mask.begin() + size.tk, -INFINITY);
      AttentionOptions options;
      options.attn_mask = Tensor::from_host(mask, Shape{size.tq, size.tk}, device);
      const std::vector<float> fused =
          scaled_dot_product_attention(q, k, v, options).to_host_float();
      std::vector<float> composed;
      {
        detail::ComposedAttentionScope force_composed;
        composed = scaled_dot_product_attention(q, k, v, options).to_host_float();
      }
      REQUIRE(fused.size() == composed.size());
      size_t nan_rows = 0;
      for (size_t at = 0; at < fused.size(); ++at) {
        const bool first_query = (at / 4) % static_cast<size_t>(size.tq) == 0;
        if (first_query) {
          CHECK(std::isnan(fused[at]));
          CHECK(std::isnan(composed[at]));
          nan_rows += std::isnan(fused[at]) ? 1 : 0;
        } else {
          REQUIRE(std::abs(fused[at] - composed[at]) < 1e-5f);
        }
      }
      CHECK(nan_rows == static_cast<size_t>(4 * size.h));
    }
  }
}

}  // namespace
}  // namespace switchyard
