// Shared by every shader of the Vulkan plugin: the parameter block at binding 0, element
// addressing for strided tensors, and conversions between f32 and the 16-bit storage types.
//
// Each shader is compiled once per storage type with one of DT_F32, DT_F16, DT_BF16 (float data),
// DT_I32, DT_I64 (integer data). 16-bit types are stored as uint16_t and converted by hand with
// round-to-nearest-even, so only the storageBuffer16BitAccess feature is needed; all arithmetic is
// f32. The layout of ParamBlock mirrors src/op_params.h.

#if defined(DT_F16) || defined(DT_BF16) || defined(NEED_16BIT_STORAGE)
#extension GL_EXT_shader_16bit_storage : require
#endif
// The tensor-core kernel of gemm_tile.glsl (gemm_coopmat.glsl).
#ifdef GEMM_COOPMAT
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

#define WORKGROUP_SIZE 256
#define MAX_TENSORS 8

struct Tensor {
  uint offset;      // of element [0,...,0], in storage units of the binding (words for i64)
  uint rank;
  uint numel;
  uint contiguous;  // 1 when strides are row-major for the shape
  int shape[8];
  int strides[8];   // in elements
};

layout(std430, set = 0, binding = 0) readonly buffer ParamBuffer {
  uint count;  // work items of this dispatch
  uint mode;   // which op of the family; shaders read MODE below instead
  uint u[14];
  float f[16];
  Tensor t[MAX_TENSORS];
} P;

// The parameter block's `mode` as a specialisation constant (the host specialises every pipeline
// on it), so that the compiler drops the other ops of a family: CPU drivers cannot tell that a
// value read from a buffer is uniform and would otherwise run every branch under a mask.
layout(constant_id = 0) const uint MODE = 0u;
// The op (a sy_op value, or a pass number) in the low bits of MODE.
const uint OP = MODE & 0xffffu;
// Row-wise shaders (reductions, softmax, cross-entropy): one invocation walks a whole row, for short
// rows, instead of one workgroup per row, which wastes a workgroup and its barriers on each row.
const bool ONE_INVOCATION_PER_ROW = (MODE & 0x10000u) != 0u;

// Offset in elements of the element with row-major logical index `linear`, not counting `offset`.
uint strided_index(uint k, uint linear) {
  if (P.t[k].contiguous != 0u) return linear;
  uint result = 0u;
  for (int d = int(P.t[k].rank) - 1; d >= 0; --d) {
    const uint size = uint(P.t[k].shape[d]);
    result += (linear % size) * uint(P.t[k].strides[d]);
    linear /= size;
  }
  return result;
}

// Storage index of element `linear` of tensor k (elements of the binding's type).
uint at(uint k, uint linear) { return P.t[k].offset + strided_index(k, linear); }

// A tensor's offset and contiguity read once, for loops over many elements: the driver cannot
// tell that the parameter block is not written through the other bindings, so it would reload
// both for every element otherwise.
struct Cursor {
  uint k;
  uint offset;
  bool contiguous;
};

Cursor cursor(uint k) { return Cursor(k, P.t[k].offset, P.t[k].contiguous != 0u); }
uint at(Cursor c, uint linear) {
  return c.offset + (c.contiguous ? linear : strided_index(c.k, linear));
}
uint at64(Cursor c, uint linear) {
  return c.offset + 2u * (c.contiguous ? linear : strided_index(c.k, linear));
}
// For 64-bit data kept as pairs of 32-bit words: the index of the low word.
uint at64(uint k, uint linear) { return P.t[k].offset + 2u * strided_index(k, linear); }

// The invocation's position in a grid-stride loop over P.count items.
#define FOR_EACH_ITEM(i)                                                          \
  for (uint i = gl_GlobalInvocationID.x, item_count_ = P.count; i < item_count_; \
       i += gl_NumWorkGroups.x * WORKGROUP_SIZE)

#define kInf uintBitsToFloat(0x7f800000u)
#define kNaN uintBitsToFloat(0x7fc00000u)

float bf16_to_float(uint h) { return uintBitsToFloat(h << 16); }

uint float_to_bf16(float f) {
  const uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;  // quiet NaN, sign kept
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

float half_to_float(uint h) {
  const uint sign = (h & 0x8000u) << 16;
  const uint exponent = (h >> 10) & 0x1fu;
  const uint mantissa = h & 0x3ffu;
  if (exponent == 0u) {
    const float magnitude = float(mantissa) * (1.0 / 16777216.0);  // subnormal: m * 2^-24
    return sign != 0u ? -magnitude : magnitude;
  }
  if (exponent == 31u) return uintBitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  return uintBitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint float_to_half(float f) {
  const uint x = floatBitsToUint(f);
  const uint sign = (x >> 16) & 0x8000u;
  const uint magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // rounds to infinity (>= 65520)
  if (magnitude < 0x38800000u) {                        // below 2^-14: subnormal half
    const float scaled = uintBitsToFloat(magnitude) * 16777216.0;  // exact: times 2^24
    return sign | uint(roundEven(scaled));
  }
  // Rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even.
  return sign | ((magnitude - 0x38000000u + 0xfffu + ((magnitude >> 13) & 1u)) >> 13);
}

#if defined(DT_F32)
#define STORAGE_T float
#define TO_F(v) (v)
#define FROM_F(v) (v)
#elif defined(DT_F16)
#define STORAGE_T uint16_t
#define TO_F(v) half_to_float(uint(v))
#define FROM_F(v) uint16_t(float_to_half(v))
#elif defined(DT_BF16)
#define STORAGE_T uint16_t
#define TO_F(v) bf16_to_float(uint(v))
#define FROM_F(v) uint16_t(float_to_bf16(v))
#endif

// Integer tensors (labels, indices) are bound as 32-bit words; u-parameter `is64` says whether
// each element is one word (I32) or two (I64, little-endian). Returns -1 for a value outside the
// int32 range, which every caller treats as out of range.
int load_index_word(uint lo, uint hi, bool is64) {
  if (!is64) return int(lo);
  const bool fits = (hi == 0u && lo < 0x80000000u) || (hi == 0xffffffffu && lo >= 0x80000000u);
  return fits ? int(lo) : -1;
}
#define LOAD_INDEX(buf, k, linear, is64)                                                   \
  ((is64) ? load_index_word(buf[at64(k, linear)], buf[at64(k, linear) + 1u], true) \
          : int(buf[at(k, linear)]))

uint workgroup_linear_id() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
