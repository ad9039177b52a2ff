// Special values: NaN, infinities and signed zeros wherever docs/ops.md says what an op makes of
// them ("<op>/<dtype>/special_values"). The other cases draw inputs that keep every result finite,
// so a backend that turned NaN into 0 (a max instruction that returns its second operand when the
// first is NaN, say) would pass all of them while hiding a diverged training run. Here the
// comparison's rule that NaN and ±inf sit at exactly the reference's positions does the checking;
// the finite results around them (sigmoid(inf) = 1, exp(-inf) = 0) are compared as usual, and the
// tensors are small so that each counts.
//
// Only what docs/ops.md defines is fed: GELU and SILU get no infinities (-inf * 0), POW none at all
// (C's pow has a table of its own special cases), and no elementwise backward op a special value.
#include <cmath>
#include <limits>

#include "conformance/cases.h"

namespace switchyard::conformance {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// tensor_from_values with `values` repeated until they fill the shape.
HostTensor values_tensor(sy_dtype dtype, std::vector<int64_t> shape,
                         const std::vector<double>& values) {
  std::vector<double> filled(static_cast<size_t>(shape_element_count(shape)));
  for (size_t i = 0; i < filled.size(); ++i) filled[i] = values[i % values.size()];
  return tensor_from_values(dtype, std::move(shape), filled);
}

// A value beyond the dtype's finite range once an op grows it a little (exp, a sum): 1e30 for f32
// and bf16, 60000 for f16 (its largest finite value is 65504).
double large(sy_dtype dtype) {
  return dtype == SY_DTYPE_F16 ? 60000.0 : 1e30;
}

// Unary inputs: every special value the op's definition covers, and a few ordinary ones.
std::vector<double> unary_values(sy_op op, sy_dtype dtype) {
  switch (op) {
    case SY_OP_GELU:
      return {kNan, 0.0, -0.0, 1.5, -2.5, 3.0, -0.5, 0.25};
    case SY_OP_EXP:
      return {kNan, kInf, -kInf, 0.0, -0.0, 100.0, -200.0, 1.5};
    case SY_OP_LOG:
      return {kNan, kInf, -kInf, 0.0, -0.0, -1.0, 2.5, large(dtype)};
    case SY_OP_SQRT:
      return {kNan, kInf, -kInf, 0.0, -0.0, -1.0, 2.25, large(dtype)};
    default:  // RELU SIGMOID TANH NEG ABS SIGN
      return {kNan, kInf, -kInf, 0.0, -0.0, 1.5, -2.5, large(dtype), -large(dtype), 100.0, -100.0};
  }
}

void add_unary(CaseTable& table) {
  for (int value = SY_OP_RELU; value <= SY_OP_SIGN; ++value) {
    const auto op = static_cast<sy_op>(value);
    for (sy_dtype dtype : kFloatDtypes) {
      add_case(table, op, dtype, "special_values", [op, dtype](Generator&) {
        const HostTensor x = values_tensor(dtype, {2, 11}, unary_values(op, dtype));
        return make_op_case(op, {x}, {zeros(dtype, x.shape)});
      });
    }
  }
}

// Binary: a and b pair every special value with every other and with ordinary numbers (an
// 8 x 8 table: row value op column value).
void add_binary(CaseTable& table) {
  for (sy_op op : {SY_OP_ADD, SY_OP_SUB, SY_OP_MUL, SY_OP_DIV, SY_OP_MAX, SY_OP_MIN, SY_OP_CMP_GT,
                   SY_OP_CMP_EQ}) {
    for (sy_dtype dtype : kFloatDtypes) {
      add_case(table, op, dtype, "special_values", [op, dtype](Generator&) {
        const std::vector<double> specials = {kNan, kInf, -kInf, 0.0, -0.0, 1.5, -2.5, 4.0};
        const int64_t n = static_cast<int64_t>(specials.size());
        HostTensor a = zeros(dtype, {n, n});
        HostTensor b = zeros(dtype, {n, n});
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            a.storage[static_cast<size_t>(i * n + j)] = specials[static_cast<size_t>(i)];
            b.storage[static_cast<size_t>(i * n + j)] = specials[static_cast<size_t>(j)];
          }
        }
        return make_op_case(op, {a, b}, {zeros(dtype, {n, n})});
      });
    }
  }
}

