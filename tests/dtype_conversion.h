// Every backend converts between f32 and the 16-bit storage types exactly as the plugins' codec
// does (switchyard/plugin_support/dtype_codec.h: round to nearest, ties to even), bit for bit,
// whether it converts with that code or with its hardware (onednn's _Float16, CUDA's
// __float2half_rn, a shader). COPY with different dtypes is the conversion (docs/ops.md); its
// outputs are read back as raw bits. NaN only has to stay NaN (its payload and sign are not
// specified). Used by tests/runtime on every backend built here and by tests/cuda on the GPU
// (tools/gpu-check).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "device_tensor.h"
#include "switchyard/device.h"
#include "switchyard/plugin_support/dtype_codec.h"

namespace switchyard::testing {

// f32 bit patterns around every rounding decision to f16 and bf16: for each sign and exponent,
// a third of the top-ten-bit mantissas, each with the dropped bits at 0, 1, just below half,
// half (a tie), just above half and all ones; then every tie of the f16 subnormal range, where
// the bit that decides moves with the exponent; then the specials.
inline std::vector<uint32_t> conversion_probe_bits() {
  std::vector<uint32_t> bits;
  const uint32_t low[] = {0x0000u, 0x0001u, 0x0fffu, 0x1000u, 0x1001u, 0x1fffu};
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exponent = 0; exponent < 256; ++exponent) {
      for (uint32_t top = 0; top < 1024; top += 3) {
        for (const uint32_t rest : low) {
          bits.push_back((sign << 31) | (exponent << 23) | (top << 13) | rest);
        }
      }
    }
  }
  // f16 subnormals come from f32 exponents 101..112: the kept part is mantissa >> shift.
  for (uint32_t exponent = 101; exponent <= 113; ++exponent) {
    const uint32_t shift = 126 - exponent;
    const uint32_t half = 1u << (shift - 1);
    for (uint32_t kept = 0; (kept << shift) < (1u << 24); ++kept) {
      for (const uint32_t offset : {0u, half - 1u, half, half + 1u, 2u * half - 1u}) {
        const uint32_t mantissa = (kept << shift) + offset;
        if (mantissa < (1u << 23) || mantissa >= (1u << 24)) continue;  // the implicit bit
        bits.push_back((exponent << 23) | (mantissa & 0x7fffffu));
      }
    }
  }
  for (const float special : {0.0f, -0.0f, 65504.0f, 65519.99609375f, 65520.0f, -65520.0f, 0x1p-24f,
                              0x1p-25f, 0x1.8p-25f, 0x1p-14f, 3.3895314e38f}) {
    bits.push_back(sy_support::float_bits(special));
  }
  bits.push_back(0x7f800000u);  // inf
  bits.push_back(0xff800000u);  // -inf
  bits.push_back(0x7fc00000u);  // quiet NaN
  bits.push_back(0x7f800001u);  // signalling NaN, smallest payload
  bits.push_back(0xffffe000u);  // negative NaN, payload in the kept bits
  return bits;
}

