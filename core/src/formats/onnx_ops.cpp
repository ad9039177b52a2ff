// The ONNX ops the importer runs, by name: a host implementation for what shape subgraphs compute
// (onnx_ops_host.cpp), and a device implementation on switchyard's ops for everything else
// (onnx_ops_device.cpp, onnx_ops_recurrent.cpp). Semantics are ONNX's at the version each
// op has at the model's opset, 7 to 27 (onnx_opset.h; https://onnx.ai/onnx/operators/); where an
// attribute value is not supported, the node fails with a message naming the attribute and what is
// supported.
#include <algorithm>
#include <cmath>
#include <limits>

#include "formats/onnx_ops_internal.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {
namespace {

using Fn = std::function<void(NodeContext&)>;

Fn unary_host(double (*f)(double)) {
  return [f](NodeContext& c) { c.set_host(0, host_unary(c.host_values(0), f)); };
}
Fn unary_device(Tensor (*f)(const Tensor&), int32_t type = kFloat) {
  return [f, type](NodeContext& c) { c.set_device(0, f(dev_float(c, 0)), type); };
}

Fn binary_host(double (*f)(double, double), int64_t (*fi)(int64_t, int64_t),
               int32_t result = kUndefined) {
  return [f, fi, result](NodeContext& c) {
    std::function<int64_t(int64_t, int64_t)> integer;
    if (fi != nullptr) integer = fi;
    c.set_host(0, host_binary(c, c.host_values(0), c.host_values(1), f, integer, result));
  };
}

double d_sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double d_relu(double x) {
  return x > 0 ? x : 0.0;
}
double d_gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
// fuse_gelu's node: gelu(x), lifted to the rank of the constants folded in (Node::lift_rank).
void fused_gelu_host(NodeContext& c) {
  HostTensor y = host_unary(c.host_values(0), d_gelu);
  y.shape = lifted_shape(y.shape, c.node().lift_rank);
  c.set_host(0, std::move(y));
}
void fused_gelu_device(NodeContext& c) {
  c.set_device(0, lifted(c, switchyard::gelu(dev_float(c, 0)), c.node().lift_rank), kFloat);
}
// Mish (opset 18): x tanh(softplus(x)).
double d_mish(double x) {
  return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
}
Tensor mish_composed(const Tensor& x) {
  // tanh(log(1 + e)) = n / (n + 2) with n = e (e + 2), e = exp(x): exact in relative terms for very
  // negative x (where log(1 + e) would round to 0); from x = 20 on the ratio is 1 in f32.
  const Tensor e = exp(minimum(x, 20.0));
  const Tensor n = e * (e + 2.0);
  return x * (n / (n + 2.0));
}
double d_sign(double x) {
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : x);  // 0, -0 and NaN as they are
}
double d_not(double x) {
  return x != 0 ? 0.0 : 1.0;
}
double d_neg(double x) {
  return -x;
}
double d_reciprocal(double x) {
  return 1.0 / x;
}
double d_sqrt(double x) {
  return std::sqrt(x);
}
double d_exp(double x) {
  return std::exp(x);
}
double d_log(double x) {
  return std::log(x);
}
double d_abs(double x) {
  return std::fabs(x);
}
double d_tanh(double x) {
  return std::tanh(x);
}
double d_erf(double x) {
  return std::erf(x);
}
double d_floor(double x) {
  return std::floor(x);
}
double d_ceil(double x) {
  return std::ceil(x);
}
double d_add(double a, double b) {
  return a + b;
}
double d_sub(double a, double b) {
  return a - b;
}
double d_mul(double a, double b) {
  return a * b;
}
double d_div(double a, double b) {
  return a / b;
}
double d_pow(double a, double b) {
  return std::pow(a, b);
}
double d_max(double a, double b) {
  return std::max(a, b);
}
double d_min(double a, double b) {
  return std::min(a, b);
}
double d_eq(double a, double b) {
  return a == b ? 1 : 0;
}
double d_gt(double a, double b) {
  return a > b ? 1 : 0;
}
double d_lt(double a, double b) {
  return a < b ? 1 : 0;
}
double d_ge(double a, double b) {
  return a >= b ? 1 : 0;
}
double d_le(double a, double b) {
  return a <= b ? 1 : 0;
}
double d_and(double a, double b) {
  return a != 0 && b != 0 ? 1 : 0;
}
double d_or(double a, double b) {
  return a != 0 || b != 0 ? 1 : 0;
}
double d_xor(double a, double b) {
  return (a != 0) != (b != 0) ? 1 : 0;
}
int64_t i_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t i_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t i_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t i_div(int64_t a, int64_t b) {
  if (b == 0) throw_error(invalid_argument("integer division by zero"));
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;
  return a / b;
}
// ONNX Mod: with fmod 0 (the default) the result takes the divisor's sign (Python's %); with
// fmod 1 the dividend's (C's fmod). Floats follow the same rule (the spec asks fmod 1 of them).
double d_mod(double a, double b) {
  const double r = std::fmod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
double d_fmod(double a, double b) {
  return std::fmod(a, b);
}
int64_t i_fmod(int64_t a, int64_t b) {
  if (b == 0) throw_error(invalid_argument("integer modulo by zero"));
  if (b == -1) return 0;  // INT64_MIN % -1 overflows
  return a % b;
}
int64_t i_mod(int64_t a, int64_t b) {
  const int64_t r = i_fmod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
int64_t i_max(int64_t a, int64_t b) {
  return std::max(a, b);
}
int64_t i_min(int64_t a, int64_t b) {
  return std::min(a, b);
}

Tensor t_not(const Tensor& x) {
  return 1.0 - x;
}
Tensor t_reciprocal(const Tensor& x) {
  return pow(x, -1.0);
}

Fn device_binary_fn(Tensor (*both)(const Tensor&, const Tensor&),
                    Tensor (*scalar)(const Tensor&, double), bool commutes) {
  return [both, scalar, commutes](NodeContext& c) { device_binary(c, both, scalar, commutes); };
}

Fn compare_device(int kind) {  // 0 eq, 1 gt, 2 lt, 3 ge, 4 le
  return [kind](NodeContext& c) {
    const Tensor a = dev_float(c, 0), b = dev_float(c, 1);
    Tensor y;
    switch (kind) {
      case 0:
        y = equal(a, b);
        break;
      case 1:
        y = greater(a, b);
        break;
      case 2:
        y = greater(b, a);
        break;
      case 3:
        y = 1.0 - greater(b, a);
        break;
      default:
        y = 1.0 - greater(a, b);
        break;
    }
    c.set_device(0, y, kBool);
  };
}

// Max, Min, Sum and Mean take one or more inputs, folded left to right with broadcasting (Mean then
// divides by their count; integers truncate toward zero, as numpy's astype after the division).
// Two inputs on the device keep the binary form (a host scalar side is applied without an upload).
Fn variadic_host(double (*f)(double, double), int64_t (*fi)(int64_t, int64_t), bool mean = false) {
  return [f, fi, mean](NodeContext& c) {
    if (!c.has(0)) c.fail("needs at least one input");
    HostTensor result = c.host_values(0);
    for (size_t k = 1; k < c.input_count(); ++k)
      result = host_binary(c, result, c.host_values(k), f, fi);
    if (mean) {
      const double n = static_cast<double>(c.input_count());
      result = host_unary(result, [n](double v) { return v / n; });
    }
    c.set_host(0, std::move(result));
  };
}
Fn variadic_device(Tensor (*both)(const Tensor&, const Tensor&),
                   Tensor (*scalar)(const Tensor&, double), bool mean = false) {
  return [both, scalar, mean](NodeContext& c) {
    if (!c.has(0)) c.fail("needs at least one input");
    if (c.input_count() == 2 && !mean) {
      device_binary(c, both, scalar, true);
      return;
    }
    Tensor result = dev_float(c, 0);
    for (size_t k = 1; k < c.input_count(); ++k) result = both(result, dev_float(c, k));
    if (mean) result = result / static_cast<double>(c.input_count());
    c.set_device(0, result, c.type(0));
  };
}

// HardSigmoid max(0, min(1, alpha x + beta)) (defaults 0.2 and 0.5) and HardSwish, which is
// x HardSigmoid(x) with alpha 1/6 and beta 1/2 (MobileNetV3's activations).
double hard_sigmoid(double x, double alpha, double beta) {
  return std::max(0.0, std::min(1.0, alpha * x + beta));
}
Fn hard_sigmoid_op(bool swish, bool on_host) {
  return [swish, on_host](NodeContext& c) {
    const double alpha = swish ? 1.0 / 6.0 : static_cast<double>(c.attr_float("alpha", 0.2F));
    const double beta = swish ? 0.5 : static_cast<double>(c.attr_float("beta", 0.5F));
    if (on_host) {
      c.set_host(0, host_unary(c.host_values(0), [=](double x) {
                   return (swish ? x : 1.0) * hard_sigmoid(x, alpha, beta);
                 }));
      return;
    }
    const Tensor x = dev_float(c, 0);
    const Tensor gate = minimum(maximum(x * alpha + beta, 0.0), 1.0);
    c.set_device(0, swish ? x * gate : gate, kFloat);
  };
}

// Gelu (opset 20): the erf form, or with approximate "tanh"
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Fn gelu_op(bool on_host) {
  return [on_host](NodeContext& c) {
    const std::string approximate = c.attr_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      c.fail("approximate " + approximate + " is not one of none, tanh");
    const bool tanh_form = approximate == "tanh";
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    if (on_host) {
      c.set_host(0, host_unary(c.host_values(0), [=](double x) {
                   return tanh_form ? 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)))
                                    : d_gelu(x);
                 }));
      return;
    }
    // 0.5 (1 + tanh(u)) as sigmoid(2 u): no cancellation where tanh(u) is close to -1.
    const Tensor x = dev_float(c, 0);
    c.set_device(0, tanh_form ? x * sigmoid((x + x * x * x * 0.044715) * (2 * k)) : gelu(x),
                 kFloat);
  };
}

