// REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX and ARGMAX (docs/ops.md section 6).
//
// Plain loops with double accumulators for the sums (the reference accumulates in double, and
// the NMSE limits leave no room for long f32 sums) and explicit NaN propagation for max. The
// input is split into kept ("outer") and reduced ("inner") axes; each output element reduces its
// inner block, planned once as a strided loop. Threads split the outputs, or, when there are
// fewer outputs than threads, the inner block of each.
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

struct ReduceSplit {
  TensorView outer;  // x restricted to the kept axes (shape of the kept axes)
  TensorView inner;  // x restricted to the reduced axes
  TensorView out;    // the output viewed with the kept axes only
};

ReduceSplit split_axes(const OpContext& ctx, const TensorView& x, const TensorView& out,
                       uint32_t mask, bool keep_dims) {
  ReduceSplit split;
  split.outer = x;
  split.inner = x;
  split.outer.rank = 0;
  split.inner.rank = 0;
  int64_t expected[SY_MAX_RANK] = {};
  int expected_rank = 0;
  for (int d = 0; d < x.rank; ++d) {
    bool reduced = (mask >> d) & 1u;
    TensorView& part = reduced ? split.inner : split.outer;
    part.shape[part.rank] = x.shape[d];
    part.strides[part.rank] = x.strides[d];
    ++part.rank;
    if (!reduced || keep_dims) expected[expected_rank++] = reduced ? 1 : x.shape[d];
  }
  ctx.require_shape(out, "out", expected, expected_rank);
  split.out = out;
  split.out.rank = 0;
  for (int d = 0; d < out.rank; ++d) {
    if (keep_dims && ((mask >> d) & 1u)) continue;
    split.out.shape[split.out.rank] = out.shape[d];
    split.out.strides[split.out.rank] = out.strides[d];
    ++split.out.rank;
  }
  return split;
}

template <typename T>
double sum_block(const StridedLoop<1>& loop, char* base, int64_t begin, int64_t end) {
  StridedLoop<1> at = loop;
  at.data[0] = base;
  double total = 0.0;
  auto body = [&total](char* const* p, const int64_t* s, int64_t count) {
    if (s[0] == sizeof(T)) {
      const T* x = reinterpret_cast<const T*>(p[0]);
      double lanes[8] = {};
      int64_t i = 0;
      for (; i + 8 <= count; i += 8) {
        for (int l = 0; l < 8; ++l) lanes[l] += static_cast<double>(load_f32(x[i + l]));
      }
      for (; i < count; ++i) lanes[0] += static_cast<double>(load_f32(x[i]));
      for (double lane : lanes) total += lane;
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      total += static_cast<double>(load_f32(*reinterpret_cast<const T*>(p[0] + i * s[0])));
    }
  };
  run_loop_range(at, begin, end, body);
  return total;
}

template <typename T>
float max_block(const StridedLoop<1>& loop, char* base, int64_t begin, int64_t end) {
  StridedLoop<1> at = loop;
  at.data[0] = base;
  float best = -std::numeric_limits<float>::infinity();
  bool nan = false;
  auto body = [&](char* const* p, const int64_t* s, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      float v = load_f32(*reinterpret_cast<const T*>(p[0] + i * s[0]));
      nan = nan || v != v;
      best = v > best ? v : best;
    }
  };
  run_loop_range(at, begin, end, body);
  return nan ? std::numeric_limits<float>::quiet_NaN() : best;
}

// The reduction of one inner block, split over `threads` threads.
template <typename T>
float reduce_block(uint32_t op, const StridedLoop<1>& loop, char* base, int threads) {
  const int64_t count = loop.numel;
  if (count == 0) return op == SY_OP_REDUCE_MEAN ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
  if (op == SY_OP_REDUCE_MAX) {
    float parts[64] = {};
    int used = std::min(threads, 64);
    parallel_ranges(used, used, [&](int64_t first, int64_t last) {
      for (int64_t t = first; t < last; ++t) {
        parts[t] = max_block<T>(loop, base, count * t / used, count * (t + 1) / used);
      }
    });
    float best = parts[0];
    for (int t = 0; t < used; ++t) {
      if (parts[t] != parts[t]) return parts[t];
      best = parts[t] > best ? parts[t] : best;
    }
    return best;
  }
  double parts[64] = {};
  int used = std::min(threads, 64);
  parallel_ranges(used, used, [&](int64_t first, int64_t last) {
    for (int64_t t = first; t < last; ++t) {
      parts[t] = sum_block<T>(loop, base, count * t / used, count * (t + 1) / used);
    }
  });
  double total = 0.0;
  for (int t = 0; t < used; ++t) total += parts[t];
  if (op == SY_OP_REDUCE_MEAN) total /= static_cast<double>(count);
  return static_cast<float>(total);
}

