// ONNX GridSample (opsets 16, 20 and 22) on 4-D inputs, composed on the device
// (formats/onnx_ops_internal.h): each output pixel's source coordinates are computed from the grid
// in f32 as ONNX Runtime computes them, and the taps (1 nearest, 4 linear, 16 cubic) are gathered
// from the flattened input and weighted. Exact integer arithmetic in f32 bounds the input to 2^24
// elements.
#include <cmath>
#include <string>
#include <vector>

#include "formats/onnx_ops_internal.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

namespace {

constexpr double kShift = 12582912.0;  // 1.5 * 2^23: (x + kShift) - kShift rounds ties to even
// Source coordinates are clamped to +-2^21 (far outside any input that fits the 2^24 elements)
// before rounding, which the shift keeps exact there.
constexpr double kFar = double(int64_t{1} << 21);

Tensor round_even(const Tensor& t) {
  return (t + kShift) - kShift;
}
Tensor floor_of(const Tensor& t) {
  const Tensor r = round_even(t);
  return r - greater(r, t);
}
// m ? a : b for a 0/1 mask m and finite a and b, exactly (m a + (1 - m) b).
Tensor choose(const Tensor& m, const Tensor& a, const Tensor& b) {
  return m * a + (1.0 - m) * b;
}
Tensor clamped(const Tensor& t, double low, double high) {
  return minimum(maximum(t, low), high);
}

// One spatial axis of the input: its extent and the bounds a coordinate is reflected into (the
// pixels' outer edges, or their centres with align_corners).
struct GridAxis {
  int64_t size = 1;
  double low = 0, high = 0;
};

// ONNX Runtime's GsReflect: x folded into [low, high] as often as it takes.
Tensor reflected(const Tensor& x, const GridAxis& a) {
  const double range = a.high - a.low;
  if (range <= 0) return full_like(x, a.low);
  const Tensor below = greater(neg(x), -a.low), above = greater(x, a.high);
  const Tensor d = below * (a.low - x) + above * (x - a.high);
  const Tensor n = floor_of(d / range);
  const Tensor r = d - n * range;
  const Tensor odd = n - floor_of(n / 2.0) * 2.0;
  const Tensor from_below = choose(odd, a.high - r, a.low + r);
  const Tensor from_above = choose(odd, a.low + r, a.high - r);
  return choose(below, from_below, choose(above, from_above, x));
}

// A grid coordinate in [-1, 1] as a source coordinate on `a` (ONNX Runtime's GsDenormalize), NaN
// moved far outside (its output is made NaN at the end) and every value clamped to +-2^21.
Tensor denormalized(NodeContext& c, const Tensor& g, const GridAxis& a, bool align_corners) {
  const double n = static_cast<double>(a.size);
  const Tensor x = align_corners ? (g + 1.0) / 2.0 * (n - 1.0) : ((g + 1.0) * n - 1.0) / 2.0;
  return clamped(picked(c, equal(x, x), x, full_like(x, -kFar)), -kFar, kFar);
}

struct GridSample {
  explicit GridSample(NodeContext& context) : c(context) {}
  NodeContext& c;
  Tensor flat;                              // the input, [N C H W]
  Tensor base;                              // [N, C, 1]: where each (n, c) plane starts in `flat`
  int64_t n = 0, channels = 0, points = 0;  // points: Ho Wo
  GridAxis rows, cols;
  std::string padding;

  // The input at integer source coordinates (ty, tx), flat [N Ho Wo]: [N, C, Ho Wo], with the
  // padding mode's value for a tap outside (zeros: 0; border: the edge; reflection: folded back).
  Tensor taps(Tensor ty, Tensor tx) const {
    Tensor inside;
    if (padding == "zeros") {
      inside = greater(ty, -1.0) * greater(tx, -1.0) * greater(-ty, -double(rows.size)) *
               greater(-tx, -double(cols.size));
    } else if (padding == "reflection") {
      ty = round_even(reflected(ty, rows)), tx = round_even(reflected(tx, cols));
    }
    ty = clamped(ty, 0, double(rows.size - 1)), tx = clamped(tx, 0, double(cols.size - 1));
    const Tensor at = base + (ty * double(cols.size) + tx).reshape(Shape{n, 1, points});
    const Tensor values = index_select(flat, 0, at.reshape(Shape{at.numel()}).to(DType::kI32));
    if (!inside.defined()) return values.reshape(Shape{n, channels, points});
    const Tensor keep =
        inside.reshape(Shape{n, 1, points}).expand(Shape{n, channels, points}).contiguous();
    return picked(c, keep.reshape(Shape{keep.numel()}), values, zeros_like(values))
        .reshape(Shape{n, channels, points});
  }
};

// ONNX Runtime's cubic coefficients (A = -0.75) for the fraction t of a coordinate past its floor.
std::vector<Tensor> cubic_coefficients(const Tensor& t) {
  constexpr double a = -0.75;
  const Tensor t1 = t + 1.0, u = 1.0 - t, u1 = 2.0 - t;
  return {((t1 * a - 5 * a) * t1 + 8 * a) * t1 - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1.0,
          ((a + 2) * u - (a + 3)) * u * u + 1.0, ((u1 * a - 5 * a) * u1 + 8 * a) * u1 - 4 * a};
}

// [N Ho Wo] as [N, 1, Ho Wo], to weight every channel.
Tensor per_point(const Tensor& t, int64_t n, int64_t points) {
  return t.reshape(Shape{n, 1, points});
}

}  // namespace

