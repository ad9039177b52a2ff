// The ops of object detection models (torchvision's Faster R-CNN, Mask R-CNN, RetinaNet and SSD
// as torch.onnx.export writes them), on host values (formats/onnx_ops_internal.h):
// NonMaxSuppression, RoiAlign and ReduceProd. The op set has none of them; a device input is read
// back, so they are right and slower (the execution summary says "host").
#include <algorithm>
#include <cmath>
#include <numeric>

#include "formats/onnx_ops_internal.h"

namespace switchyard::onnx_detail {
namespace {

// A box as its corners, lower before upper on each axis.
struct Corners {
  float y1, x1, y2, x2;
  float area() const { return (y2 - y1) * (x2 - x1); }
};

// Box b of batch n: [y1, x1, y2, x2] with the corners in either order (center_point_box 0), or
// [x_center, y_center, width, height] (1).
Corners corners(const HostTensor& boxes, int64_t n, int64_t b, int64_t count, bool center) {
  const auto at = [&](int64_t k) { return boxes.f[static_cast<size_t>((n * count + b) * 4 + k)]; };
  if (center) {
    const float xc = at(0), yc = at(1), w = at(2) / 2, h = at(3) / 2;
    return {yc - h, xc - w, yc + h, xc + w};
  }
  return {std::min(at(0), at(2)), std::min(at(1), at(3)), std::max(at(0), at(2)),
          std::max(at(1), at(3))};
}

// Whether `a` and `b` overlap by an intersection over union strictly above `threshold`; boxes
// without area never do.
bool overlaps(const Corners& a, const Corners& b, float threshold) {
  const float h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0) return false;
  const float inter = h * w, area_a = a.area(), area_b = b.area();
  const float joint = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || joint <= 0) return false;
  return inter / joint > threshold;
}

// The optional scalar input k, or `fallback` where it is absent.
double optional_scalar(NodeContext& c, size_t k, double fallback, const char* what) {
  return c.has(k) ? c.one_value(k, what).at(0) : fallback;
}

}  // namespace

// NonMaxSuppression: for each batch and class, the boxes whose score is above score_threshold (and
// not NaN), highest score first (ties: the lower index), each kept unless it overlaps a kept one by
// an IoU above iou_threshold, at most max_output_boxes_per_class of them. [selected, 3] of (batch,
// class, box), batch by batch, class by class, in the order kept. As ONNX Runtime selects.
void host_non_max_suppression(NodeContext& c) {
  const HostTensor& boxes = c.host_values(0);
  const HostTensor& scores = c.host_values(1);
  if (boxes.shape.size() != 3 || boxes.shape[2] != 4 || !boxes.is_float())
    c.fail("boxes must be float [batches, boxes, 4], got " + shape_text(boxes.shape));
  const int64_t batches = boxes.shape[0], count = boxes.shape[1];
  if (scores.shape.size() != 3 || scores.shape[0] != batches || scores.shape[2] != count ||
      !scores.is_float()) {
    c.fail("scores must be float [" + std::to_string(batches) + ", classes, " +
           std::to_string(count) + "], got " + shape_text(scores.shape));
  }
  const int64_t classes = scores.shape[1];
  const double most = optional_scalar(c, 2, 0, "max_output_boxes_per_class");
  const auto iou = static_cast<float>(optional_scalar(c, 3, 0, "iou_threshold"));
  const bool has_floor = c.has(4);
  const auto floor = static_cast<float>(optional_scalar(c, 4, 0, "score_threshold"));
  const int64_t center = c.attr_int("center_point_box", 0);
  if (center != 0 && center != 1) c.fail("center_point_box must be 0 or 1");
  if (!(iou >= 0 && iou <= 1)) c.fail("iou_threshold must be in [0, 1]");
  const auto limit = static_cast<int64_t>(std::clamp(most, 0.0, static_cast<double>(count)));
  std::vector<int64_t> selected;
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::vector<Corners> kept;
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t k = 0; k < classes && limit > 0; ++k) {
      const float* score = scores.f.data() + (n * classes + k) * count;
      order.clear();
      for (int64_t b = 0; b < count; ++b) {  // a NaN score is never selected (nor sorted)
        if (!std::isnan(score[b]) && (!has_floor || score[b] > floor)) order.push_back(b);
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return score[a] > score[b]; });
      kept.clear();
      for (const int64_t b : order) {
        const Corners box = corners(boxes, n, b, count, center == 1);
        bool suppressed = false;
        for (const Corners& other : kept) suppressed = suppressed || overlaps(box, other, iou);
        if (suppressed) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {n, k, b});
        if (static_cast<int64_t>(kept.size()) == limit) break;
      }
    }
  }
  const auto rows = static_cast<int64_t>(selected.size() / 3);
  c.set_host(0, HostTensor::ints(std::move(selected), {rows, 3}));
}

