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
