// COPY and FILL, and the strided copy-with-conversion that staging uses.
//
// Plain loops: a copy is memory-bound, and the loop planner already turns any dense layout into
// one memcpy or one vectorisable conversion loop. (oneDNN's reorder would not do float -> int
// truncation as COPY defines it.)
#include <algorithm>
#include <cstring>

#include <type_traits>

#include "ops/convert.h"
#include "ops/f16_convert.h"
#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

template <typename T>
void copy_same_type(char* const* p, const int64_t* s, int64_t count) {
  constexpr int64_t kSize = sizeof(T);
  if (s[0] == kSize && s[1] == kSize) {
    std::memcpy(p[0], p[1], static_cast<size_t>(count) * kSize);
    return;
  }
  // Strides and pointers in locals: the char stores may alias s and p as far as the compiler
  // knows, and it would reload them for every element.
  char* const dst = p[0];
  const char* const src = p[1];
  const int64_t s0 = s[0], s1 = s[1];
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * s0, src + i * s1, kSize);
}

template <typename To, typename From>
void copy_converting(char* const* p, const int64_t* s, int64_t count) {
  if constexpr (std::is_same_v<To, float> && std::is_same_v<From, f16_t>) {
    if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
      return convert_f16_to_f32(reinterpret_cast<const f16_t*>(p[1]),
                                reinterpret_cast<float*>(p[0]), count);
    }
  }
  if constexpr (std::is_same_v<To, f16_t> && std::is_same_v<From, float>) {
    if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
      return convert_f32_to_f16(reinterpret_cast<const float*>(p[1]),
                                reinterpret_cast<f16_t*>(p[0]), count);
    }
  }
  if constexpr (std::is_same_v<To, float> && std::is_same_v<From, bf16_t>) {
    if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
      return convert_bf16_to_f32(reinterpret_cast<const bf16_t*>(p[1]),
                                 reinterpret_cast<float*>(p[0]), count);
    }
  }
  if constexpr (std::is_same_v<To, bf16_t> && std::is_same_v<From, float>) {
    if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
      return convert_f32_to_bf16(reinterpret_cast<const float*>(p[1]),
                                 reinterpret_cast<bf16_t*>(p[0]), count);
    }
  }
  if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
    To* dst = reinterpret_cast<To*>(p[0]);
    const From* src = reinterpret_cast<const From*>(p[1]);
    for (int64_t i = 0; i < count; ++i) dst[i] = convert_value<To>(src[i]);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    From value;
    std::memcpy(&value, p[1] + i * s[1], sizeof(From));
    To converted = convert_value<To>(value);
    std::memcpy(p[0] + i * s[0], &converted, sizeof(To));
  }
}

// Rows [i0, i1) of a narrow transpose whose output rows are dense, kCols values each: output row i
// is (column 0 at i, column 1 at i, ...), the planes of an NCHW image interleaved into
// channels-last pixels. With the width a constant the compiler vectorises the interleave: a
// [1, 3, 224, 224] image took 99 us one element at a time on a 2-core Zen 4.
template <typename T, int kCols>
SY_VECTOR_CLONES void interleave_planes(T* __restrict out, const T* __restrict p0,
                                        const T* __restrict p1, const T* __restrict p2,
                                        const T* __restrict p3, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    out[i * kCols] = p0[i];
    out[i * kCols + 1] = p1[i];
    if constexpr (kCols > 2) out[i * kCols + 2] = p2[i];
    if constexpr (kCols > 3) out[i * kCols + 3] = p3[i];
  }
}