// Reductions along the last axis, one row per situation: a NaN among numbers, +inf and -inf
// together (NaN), +inf alone, -inf everywhere, two NaNs (ARGMAX takes the first), a sum beyond
// the dtype's range.
void add_reduce(CaseTable& table) {
  for (sy_op op : {SY_OP_REDUCE_SUM, SY_OP_REDUCE_MEAN, SY_OP_REDUCE_MAX, SY_OP_ARGMAX}) {
    for (sy_dtype dtype : kFloatDtypes) {
      add_case(table, op, dtype, "special_values", [op, dtype](Generator&) {
        const double big = large(dtype);
        const std::vector<double> rows = {
            1.5,   kNan,  -2.5,  3.0,   0.5,   -1.0,   // NaN among numbers
            kInf,  1.0,   -kInf, 2.0,   0.0,   1.0,    // +inf and -inf
            1.0,   kInf,  2.0,   -3.0,  0.0,   -0.0,   // +inf
            -kInf, -kInf, -kInf, -kInf, -kInf, -kInf,  // all -inf
            2.0,   kNan,  kInf,  kNan,  1.0,   0.0,    // two NaNs and +inf
            big,   big,   big,   1.0,   2.0,   -1.0};  // a sum past the largest finite value
        const HostTensor x = values_tensor(dtype, {6, 6}, rows);
        const bool argmax = op == SY_OP_ARGMAX;
        OpCase op_case =
            make_op_case(op, {x}, {zeros(argmax ? SY_DTYPE_I64 : dtype, std::vector<int64_t>{6})});
        op_case.params.reduce.axes_mask = 1u << 1;
        op_case.params.reduce.keep_dims = 0;
        return op_case;
      });
    }
  }
}

// SOFTMAX and LOG_SOFTMAX along the last axis: a row with +inf, a row of -inf (both NaN rows), a
// row with some -inf (zero probabilities), a row with a NaN, and an ordinary row.
void add_softmax(CaseTable& table) {
  for (sy_op op : {SY_OP_SOFTMAX, SY_OP_LOG_SOFTMAX}) {
    for (sy_dtype dtype : kFloatDtypes) {
      add_case(table, op, dtype, "special_values", [op, dtype](Generator&) {
        const std::vector<double> rows = {1.0,   kInf,  -2.0,  0.5,    // +inf
                                          -kInf, -kInf, -kInf, -kInf,  // all -inf
                                          -kInf, 1.0,   -kInf, 2.0,    // some -inf
                                          0.5,   kNan,  1.0,   -1.0,   // NaN
                                          0.25,  -0.5,  1.5,   -0.0};  // ordinary
        const HostTensor x = values_tensor(dtype, {5, 4}, rows);
        OpCase op_case = make_op_case(op, {x}, {zeros(dtype, x.shape)});
        op_case.params.softmax.axis = 1;
        return op_case;
      });
    }
  }
}

enum class PoolWindows {
  kTiled,        // 2x2 windows of stride 2 over the 4x4 image: a 2x2 output
  kOverlapping,  // 3x3 windows of stride 2 with padding 1 over it: a 2x2 output too
  kWide,         // 2x2 windows of stride 2 over the image repeated 4 times across (4x16): 2x8, as
                 // wide as the rows some backends pool with a vector kernel (onednn from 14)
};

