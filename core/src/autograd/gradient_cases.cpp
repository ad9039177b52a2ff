// The built-in gradient-check cases: every differentiable op of ops.h, on small inputs chosen away
// from kinks and ties so that central differences are meaningful.
#include "autograd/gradient_cases.h"

#include <algorithm>
#include <numeric>

#include "support/random_bits.h"
#include "switchyard/nn.h"
#include "switchyard/ops.h"

namespace switchyard {

namespace {

using Inputs = std::vector<Tensor>;
using DevicePtr = std::shared_ptr<Device>;

enum class Values { kUniform, kAwayFromZero, kPositive, kDistinct };

// A deterministic value stream (SplitMix64, support/random_bits.h), the same on every machine.
class ValueStream {
 public:
  explicit ValueStream(uint64_t seed) : state_(seed) {}
  double next() { return detail::unit_double(detail::splitmix64_next(state_)); }

 private:
  uint64_t state_;
};

std::vector<float> make_values(int64_t count, Values kind, uint64_t seed) {
  ValueStream stream(seed);
  std::vector<float> values(static_cast<size_t>(count));
  if (kind == Values::kDistinct) {
    // A shuffled ladder with steps of 0.07: no two values within 2 epsilon of each other. Odd and
    // even seeds are shifted by 0.029 against each other, so two inputs never tie either.
    std::vector<size_t> order(values.size());
    std::iota(order.begin(), order.end(), size_t{0});
    for (size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[static_cast<size_t>(stream.next() * static_cast<double>(i))]);
    }
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = static_cast<float>(
          (static_cast<double>(order[i]) - static_cast<double>(values.size()) / 2.0) * 0.07 +
          0.013 + ((seed & 1u) != 0 ? 0.029 : 0.0));
    }
    return values;
  }
  for (float& v : values) {
    const double u = stream.next();
    switch (kind) {
      case Values::kUniform:
        v = static_cast<float>(2.0 * u - 1.0);
        break;
      case Values::kPositive:
        v = static_cast<float>(0.5 + 1.5 * u);
        break;
      default:
        v = static_cast<float>((u < 0.5 ? -1.0 : 1.0) * (0.1 + 1.8 * std::abs(u - 0.5)));
    }
  }
  return values;
}

Tensor make(const DevicePtr& device, const Shape& shape, Values kind, uint64_t seed) {
  return Tensor::from_host(make_values(shape.numel(), kind, seed), shape, device);
}

Tensor labels(const DevicePtr& device, const std::vector<int64_t>& values) {
  return Tensor::from_host(values, Shape{static_cast<int64_t>(values.size())}, device);
}

// The ops every check itself uses: the projection and the host round trips.
std::vector<sy_op> with_base(std::vector<sy_op> ops) {
  for (sy_op op : {SY_OP_MUL, SY_OP_REDUCE_SUM, SY_OP_COPY, SY_OP_FILL}) ops.push_back(op);
  return ops;
}

GradientCase unary_case(const std::string& name, sy_op op, sy_op backward, Values kind,
                        Tensor (*function)(const Tensor&)) {
  std::vector<sy_op> ops{op};
  if (backward != op) ops.push_back(backward);
  return {name,
          name,
          with_base(ops),
          0.0,
          [kind](const DevicePtr& d) {
            return Inputs{make(d, {3, 4}, kind, 11)};
          },
          [function](const Inputs& in) { return function(in[0]); }};
}

void add_unary_cases(std::vector<GradientCase>& cases) {
  cases.push_back(unary_case("relu", SY_OP_RELU, SY_OP_RELU_BACKWARD, Values::kAwayFromZero, relu));
  cases.push_back(unary_case("gelu", SY_OP_GELU, SY_OP_GELU_BACKWARD, Values::kUniform, gelu));
  cases.push_back(
      unary_case("sigmoid", SY_OP_SIGMOID, SY_OP_SIGMOID_BACKWARD, Values::kUniform, sigmoid));
  cases.push_back(unary_case("tanh", SY_OP_TANH, SY_OP_TANH_BACKWARD, Values::kUniform, tanh));
  cases.push_back(unary_case("exp", SY_OP_EXP, SY_OP_EXP, Values::kUniform, exp));
  cases.push_back(unary_case("log", SY_OP_LOG, SY_OP_DIV, Values::kPositive, log));
  cases.push_back(unary_case("sqrt", SY_OP_SQRT, SY_OP_DIV, Values::kPositive, sqrt));
  cases.push_back(unary_case("neg", SY_OP_NEG, SY_OP_NEG, Values::kUniform, neg));
  cases.push_back(unary_case("abs", SY_OP_ABS, SY_OP_SIGN, Values::kAwayFromZero, abs));
}