void device_grid_sample(NodeContext& c) {
  const Ints& xs = c.shape(0);
  const Ints& gs = c.shape(1);
  if (xs.size() != 4)
    c.fail("only 4-D inputs (2 spatial axes) are supported, got " + shape_text(xs));
  if (gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2)
    c.fail("grid " + shape_text(gs) + " must be [" + std::to_string(xs[0]) + ", H_out, W_out, 2]");
  std::string mode = c.attr_string("mode", "bilinear");
  if (mode == "bilinear") mode = "linear";  // the names before opset 20
  if (mode == "bicubic") mode = "cubic";
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    c.fail("mode " + mode + " is not one of bilinear, nearest, bicubic (linear, cubic)");
  GridSample s(c);
  s.padding = c.attr_string("padding_mode", "zeros");
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection")
    c.fail("padding_mode " + s.padding + " is not one of zeros, border, reflection");
  const bool align = c.attr_int("align_corners", 0) != 0;
  const int64_t numel = numel_of(xs);
  if (numel > (int64_t{1} << 24))
    c.fail("an input of more than 2^24 elements is not supported (" + shape_text(xs) + ")");
  s.n = xs[0], s.channels = xs[1], s.points = gs[1] * gs[2];
  check_size(c, {s.n, s.channels, gs[1], gs[2]});
  if (s.n * s.channels * s.points == 0) {  // nothing to sample
    c.set_device(0, zeros(Shape{s.n, s.channels, gs[1], gs[2]}, c.model().device), kFloat);
    return;
  }
  if (xs[2] == 0 || xs[3] == 0)
    c.fail("an input with an empty spatial axis " + shape_text(xs) + " has no pixel to sample");
  s.rows.size = xs[2], s.cols.size = xs[3];
  for (GridAxis* a : {&s.rows, &s.cols}) {
    a->low = align ? 0.0 : -0.5;
    a->high = align ? double(a->size - 1) : double(a->size) - 0.5;
  }
  s.flat = dev_float(c, 0).reshape(Shape{numel});
  std::vector<float> starts(static_cast<size_t>(s.n * s.channels));
  for (size_t k = 0; k < starts.size(); ++k)
    starts[k] = static_cast<float>(static_cast<int64_t>(k) * xs[2] * xs[3]);
  s.base = Tensor::from_host(starts, Shape{s.n, s.channels, 1}, c.model().device);

  const Tensor grid = dev_float(c, 1).reshape(Shape{s.n * s.points, 2});
  const Tensor gx = grid.narrow(1, 0, 1).reshape(Shape{s.n * s.points});
  const Tensor gy = grid.narrow(1, 1, 1).reshape(Shape{s.n * s.points});
  Tensor x = denormalized(c, gx, s.cols, align), y = denormalized(c, gy, s.rows, align);
  if (mode == "nearest") x = round_even(x), y = round_even(y);
  if (s.padding != "zeros" && mode != "cubic") {
    // Outside the bounds on either axis, both coordinates move in (ONNX Runtime's rule). Cubic
    // keeps the coordinate and pads each of its 16 taps (ONNX Runtime and PyTorch alike).
    const Tensor out = minimum(greater(neg(x), -s.cols.low) + greater(x, s.cols.high) +
                                   greater(neg(y), -s.rows.low) + greater(y, s.rows.high),
                               1.0);
    const bool border = s.padding == "border";
    const Tensor mx = border ? clamped(x, 0, double(s.cols.size - 1)) : reflected(x, s.cols);
    const Tensor my = border ? clamped(y, 0, double(s.rows.size - 1)) : reflected(y, s.rows);
    x = choose(out, mx, x), y = choose(out, my, y);
  }
  Tensor result;
  const auto weight = [&](const Tensor& t) { return per_point(t, s.n, s.points); };
  if (mode == "nearest") {
    result = s.taps(y, x);
  } else if (mode == "linear") {
    const Tensor x1 = floor_of(x), y1 = floor_of(y), x2 = x1 + 1.0, y2 = y1 + 1.0;
    const Tensor dx2 = weight(x2 - x), dx1 = weight(x - x1);
    const Tensor dy2 = weight(y2 - y), dy1 = weight(y - y1);
    const Tensor top = dx2 * s.taps(y1, x1) + dx1 * s.taps(y1, x2);
    const Tensor bottom = dx2 * s.taps(y2, x1) + dx1 * s.taps(y2, x2);
    result = dy2 * top + dy1 * bottom;
  } else {
    const Tensor x0 = floor_of(x) - 1.0, y0 = floor_of(y) - 1.0;
    std::vector<Tensor> wx = cubic_coefficients(x - x0 - 1.0),
                        wy = cubic_coefficients(y - y0 - 1.0);
    for (Tensor& t : wx) t = weight(t);
    for (Tensor& t : wy) t = weight(t);
    for (int i = 0; i < 4; ++i) {
      Tensor row;
      for (int j = 0; j < 4; ++j) {
        const Tensor term = wx[size_t(j)] * s.taps(y0 + double(i), x0 + double(j));
        row = row.defined() ? row + term : term;
      }
      const Tensor term = wy[size_t(i)] * row;
      result = result.defined() ? result + term : term;
    }
  }
  // A NaN coordinate gives NaN, as NaN does through every op (ONNX Runtime's result is undefined).
  const Tensor number = (equal(gx, gx) * equal(gy, gy)).reshape(Shape{s.n, 1, s.points});
  const Tensor keep = number.expand(result.shape()).contiguous().reshape(Shape{result.numel()});
  const Tensor flat = result.reshape(Shape{result.numel()});
  result = picked(c, keep, flat, full_like(flat, std::nan("")));
  c.set_device(0, result.reshape(Shape{s.n, s.channels, gs[1], gs[2]}), kFloat);
}

}  // namespace switchyard::onnx_detail