// interleave_planes for 4-byte values in 2 to 4 columns whose output rows are dense; false for
// any other.
template <typename T>
bool interleave_rows(char* dst, const char* src, int64_t src_col, int64_t dst_row, int64_t cols,
                     int64_t i0, int64_t i1) {
  if constexpr (sizeof(T) != 4) {
    return false;
  } else {
    using U = uint32_t;  // the bytes, whatever T is
    if (cols < 2 || cols > 4 || dst_row != cols * 4 || src_col % 4 != 0) return false;
    const U* planes[4] = {};
    for (int64_t j = 0; j < cols; ++j) planes[j] = reinterpret_cast<const U*>(src + j * src_col);
    U* out = reinterpret_cast<U*>(dst);
    switch (cols) {
      case 2:
        interleave_planes<U, 2>(out, planes[0], planes[1], nullptr, nullptr, i0, i1);
        break;
      case 3:
        interleave_planes<U, 3>(out, planes[0], planes[1], planes[2], nullptr, i0, i1);
        break;
      default:
        interleave_planes<U, 4>(out, planes[0], planes[1], planes[2], planes[3], i0, i1);
    }
    return true;
  }
}

// A copy whose source is dense along the output's second-to-last axis and strided along its last
// (a transpose): copied in square tiles so that both sides stay in cache, instead of one strided
// read per element. With few columns (an NCHW image of 3 channels made channels-last: columns are
// its channels) a tile is a band of rows, read one source row at a time. Returns false for any
// other layout.
template <typename T>
bool try_tiled_transpose(const StridedLoop<2>& loop, int threads) {
  constexpr int64_t kSize = sizeof(T);
  constexpr int64_t kTile = 32;
  constexpr int64_t kBand = 512;  // rows of a narrow tile: kBand x (cols < kTile) elements
  const int r = loop.rank;
  if (r < 2) return false;
  const int64_t* dst_strides = loop.byte_strides[0];
  const int64_t* src_strides = loop.byte_strides[1];
  if (dst_strides[r - 1] != kSize || src_strides[r - 2] != kSize) return false;
  const int64_t rows = loop.shape[r - 2];
  const int64_t cols = loop.shape[r - 1];
  const bool narrow = cols < kTile;
  if (rows < kTile || cols < 2) return false;
  const int64_t tile = narrow ? kBand : kTile;
  // Held in locals, captured by value: the stores below go through char pointers, which may alias
  // anything reached through a reference as far as the compiler knows, so it would reload these
  // for every element.
  const int64_t dst_row = dst_strides[r - 2];
  const int64_t src_col = src_strides[r - 1];
  const int64_t row_tiles = (rows + tile - 1) / tile;
  const int64_t matrices = loop.numel / (rows * cols);
  parallel_ranges(matrices * row_tiles, threads,
                  [&, dst_row, src_col](int64_t first, int64_t last) {
                    for (int64_t task = first; task < last; ++task) {
                      int64_t matrix = task / row_tiles;
                      const int64_t i0 = (task % row_tiles) * tile;
                      char* dst = loop.data[0];
                      const char* src = loop.data[1];
                      for (int d = r - 3; d >= 0; --d) {
                        const int64_t index = matrix % loop.shape[d];
                        matrix /= loop.shape[d];
                        dst += index * dst_strides[d];
                        src += index * src_strides[d];
                      }
                      const int64_t i1 = std::min(rows, i0 + tile);
                      if (narrow) {
                        if (interleave_rows<T>(dst, src, src_col, dst_row, cols, i0, i1)) continue;
                        for (int64_t j = 0; j < cols; ++j) {
                          const char* in = src + j * src_col;
                          char* out = dst + j * kSize;
                          for (int64_t i = i0; i < i1; ++i)
                            std::memcpy(out + i * dst_row, in + i * kSize, kSize);
                        }
                        continue;
                      }
                      // Eight source rows at a time: power-of-two strides map them to one cache
                      // set, and eight stay within its ways.
                      for (int64_t j0 = 0; j0 < cols; j0 += 8) {
                        const int64_t j1 = std::min(cols, j0 + 8);
                        for (int64_t i = i0; i < i1; ++i) {
                          T* out = reinterpret_cast<T*>(dst + i * dst_row);
                          const char* in = src + i * kSize;
                          for (int64_t j = j0; j < j1; ++j)
                            std::memcpy(out + j, in + j * src_col, kSize);
                        }
                      }
                    }
                  });
  return true;
}