// sums[c] += the rows' column c, for try_reduce_rows' f32 sums: compiled for AVX-512 and AVX2 too
// (the plugin's baseline is SSE2; a bias gradient's [6400, 1024] sum went from 5-6 ms to about
// 2 ms on a 2-core Zen 4). kF32Rows rows at a time are summed in f32 (`partial`, `count` floats),
// then added into the double sums: a global average pool's 12544 rows of 96 channels
// (EfficientNet-B0) pay one double conversion per 32 rows instead of one per row. 32 f32 additions
// lose at most about 32 * 2^-24 of the partial sum, far inside REDUCE's tolerance.
constexpr int64_t kF32Rows = 32;
SY_VECTOR_CLONES void add_rows_f32(double* sums, float* partial, const char* rows,
                                   int64_t row_stride, int64_t row_count, int64_t count) {
  for (int64_t r0 = 0; r0 < row_count; r0 += kF32Rows) {
    const int64_t r1 = std::min(row_count, r0 + kF32Rows);
    const float* first = reinterpret_cast<const float*>(rows + r0 * row_stride);
    for (int64_t c = 0; c < count; ++c) partial[c] = first[c];
    for (int64_t r = r0 + 1; r < r1; ++r) {
      const float* row = reinterpret_cast<const float*>(rows + r * row_stride);
      for (int64_t c = 0; c < count; ++c) partial[c] += row[c];
    }
    for (int64_t c = 0; c < count; ++c) sums[c] += static_cast<double>(partial[c]);
  }
}

// Sums of `width` columns over `depth` rows that lie back to back from `base` (f32), for rows
// narrower than kLongRowFloats: a channels-last global average pool of 32 to 144 channels over
// 3136 to 12544 pixels (EfficientNet-B0), which took 100 us for [1, 32, 112, 112] on one Zen 4
// core with one 32-float inner loop per row. Here `group` rows are read as one row of
// group * width columns, so add_rows_f32's inner loop spans kLongRowFloats floats; threads split
// the rows, not the columns; the column groups and the threads' double sums are then added in a
// fixed order (the result does not depend on timing).
void sum_narrow_rows_f32(const char* base, int64_t depth, int64_t width, int threads,
                         double* totals) {
  const int64_t group = std::max<int64_t>(1, std::min(depth, (kLongRowFloats + width - 1) / width));
  const int64_t wide = group * width;
  const int64_t groups = depth / group;
  const auto row_bytes = static_cast<int64_t>(sizeof(float)) * wide;
  std::vector<double> sums(static_cast<size_t>(threads * wide), 0.0);
  std::vector<float> partial(static_cast<size_t>(threads * wide), 0.0f);
  parallel_parts(groups, threads, [&](int64_t t, int64_t first, int64_t last) {
    add_rows_f32(sums.data() + t * wide, partial.data() + t * wide, base + first * row_bytes,
                 row_bytes, last - first, wide);
  });
  std::fill(totals, totals + width, 0.0);
  for (int64_t i = 0; i < threads * group; ++i) {
    for (int64_t c = 0; c < width; ++c) totals[c] += sums[static_cast<size_t>(i * width + c)];
  }
  if (const int64_t rest = depth - groups * group; rest > 0) {
    add_rows_f32(totals, partial.data(), base + groups * row_bytes,
                 static_cast<int64_t>(sizeof(float)) * width, rest, width);
  }
}