GradientCase binary_case(const std::string& name, sy_op op, const Shape& a, const Shape& b,
                         Values kind_a, Values kind_b,
                         Tensor (*function)(const Tensor&, const Tensor&)) {
  return {name,
          name.substr(0, name.find('/')),
          with_base({op, SY_OP_NEG, SY_OP_DIV, SY_OP_CMP_GT}),
          0.0,
          [=](const DevicePtr& d) {
            return Inputs{make(d, a, kind_a, 21), make(d, b, kind_b, 22)};
          },
          [function](const Inputs& in) { return function(in[0], in[1]); }};
}

GradientCase scalar_case(const std::string& name, sy_op op, Values kind,
                         std::function<Tensor(const Tensor&)> function) {
  return {name,
          name.substr(0, name.find('/')),
          with_base({op, SY_OP_CMP_GT}),
          0.0,
          [kind](const DevicePtr& d) {
            return Inputs{make(d, {2, 5}, kind, 31)};
          },
          [function](const Inputs& in) { return function(in[0]); }};
}

void add_binary_cases(std::vector<GradientCase>& cases) {
  const auto U = Values::kUniform;
  const auto P = Values::kPositive;
  const auto D = Values::kDistinct;
  cases.push_back(binary_case("add/broadcast", SY_OP_ADD, {3, 4}, {4}, U, U, add));
  cases.push_back(binary_case("sub/broadcast", SY_OP_SUB, {2, 3, 4}, {3, 1}, U, U, sub));
  cases.push_back(binary_case("mul/broadcast", SY_OP_MUL, {3, 1}, {2, 3, 4}, U, U, mul));
  cases.push_back(binary_case("div/broadcast", SY_OP_DIV, {3, 4}, {1, 4}, U, P, div));
  cases.push_back(binary_case("maximum", SY_OP_MAX, {3, 4}, {3, 4}, D, D, maximum));
  cases.push_back(binary_case("minimum/broadcast", SY_OP_MIN, {3, 4}, {4}, D, D, minimum));
  cases.push_back(binary_case("pow", SY_OP_POW, {3, 4}, {3, 4}, P, U, pow));
  cases.push_back(scalar_case("add/scalar", SY_OP_ADD, U, [](const Tensor& x) { return x + 1.5; }));
  cases.push_back(
      scalar_case("sub/scalar_left", SY_OP_ADD, U, [](const Tensor& x) { return 2.0 - x; }));
  cases.push_back(
      scalar_case("mul/scalar", SY_OP_MUL, U, [](const Tensor& x) { return x * -3.0; }));
  cases.push_back(scalar_case("div/scalar", SY_OP_DIV, U, [](const Tensor& x) { return x / 4.0; }));
  cases.push_back(
      scalar_case("pow/scalar", SY_OP_POW, P, [](const Tensor& x) { return pow(x, 2.5); }));
  cases.push_back(
      scalar_case("maximum/scalar", SY_OP_MAX, D, [](const Tensor& x) { return maximum(x, 0.0); }));
  cases.push_back(
      scalar_case("minimum/scalar", SY_OP_MIN, D, [](const Tensor& x) { return minimum(x, 0.0); }));
}

void add_reduction_cases(std::vector<GradientCase>& cases) {
  auto input = [](const DevicePtr& d) { return Inputs{make(d, {2, 3, 4}, Values::kDistinct, 41)}; };
  cases.push_back({"sum/axis1_keep", "sum", with_base({}), 0.0, input,
                   [](const Inputs& in) { return sum(in[0], {1}, true); }});
  cases.push_back({"mean/all", "mean", with_base({SY_OP_REDUCE_MEAN, SY_OP_DIV}), 0.0, input,
                   [](const Inputs& in) { return mean(in[0]); }});
  cases.push_back({"amax/axis2", "amax", with_base({SY_OP_REDUCE_MAX, SY_OP_CMP_EQ, SY_OP_DIV}),
                   0.0, input, [](const Inputs& in) { return amax(in[0], {-1}); }});
  cases.push_back({"softmax/last", "softmax", with_base({SY_OP_SOFTMAX, SY_OP_SOFTMAX_BACKWARD}),
                   0.0, input, [](const Inputs& in) { return softmax(in[0], -1); }});
  cases.push_back({"log_softmax/axis0", "log_softmax",
                   with_base({SY_OP_LOG_SOFTMAX, SY_OP_LOG_SOFTMAX_BACKWARD}), 0.0, input,
                   [](const Inputs& in) { return log_softmax(in[0], 0); }});
}