namespace {

// Where a sample point at (y, x) of an H x W map reads: its four neighbours and their weights,
// all weights 0 outside [-1, H] x [-1, W] (ONNX Runtime's and torchvision's rule).
struct Bilinear {
  int64_t at[4] = {0, 0, 0, 0};
  float weight[4] = {0, 0, 0, 0};
};

Bilinear bilinear(float y, float x, int64_t height, int64_t width) {
  Bilinear b;
  if (y < -1.0F || y > static_cast<float>(height) || x < -1.0F || x > static_cast<float>(width))
    return b;
  y = std::max(y, 0.0F);
  x = std::max(x, 0.0F);
  auto y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
  int64_t y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= height - 1) {
    y0 = y1 = height - 1;
    y = static_cast<float>(y0);
  }
  if (x0 >= width - 1) {
    x0 = x1 = width - 1;
    x = static_cast<float>(x0);
  }
  const float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0);
  const float hy = 1.0F - ly, hx = 1.0F - lx;
  b.at[0] = y0 * width + x0;
  b.at[1] = y0 * width + x1;
  b.at[2] = y1 * width + x0;
  b.at[3] = y1 * width + x1;
  b.weight[0] = hy * hx;
  b.weight[1] = hy * lx;
  b.weight[2] = ly * hx;
  b.weight[3] = ly * lx;
  return b;
}

struct RoiAlignSettings {
  int64_t out_h, out_w, sampling;
  float scale, offset;
  bool max, legacy;  // legacy: output_half_pixel (and version 10), a region at least 1 x 1
};

RoiAlignSettings roi_align_settings(NodeContext& c) {
  RoiAlignSettings s{};
  s.out_h = c.attr_int("output_height", 1);
  s.out_w = c.attr_int("output_width", 1);
  s.sampling = c.attr_int("sampling_ratio", 0);
  s.scale = c.attr_float("spatial_scale", 1.0F);
  const std::string mode = c.attr_string("mode", "avg");
  const std::string transform = c.attr_string(
      "coordinate_transformation_mode", c.version() >= 16 ? "half_pixel" : "output_half_pixel");
  if (mode != "avg" && mode != "max") c.fail("mode " + quote_name(mode) + " is not avg or max");
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    c.fail("coordinate_transformation_mode " + quote_name(transform) +
           " is not half_pixel or output_half_pixel");
  }
  if (s.out_h < 1 || s.out_w < 1 || s.out_h > 4096 || s.out_w > 4096)
    c.fail("output_height and output_width must be 1 to 4096");
  if (s.sampling < 0 || s.sampling > 64) c.fail("sampling_ratio must be 0 to 64");
  if (!std::isfinite(s.scale)) c.fail("spatial_scale must be finite");
  s.max = mode == "max";
  s.legacy = transform == "output_half_pixel";
  s.offset = s.legacy ? 0.0F : 0.5F;
  return s;
}

}  // namespace