// A pooling over one 4x4 image (given row by row), or four copies of it side by side.
void add_pool(CaseTable& table, sy_op op, const std::vector<double>& image,
              PoolWindows windows = PoolWindows::kTiled) {
  const bool overlapping = windows == PoolWindows::kOverlapping;
  const int64_t copies = windows == PoolWindows::kWide ? 4 : 1;
  std::vector<double> values;
  for (size_t row = 0; row < 4; ++row) {
    for (int64_t copy = 0; copy < copies; ++copy)
      values.insert(values.end(), image.begin() + 4 * row, image.begin() + 4 * row + 4);
  }
  const char* variant = overlapping  ? "special_values/3x3/stride2/pad1"
                        : copies > 1 ? "special_values/wide_rows"
                                     : "special_values";
  for (sy_dtype dtype : kFloatDtypes) {
    add_case(table, op, dtype, variant, [op, dtype, values, overlapping, copies](Generator&) {
      const HostTensor x = values_tensor(dtype, {1, 1, 4, 4 * copies}, values);
      const std::vector<int64_t> y_shape = {1, 1, 2, 2 * copies};
      // The backward sends each window's gradient to its first maximum, a NaN counting as one.
      OpCase op_case =
          op == SY_OP_MAX_POOL2D_BACKWARD
              ? make_op_case(op, {values_tensor(dtype, y_shape, {0.5, -1.5, 2.0, 3.0, -0.25}), x},
                             {zeros(dtype, x.shape)})
              : make_op_case(op, {x}, {zeros(dtype, y_shape)});
      sy_pool2d_params& p = op_case.params.pool2d;
      p.kernel_h = p.kernel_w = overlapping ? 3 : 2;
      p.stride_h = p.stride_w = 2;
      p.pad_h = p.pad_w = overlapping ? 1 : 0;
      // Overlapping windows add into one element in an order docs/ops.md leaves open.
      if (overlapping && op == SY_OP_MAX_POOL2D_BACKWARD)
        op_case.tolerance = default_tolerance(SY_OP_AVG_POOL2D_BACKWARD, dtype);
      return op_case;
    });
  }
}

// The two poolings' windows. MAX_POOL2D and its backward: one with two NaNs (the first gets the
// gradient), one with -inf among numbers, one of -inf only (its first element gets it), one with
// +inf; and the same image under overlapping, padded windows (NaN reaching three of them), and
// four copies of it side by side. AVG_POOL2D: a NaN, +inf alone, +inf with -inf (NaN), numbers.
void add_pools(CaseTable& table) {
  for (sy_op op : {SY_OP_MAX_POOL2D, SY_OP_MAX_POOL2D_BACKWARD}) {
    for (PoolWindows windows :
         {PoolWindows::kTiled, PoolWindows::kOverlapping, PoolWindows::kWide}) {
      add_pool(table, op,
               {1.0, kNan, -kInf, 2.0,     //
                -1.0, kNan, -kInf, -kInf,  //
                -kInf, -kInf, 3.0, kInf,   //
                -kInf, -kInf, -2.0, 1.0},
               windows);
    }
  }
  add_pool(table, SY_OP_AVG_POOL2D,
           {1.0, kNan, kInf, 2.0,   //
            -1.0, 0.5, -1.0, -3.0,  //
            kInf, 1.0, 3.0, 0.25,   //
            -kInf, 2.0, -2.0, 1.0});
}

// CONV2D_FUSED's activations on NaN (and, for RELU and CLIP, on infinities): a 1x1 convolution of
// weight 1 passes x through, so y = act(x) element by element, channels-last as the ONNX importer
// runs it and NCHW.
void add_conv_fused(CaseTable& table) {
  struct Activation {
    uint32_t kind;
    const char* name;
    float low, high;
  };
  const Activation activations[] = {
      {SY_ACTIVATION_RELU, "relu", 0.0f, 0.0f},
      {SY_ACTIVATION_CLIP, "clip", 0.0f, 6.0f},
      {SY_ACTIVATION_CLIP, "clip_infinite", -std::numeric_limits<float>::infinity(), 6.0f},
      {SY_ACTIVATION_SILU, "silu", 0.0f, 0.0f}};
  for (const Activation& activation : activations) {
    for (bool channels_last : {false, true}) {
      for (sy_dtype dtype : kFloatDtypes) {
        const std::string variant = std::string("special_values/") + activation.name +
                                    (channels_last ? "/channels_last" : "");
        add_case(table, SY_OP_CONV2D_FUSED, dtype, variant,
                 [activation, channels_last, dtype](Generator&) {
                   const bool silu = activation.kind == SY_ACTIVATION_SILU;
                   const std::vector<double> values =
                       silu ? std::vector<double>{kNan, 1.5, -2.5, 0.0, 7.0, -0.5, 3.0, -8.0}
                            : std::vector<double>{kNan, kInf, -kInf, 0.0, 7.0, -0.5, 3.0, -8.0};
                   // 16 channels of a 2x2 image, so that 16-wide vector paths run too.
                   HostTensor x = values_tensor(dtype, {1, 16, 2, 2}, values);
                   HostTensor y = zeros(dtype, {1, 16, 2, 2});
                   if (channels_last) {
                     x = permuted_layout(x, {0, 2, 3, 1});
                     y = permuted_layout(y, {0, 2, 3, 1});
                   }
                   // Depthwise (groups = 16) with weight 1: y = act(x).
                   const HostTensor w = values_tensor(dtype, {16, 1, 1, 1}, {1.0});
                   OpCase op_case = make_op_case(SY_OP_CONV2D_FUSED, {x, w}, {y});
                   sy_conv2d_fused_params& p = op_case.params.conv2d_fused;
                   p.conv.conv.stride_h = p.conv.conv.stride_w = 1;
                   p.conv.conv.dilation_h = p.conv.conv.dilation_w = 1;
                   p.conv.groups = 16;
                   p.activation = activation.kind;
                   p.low = activation.low;
                   p.high = activation.high;
                   return op_case;
                 });
      }
    }
  }
}