// The innermost kept axis is dense (a bias gradient: [N, C] reduced over N; a channels-last
// [N, C, H, W] averaged over H and W): walk the reduced positions in the outer loop and add whole
// contiguous rows of outputs into accumulators, which vectorises, instead of reading one strided
// column per output. Outer kept axes (the batch) run one after another; threads split the columns.
template <typename T>
bool try_reduce_rows(OpContext& ctx, const ReduceSplit& split) {
  const StridedLoop<1> kept = plan_loop<1>({&split.outer});
  const int last = kept.rank - 1;
  const int64_t width = kept.shape[last];
  if (kept.byte_strides[0][last] != sizeof(T) || width < 16) return false;
  const int64_t batches = kept.numel / width;
  const StridedLoop<1> inner = plan_loop<1>({&split.inner});
  const int64_t depth = split.inner.numel();
  float* result = static_cast<float*>(ctx.scratch(static_cast<size_t>(kept.numel) * sizeof(float)));
  const bool max = ctx.op == SY_OP_REDUCE_MAX;
  const bool mean = ctx.op == SY_OP_REDUCE_MEAN;
  const int threads = ctx.threads_for(width * depth);
  for (int64_t batch = 0; batch < batches; ++batch) {
    StridedLoop<1> at = inner;
    for (int64_t d = last - 1, rest = batch; d >= 0; --d) {
      at.data[0] += (rest % kept.shape[d]) * kept.byte_strides[0][d];
      rest /= kept.shape[d];
    }
    float* batch_result = result + batch * width;
    if constexpr (std::is_same_v<T, float>) {
      if (!max && width < kLongRowFloats && depth >= 64 && inner.rank == 1 &&
          inner.byte_strides[0][0] == width * static_cast<int64_t>(sizeof(float))) {
        // Threads from kMinRowElements, as binary.cpp's per-channel scales: the pool runs
        // between convolutions whose threads are awake (EfficientNet-B0's [1, 32, 112, 112]:
        // 45 us on one thread).
        std::vector<double> totals(static_cast<size_t>(width));
        sum_narrow_rows_f32(at.data[0], depth, width,
                            ctx.threads_for(width * depth, kMinRowElements), totals.data());
        for (int64_t c = 0; c < width; ++c) {
          batch_result[c] =
              static_cast<float>(mean ? totals[c] / static_cast<double>(depth) : totals[c]);
        }
        continue;
      }
    }
    parallel_ranges(width, threads, [&](int64_t first, int64_t end) {
      const int64_t columns = end - first;
      std::vector<double> sums(max ? 0 : static_cast<size_t>(columns), 0.0);
      std::vector<float> partial(max ? 0 : static_cast<size_t>(columns), 0.0f);
      std::vector<float> maxima(max ? static_cast<size_t>(columns) : 0, -INFINITY);
      auto add_rows = [&](char* const* p, const int64_t* s, int64_t count) {
        if constexpr (std::is_same_v<T, float>) {
          if (!max) {
            return add_rows_f32(sums.data(), partial.data(),
                                p[0] + first * static_cast<int64_t>(sizeof(float)), s[0], count,
                                columns);
          }
        }
        for (int64_t i = 0; i < count; ++i) {
          const T* row = reinterpret_cast<const T*>(p[0] + i * s[0]) + first;
          if (max) {
            for (int64_t c = 0; c < columns; ++c) {
              const float v = load_f32(row[c]);
              const float m = maxima[c];
              maxima[c] = (m != m || v < m) ? m : v;  // NaN sticks; v == NaN replaces m
            }
          } else {
            for (int64_t c = 0; c < columns; ++c) sums[c] += static_cast<double>(load_f32(row[c]));
          }
        }
      };
      if (depth > 0) run_loop_range(at, 0, at.numel, add_rows);
      for (int64_t c = 0; c < columns; ++c) {
        batch_result[first + c] =
            max ? maxima[c]
                : static_cast<float>(mean ? sums[c] / static_cast<double>(depth) : sums[c]);
      }
    });
  }
  copy_view(make_dense_view(result, SY_DTYPE_F32, split.outer.rank, split.outer.shape), split.out,
            1);
  return true;
}