void add_loss_cases(std::vector<GradientCase>& cases) {
  const auto ce_ops = with_base({SY_OP_CROSS_ENTROPY, SY_OP_CROSS_ENTROPY_BACKWARD});
  auto ce_inputs = [](const DevicePtr& d) {
    return Inputs{make(d, {4, 5}, Values::kUniform, 51), labels(d, {0, 3, 4, 3})};
  };
  cases.push_back({"cross_entropy/mean", "cross_entropy", ce_ops, 0.0, ce_inputs,
                   [](const Inputs& in) { return cross_entropy(in[0], in[1]); }});
  cases.push_back({"cross_entropy/sum", "cross_entropy", ce_ops, 0.0, ce_inputs,
                   [](const Inputs& in) { return cross_entropy(in[0], in[1], Reduction::kSum); }});
  cases.push_back({"mse_loss", "mse_loss", with_base({SY_OP_SUB, SY_OP_REDUCE_MEAN, SY_OP_NEG}),
                   0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {3, 4}, Values::kUniform, 52),
                                   make(d, {3, 4}, Values::kUniform, 53)};
                   },
                   [](const Inputs& in) { return mse_loss(in[0], in[1]); }});
}

void add_matmul_cases(std::vector<GradientCase>& cases) {
  const auto ops = with_base({SY_OP_MATMUL});
  auto pair = [](Shape a, Shape b) {
    return [a, b](const DevicePtr& d) {
      return Inputs{make(d, a, Values::kUniform, 61), make(d, b, Values::kUniform, 62)};
    };
  };
  cases.push_back({"matmul/plain", "matmul", ops, 0.0, pair({3, 4}, {4, 5}),
                   [](const Inputs& in) { return matmul(in[0], in[1]); }});
  cases.push_back({"matmul/transpose_a", "matmul", ops, 0.0, pair({4, 3}, {4, 5}),
                   [](const Inputs& in) { return matmul(in[0], in[1], true, false); }});
  cases.push_back({"matmul/transpose_b", "matmul", ops, 0.0, pair({3, 4}, {5, 4}),
                   [](const Inputs& in) { return matmul(in[0], in[1], false, true); }});
  cases.push_back({"matmul/transpose_both", "matmul", ops, 0.0, pair({4, 3}, {5, 4}),
                   [](const Inputs& in) { return matmul(in[0], in[1], true, true); }});
  cases.push_back({"matmul/batched_broadcast", "matmul", ops, 0.0, pair({2, 3, 4}, {4, 5}),
                   [](const Inputs& in) { return matmul(in[0], in[1]); }});
  cases.push_back({"matmul/linear_bias", "linear", ops, 0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {3, 4}, Values::kUniform, 63),
                                   make(d, {5, 4}, Values::kUniform, 64),
                                   make(d, {5}, Values::kUniform, 65)};
                   },
                   [](const Inputs& in) { return linear(in[0], in[1], in[2]); }});
}