// MATMUL: a NaN, an infinity and an infinity meeting a zero (NaN) in a row of a, one row of a
// (the dot-product path of a batch-1 classifier) and five, and a product large enough for the
// blocked kernels.
void add_matmul(CaseTable& table) {
  struct Shape3 {
    int64_t m, k, n;
    const char* name;
  };
  for (const Shape3& shape :
       {Shape3{1, 8, 6, "1x8x6"}, Shape3{5, 8, 6, "5x8x6"}, Shape3{33, 64, 40, "33x64x40"}}) {
    for (sy_dtype dtype : kFloatDtypes) {
      add_case(table, SY_OP_MATMUL, dtype, std::string("special_values/") + shape.name,
               [shape, dtype](Generator& gen) {
                 HostTensor a = random_tensor(gen, dtype, {shape.m, shape.k}, -1.0, 1.0);
                 HostTensor b = random_tensor(gen, dtype, {shape.k, shape.n}, -1.0, 1.0);
                 a.storage[1] = kNan;  // row 0: NaN in every output of the row
                 if (shape.m > 1) a.storage[static_cast<size_t>(shape.k + 2)] = kInf;  // row 1
                 // Column 0 of b is zero: row 1's inf * 0 is NaN there, inf elsewhere.
                 for (int64_t i = 0; i < shape.k; ++i)
                   b.storage[static_cast<size_t>(i * shape.n)] = 0.0;
                 return make_op_case(SY_OP_MATMUL, {a, b}, {zeros(dtype, {shape.m, shape.n})});
               });
    }
  }
}

// COPY from f32: NaN stays NaN, and values beyond f16's range become +-inf (docs/ops.md).
void add_copy(CaseTable& table) {
  for (sy_dtype to : {SY_DTYPE_F16, SY_DTYPE_BF16}) {
    add_case(table, SY_OP_COPY, to, "special_values/cast_from_f32", [to](Generator&) {
      const HostTensor x = values_tensor(SY_DTYPE_F32, {2, 8},
                                         {kNan, kInf, -kInf, 0.0, -0.0, 1e10, -1e10, 70000.0,
                                          -70000.0, 65504.0, 1.5, 1e-30, 3e38, -3e38, 2.5, -1.0});
      return make_op_case(SY_OP_COPY, {x}, {zeros(to, x.shape)});
    });
  }
}

// Binary ops with b broadcast along a's rows (stride 0) and with a scalar b of NaN or +inf: the
// paths a backend keeps apart from the same-shape one.
void add_binary_broadcast_and_scalar(CaseTable& table) {
  const std::vector<double> specials = {kNan, kInf, -kInf, 0.0, -0.0, 1.5, -2.5, 4.0};
  for (sy_op op : {SY_OP_ADD, SY_OP_MUL, SY_OP_DIV, SY_OP_MAX, SY_OP_MIN, SY_OP_CMP_GT}) {
    for (sy_dtype dtype : kFloatDtypes) {
      add_case(table, op, dtype, "special_values/broadcast", [op, dtype, specials](Generator&) {
        const int64_t n = static_cast<int64_t>(specials.size());
        HostTensor a = zeros(dtype, {n, n});
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            a.storage[static_cast<size_t>(i * n + j)] = specials[static_cast<size_t>(i)];
          }
        }
        const HostTensor b = broadcast_layout(values_tensor(dtype, {1, n}, specials), {n, n});
        return make_op_case(op, {a, b}, {zeros(dtype, {n, n})});
      });
      for (double scalar : {kNan, kInf}) {
        const std::string variant =
            std::string("special_values/scalar_") + (std::isnan(scalar) ? "nan" : "inf");
        add_case(table, op, dtype, variant, [op, dtype, specials, scalar](Generator&) {
          const HostTensor a = values_tensor(dtype, {2, 8}, specials);
          OpCase op_case = make_op_case(op, {a}, {zeros(dtype, a.shape)});
          op_case.params.binary.use_scalar = 1;
          op_case.params.binary.scalar = scalar;
          return op_case;
        });
      }
    }
  }
}

