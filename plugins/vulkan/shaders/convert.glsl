// Element conversions for COPY (docs/ops.md section 13). A value travels as either an f32 or a
// 64-bit integer held in two words (lo, hi, two's complement).

#define KIND_F32 0u
#define KIND_F16 1u
#define KIND_BF16 2u
#define KIND_I32 3u
#define KIND_I64 4u

bool kind_is_float(uint kind) { return kind <= KIND_BF16; }

float bits_to_float(uint kind, uint bits) {
  if (kind == KIND_F16) return half_to_float(bits);
  if (kind == KIND_BF16) return bf16_to_float(bits);
  return uintBitsToFloat(bits);
}

uint float_to_bits(uint kind, float v) {
  if (kind == KIND_F16) return float_to_half(v);
  if (kind == KIND_BF16) return float_to_bf16(v);
  return floatBitsToUint(v);
}

// Truncation toward zero into 64 bits; NaN gives 0 and out-of-range values saturate (what the
// reference does; ops.md leaves these unspecified).
uvec2 float_to_int64(float v) {
  if (isnan(v)) return uvec2(0u);
  if (v >= 9223372036854775807.0) return uvec2(0xffffffffu, 0x7fffffffu);
  if (v <= -9223372036854775808.0) return uvec2(0u, 0x80000000u);
  const float t = trunc(v);
  if (abs(t) < 2147483648.0) {
    const int i = int(t);
    return uvec2(uint(i), i < 0 ? 0xffffffffu : 0u);
  }
  // |t| >= 2^31 is a multiple of 2^8, so both parts below are exact.
  const float hi = floor(t / 4294967296.0);
  const float lo = t - hi * 4294967296.0;
  return uvec2(uint(lo), uint(int(hi)));
}

// Round-to-nearest-even of a 64-bit integer to f32.
float int64_to_float(uvec2 v) {
  const bool negative = (v.y & 0x80000000u) != 0u;
  uint lo = v.x;
  uint hi = v.y;
  if (negative) {  // magnitude = -v
    lo = ~lo + 1u;
    hi = ~hi + (lo == 0u ? 1u : 0u);
  }
  float magnitude;
  if (hi == 0u) {
    magnitude = float(lo);
  } else {
    const int top = findMSB(hi);  // the leading one is bit 32 + top
    const uint shift = uint(31 - top);
    const uint window = shift == 0u ? hi : (hi << shift) | (lo >> (32u - shift));
    const uint below = shift == 0u ? lo : (lo << shift);
    uint mantissa = window >> 8;
    const bool round_bit = ((window >> 7) & 1u) != 0u;
    const bool sticky = (window & 0x7fu) != 0u || below != 0u;
    if (round_bit && (sticky || (mantissa & 1u) != 0u)) mantissa += 1u;
    magnitude = ldexp(float(mantissa), 40 - int(shift));
  }
  return negative ? -magnitude : magnitude;
}