template <typename T>
void reduce_typed(OpContext& ctx, const ReduceSplit& split) {
  if (try_reduce_rows<T>(ctx, split)) return;
  StridedLoop<1> inner = plan_loop<1>({&split.inner});
  const int64_t outputs = split.out.numel();
  const int threads = ctx.threads_for(split.inner.numel() * outputs);
  const int inner_threads = outputs >= threads ? 1 : threads;
  const int outer_threads = outputs >= threads ? threads : 1;
  const uint32_t op = ctx.op;
  parallel_ranges(outputs, outer_threads, [&](int64_t first, int64_t last) {
    int64_t index[SY_MAX_RANK] = {};
    for (int64_t o = first; o < last; ++o) {
      int64_t rest = o;
      for (int d = split.outer.rank - 1; d >= 0; --d) {
        index[d] = rest % split.outer.shape[d];
        rest /= split.outer.shape[d];
      }
      float value = reduce_block<T>(op, inner, split.outer.element(index), inner_threads);
      *reinterpret_cast<T*>(split.out.element(index)) = store_f32<T>(value);
    }
  });
}

}  // namespace

void run_reduce(OpContext& ctx) {
  ctx.require_counts(1, 1);
  const TensorView& x = ctx.in[0];
  const TensorView& out = ctx.out[0];
  ctx.require_float(x, "x");
  ctx.require_same_dtype(x, "x", out, "out");
  const uint32_t mask = ctx.params.reduce.axes_mask;
  if (x.rank < 32 && (mask >> x.rank) != 0) {
    ctx.fail_shape(cat("axes_mask 0x", std::hex, mask, std::dec, " names an axis beyond rank ",
                       x.rank, " of x ", shape_string(x)));
  }
  ReduceSplit split = split_axes(ctx, x, out, mask, ctx.params.reduce.keep_dims != 0);
  if (out.numel() == 0) return;
  if (split.inner.numel() == 0 && ctx.op == SY_OP_REDUCE_MAX) {
    ctx.fail_shape(cat("reducing an empty extent of x ", shape_string(x), " has no maximum"));
  }
  visit_float_dtype(x.dtype, [&](auto type_tag) { reduce_typed<decltype(type_tag)>(ctx, split); });
}

namespace {

template <typename T, typename I>
void argmax_typed(OpContext& ctx, const ReduceSplit& split) {
  const int64_t length = split.inner.shape[0];
  const int64_t stride = split.inner.strides[0];
  const int64_t outputs = split.out.numel();
  parallel_ranges(outputs, ctx.threads_for(outputs * length), [&](int64_t first, int64_t last) {
    int64_t index[SY_MAX_RANK] = {};
    for (int64_t o = first; o < last; ++o) {
      int64_t rest = o;
      for (int d = split.outer.rank - 1; d >= 0; --d) {
        index[d] = rest % split.outer.shape[d];
        rest /= split.outer.shape[d];
      }
      const T* row = reinterpret_cast<const T*>(split.outer.element(index));
      int64_t best = 0;
      float best_value = load_f32(row[0]);
      for (int64_t j = 1; j < length && best_value == best_value; ++j) {
        float v = load_f32(row[j * stride]);
        if (v > best_value || v != v) {
          best = j;
          best_value = v;
        }
      }
      *reinterpret_cast<I*>(split.out.element(index)) = static_cast<I>(best);
    }
  });
}

}  // namespace

void run_argmax(OpContext& ctx) {
  ctx.require_counts(1, 1);
  const TensorView& x = ctx.in[0];
  const TensorView& out = ctx.out[0];
  ctx.require_float(x, "x");
  ctx.require_dtype_in(out, "out", {SY_DTYPE_I32, SY_DTYPE_I64});
  const uint32_t mask = ctx.params.reduce.axes_mask;
  if (std::popcount(mask) != 1 || std::countr_zero(mask) >= x.rank) {
    ctx.fail_shape(cat("axes_mask 0x", std::hex, mask, std::dec,
                       " must name exactly one axis of x ", shape_string(x)));
  }
  ReduceSplit split = split_axes(ctx, x, out, mask, ctx.params.reduce.keep_dims != 0);
  if (out.numel() == 0) return;
  if (split.inner.shape[0] == 0) {
    ctx.fail_shape(cat("the argmax axis of x ", shape_string(x), " is empty"));
  }
  visit_float_dtype(x.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    if (out.dtype == SY_DTYPE_I32) {
      argmax_typed<T, int32_t>(ctx, split);
    } else {
      argmax_typed<T, int64_t>(ctx, split);
    }
  });
}

}  // namespace sy_onednn