// CONV2D, 3x3 with padding 1 over 8 channels of two 6x6 images: in the first a NaN (NaN in every
// output whose window holds it) and an infinity where the weights have a zero tap (inf * 0: NaN
// there, +-inf around it); the second image must stay finite. NCHW and channels-last.
void add_conv(CaseTable& table) {
  for (bool channels_last : {false, true}) {
    for (sy_dtype dtype : kFloatDtypes) {
      const std::string variant =
          std::string("special_values") + (channels_last ? "/channels_last" : "");
      add_case(table, SY_OP_CONV2D, dtype, variant, [channels_last, dtype](Generator& gen) {
        HostTensor x = random_tensor(gen, dtype, {2, 8, 6, 6}, -1.0, 1.0);
        HostTensor w = random_tensor(gen, dtype, {4, 8, 3, 3}, -1.0, 1.0);
        x.storage[1 * 36 + 2 * 6 + 2] = kNan;  // channel 1, (2, 2)
        x.storage[5 * 36 + 4 * 6 + 4] = kInf;  // channel 5, (4, 4)
        for (int64_t o = 0; o < 4; ++o) {
          w.storage[static_cast<size_t>((o * 8 + 5) * 9 + 4)] = 0.0;  // channel 5's centre tap
        }
        HostTensor y = zeros(dtype, {2, 4, 6, 6});
        if (channels_last) {
          x = permuted_layout(x, {0, 2, 3, 1});
          y = permuted_layout(y, {0, 2, 3, 1});
        }
        OpCase op_case = make_op_case(SY_OP_CONV2D, {x, w}, {y});
        sy_conv2d_params& p = op_case.params.conv2d;
        p.stride_h = p.stride_w = 1;
        p.pad_h = p.pad_w = 1;
        p.dilation_h = p.dilation_w = 1;
        return op_case;
      });
    }
  }
}

// LAYER_NORM over rows of 8: a row with a NaN has a NaN mean, rstd and output row.
void add_layer_norm(CaseTable& table) {
  for (sy_dtype dtype : kFloatDtypes) {
    add_case(table, SY_OP_LAYER_NORM, dtype, "special_values", [dtype](Generator& gen) {
      HostTensor x = random_tensor(gen, dtype, {3, 8}, -1.0, 3.0);
      x.storage[8 + 3] = kNan;  // row 1
      const HostTensor gamma = random_tensor(gen, dtype, {8}, 0.5, 1.5);
      const HostTensor beta = random_tensor(gen, dtype, {8}, -0.5, 0.5);
      OpCase op_case =
          make_op_case(SY_OP_LAYER_NORM, {x, gamma, beta},
                       {zeros(dtype, {3, 8}), zeros(SY_DTYPE_F32, {3}), zeros(SY_DTYPE_F32, {3})});
      op_case.params.layer_norm.normalized_rank = 1;
      op_case.params.layer_norm.epsilon = 1e-5;
      return op_case;
    });
  }
}