// Dropout runs as in inference: the output is the input and the mask, when asked for, all true.
// training_mode true with a ratio above 0 would drop at random, which the importer does not do:
// refused rather than run as the identity.
Fn dropout(bool on_host) {
  return [on_host](NodeContext& c) {
    double ratio = 0.5, training = 0;
    if (c.has(1) && !c.host_scalar(1, ratio)) ratio = -1;  // not known at load
    if (ratio != 0 && c.has(2) && !c.host_scalar(2, training))
      c.fail("training_mode must be a constant (or ratio a constant 0)");
    if (training != 0 && ratio < 0) c.fail("ratio must be a constant");
    if (training != 0 && ratio != 0) {
      c.fail("training_mode true with ratio " + std::to_string(ratio) +
             " drops at random; only inference is supported (training_mode false, or ratio 0)");
    }
    identity(c);
    if (!c.output_used(1)) return;
    // Before version 10 the mask has the input's type.
    const int32_t mask_type = c.version() < 10 ? c.type(0) : kBool;
    if (on_host) {
      check_host_size(c, c.shape(0));
      HostTensor mask = HostTensor::zeros(mask_type, c.shape(0));
      std::fill(mask.i.begin(), mask.i.end(), 1);
      std::fill(mask.f.begin(), mask.f.end(), 1.0F);
      c.set_host(1, std::move(mask));
    } else {
      c.set_device(1, ones(to_shape(c, c.shape(0)), c.model().device), mask_type);
    }
  };
}

