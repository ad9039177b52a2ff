// Host-side encoding of the ABI's storage types, used by the conformance suite to write inputs and
// read outputs and by the model formats. The f16/bf16 bits are the plugins' codec
// (switchyard/plugin_support/dtype_codec.h: round to nearest, ties to even, as docs/ops.md requires
// of every backend), so inputs made here are exactly representable in the dtype under test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/dtype_codec.h"  // the f16/bf16 bits: sy_support::f32_to_f16_bits, ...

namespace switchyard::conformance {

// Bytes per element of a storage type.
size_t dtype_size_bytes(sy_dtype dtype);
// "f32", "f16", "bf16", "i32", "i64".
std::string dtype_label(sy_dtype dtype);
bool is_floating(sy_dtype dtype);

// The nearest value of `dtype` to `value` (integers truncate toward zero).
double round_to_dtype(double value, sy_dtype dtype);

// Writes/reads one element of `dtype` at `bytes`.
void encode_element(double value, sy_dtype dtype, unsigned char* bytes);
double decode_element(sy_dtype dtype, const unsigned char* bytes);

}  // namespace switchyard::conformance
