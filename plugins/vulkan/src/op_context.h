// What an op implementation works with: the device, the queue, the call, and helpers that check
// and bind sy_tensor_desc arguments the same way for every op.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "command_queue.h"
#include "op_params.h"
#include "status.h"
#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/dtype_codec.h"

namespace sy_vk {

class VulkanDevice;

struct OpContext {
  VulkanDevice& device;
  CommandQueue& queue;
  const sy_op_call& call;
};

// "MATMUL", "RELU", ...
const char* op_name(uint32_t op);
const char* dtype_name(uint32_t dtype);
uint64_t dtype_size(uint32_t dtype);
using sy_support::is_float_dtype;  // switchyard/plugin_support/dtype_codec.h
// "f32", "f16", "bf16" for the shader module suffix.
const char* float_variant(uint32_t dtype);

std::string shape_text(const sy_tensor_desc& desc);  // "[4, 3]"
int64_t element_count(const sy_tensor_desc& desc);
// Row-major strides for the descriptor's shape.
void set_contiguous_strides(sy_tensor_desc* desc);

// Fails unless the call has exactly these numbers of inputs and outputs.
Status check_counts(const OpContext& ctx, uint32_t inputs, uint32_t outputs);
// INVALID_ARGUMENT unless `dtype` is a float type, UNIMPLEMENTED when the device cannot store it.
Status check_float_dtype(const OpContext& ctx, uint32_t dtype, const char* role);
// INVALID_ARGUMENT unless every listed tensor has the dtype of the first.
Status check_same_dtype(const OpContext& ctx, std::initializer_list<const sy_tensor_desc*> tensors,
                        std::initializer_list<const char*> roles);
// INVALID_ARGUMENT unless the two shapes are equal.
Status check_same_shape(const OpContext& ctx, const sy_tensor_desc& a, const char* a_role,
                        const sy_tensor_desc& b, const char* b_role);
// INVALID_ARGUMENT ("OP: role [..] should be [..]") unless `t` has exactly `shape`.
Status check_shape(const OpContext& ctx, const sy_tensor_desc& t, const char* role,
                   std::initializer_list<int64_t> shape);

// Checks that `desc` fits its buffer (ops.md section 1) and fills the binding window and the
// shader's view of the tensor. `desc` may be a re-shaped or re-strided view of a call's tensor.
Status bind_tensor(const OpContext& ctx, const sy_tensor_desc& desc, const char* role,
                   BufferBinding* binding, GpuTensor* gpu);

// Workgroups for a grid-stride loop over `items`.
uint32_t groups_for(uint64_t items);
// Workgroups along one axis of a GEMM-shaped dispatch (gemm_tile.glsl): one per `tile` rows or
// columns, at most 65535 (the shader strides over the rest).
uint32_t gemm_groups(int64_t extent, int64_t tile = 64);

// The form of the tiled GEMM (gemm_tile.glsl) a product runs: the module suffix after
// "<shader>.<dtype>", the output tile edge and the K step.
struct GemmKernel {
  std::string suffix;  // "", ".wide" or ".coopmat.16x16x16"
  int64_t tile = 64;
  int64_t depth = 32;
  bool cooperative = false;
};
// f16 on tensor cores where the device has them, else the 128-wide tiles where the device's
// matmul_tile is 128, else the 64-wide ones; a result narrower than 64 rows or columns always
// takes the 64-wide tiles (a 128-wide one would be mostly padding).
GemmKernel choose_gemm_kernel(const OpContext& ctx, uint32_t dtype, int64_t rows, int64_t columns);

// ParamBlock::mode bits of the cooperative-matrix form (gemm_coopmat.glsl): A's row axis, B's
// column axis have unit stride (neighbouring invocations then fill the tiles from neighbouring
// elements).
constexpr uint32_t kRowsFastA = 1u << 18;
constexpr uint32_t kColumnsFastB = 1u << 19;

// run_shader of `shader` + kernel.suffix over a rows x columns result (the dispatch's y and x).
// Where the cooperative-matrix pipeline cannot be created, the device stops using tensor cores
// (VulkanDevice::refuse_cooperative_matrix, with cooperative_matrix auto) and the call runs the
// shader kernel instead; with cooperative_matrix on, the error is returned.
Status run_gemm(const OpContext& ctx, const std::string& shader, const GemmKernel& kernel,
                const ParamBlock& params, std::span<const BufferBinding> tensors, int64_t rows,
                int64_t columns, uint32_t groups_z);

// Bit of ParamBlock::mode (ONE_INVOCATION_PER_ROW in shaders/common.glsl): row-wise shaders walk
// each row with one invocation instead of one workgroup.
constexpr uint32_t kOneInvocationPerRow = 1u << 16;

// For a row-wise shader over `rows` rows of `row_length` elements: rows of at most 256 elements
// are walked by one invocation each (a workgroup per row would idle most of its invocations and
// pay its barriers for little work), longer ones by a workgroup each. Sets the bit in
// params->mode and returns the number of workgroups to dispatch.
uint32_t choose_row_strategy(int64_t rows, int64_t row_length, ParamBlock* params);

// Looks up (or creates) the pipeline `module` specialised on params.mode (see PipelineCache) and
// records one dispatch.
Status run_shader(const OpContext& ctx, const std::string& module, const ParamBlock& params,
                  std::span<const BufferBinding> tensors, uint32_t groups_x, uint32_t groups_y = 1,
                  uint32_t groups_z = 1);

// A temporary f32 buffer for an op's intermediate results. Released (to the pool's cache) by the
// destructor; the queue orders any reuse after the dispatches recorded here.
class ScratchBuffer {
 public:
  explicit ScratchBuffer(VulkanDevice& device) : device_(device) {}
  ~ScratchBuffer();
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  Status allocate(uint64_t size_bytes);
  // A contiguous f32 tensor over the whole buffer with the given shape.
  sy_tensor_desc f32_tensor(std::span<const int64_t> shape) const;

 private:
  VulkanDevice& device_;
  struct DeviceBlock* block_ = nullptr;
};

}  // namespace sy_vk
