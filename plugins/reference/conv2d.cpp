// CONV2D (NCHW activations, OIHW weights, groups = 1), CONV2D_GROUPED (weights [O, C / groups,
// KH, KW]) and their backward ops. One set of loops serves both: CONV2D is the case groups = 1.
//
// Direct loops over converted contiguous copies of the tensors. The inner loop runs along an
// output row, so x and y are streamed; out-of-range (padding) positions contribute zero.
#include <cmath>
#include <string>
#include <vector>

#include "ops.h"

namespace sy_reference {
namespace {

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // x
  int64_t o = 0, kh = 0, kw = 0;       // weights
  int64_t oh = 0, ow = 0;              // y
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  int64_t groups = 1, cg = 0, og = 0;  // groups; input and output channels per group

  // The input channel that output channel o reads as its group's channel k.
  int64_t in_channel(int64_t out, int64_t k) const { return (out / og) * cg + k; }

  // The input coordinate that output coordinate i reads through kernel tap k.
  int64_t in_row(int64_t i, int64_t k) const { return i * stride_h - pad_h + k * dil_h; }
  int64_t in_col(int64_t j, int64_t k) const { return j * stride_w - pad_w + k * dil_w; }
};

bool is_grouped(const OpContext& ctx) {
  return ctx.op == SY_OP_CONV2D_GROUPED || ctx.op == SY_OP_CONV2D_GROUPED_BACKWARD_DATA ||
         ctx.op == SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT || ctx.op == SY_OP_CONV2D_FUSED;
}

int64_t floor_div(int64_t numerator, int64_t denominator) {
  const int64_t quotient = numerator / denominator;
  return (numerator % denominator != 0 && numerator < 0) ? quotient - 1 : quotient;
}

// Checks the params and the three shapes that define a convolution, and fills the geometry.
ConvGeometry make_geometry(const OpContext& ctx, const Shape& x, const Shape& w, const Shape& y) {
  const sy_conv2d_params& p = ctx.params().conv2d;
  if (p.stride_h < 1 || p.stride_w < 1 || p.dilation_h < 1 || p.dilation_w < 1 || p.pad_h < 0 ||
      p.pad_w < 0) {
    fail(ctx, "needs stride >= 1, dilation >= 1 and padding >= 0, got stride " +
                  std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + ", dilation " +
                  std::to_string(p.dilation_h) + "x" + std::to_string(p.dilation_w) + ", padding " +
                  std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w));
  }
  ConvGeometry g{x[0], x[1],       x[2],       x[3],    w[0],    w[2],         w[3],        0,
                 0,    p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h, p.dilation_w};
  if (is_grouped(ctx)) g.groups = ctx.params().conv2d_grouped.groups;
  if (g.groups < 1 || g.c % g.groups != 0 || g.o % g.groups != 0) {
    fail(ctx, "groups " + std::to_string(g.groups) + " must be >= 1 and divide the " +
                  std::to_string(g.c) + " input and " + std::to_string(g.o) + " output channels");
  }
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  g.oh = floor_div(g.h + 2 * g.pad_h - g.dil_h * (g.kh - 1) - 1, g.stride_h) + 1;
  g.ow = floor_div(g.w + 2 * g.pad_w - g.dil_w * (g.kw - 1) - 1, g.stride_w) + 1;
  if (g.kh < 1 || g.kw < 1) fail(ctx, "the kernel " + w.to_string() + " must have KH, KW >= 1");
  if (w[1] != g.cg) {
    fail(ctx, "channels differ: x " + x.to_string() + " has C=" + std::to_string(g.c) + " in " +
                  std::to_string(g.groups) + " group(s), C/groups=" + std::to_string(g.cg) +
                  ", but w " + w.to_string() + " has " + std::to_string(w[1]));
  }
  if (g.oh < 1 || g.ow < 1) {
    fail(ctx, "the kernel " + w.to_string() + " with this stride/padding/dilation does not fit x " +
                  x.to_string() + " (output " + std::to_string(g.oh) + "x" + std::to_string(g.ow) +
                  ")");
  }
  const Shape expected_y = Shape::of({g.n, g.o, g.oh, g.ow});
  if (!(y == expected_y)) {
    fail(ctx, "y/grad_y has shape " + y.to_string() + " but x " + x.to_string() + " and w " +
                  w.to_string() + " give " + expected_y.to_string());
  }
  return g;
}

void require_nchw(const OpContext& ctx, const char* role, const TensorRef& tensor,
                  const TensorRef& first) {
  require_same_dtype(ctx, role, tensor, "the first input", first);
  require_rank(ctx, role, tensor, 4, "[N, C, H, W] / [O, C, KH, KW]");
}

