// Dense f16 and bf16 <-> f32 conversion loops, compiled for several ISA levels (x86-64-v3 with
// F16C, v4 with AVX-512 for bf16, and the baseline) and chosen at load time, so that staging
// operands and mixed-precision casts are not dominated by per-element conversion.
#pragma once

#include <cstdint>

#include "dtype.h"

namespace sy_onednn {

void convert_f16_to_f32(const f16_t* src, float* dst, int64_t count);
void convert_f32_to_f16(const float* src, f16_t* dst, int64_t count);
// The same for bf16 (mixed precision casts every weight twice per training step).
void convert_bf16_to_f32(const bf16_t* src, float* dst, int64_t count);
void convert_f32_to_bf16(const float* src, bf16_t* dst, int64_t count);

}  // namespace sy_onednn