// RoiAlign: each region [x1, y1, x2, y2] (image coordinates, times spatial_scale) of its batch
// element's feature map cut into output_height x output_width bins, each the average (or, mode
// max, the largest weighted neighbour, as ONNX Runtime defines it) of a grid of bilinear samples:
// sampling_ratio per axis, or ceil(region / output) where it is 0. As torchvision's roi_align.
void host_roi_align(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const HostTensor& rois = c.host_values(1);
  const HostTensor& batch = c.host_values(2);
  const RoiAlignSettings s = roi_align_settings(c);
  if (x.shape.size() != 4 || !x.is_float())
    c.fail("X must be float [N, C, H, W], got " + shape_text(x.shape));
  const int64_t count = rois.shape.empty() ? 0 : rois.shape[0];
  if (rois.shape.size() != 2 || rois.shape[1] != 4 || !rois.is_float())
    c.fail("rois must be float [regions, 4], got " + shape_text(rois.shape));
  if (batch.shape != Ints{count})
    c.fail("batch_indices must be [" + std::to_string(count) + "], got " + shape_text(batch.shape));
  const int64_t images = x.shape[0], channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  if (height < 1 || width < 1) c.fail("X " + shape_text(x.shape) + " has no height or width");
  const Ints shape = {count, channels, s.out_h, s.out_w};
  check_host_size(c, shape);
  HostTensor out = HostTensor::zeros(kFloat, shape);
  std::vector<Bilinear> samples;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t image = batch.int_at(r);
    if (image < 0 || image >= images) {
      c.fail("batch index " + std::to_string(image) + " of region " + std::to_string(r) +
             " is outside [0, " + std::to_string(images) + ")");
    }
    const auto coordinate = [&](int64_t k) {
      return rois.f[static_cast<size_t>(r * 4 + k)] * s.scale - s.offset;
    };
    const float x1 = coordinate(0), y1 = coordinate(1);
    float region_w = coordinate(2) - x1, region_h = coordinate(3) - y1;
    if (s.legacy) {
      region_w = std::max(region_w, 1.0F);
      region_h = std::max(region_h, 1.0F);
    }
    if (!std::isfinite(region_w) || !std::isfinite(region_h) || !std::isfinite(x1) ||
        !std::isfinite(y1)) {
      c.fail("region " + std::to_string(r) + " is not finite");
    }
    const float bin_h = region_h / static_cast<float>(s.out_h);
    const float bin_w = region_w / static_cast<float>(s.out_w);
    const auto grid = [&](float bin) {  // clamped before the cast: a bin may be 1e38 wide
      return s.sampling > 0 ? s.sampling
                            : static_cast<int64_t>(std::clamp(std::ceil(bin), 1.0F, 64.0F));
    };
    const int64_t grid_h = grid(bin_h), grid_w = grid(bin_w);
    // The samples of every bin, shared by the channels.
    samples.clear();
    for (int64_t ph = 0; ph < s.out_h; ++ph) {
      for (int64_t pw = 0; pw < s.out_w; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const float y = y1 + static_cast<float>(ph) * bin_h +
                          (static_cast<float>(iy) + 0.5F) * bin_h / static_cast<float>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const float xs = x1 + static_cast<float>(pw) * bin_w +
                             (static_cast<float>(ix) + 0.5F) * bin_w / static_cast<float>(grid_w);
            samples.push_back(bilinear(y, xs, height, width));
          }
        }
      }
    }
    const int64_t per_bin = grid_h * grid_w;
    for (int64_t ch = 0; ch < channels; ++ch) {
      const float* map = x.f.data() + (image * channels + ch) * height * width;
      float* bins = out.f.data() + (r * channels + ch) * s.out_h * s.out_w;
      for (int64_t bin = 0; bin < s.out_h * s.out_w; ++bin) {
        float total = 0, largest = 0;
        for (int64_t k = 0; k < per_bin; ++k) {
          const Bilinear& b = samples[static_cast<size_t>(bin * per_bin + k)];
          float sample_max = 0;
          for (int q = 0; q < 4; ++q) {
            const float v = b.weight[q] * map[b.at[q]];
            total += v;
            sample_max = q == 0 ? v : std::max(sample_max, v);
          }
          largest = k == 0 ? sample_max : std::max(largest, sample_max);
        }
        bins[bin] = s.max ? largest : total / static_cast<float>(per_bin);
      }
    }
  }
  c.set_host(0, std::move(out));
}

// ReduceProd over axes (an attribute before version 18, an input since): floats multiplied in
// double, integers in 64 bits (wrapping), an empty reduction 1.
void host_reduce_prod(NodeContext& c) {
  const HostTensor& x = c.host_values(0);
  const Ints axes_given = axes_of(c, 1);
  const bool keep = c.attr_int("keepdims", 1) != 0;
  if (axes_given.empty() && c.attr_int("noop_with_empty_axes", 0) != 0) {
    c.set_host(0, x);
    return;
  }
  const size_t rank = x.shape.size();
  std::vector<bool> reduced(rank, axes_given.empty());
  for (const int64_t a : axes_given) reduced[static_cast<size_t>(normalize(c, a, rank))] = true;
  Ints out_shape, kept_shape;
  for (size_t a = 0; a < rank; ++a) {
    kept_shape.push_back(reduced[a] ? 1 : x.shape[a]);
    if (!reduced[a] || keep) out_shape.push_back(reduced[a] ? 1 : x.shape[a]);
  }
  HostTensor out = HostTensor::zeros(x.type, kept_shape);
  std::vector<double> f(static_cast<size_t>(out.numel()), 1.0);
  std::vector<uint64_t> i(static_cast<size_t>(out.numel()), 1);
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t rest = e, target = 0, stride = 1;
    for (size_t a = rank; a-- > 0;) {
      const int64_t coordinate = rest % x.shape[a];
      rest /= x.shape[a];
      if (!reduced[a]) target += coordinate * stride;
      stride *= kept_shape[a];
    }
    if (x.is_float())
      f[static_cast<size_t>(target)] *= static_cast<double>(x.f[static_cast<size_t>(e)]);
    else
      i[static_cast<size_t>(target)] *= static_cast<uint64_t>(x.i[static_cast<size_t>(e)]);
  }
  for (size_t k = 0; k < f.size(); ++k) {
    if (out.is_float())
      out.f[k] = static_cast<float>(f[k]);
    else
      out.i[k] = static_cast<int64_t>(i[k]);
  }
  out.shape = out_shape;
  c.set_host(0, std::move(out));
}

}  // namespace switchyard::onnx_detail