// Long: a list of cases (convolutions, their transposes and the pools), one entry each.
void add_conv_pool_cases(std::vector<GradientCase>& cases) {
  const auto conv_ops =
      with_base({SY_OP_CONV2D, SY_OP_CONV2D_BACKWARD_DATA, SY_OP_CONV2D_BACKWARD_WEIGHT});
  cases.push_back({"conv2d/pad1_bias", "conv2d", conv_ops, 0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {2, 2, 5, 5}, Values::kUniform, 71),
                                   make(d, {3, 2, 3, 3}, Values::kUniform, 72),
                                   make(d, {3}, Values::kUniform, 73)};
                   },
                   [](const Inputs& in) {
                     Conv2dOptions o;
                     o.pad_h = o.pad_w = 1;
                     return conv2d(in[0], in[1], in[2], o);
                   }});
  cases.push_back({"conv2d/stride2_dilation2", "conv2d", conv_ops, 0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {1, 2, 7, 6}, Values::kUniform, 74),
                                   make(d, {2, 2, 2, 3}, Values::kUniform, 75)};
                   },
                   [](const Inputs& in) {
                     Conv2dOptions o;
                     o.stride_h = o.stride_w = 2;
                     o.dilation_h = o.dilation_w = 2;
                     o.pad_w = 1;
                     return conv2d(in[0], in[1], Tensor(), o);
                   }});
  const auto grouped_ops = with_base({SY_OP_CONV2D_GROUPED, SY_OP_CONV2D_GROUPED_BACKWARD_DATA,
                                      SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT});
  cases.push_back({"conv2d_grouped/depthwise_pad1_bias", "conv2d", grouped_ops, 0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {2, 4, 5, 5}, Values::kUniform, 171),
                                   make(d, {4, 1, 3, 3}, Values::kUniform, 172),
                                   make(d, {4}, Values::kUniform, 173)};
                   },
                   [](const Inputs& in) {
                     Conv2dOptions o;
                     o.pad_h = o.pad_w = 1;
                     o.groups = 4;
                     o.path = ConvPath::kGroupedOp;
                     return conv2d(in[0], in[1], in[2], o);
                   }});
  cases.push_back({"conv2d_grouped/groups2_stride2_dilation2", "conv2d", grouped_ops, 0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {1, 4, 7, 6}, Values::kUniform, 174),
                                   make(d, {6, 2, 2, 3}, Values::kUniform, 175)};
                   },
                   [](const Inputs& in) {
                     Conv2dOptions o;
                     o.stride_h = o.stride_w = 2;
                     o.dilation_h = o.dilation_w = 2;
                     o.pad_w = 1;
                     o.groups = 2;
                     o.path = ConvPath::kGroupedOp;
                     return conv2d(in[0], in[1], Tensor(), o);
                   }});
  cases.push_back({"conv2d_grouped/multiplier2_bias", "conv2d", grouped_ops, 0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {2, 3, 5, 4}, Values::kUniform, 176),
                                   make(d, {6, 1, 3, 2}, Values::kUniform, 177),
                                   make(d, {6}, Values::kUniform, 178)};
                   },
                   [](const Inputs& in) {
                     Conv2dOptions o;
                     o.pad_h = 1;
                     o.groups = 3;
                     o.path = ConvPath::kGroupedOp;
                     return conv2d(in[0], in[1], in[2], o);
                   }});
  cases.push_back({"conv2d_grouped/composed_groups2_bias", "conv2d", conv_ops, 0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {2, 4, 5, 5}, Values::kUniform, 179),
                                   make(d, {4, 2, 3, 3}, Values::kUniform, 180),
                                   make(d, {4}, Values::kUniform, 181)};
                   },
                   [](const Inputs& in) {
                     Conv2dOptions o;
                     o.pad_h = o.pad_w = 1;
                     o.groups = 2;
                     o.path = ConvPath::kComposed;
                     return conv2d(in[0], in[1], in[2], o);
                   }});
  auto pool_input = [](const DevicePtr& d) {
    return Inputs{make(d, {2, 2, 5, 5}, Values::kDistinct, 76)};
  };
  cases.push_back({"max_pool2d/k2s2", "max_pool2d",
                   with_base({SY_OP_MAX_POOL2D, SY_OP_MAX_POOL2D_BACKWARD}), 0.0, pool_input,
                   [](const Inputs& in) { return max_pool2d(in[0], Pool2dOptions{}); }});
  cases.push_back({"max_pool2d/k3s1p1_overlap", "max_pool2d",
                   with_base({SY_OP_MAX_POOL2D, SY_OP_MAX_POOL2D_BACKWARD}), 0.0, pool_input,
                   [](const Inputs& in) {
                     return max_pool2d(in[0], Pool2dOptions{3, 3, 1, 1, 1, 1, true});
                   }});
  for (bool include_pad : {true, false}) {
    cases.push_back(
        {include_pad ? "avg_pool2d/k3s2p1_include_pad" : "avg_pool2d/k3s2p1_exclude_pad",
         "avg_pool2d", with_base({SY_OP_AVG_POOL2D, SY_OP_AVG_POOL2D_BACKWARD}), 0.0, pool_input,
         [include_pad](const Inputs& in) {
           return avg_pool2d(in[0], Pool2dOptions{3, 3, 2, 2, 1, 1, include_pad});
         }});
  }
}

void add_layer_norm_cases(std::vector<GradientCase>& cases) {
  const auto ops = with_base({SY_OP_LAYER_NORM, SY_OP_LAYER_NORM_BACKWARD});
  for (int rank : {1, 2}) {
    cases.push_back({"layer_norm/rank" + std::to_string(rank), "layer_norm", ops, 0.0,
                     [rank](const DevicePtr& d) {
                       const Shape norm = rank == 1 ? Shape{5} : Shape{3, 5};
                       return Inputs{make(d, {2, 3, 5}, Values::kUniform, 81),
                                     make(d, norm, Values::kPositive, 82),
                                     make(d, norm, Values::kUniform, 83)};
                     },
                     [rank](const Inputs& in) { return layer_norm(in[0], in[1], in[2], rank); }});
  }
}