// Clip on host values (integers stay exact); min and max are inputs 1 and 2, each optional.
void host_clip(NodeContext& c) {
  HostTensor x = c.host_values(0);
  for (size_t k = 1; k <= 2; ++k) {
    if (!c.has(k)) continue;
    const HostTensor& bound = c.host_values(k);
    if (bound.numel() != 1) c.fail(std::string(k == 1 ? "min" : "max") + " must be a scalar");
    for (int64_t e = 0; e < x.numel(); ++e) {
      const auto u = static_cast<size_t>(e);
      if (x.is_float()) {
        const float b = static_cast<float>(bound.at(0));
        x.f[u] = k == 1 ? (x.f[u] < b ? b : x.f[u]) : (x.f[u] > b ? b : x.f[u]);
      } else {
        const int64_t b = bound.int_at(0);
        x.i[u] = k == 1 ? std::max(x.i[u], b) : std::min(x.i[u], b);
      }
    }
  }
  c.set_host(0, std::move(x));
}

// Elementwise functions the op set has no op for, on host values in double (a device input is read
// back: right, and slower; execution_summary says "host"). Their attributes are read per node.
double d_softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
double d_softsign(double x) {
  return std::isinf(x) ? (x > 0 ? 1.0 : -1.0) : x / (1.0 + std::fabs(x));
}
double d_round(double x) {
  return std::nearbyint(x);  // halves to even, as ONNX (and numpy) round
}
// Elu, Celu and ThresholdedRelu: one attribute, alpha, 1 by default.
Fn host_with_alpha(double (*f)(double, double)) {
  return [f](NodeContext& c) {
    const auto alpha = static_cast<double>(c.attr_float("alpha", 1.0F));
    c.set_host(0, host_unary(c.host_values(0), [alpha, f](double x) { return f(x, alpha); }));
  };
}
double d_elu(double x, double alpha) {
  return x < 0 ? alpha * std::expm1(x) : x;
}
double d_celu(double x, double alpha) {
  return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
}
double d_thresholded_relu(double x, double alpha) {
  return x > alpha ? x : 0.0;
}
void host_selu(NodeContext& c) {
  const auto alpha = static_cast<double>(c.attr_float("alpha", 1.67326319217681884765625F));
  const auto gamma = static_cast<double>(c.attr_float("gamma", 1.05070102214813232421875F));
  c.set_host(0, host_unary(c.host_values(0), [alpha, gamma](double x) {
               return x > 0 ? gamma * x : gamma * alpha * std::expm1(x);
             }));
}