// CROSS_ENTROPY and its backward with -inf logits: on classes other than the label (a masked
// vocabulary: finite loss, zero probability), on the label (loss +inf), and a NaN logit (NaN).
void add_cross_entropy(CaseTable& table) {
  struct Situation {
    const char* name;
    int64_t row, column;  // where the special logit goes (labels are 0 .. 3, row i has label i)
    double value;
  };
  const Situation situations[] = {
      {"masked_class", 1, 3, -kInf}, {"masked_label", 2, 2, -kInf}, {"nan", 0, 4, kNan}};
  for (sy_op op : {SY_OP_CROSS_ENTROPY, SY_OP_CROSS_ENTROPY_BACKWARD}) {
    for (const Situation& situation : situations) {
      // The gradient of an infinite loss has no finite reference: the backward takes the others.
      if (op == SY_OP_CROSS_ENTROPY_BACKWARD && situation.value == -kInf &&
          situation.row == situation.column) {
        continue;
      }
      for (sy_dtype dtype : kFloatDtypes) {
        add_case(
            table, op, dtype, std::string("special_values/") + situation.name,
            [op, dtype, situation](Generator& gen) {
              HostTensor logits = random_tensor(gen, dtype, {4, 5}, -3.0, 3.0);
              logits.storage[static_cast<size_t>(situation.row * 5 + situation.column)] =
                  situation.value;
              HostTensor labels = zeros(SY_DTYPE_I64, {4});
              for (int64_t i = 0; i < 4; ++i) labels.storage[static_cast<size_t>(i)] = i;
              OpCase op_case;
              if (op == SY_OP_CROSS_ENTROPY) {
                op_case = make_op_case(op, {logits, labels}, {zeros(dtype, {})});
              } else {
                const HostTensor grad_loss = values_tensor(dtype, {}, {1.0});
                op_case = make_op_case(op, {logits, labels, grad_loss}, {zeros(dtype, {4, 5})});
              }
              op_case.params.cross_entropy.reduction = 1;  // sum
              return op_case;
            });
      }
    }
  }
}

// SCALED_DOT_PRODUCT_ATTENTION with a [Tq, Tk] mask per head: query 2 of head 0 has every key
// masked (docs/ops.md: out NaN, lse -inf), other queries some keys; a NaN in q at query 3 of head
// 1 (out and lse NaN for that query only). Causal too, so that the two masks combine.
void add_attention(CaseTable& table) {
  for (bool causal : {false, true}) {
    for (sy_dtype dtype : kFloatDtypes) {
      add_case(table, SY_OP_SCALED_DOT_PRODUCT_ATTENTION, dtype,
               std::string("special_values") + (causal ? "/causal" : ""),
               [causal, dtype](Generator& gen) {
                 const int64_t b = 1, h = 2, tq = 5, tk = 6, d = 8;
                 HostTensor q = random_tensor(gen, dtype, {b, h, tq, d}, -2.0, 2.0);
                 const HostTensor k = random_tensor(gen, dtype, {b, h, tk, d}, -2.0, 2.0);
                 const HostTensor v = random_tensor(gen, dtype, {b, h, tk, d}, -1.0, 1.0);
                 HostTensor mask = random_tensor(gen, dtype, {b, h, tq, tk}, -1.0, 1.0);
                 for (int64_t j = 0; j < tk; ++j)
                   mask.storage[static_cast<size_t>(2 * tk + j)] = -kInf;
                 mask.storage[static_cast<size_t>(0 * tk + 1)] = -kInf;  // head 0, query 0, key 1
                 mask.storage[static_cast<size_t>((tq + 4) * tk + 0)] = -kInf;  // head 1, query 4
                 q.storage[static_cast<size_t>((tq + 3) * d + 5)] = kNan;       // head 1, query 3
                 OpCase op_case =
                     make_op_case(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, {q, k, v, mask},
                                  {zeros(dtype, {b, h, tq, d}), zeros(SY_DTYPE_F32, {b, h, tq})});
                 op_case.params.attention.scale = 1.0 / std::sqrt(static_cast<double>(d));
                 op_case.params.attention.causal = causal ? 1 : 0;
                 op_case.params.attention.has_mask = 1;
                 return op_case;
               });
    }
  }
}

}  // namespace

void add_special_value_cases(CaseTable& table) {
  add_unary(table);
  add_binary(table);
  add_reduce(table);
  add_softmax(table);
  add_pools(table);
  add_conv_fused(table);
  add_matmul(table);
  add_copy(table);
  add_binary_broadcast_and_scalar(table);
  add_conv(table);
  add_layer_norm(table);
  add_cross_entropy(table);
  add_attention(table);
}

}  // namespace switchyard::conformance