void add_index_and_view_cases(std::vector<GradientCase>& cases) {
  cases.push_back(
      {"index_select/repeats", "index_select", with_base({SY_OP_GATHER, SY_OP_SCATTER_ADD}), 0.0,
       [](const DevicePtr& d) {
         return Inputs{make(d, {4, 3}, Values::kUniform, 91), labels(d, {2, 0, 2, 3, 2})};
       },
       [](const Inputs& in) { return index_select(in[0], 0, in[1]); }});
  cases.push_back({"index_add/axis1", "index_add", with_base({SY_OP_GATHER, SY_OP_SCATTER_ADD}),
                   0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {2, 4}, Values::kUniform, 92),
                                   make(d, {2, 3}, Values::kUniform, 93), labels(d, {3, 1, 3})};
                   },
                   [](const Inputs& in) { return index_add(in[0], 1, in[2], in[1]); }});
  cases.push_back({"views/reshape_permute_narrow", "views", with_base({SY_OP_MATMUL}), 0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {2, 3, 4}, Values::kUniform, 94)};
                   },
                   [](const Inputs& in) {
                     const Tensor v = in[0].permute({2, 0, 1}).narrow(0, 1, 2).reshape({2, 6});
                     return matmul(v, v.t().contiguous()).unsqueeze(0).expand({2, 2, 2});
                   }});
  cases.push_back({"dropout/fixed_mask", "dropout", with_base({SY_OP_RANDOM_UNIFORM, SY_OP_CMP_GT}),
                   0.0,
                   [](const DevicePtr& d) {
                     return Inputs{make(d, {4, 5}, Values::kUniform, 95)};
                   },
                   [](const Inputs& in) { return dropout(in[0], 0.4, true, 1234, 8); }});
}

void add_attention_cases(std::vector<GradientCase>& cases) {
  const auto ops =
      with_base({SY_OP_SCALED_DOT_PRODUCT_ATTENTION, SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD});
  const auto qkv = [](int64_t b, int64_t h, int64_t tq, int64_t tk, int64_t d, int64_t dv,
                      uint64_t seed) {
    return [=](const DevicePtr& device) {
      return Inputs{make(device, {b, h, tq, d}, Values::kUniform, seed),
                    make(device, {b, h, tk, d}, Values::kUniform, seed + 1),
                    make(device, {b, h, tk, dv}, Values::kUniform, seed + 2)};
    };
  };
  cases.push_back({"scaled_dot_product_attention/plain", "scaled_dot_product_attention", ops, 0.0,
                   qkv(1, 2, 3, 5, 4, 3, 101), [](const Inputs& in) {
                     return scaled_dot_product_attention(in[0], in[1], in[2]);
                   }});
  cases.push_back({"scaled_dot_product_attention/causal_mask", "scaled_dot_product_attention", ops,
                   0.0, qkv(2, 1, 4, 4, 4, 4, 111), [](const Inputs& in) {
                     AttentionOptions options;
                     options.is_causal = true;
                     options.scale = 0.7;
                     // A key-padding mask that hides the last key of the second sequence.
                     options.attn_mask = Tensor::from_host({0, 0, 0, 0, 0, 0, 0, -1e9f},
                                                           Shape{2, 1, 1, 4}, in[0].device());
                     return scaled_dot_product_attention(in[0], in[1], in[2], options);
                   }});
  cases.push_back({"scaled_dot_product_attention/dropout", "scaled_dot_product_attention", ops, 0.0,
                   qkv(1, 2, 4, 6, 3, 5, 121), [](const Inputs& in) {
                     AttentionOptions options;
                     options.dropout_p = 0.3;
                     options.seed = 77;
                     options.offset = 16;
                     return scaled_dot_product_attention(in[0], in[1], in[2], options);
                   }});
}

std::vector<GradientCase> build_cases() {
  std::vector<GradientCase> cases;
  add_unary_cases(cases);
  add_binary_cases(cases);
  add_reduction_cases(cases);
  add_loss_cases(cases);
  add_matmul_cases(cases);
  add_conv_pool_cases(cases);
  add_layer_norm_cases(cases);
  add_index_and_view_cases(cases);
  add_attention_cases(cases);
  return cases;
}

}  // namespace

const std::vector<GradientCase>& gradient_cases() {
  static const std::vector<GradientCase> cases = build_cases();
  return cases;
}

}  // namespace switchyard