// Softmax and LogSoftmax along `axis`. Before version 13 the input is read as a matrix: the axes
// from `axis` on (default 1) are one row, normalised together.
void device_softmax(NodeContext& c, bool log) {
  const Tensor x = dev_float(c, 0);
  const auto rank = static_cast<size_t>(x.rank());
  const auto run = [log](const Tensor& t, int axis) {
    return log ? log_softmax(t, axis) : softmax(t, axis);
  };
  if (c.version() >= 13) {
    c.set_device(0, run(x, normalize(c, c.attr_int("axis", -1), rank)), kFloat);
    return;
  }
  const Ints& shape = c.shape(0);
  const AxisLayout rows = softmax_layout(c, shape);
  c.set_device(0, reshaped(c, run(reshaped(c, x, {rows.outer, rows.extent}), 1), shape), kFloat);
}

// Every ONNX op switchyard runs, by name, with its host and device implementation.
// Long: a table, one line an op; splitting it would only scatter the list.
std::map<std::string, OpDef> make_table() {
  std::map<std::string, OpDef> t;
  const auto both = [&](const std::string& name, Fn host, Fn device, bool ints_on_host = false) {
    t[name] = OpDef{std::move(host), std::move(device), ints_on_host};
  };
  // Shape-like ops: host when their inputs are known there, views on the device otherwise.
  both("Shape", host_shape, nullptr);
  both("Size", host_size, nullptr);
  both("Identity", identity, identity);
  t["Identity"].sequences = true;
  both("Dropout", dropout(true), dropout(false));
  both("Gather", host_gather, device_gather);
  both("Concat", host_concat, device_concat);
  both(
      "Unsqueeze",
      [](NodeContext& c) { host_reshape_like(c, unsqueezed_shape(c, c.shape(0), axes_of(c, 1))); },
      [](NodeContext& c) {
        c.set_device(0, reshaped(c, c.dev(0), unsqueezed_shape(c, c.shape(0), axes_of(c, 1))),
                     c.type(0));
      });
  both(
      "Squeeze",
      [](NodeContext& c) { host_reshape_like(c, squeezed_shape(c, c.shape(0), axes_of(c, 1))); },
      [](NodeContext& c) {
        c.set_device(0, reshaped(c, c.dev(0), squeezed_shape(c, c.shape(0), axes_of(c, 1))),
                     c.type(0));
      });
  both(
      "Reshape",
      [](NodeContext& c) {
        host_reshape_like(
            c, reshape_target(c, c.shape(0), c.ints(1), c.attr_int("allowzero", 0) != 0));
      },
      [](NodeContext& c) {
        c.set_device(
            0,
            reshaped(c, c.dev(0),
                     reshape_target(c, c.shape(0), c.ints(1), c.attr_int("allowzero", 0) != 0)),
            c.type(0));
      });
  both(
      "Flatten", [](NodeContext& c) { host_reshape_like(c, flatten_shape(c, c.shape(0))); },
      [](NodeContext& c) {
        c.set_device(0, reshaped(c, c.dev(0), flatten_shape(c, c.shape(0))), c.type(0));
      });
  both(
      "Transpose",
      [](NodeContext& c) {
        c.set_host(0, host_transpose(c.host_values(0), transpose_perm(c, c.shape(0).size())));
      },
      [](NodeContext& c) {
        const Ints perm = transpose_perm(c, c.shape(0).size());
        c.set_device(0, c.dev(0).permute(std::vector<int>(perm.begin(), perm.end())), c.type(0));
      });
  both("Slice", host_slice, device_slice);
  both("Split", host_split, device_split);
  both("ConstantOfShape", host_constant_of_shape, nullptr);
  both("Range", host_range, nullptr);
  both("Expand", host_expand, [](NodeContext& c) {
    c.set_device(0, c.dev(0).expand(to_shape(c, expand_shape(c))), c.type(0));
  });
  both("Where", host_where, device_where, true);  // integer branches stay exact on the host
  both("Cast", host_cast, device_cast);
  both("CastLike", host_cast, device_cast);  // cast_target reads the second input's type
  both("Trilu", host_trilu, device_trilu, true);
  // Elementwise.
  both("Add", binary_host(d_add, i_add), device_binary_fn(t_add, s_add, true), true);
  both("Sub", binary_host(d_sub, i_sub), device_binary_fn(t_sub, s_sub, false), true);
  both("Mul", binary_host(d_mul, i_mul), device_binary_fn(t_mul, s_mul, true), true);
  both("Div", binary_host(d_div, i_div), device_binary_fn(t_div, s_div, false), true);
  // Mod: on the host (shape arithmetic, where exporters write it); no device form yet.
  both(
      "Mod",
      [](NodeContext& c) {
        const bool fmod = c.attr_int("fmod", 0) != 0;
        binary_host(fmod ? d_fmod : d_mod, fmod ? i_fmod : i_mod)(c);
      },
      nullptr, true);
  both("Pow", binary_host(d_pow, nullptr), device_binary_fn(t_pow, s_pow, false), true);
  both("Max", variadic_host(d_max, i_max), variadic_device(t_max, s_max), true);
  both("Min", variadic_host(d_min, i_min), variadic_device(t_min, s_min), true);
  both("Sum", variadic_host(d_add, i_add), variadic_device(t_add, s_add), true);
  both("Mean", variadic_host(d_add, i_add, true), variadic_device(t_add, s_add, true), true);
  both("Equal", binary_host(d_eq, nullptr, kBool), compare_device(0), true);
  both("Greater", binary_host(d_gt, nullptr, kBool), compare_device(1), true);
  both("Less", binary_host(d_lt, nullptr, kBool), compare_device(2), true);
  both("GreaterOrEqual", binary_host(d_ge, nullptr, kBool), compare_device(3), true);
  both("LessOrEqual", binary_host(d_le, nullptr, kBool), compare_device(4), true);
  both(
      "And", binary_host(d_and, nullptr, kBool),
      [](NodeContext& c) { c.set_device(0, mul(dev_float(c, 0), dev_float(c, 1)), kBool); }, true);
  both(
      "Or", binary_host(d_or, nullptr, kBool),
      [](NodeContext& c) { c.set_device(0, maximum(dev_float(c, 0), dev_float(c, 1)), kBool); },
      true);
  both(
      "Xor", binary_host(d_xor, nullptr, kBool),
      [](NodeContext& c) { c.set_device(0, abs(dev_float(c, 0) - dev_float(c, 1)), kBool); }, true);
  both("Not", unary_host(d_not), unary_device(t_not, kBool), true);
  both("Neg", unary_host(d_neg), unary_device(&switchyard::neg), true);
  both("Abs", unary_host(d_abs), unary_device(&switchyard::abs), true);
  both("Sqrt", unary_host(d_sqrt), unary_device(&switchyard::sqrt));
  both("Reciprocal", unary_host(d_reciprocal), unary_device(t_reciprocal));
  both("Exp", unary_host(d_exp), unary_device(&switchyard::exp));
  both("Log", unary_host(d_log), unary_device(&switchyard::log));
  both("Relu", unary_host(d_relu), unary_device(&switchyard::relu));
  both("Sigmoid", unary_host(d_sigmoid), unary_device(&switchyard::sigmoid));
  both("Tanh", unary_host(d_tanh), unary_device(&switchyard::tanh));
  both("Erf", unary_host(d_erf), unary_device(erf_composed));
  both("HardSigmoid", hard_sigmoid_op(false, true), hard_sigmoid_op(false, false));
  both("HardSwish", hard_sigmoid_op(true, true), hard_sigmoid_op(true, false));
  both("switchyard.Gelu", fused_gelu_host, fused_gelu_device);
  both("Gelu", gelu_op(true), gelu_op(false));
  both("Mish", unary_host(d_mish), unary_device(mish_composed));
  // On the host only (see host_with_alpha).
  for (const auto& [name, f] :
       std::initializer_list<std::pair<const char*, double (*)(double)>>{{"Sin", std::sin},
                                                                         {"Cos", std::cos},
                                                                         {"Tan", std::tan},
                                                                         {"Asin", std::asin},
                                                                         {"Acos", std::acos},
                                                                         {"Atan", std::atan},
                                                                         {"Sinh", std::sinh},
                                                                         {"Cosh", std::cosh},
                                                                         {"Asinh", std::asinh},
                                                                         {"Acosh", std::acosh},
                                                                         {"Atanh", std::atanh},
                                                                         {"Softplus", d_softplus},
                                                                         {"Softsign", d_softsign},
                                                                         {"Round", d_round}}) {
    both(name, unary_host(f), nullptr);
  }
  both("Elu", host_with_alpha(d_elu), nullptr);
  both("Celu", host_with_alpha(d_celu), nullptr);
  both("ThresholdedRelu", host_with_alpha(d_thresholded_relu), nullptr);
  both("Selu", host_selu, nullptr);
  both("TopK", host_top_k, nullptr);
  both("GatherElements", host_gather_elements, nullptr);
  both("GatherND", host_gather_nd, nullptr);
  both("ScatterND", host_scatter_nd, nullptr);
  both("ScatterElements", host_scatter_elements, nullptr);
  both("Scatter", host_scatter_elements, nullptr);  // ScatterElements' name before opset 11
  both("NonZero", host_non_zero, nullptr);
  both("NonMaxSuppression", host_non_max_suppression, nullptr);
  both("RoiAlign", host_roi_align, nullptr);
  both("ReduceProd", host_reduce_prod, nullptr);
  both("OneHot", host_one_hot, nullptr);
  both("Floor", unary_host(d_floor), nullptr, true);
  both("Ceil", unary_host(d_ceil), nullptr, true);
  both("LeakyRelu", nullptr, [](NodeContext& c) {
    const Tensor x = dev_float(c, 0);
    c.set_device(
        0, maximum(x, 0.0) + minimum(x, 0.0) * static_cast<double>(c.attr_float("alpha", 0.01F)),
        kFloat);
  });
  both(
      "Clip", host_clip,
      [](NodeContext& c) {
        Tensor x = dev_float(c, 0);
        double v = 0;
        if (c.has(1)) x = c.host_scalar(1, v) ? maximum(x, v) : maximum(x, dev_float(c, 1));
        if (c.has(2)) x = c.host_scalar(2, v) ? minimum(x, v) : minimum(x, dev_float(c, 2));
        c.set_device(0, x, kFloat);
      },
      true);
  // Neural-network ops, on the device.
  both("MatMul", nullptr, device_matmul);
  both("Einsum", nullptr, device_einsum);
  both("QuantizeLinear", host_quantize, device_quantize);
  both("DequantizeLinear", host_dequantize, device_dequantize);
  both("DynamicQuantizeLinear", nullptr, device_dynamic_quantize);
  both("MatMulInteger", nullptr, device_matmul_integer);
  both("ConvInteger", nullptr, device_conv_integer);
  both("GridSample", nullptr, device_grid_sample);
  both("switchyard.Linear", nullptr, device_linear);
  both("switchyard.Attention", nullptr, device_attention);
  both("Gemm", nullptr, device_gemm);
  both("Softmax", nullptr, [](NodeContext& c) { device_softmax(c, false); });
  both("LogSoftmax", nullptr, [](NodeContext& c) { device_softmax(c, true); });
  both("Conv", nullptr, device_conv);
  both("switchyard.Conv", nullptr, device_conv);
  both("MaxPool", nullptr, [](NodeContext& c) { device_pool(c, true); });
  both("AveragePool", nullptr, [](NodeContext& c) { device_pool(c, false); });
  both("GlobalAveragePool", nullptr, [](NodeContext& c) { device_global_pool(c, false); });
  both("GlobalMaxPool", nullptr, [](NodeContext& c) { device_global_pool(c, true); });
  both("Pad", nullptr, device_pad);
  both("Resize", nullptr, device_resize);
  both("Upsample", nullptr, device_resize);  // Resize-10's form before opset 10
  both("DepthToSpace", nullptr, [](NodeContext& c) { device_depth_to_space(c, true); });
  both("SpaceToDepth", nullptr, [](NodeContext& c) { device_depth_to_space(c, false); });
  both("InstanceNormalization", nullptr, device_instance_norm);
  both("GroupNormalization", nullptr, device_group_norm);
  both("LRN", nullptr, device_lrn);
  both("LpNormalization", nullptr, device_lp_normalization);
  both("MeanVarianceNormalization", nullptr, device_mean_variance_normalization);
  both("GlobalLpPool", nullptr, device_global_lp_pool);
  both("LpPool", nullptr, [](NodeContext& c) { device_tapped_pool(c, PoolKind::lp); });
  both("Hardmax", host_hardmax, nullptr);
  both("EyeLike", host_eye_like, nullptr);
  both("Shrink", host_shrink, nullptr);
  both("ConvTranspose", nullptr, device_conv_transpose);
  both("PRelu", nullptr, device_prelu);
  both("BatchNormalization", nullptr, device_batch_norm);
  both("LayerNormalization", nullptr, device_layer_norm);
  const auto reduce = [](Reduction kind) {
    return [kind](NodeContext& c) { device_reduce(c, kind); };
  };
  both("ReduceMean", nullptr, reduce(Reduction::kMean));
  both("ReduceSum", nullptr, reduce(Reduction::kSum));
  both("ReduceMax", nullptr, reduce(Reduction::kMax));
  both("ReduceMin", nullptr, reduce(Reduction::kMin));
  both("ReduceL1", nullptr, reduce(Reduction::kL1));
  both("ReduceL2", nullptr, reduce(Reduction::kL2));
  both("ReduceSumSquare", nullptr, reduce(Reduction::kSumSquare));
  both("ReduceLogSum", nullptr, reduce(Reduction::kLogSum));
  both("ReduceLogSumExp", nullptr, reduce(Reduction::kLogSumExp));
  both("ArgMax", nullptr, [](NodeContext& c) { device_arg(c, true); });
  both("ArgMin", nullptr, [](NodeContext& c) { device_arg(c, false); });
  both("CumSum", host_cumsum, device_cumsum, true);  // integers: sequential and exact on the host
  both("Tile", nullptr, device_tile);
  both("Sign", unary_host(d_sign), unary_device(&switchyard::sign), true);
  both("IsNaN", nullptr, [](NodeContext& c) {
    const Tensor x = dev_float(c, 0);
    c.set_device(0, 1.0 - equal(x, x), kBool);
  });
  both("IsInf", nullptr, [](NodeContext& c) {
    const Tensor x = dev_float(c, 0);
    const double inf = std::numeric_limits<double>::infinity();
    Tensor found = zeros_like(x);
    if (c.attr_int("detect_positive", 1) != 0) found = found + equal(x, full_like(x, inf));
    if (c.attr_int("detect_negative", 1) != 0) found = found + equal(x, full_like(x, -inf));
    c.set_device(0, found, kBool);
  });
  both("LSTM", nullptr, [](NodeContext& c) { device_recurrent(c, RecurrentKind::lstm); });
  both("GRU", nullptr, [](NodeContext& c) { device_recurrent(c, RecurrentKind::gru); });
  both("RNN", nullptr, [](NodeContext& c) { device_recurrent(c, RecurrentKind::rnn); });
  t["If"] = OpDef{};  // control flow: run_nodes runs their subgraphs (onnx_control.cpp)
  t["Loop"] = OpDef{};
  t["Scan"] = OpDef{};
  // Sequence ops: on the host, taking sequence inputs (onnx_ops_sequence.cpp).
  for (const auto& [name, fn] :
       std::vector<std::pair<std::string, Fn>>{{"SequenceEmpty", sequence_empty},
                                               {"SequenceConstruct", sequence_construct},
                                               {"SequenceInsert", sequence_insert},
                                               {"SequenceAt", sequence_at},
                                               {"SequenceLength", sequence_length},
                                               {"SequenceErase", sequence_erase},
                                               {"ConcatFromSequence", concat_from_sequence},
                                               {"SplitToSequence", split_to_sequence}}) {
    t[name] = OpDef{fn, nullptr, false, true};
  }
  return t;
}

}  // namespace

const std::map<std::string, OpDef>& op_table() {
  static const std::map<std::string, OpDef> table = make_table();
  return table;
}

}  // namespace switchyard::onnx_detail

namespace switchyard {

const std::vector<std::string>& onnx_supported_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> out{"Constant"};
    for (const auto& [name, def] : onnx_detail::op_table()) {
      if (name.rfind("switchyard.", 0) != 0) out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return ops;
}

}  // namespace switchyard
