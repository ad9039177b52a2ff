#include "ops/f16_convert.h"

#include "ops/vector_clones.h"

namespace sy_onednn {

SY_F16_CLONES void convert_f16_to_f32(const f16_t* src, float* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(src[i]);
}

SY_F16_CLONES void convert_f32_to_f16(const float* src, f16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<f16_t>(src[i]);
}

}  // namespace sy_onednn

namespace sy_onednn {

// bf16 <-> f32 with the plugins' codec (switchyard/plugin_support/dtype_codec.h), whose
// conversions are branch-free so that each clone vectorises: x86-64-v4 narrows 16 lanes at a time
// with AVX-512BW.
SY_VECTOR_CLONES void convert_bf16_to_f32(const bf16_t* src, float* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = sy_support::bf16_bits_to_f32(src[i].bits);
}

SY_VECTOR_CLONES void convert_f32_to_bf16(const float* src, bf16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i].bits = sy_support::f32_to_bf16_bits(src[i]);
}

}  // namespace sy_onednn