// y[n, o] += sum over c and taps of w[o, c, kh, kw] * x[n, c, shifted]; y holds the bias already.
void conv_forward(const ConvGeometry& g, const float* x, const float* w, float* y) {
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t o = 0; o < g.o; ++o) {
      float* y_plane = y + (n * g.o + o) * g.oh * g.ow;
      for (int64_t k = 0; k < g.cg; ++k) {
        const float* x_plane = x + (n * g.c + g.in_channel(o, k)) * g.h * g.w;
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            const float weight = w[((o * g.cg + k) * g.kh + kh) * g.kw + kw];
            for (int64_t i = 0; i < g.oh; ++i) {
              const int64_t row = g.in_row(i, kh);
              if (row < 0 || row >= g.h) continue;
              for (int64_t j = 0; j < g.ow; ++j) {
                const int64_t col = g.in_col(j, kw);
                if (col >= 0 && col < g.w)
                  y_plane[i * g.ow + j] += weight * x_plane[row * g.w + col];
              }
            }
          }
        }
      }
    }
  }
}

// grad_x[n, c, shifted] += w[o, c, kh, kw] * grad_y[n, o, i, j]; grad_x starts at zero.
void conv_backward_data(const ConvGeometry& g, const float* grad_y, const float* w, float* grad_x) {
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t o = 0; o < g.o; ++o) {
      const float* gy_plane = grad_y + (n * g.o + o) * g.oh * g.ow;
      for (int64_t k = 0; k < g.cg; ++k) {
        float* gx_plane = grad_x + (n * g.c + g.in_channel(o, k)) * g.h * g.w;
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            const float weight = w[((o * g.cg + k) * g.kh + kh) * g.kw + kw];
            for (int64_t i = 0; i < g.oh; ++i) {
              const int64_t row = g.in_row(i, kh);
              if (row < 0 || row >= g.h) continue;
              for (int64_t j = 0; j < g.ow; ++j) {
                const int64_t col = g.in_col(j, kw);
                if (col >= 0 && col < g.w)
                  gx_plane[row * g.w + col] += weight * gy_plane[i * g.ow + j];
              }
            }
          }
        }
      }
    }
  }
}

// One weight gradient: sum over n, i, j of grad_y[n, o, i, j] * x[n, c, shifted], in double.
float weight_gradient(const ConvGeometry& g, const float* grad_y, const float* x, int64_t o,
                      int64_t c, int64_t kh, int64_t kw) {
  double sum = 0.0;
  for (int64_t n = 0; n < g.n; ++n) {
    const float* gy_plane = grad_y + (n * g.o + o) * g.oh * g.ow;
    const float* x_plane = x + (n * g.c + c) * g.h * g.w;
    for (int64_t i = 0; i < g.oh; ++i) {
      const int64_t row = g.in_row(i, kh);
      if (row < 0 || row >= g.h) continue;
      for (int64_t j = 0; j < g.ow; ++j) {
        const int64_t col = g.in_col(j, kw);
        if (col >= 0 && col < g.w) {
          sum += static_cast<double>(gy_plane[i * g.ow + j]) *
                 static_cast<double>(x_plane[row * g.w + col]);
        }
      }
    }
  }
  return static_cast<float>(sum);
}

}  // namespace

namespace {

// y = conv(x, w) + bias, for CONV2D and CONV2D_GROUPED (inputs x, w [, bias]) and the first part
// of CONV2D_FUSED (which may have one more input after them).
std::vector<float> convolution(const OpContext& ctx, const TensorRef& y, bool has_bias) {
  const TensorRef x = ctx.input(0);
  const TensorRef w = ctx.input(1);
  require_float(ctx, "x", x);
  require_nchw(ctx, "x", x, x);
  require_nchw(ctx, "w", w, x);
  require_nchw(ctx, "y", y, x);
  const ConvGeometry g = make_geometry(ctx, x.shape, w.shape, y.shape);
  std::vector<float> result(static_cast<size_t>(y.shape.count()), 0.0f);
  if (has_bias) {
    const TensorRef bias = ctx.input(2);
    require_same_dtype(ctx, "bias", bias, "x", x);
    require_shape(ctx, "bias", bias, Shape::of({g.o}));
    const std::vector<float> bias_values = read_f32(bias);
    for (int64_t plane = 0; plane < g.n * g.o; ++plane) {
      for (int64_t k = 0; k < g.oh * g.ow; ++k)
        result[plane * g.oh * g.ow + k] = bias_values[plane % g.o];
    }
  }
  conv_forward(g, read_f32(x).data(), read_f32(w).data(), result.data());
  return result;
}

}  // namespace

void run_conv2d(const OpContext& ctx) {
  const bool has_bias = ctx.params().conv2d.has_bias != 0;
  require_io_counts(ctx, has_bias ? 3 : 2, 1);
  const TensorRef y = ctx.output(0);
  write_f32(y, convolution(ctx, y, has_bias));
}

