// ParamBlock: what every dispatch passes to its shader at binding 0. Mirrors `ParamBuffer` in
// shaders/common.glsl field for field (std430: all members are 4-byte scalars or arrays of them).
#pragma once

#include <cstdint>

namespace sy_vk {

constexpr uint32_t kWorkgroupSize = 256;  // WORKGROUP_SIZE in common.glsl
constexpr uint32_t kMaxParamTensors = 8;

// One tensor as a shader sees it.
struct GpuTensor {
  uint32_t offset = 0;  // of element [0,...,0] within the binding, in storage units
  uint32_t rank = 0;
  uint32_t numel = 0;
  uint32_t contiguous = 0;
  int32_t shape[8] = {};
  int32_t strides[8] = {};  // in elements
};

struct ParamBlock {
  uint32_t count = 0;  // work items
  uint32_t mode = 0;   // op selector within a shader family
  uint32_t u[14] = {};
  float f[16] = {};
  GpuTensor t[kMaxParamTensors];
};

static_assert(sizeof(GpuTensor) == 80, "GpuTensor must match Tensor in common.glsl");
static_assert(sizeof(ParamBlock) == 768, "ParamBlock must match ParamBuffer in common.glsl");

}  // namespace sy_vk
