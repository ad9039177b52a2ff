// DType: the element types a tensor can hold, mirroring sy_dtype value for value.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>

#include "switchyard/plugin_abi.h"

namespace switchyard {

enum class DType : uint32_t {
  kF32 = SY_DTYPE_F32,
  kF16 = SY_DTYPE_F16,
  kBF16 = SY_DTYPE_BF16,
  kI32 = SY_DTYPE_I32,
  kI64 = SY_DTYPE_I64,
};

// "f32", "f16", "bf16", "i32", "i64".
const char* dtype_name(DType dtype);
// 4, 2, 2, 4, 8.
uint64_t dtype_size_bytes(DType dtype);
// True for f32, f16 and bf16: the types gradients flow through.
bool is_floating(DType dtype);
inline sy_dtype to_sy_dtype(DType dtype) {
  return static_cast<sy_dtype>(dtype);
}

}  // namespace switchyard

#pragma GCC visibility pop