// conv, + residual, then the activation, each on the f32 value of the step before (the
// convolution's sum rounded to f32 once, as CONV2D's output is).
void run_conv2d_fused(const OpContext& ctx) {
  const sy_conv2d_fused_params& p = ctx.params().conv2d_fused;
  const bool has_bias = p.conv.conv.has_bias != 0;
  if (p.has_residual > 1 || p.activation > SY_ACTIVATION_SILU ||
      (p.activation == SY_ACTIVATION_CLIP && !(p.low <= p.high))) {
    fail(ctx,
         "params.conv2d_fused needs has_residual 0 or 1, an activation 0-3 and, for CLIP, "
         "low <= high; got has_residual " +
             std::to_string(p.has_residual) + ", activation " + std::to_string(p.activation) +
             ", low " + std::to_string(p.low) + ", high " + std::to_string(p.high));
  }
  const int inputs = 2 + (has_bias ? 1 : 0) + (p.has_residual != 0 ? 1 : 0);
  require_io_counts(ctx, inputs, 1);
  const TensorRef y = ctx.output(0);
  std::vector<float> result = convolution(ctx, y, has_bias);
  if (p.has_residual != 0) {
    const TensorRef residual = ctx.input(inputs - 1);
    require_same_dtype(ctx, "residual", residual, "x", ctx.input(0));
    require_shape(ctx, "residual", residual, y.shape);
    const std::vector<float> r = read_f32(residual);
    for (size_t k = 0; k < result.size(); ++k) result[k] += r[k];
  }
  for (float& v : result) {
    if (std::isnan(v)) continue;  // every activation passes NaN through, as RELU and PyTorch do
    switch (p.activation) {
      case SY_ACTIVATION_RELU:
        v = v > 0.0f ? v : 0.0f;
        break;
      case SY_ACTIVATION_CLIP:
        v = v < p.low ? p.low : (v > p.high ? p.high : v);
        break;
      case SY_ACTIVATION_SILU:
        v = static_cast<float>(static_cast<double>(v) / (1.0 + std::exp(-static_cast<double>(v))));
        break;
      default:
        break;
    }
  }
  write_f32(y, result);
}

void run_conv2d_backward_data(const OpContext& ctx) {
  require_io_counts(ctx, 2, 1);
  const TensorRef grad_y = ctx.input(0);
  const TensorRef w = ctx.input(1);
  const TensorRef grad_x = ctx.output(0);
  require_float(ctx, "grad_y", grad_y);
  require_nchw(ctx, "grad_y", grad_y, grad_y);
  require_nchw(ctx, "w", w, grad_y);
  require_nchw(ctx, "grad_x", grad_x, grad_y);
  const ConvGeometry g = make_geometry(ctx, grad_x.shape, w.shape, grad_y.shape);
  std::vector<float> result(static_cast<size_t>(grad_x.shape.count()), 0.0f);
  conv_backward_data(g, read_f32(grad_y).data(), read_f32(w).data(), result.data());
  write_f32(grad_x, result);
}

void run_conv2d_backward_weight(const OpContext& ctx) {
  const bool has_bias = ctx.params().conv2d.has_bias != 0;
  require_io_counts(ctx, 2, has_bias ? 2 : 1);
  const TensorRef grad_y = ctx.input(0);
  const TensorRef x = ctx.input(1);
  const TensorRef grad_w = ctx.output(0);
  require_float(ctx, "grad_y", grad_y);
  require_nchw(ctx, "grad_y", grad_y, grad_y);
  require_nchw(ctx, "x", x, grad_y);
  require_nchw(ctx, "grad_w", grad_w, grad_y);
  const ConvGeometry g = make_geometry(ctx, x.shape, grad_w.shape, grad_y.shape);
  if (has_bias) {
    require_same_dtype(ctx, "grad_bias", ctx.output(1), "grad_y", grad_y);
    require_shape(ctx, "grad_bias", ctx.output(1), Shape::of({g.o}));
  }
  const std::vector<float> gy = read_f32(grad_y);
  const std::vector<float> xv = read_f32(x);
  std::vector<float> result(static_cast<size_t>(grad_w.shape.count()));
  size_t next = 0;
  for (int64_t o = 0; o < g.o; ++o) {
    for (int64_t k = 0; k < g.cg; ++k) {
      for (int64_t kh = 0; kh < g.kh; ++kh) {
        for (int64_t kw = 0; kw < g.kw; ++kw)
          result[next++] = weight_gradient(g, gy.data(), xv.data(), o, g.in_channel(o, k), kh, kw);
      }
    }
  }
  write_f32(grad_w, result);
  if (!has_bias) return;
  std::vector<float> bias_result(static_cast<size_t>(g.o));
  for (int64_t o = 0; o < g.o; ++o) {
    double sum = 0.0;
    for (int64_t n = 0; n < g.n; ++n) {
      for (int64_t k = 0; k < g.oh * g.ow; ++k)
        sum += static_cast<double>(gy[(n * g.o + o) * g.oh * g.ow + k]);
    }
    bias_result[o] = static_cast<float>(sum);
  }
  write_f32(ctx.output(1), bias_result);
}

}  // namespace sy_reference
