// Data movement and generation (sections 13-14 of docs/ops.md): COPY with casts, FILL, and the
// counter-based RANDOM_UNIFORM / RANDOM_NORMAL.
#include <math.h>

#include "common.cuh"
#include "switchyard/plugin_support/philox.h"

namespace sy {
namespace {

__device__ __forceinline__ bool is_integer(int32_t dtype) {
  return dtype == kI32 || dtype == kI64;
}

// float -> int: truncation toward zero; NaN maps to 0 and out-of-range values saturate, as the
// reference does (docs/ops.md leaves them unspecified).
__device__ __forceinline__ int64_t float_to_int(double v, int32_t dtype) {
  if (v != v) return 0;
  const double lo = dtype == kI32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = dtype == kI32 ? 2147483647.0 : 9223372036854775807.0;
  if (v <= lo) return dtype == kI32 ? INT32_MIN : INT64_MIN;
  if (v >= hi) return dtype == kI32 ? INT32_MAX : INT64_MAX;
  return static_cast<int64_t>(v);
}

__device__ __forceinline__ void copy_element(const SyOperand& out, int64_t out_off,
                                             const SyOperand& in, int64_t in_off) {
  if (is_integer(in.dtype)) {
    const int64_t v = load_int(in.data, in.dtype, in_off);
    if (is_integer(out.dtype)) {
      store_int(out.data, out.dtype, out_off, v);
    } else {
      // int -> f32 (nearest even), then the storage type (nearest even), as docs/ops.md and the
      // reference define it: for bf16 the two roundings can differ from one direct rounding.
      store_float(out.data, out.dtype, out_off, static_cast<float>(v));
    }
  } else if (is_integer(out.dtype)) {
    const float v = load_float(in.data, in.dtype, in_off);
    store_int(out.data, out.dtype, out_off, float_to_int(static_cast<double>(v), out.dtype));
  } else {
    store_float(out.data, out.dtype, out_off, load_float(in.data, in.dtype, in_off));
  }
}

}  // namespace
}  // namespace sy

extern "C" __global__ void sy_copy(SyCopyArgs args) {
  using namespace sy;
  const SyOperand* ops[2] = {&args.out, &args.in};
  for_each_position<2>(args.iter, ops, [&](int64_t, const int64_t* off) {
    copy_element(args.out, off[0], args.in, off[1]);
  });
}

extern "C" __global__ void sy_fill(SyFillArgs args) {
  using namespace sy;
  const SyOperand* ops[1] = {&args.out};
  for_each_position<1>(args.iter, ops, [&](int64_t, const int64_t* off) {
    if (is_integer(args.out.dtype)) {
      store_int(args.out.data, args.out.dtype, off[0], args.int_value);
    } else {
      store_float(args.out.data, args.out.dtype, off[0], args.float_value);
    }
  });
}

extern "C" __global__ void sy_random(SyRandomArgs args) {
  using namespace sy;
  const SyOperand* ops[1] = {&args.out};
  for_each_position<1>(args.iter, ops, [&](int64_t linear, const int64_t* off) {
    const SyPhiloxWords words =
        sy_philox_for_element(args.seed, args.offset, static_cast<uint64_t>(linear));
    float value;
    if (args.normal) {
      const float u1 = static_cast<float>((words.w[0] >> 8) + 1u) * 5.9604644775390625e-08f;
      const float u2 = sy_unit_float(words.w[1]);
      // cospif(2 u2): the angle exact (2 u2 is), where cosf(2 pi u2) rounds 2 pi u2 first and
      // moves z by up to 1.4e-6 where |z| is small (docs/ops.md's element bound; the onednn
      // plugin did that until the drawn conformance cases found it).
      const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
      value = __fadd_rn(args.a, __fmul_rn(args.b, z));
    } else {
      value = sy_uniform_from_unit(args.a, args.b, sy_unit_float(words.w[0]));
    }
    store_float(args.out.data, args.out.dtype, off[0], value);
  });
}