namespace dtype_conversion_detail {

template <typename T>
DeviceTensor upload_bits(Device& device, sy_dtype dtype, const std::vector<T>& values) {
  DeviceTensor tensor;
  const size_t bytes = values.size() * sizeof(T);
  tensor.buffer = value_or_throw(device.allocate(bytes));
  throw_if_error(device.default_queue().write(*tensor.buffer, 0, values.data(), bytes));
  tensor.desc.buffer = tensor.buffer->handle();
  tensor.desc.dtype = static_cast<uint32_t>(dtype);
  tensor.desc.rank = 1;
  tensor.desc.shape[0] = static_cast<int64_t>(values.size());
  tensor.desc.strides[0] = 1;
  return tensor;
}

template <typename T>
std::vector<T> download_bits(Device& device, const DeviceTensor& tensor, size_t count) {
  std::vector<T> values(count);
  throw_if_error(device.default_queue().read(*tensor.buffer, 0, values.data(), count * sizeof(T)));
  return values;
}

// COPY `input` (dtype `from`) into a new tensor of dtype `to` and reads the result's bits.
template <typename In, typename Out>
std::vector<Out> convert_on(Device& device, sy_dtype from, sy_dtype to,
                            const std::vector<In>& input) {
  const DeviceTensor source = upload_bits(device, from, input);
  const DeviceTensor target = upload_bits(device, to, std::vector<Out>(input.size(), Out{}));
  throw_if_error(enqueue(device, SY_OP_COPY, {&source}, {&target}));
  throw_if_error(device.default_queue().finish());
  return download_bits<Out>(device, target, input.size());
}

inline bool f16_is_nan(uint16_t bits) {
  return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
}
inline bool bf16_is_nan(uint16_t bits) {
  return (bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0;
}

// Counts the elements whose bits differ from the codec's (NaN: whose result is not NaN), and
// describes the first few.
template <typename In, typename Out, typename Expected, typename IsNan>
void require_same_bits(const std::string& what, const std::vector<In>& input,
                       const std::vector<Out>& got, Expected expected, IsNan is_nan) {
  size_t wrong = 0;
  std::ostringstream first;
  for (size_t i = 0; i < input.size(); ++i) {
    const Out want = expected(input[i]);
    const bool same = is_nan(want) ? is_nan(got[i]) : got[i] == want;
    if (same) continue;
    if (++wrong <= 5) {
      first << "\n  input 0x" << std::hex << static_cast<uint64_t>(input[i]) << ": got 0x"
            << static_cast<uint64_t>(got[i]) << ", the codec gives 0x"
            << static_cast<uint64_t>(want) << std::dec;
    }
  }
  INFO(what << ": " << wrong << " of " << input.size() << " elements differ" << first.str());
  CHECK(wrong == 0);
}

}  // namespace dtype_conversion_detail

// f32 -> f16 and bf16 over conversion_probe_bits(), and every f16 and bf16 bit pattern -> f32.
inline void check_dtype_conversions(Device& device) {
  using namespace dtype_conversion_detail;
  const std::vector<uint32_t> probes = conversion_probe_bits();
  std::vector<float> f32(probes.size());
  std::memcpy(f32.data(), probes.data(), probes.size() * sizeof(float));
  const auto as_bits = [](float value) { return sy_support::float_bits(value); };
  const auto f32_is_nan = [](uint32_t bits) { return (bits & 0x7fffffffu) > 0x7f800000u; };

  require_same_bits(
      device.id() + " f32 -> f16", probes,
      convert_on<float, uint16_t>(device, SY_DTYPE_F32, SY_DTYPE_F16, f32),
      [&](uint32_t bits) { return sy_support::f32_to_f16_bits(sy_support::bits_float(bits)); },
      f16_is_nan);
  require_same_bits(
      device.id() + " f32 -> bf16", probes,
      convert_on<float, uint16_t>(device, SY_DTYPE_F32, SY_DTYPE_BF16, f32),
      [&](uint32_t bits) { return sy_support::f32_to_bf16_bits(sy_support::bits_float(bits)); },
      bf16_is_nan);

  std::vector<uint16_t> all16(65536);
  for (uint32_t k = 0; k < 65536; ++k) all16[k] = static_cast<uint16_t>(k);
  const auto widen = [&](sy_dtype from) {
    const std::vector<float> out = convert_on<uint16_t, float>(device, from, SY_DTYPE_F32, all16);
    std::vector<uint32_t> bits(out.size());
    for (size_t k = 0; k < out.size(); ++k) bits[k] = as_bits(out[k]);
    return bits;
  };
  require_same_bits(
      device.id() + " f16 -> f32", all16, widen(SY_DTYPE_F16),
      [&](uint16_t bits) { return as_bits(sy_support::f16_bits_to_f32(bits)); }, f32_is_nan);
  require_same_bits(
      device.id() + " bf16 -> f32", all16, widen(SY_DTYPE_BF16),
      [&](uint16_t bits) { return as_bits(sy_support::bf16_bits_to_f32(bits)); }, f32_is_nan);
}

}  // namespace switchyard::testing
