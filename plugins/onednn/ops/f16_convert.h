// Dense f16 <-> f32 conversion loops, compiled twice (x86-64-v3 with F16C, and the baseline that
// calls libgcc per element) and chosen at load time, so that staging f16 operands through f32 is
// not dominated by software conversion on CPUs that convert in hardware.
#pragma once

#include <cstdint>

#include "dtype.h"

namespace sy_onednn {

void convert_f16_to_f32(const f16_t* src, float* dst, int64_t count);
void convert_f32_to_f16(const float* src, f16_t* dst, int64_t count);

}  // namespace sy_onednn
