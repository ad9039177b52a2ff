#include "ops/f16_convert.h"

namespace sy_onednn {

__attribute__((target_clones("arch=x86-64-v3", "default"))) void convert_f16_to_f32(
    const f16_t* src, float* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(src[i]);
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) void convert_f32_to_f16(
    const float* src, f16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<f16_t>(src[i]);
}

}  // namespace sy_onednn

namespace sy_onednn {

// bf16 <-> f32 on the bits, written without branches so that each clone vectorises (the NaN test
// is a select, not an early return): x86-64-v4 narrows 16 lanes at a time with AVX-512BW.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void
convert_bf16_to_f32(const bf16_t* src, float* dst, int64_t count) {
  const uint16_t* in = reinterpret_cast<const uint16_t*>(src);
  uint32_t* out = reinterpret_cast<uint32_t*>(dst);
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<uint32_t>(in[i]) << 16;
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void
convert_f32_to_bf16(const float* src, bf16_t* dst, int64_t count) {
  const uint32_t* in = reinterpret_cast<const uint32_t*>(src);
  uint16_t* out = reinterpret_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t bits = in[i];
    const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = (bits >> 16) | 0x40u;
    const bool is_nan = static_cast<int32_t>(bits & 0x7fffffffu) > 0x7f800000;
    out[i] = static_cast<uint16_t>(is_nan ? quiet_nan : rounded);
  }
}

}  // namespace sy_onednn