template <typename T>
void fill_span(char* p, int64_t stride, int64_t count, T value) {
  if (stride == sizeof(T)) {
    T* dst = reinterpret_cast<T*>(p);
    for (int64_t i = 0; i < count; ++i) dst[i] = value;
    return;
  }
  for (int64_t i = 0; i < count; ++i) std::memcpy(p + i * stride, &value, sizeof(T));
}

}  // namespace

bool broadcast_view(const TensorView& in, const int64_t* shape, int rank, TensorView* out) {
  if (in.rank > rank) return false;
  *out = in;
  out->rank = rank;
  int shift = rank - in.rank;
  for (int d = rank - 1; d >= 0; --d) {
    int source = d - shift;
    int64_t size = source >= 0 ? in.shape[source] : 1;
    int64_t stride = source >= 0 ? in.strides[source] : 0;
    if (size != shape[d] && size != 1) return false;
    out->shape[d] = shape[d];
    out->strides[d] = size == 1 ? 0 : stride;
  }
  return true;
}

void copy_view(const TensorView& src, const TensorView& dst, int threads) {
  if (dst.numel() == 0 || same_memory(src, dst)) return;
  StridedLoop<2> loop = plan_loop_in_memory_order<2>({&dst, &src});
  if (src.dtype == dst.dtype) {
    visit_dtype(src.dtype, [&](auto type_tag) {
      using T = decltype(type_tag);
      if (try_tiled_transpose<T>(loop, threads)) return;
      run_loop(loop, threads, [](char* const* p, const int64_t* s, int64_t count) {
        copy_same_type<T>(p, s, count);
      });
    });
    return;
  }
  visit_dtype(dst.dtype, [&](auto to_tag) {
    visit_dtype(src.dtype, [&](auto from_tag) {
      using To = decltype(to_tag);
      using From = decltype(from_tag);
      run_loop(loop, threads, [](char* const* p, const int64_t* s, int64_t count) {
        copy_converting<To, From>(p, s, count);
      });
    });
  });
}

TensorView dense_copy(OpContext& ctx, const TensorView& view, uint32_t dtype) {
  if (view.dtype == dtype && view.is_contiguous()) return view;
  TensorView copy = ctx.scratch_view(dtype, view.rank, view.shape);
  copy_view(view, copy, ctx.threads_for(view.numel()));
  return copy;
}

void fill_zero(const TensorView& view, int threads) {
  StridedLoop<1> loop = plan_loop_in_memory_order<1>({&view});
  const int64_t element_size = static_cast<int64_t>(view.element_size());
  run_loop(loop, threads, [element_size](char* const* p, const int64_t* s, int64_t count) {
    if (s[0] == element_size) {
      std::memset(p[0], 0, static_cast<size_t>(count * element_size));
      return;
    }
    for (int64_t i = 0; i < count; ++i) std::memset(p[0] + i * s[0], 0, element_size);
  });
}

void run_copy(OpContext& ctx) {
  ctx.require_counts(1, 1);
  const TensorView& x = ctx.in[0];
  const TensorView& out = ctx.out[0];
  ctx.require_same_shape(x, "x", out, "out");
  if (!same_memory(x, out) && ranges_overlap(x, out)) {
    ctx.fail_shape(cat("input ", describe(x), " and output ", describe(out), " overlap"));
  }
  copy_view(x, out, ctx.threads_for(out.numel()));
}

void run_fill(OpContext& ctx) {
  ctx.require_counts(0, 1);
  const TensorView& out = ctx.out[0];
  const double value = ctx.params.fill.value;
  StridedLoop<1> loop = plan_loop_in_memory_order<1>({&out});
  visit_dtype(out.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    T converted{};
    if constexpr (kIsFloatStorage<T>) {
      converted = store_f32<T>(static_cast<float>(value));
    } else {
      converted = double_to_int<T>(value);
    }
    run_loop(loop, ctx.threads_for(out.numel()),
             [converted](char* const* p, const int64_t* s, int64_t count) {
               fill_span<T>(p[0], s[0], count, converted);
             });
  });
}

}  // namespace sy_onednn
