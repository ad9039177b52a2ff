#include "op_context.h"

#include <algorithm>
#include <limits>

#include "device.h"
#include "memory_pool.h"
#include "pipeline_cache.h"

namespace sy_vk {

const char* op_name(uint32_t op) {
  return sy_op_name(op);
}

const char* dtype_name(uint32_t dtype) {
  return sy_dtype_name(dtype);
}

uint64_t dtype_size(uint32_t dtype) {
  return sy_dtype_size(dtype);
}

const char* float_variant(uint32_t dtype) {
  return dtype_name(dtype);
}

std::string shape_text(const sy_tensor_desc& desc) {
  std::string text = "[";
  for (uint32_t d = 0; d < desc.rank && d < SY_MAX_RANK; ++d) {
    if (d != 0) text += ", ";
    text += std::to_string(desc.shape[d]);
  }
  return text + "]";
}

int64_t element_count(const sy_tensor_desc& desc) {
  int64_t count = 1;
  for (uint32_t d = 0; d < desc.rank && d < SY_MAX_RANK; ++d) count *= desc.shape[d];
  return count;
}

void set_contiguous_strides(sy_tensor_desc* desc) {
  int64_t stride = 1;
  for (int d = static_cast<int>(desc->rank) - 1; d >= 0; --d) {
    desc->strides[d] = stride;
    stride *= std::max<int64_t>(desc->shape[d], 1);
  }
}

Status check_counts(const OpContext& ctx, uint32_t inputs, uint32_t outputs) {
  if (ctx.call.num_inputs == inputs && ctx.call.num_outputs == outputs) return ok_status();
  return invalid_argument(std::string(op_name(ctx.call.op)) + ": expected " +
                          std::to_string(inputs) + " inputs and " + std::to_string(outputs) +
                          " outputs, got " + std::to_string(ctx.call.num_inputs) + " and " +
                          std::to_string(ctx.call.num_outputs));
}

Status check_float_dtype(const OpContext& ctx, uint32_t dtype, const char* role) {
  const std::string op = op_name(ctx.call.op);
  if (!is_float_dtype(dtype)) {
    return invalid_argument(op + ": " + role + " must be f32, f16 or bf16, got " +
                            dtype_name(dtype));
  }
  if ((dtype == SY_DTYPE_F16 && !ctx.device.supports_f16()) ||
      (dtype == SY_DTYPE_BF16 && !ctx.device.supports_bf16())) {
    return unimplemented(op + " " + dtype_name(dtype) + " on vulkan device " +
                         ctx.device.physical().properties.deviceName +
                         ": the device lacks 16-bit storage buffers" +
                         (dtype == SY_DTYPE_F16 ? " or shaderFloat16" : ""));
  }
  return ok_status();
}

Status check_same_dtype(const OpContext& ctx, std::initializer_list<const sy_tensor_desc*> tensors,
                        std::initializer_list<const char*> roles) {
  const sy_tensor_desc* first = *tensors.begin();
  const char* first_role = *roles.begin();
  auto role = roles.begin();
  for (const sy_tensor_desc* tensor : tensors) {
    if (tensor->dtype != first->dtype) {
      return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + *role + " is " +
                              dtype_name(tensor->dtype) + " but " + first_role + " is " +
                              dtype_name(first->dtype));
    }
    ++role;
  }
  return ok_status();
}

Status check_same_shape(const OpContext& ctx, const sy_tensor_desc& a, const char* a_role,
                        const sy_tensor_desc& b, const char* b_role) {
  bool same = a.rank == b.rank;
  for (uint32_t d = 0; same && d < a.rank; ++d) same = a.shape[d] == b.shape[d];
  if (same) return ok_status();
  return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + a_role + " " + shape_text(a) +
                          " and " + b_role + " " + shape_text(b) + " must have the same shape");
}

Status check_shape(const OpContext& ctx, const sy_tensor_desc& t, const char* role,
                   std::initializer_list<int64_t> shape) {
  if (t.rank == shape.size() && std::equal(shape.begin(), shape.end(), t.shape)) {
    return ok_status();
  }
  std::string wanted = "[";
  for (const int64_t extent : shape) {
    wanted += (wanted.size() > 1 ? ", " : "") + std::to_string(extent);
  }
  return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " " + shape_text(t) +
                          " should be " + wanted + "]");
}

namespace {

bool is_row_major(const sy_tensor_desc& desc) {
  int64_t expected = 1;
  for (int d = static_cast<int>(desc.rank) - 1; d >= 0; --d) {
    if (desc.shape[d] != 1 && desc.strides[d] != expected) return false;
    expected *= desc.shape[d];
  }
  return true;
}

Status check_layout(const OpContext& ctx, const sy_tensor_desc& desc, const char* role,
                    uint64_t* extent_elements) {
  const std::string what = std::string(op_name(ctx.call.op)) + ": " + role;
  if (desc.rank > SY_MAX_RANK) {
    return invalid_argument(what + " has rank " + std::to_string(desc.rank) + " > 8");
  }
  if (dtype_size(desc.dtype) == 0) {
    return invalid_argument(what + " has unknown dtype " + std::to_string(desc.dtype));
  }
  uint64_t extent = 1;
  bool empty = false;
  for (uint32_t d = 0; d < desc.rank; ++d) {
    if (desc.shape[d] < 0 || desc.strides[d] < 0) {
      return invalid_argument(what + " has a negative size or stride: shape " + shape_text(desc));
    }
    if (desc.shape[d] > std::numeric_limits<int32_t>::max() ||
        desc.strides[d] > std::numeric_limits<int32_t>::max()) {
      return unimplemented(what + " " + shape_text(desc) +
                           ": sizes and strides above 2^31 are not supported by the vulkan plugin");
    }
    if (desc.shape[d] == 0) empty = true;
    extent += static_cast<uint64_t>(desc.shape[d] - 1) * static_cast<uint64_t>(desc.strides[d]);
  }
  *extent_elements = empty ? 0 : extent;
  if (element_count(desc) > std::numeric_limits<int32_t>::max()) {
    return unimplemented(what + " " + shape_text(desc) + " has more than 2^31 elements");
  }
  return ok_status();
}

}  // namespace

Status bind_tensor(const OpContext& ctx, const sy_tensor_desc& desc, const char* role,
                   BufferBinding* binding, GpuTensor* gpu) {
  const std::string what = std::string(op_name(ctx.call.op)) + ": " + role;
  auto* block = reinterpret_cast<DeviceBlock*>(desc.buffer);
  if (block == nullptr || !ctx.device.pool().owns(block)) {
    return invalid_argument(what + " does not name a live buffer of this vulkan device");
  }
  uint64_t extent = 0;
  SY_VK_RETURN_IF_ERROR(check_layout(ctx, desc, role, &extent));
  const uint64_t element_bytes = dtype_size(desc.dtype);
  if (desc.offset_bytes % element_bytes != 0) {
    return invalid_argument(what + " offset " + std::to_string(desc.offset_bytes) +
                            " is not a multiple of the " + dtype_name(desc.dtype) +
                            " element size " + std::to_string(element_bytes));
  }
  const uint64_t end_bytes = desc.offset_bytes + extent * element_bytes;
  if (extent != 0 && end_bytes > block->requested_bytes) {
    return invalid_argument(what + " " + shape_text(desc) + " " + dtype_name(desc.dtype) +
                            " at offset " + std::to_string(desc.offset_bytes) + " needs " +
                            std::to_string(end_bytes) + " bytes but its buffer has " +
                            std::to_string(block->requested_bytes));
  }
  const VkPhysicalDeviceLimits& limits = ctx.device.limits();
  const uint64_t alignment = std::max<uint64_t>(limits.minStorageBufferOffsetAlignment, 4);
  const uint64_t start = desc.offset_bytes / alignment * alignment;
  uint64_t range = block->capacity_bytes - start;
  if (range > limits.maxStorageBufferRange) range = limits.maxStorageBufferRange / 4 * 4;
  if (end_bytes > start + range) {
    return unimplemented(what + " spans " + std::to_string(end_bytes - start) +
                         " bytes, more than this device's maxStorageBufferRange " +
                         std::to_string(limits.maxStorageBufferRange));
  }
  *binding = {block, start, range};
  const uint64_t unit = element_bytes == 2 ? 2 : 4;
  gpu->offset = static_cast<uint32_t>((desc.offset_bytes - start) / unit);
  gpu->rank = desc.rank;
  gpu->numel = static_cast<uint32_t>(element_count(desc));
  gpu->contiguous = is_row_major(desc) ? 1u : 0u;
  for (uint32_t d = 0; d < 8; ++d) {
    gpu->shape[d] = d < desc.rank ? static_cast<int32_t>(desc.shape[d]) : 1;
    gpu->strides[d] = d < desc.rank ? static_cast<int32_t>(desc.strides[d]) : 0;
  }
  return ok_status();
}

uint32_t groups_for(uint64_t items) {
  const uint64_t groups = (items + kWorkgroupSize - 1) / kWorkgroupSize;
  return static_cast<uint32_t>(std::clamp<uint64_t>(groups, 1, 65535));
}

uint32_t choose_row_strategy(int64_t rows, int64_t row_length, ParamBlock* params) {
  constexpr int64_t kShortRow = 256;
  if (row_length <= kShortRow) {
    params->mode |= kOneInvocationPerRow;
    return groups_for(static_cast<uint64_t>(rows));
  }
  params->mode &= ~kOneInvocationPerRow;
  return static_cast<uint32_t>(std::clamp<int64_t>(rows, 1, 65535));
}

uint32_t gemm_groups(int64_t extent, int64_t tile) {
  return static_cast<uint32_t>(std::clamp<int64_t>((extent + tile - 1) / tile, 1, 65535));
}

GemmKernel choose_gemm_kernel(const OpContext& ctx, uint32_t dtype, int64_t rows, int64_t columns) {
  constexpr int64_t kNarrow = 64;
  GemmKernel kernel;
  if (rows < kNarrow || columns < kNarrow) return kernel;
  const CooperativeMatrixShape* shape = ctx.device.cooperative_matrix();
  if (shape != nullptr && dtype == SY_DTYPE_F16) {
    kernel.suffix = ".coopmat." + shape->text();
    kernel.tile = 128;  // GEMM_BM = GEMM_BN, GEMM_BK in gemm_coopmat.glsl
    kernel.depth = 32;
    kernel.cooperative = true;
  } else if (ctx.device.matmul_tile() == 128) {
    kernel.suffix = ".wide";
    kernel.tile = 128;  // GEMM_WIDE in gemm_tile.glsl
    kernel.depth = 16;
  }
  return kernel;
}

Status run_gemm(const OpContext& ctx, const std::string& shader, const GemmKernel& kernel,
                const ParamBlock& params, std::span<const BufferBinding> tensors, int64_t rows,
                int64_t columns, uint32_t groups_z) {
  const auto tensor_count = static_cast<uint32_t>(tensors.size());
  const Pipeline* pipeline = nullptr;
  Status built =
      ctx.device.pipelines().get(shader + kernel.suffix, tensor_count, params.mode, &pipeline);
  if (!built.ok() && kernel.cooperative &&
      ctx.device.options().cooperative_matrix != DeviceOptions::CooperativeMatrix::kOn) {
    // Refused, the device has no cooperative shape any more: the choice for f16 is a shader form.
    ctx.device.refuse_cooperative_matrix(built.message());
    ParamBlock plain_params = params;
    plain_params.mode &= ~(kRowsFastA | kColumnsFastB);
    return run_gemm(ctx, shader, choose_gemm_kernel(ctx, SY_DTYPE_F16, rows, columns), plain_params,
                    tensors, rows, columns, groups_z);
  }
  SY_VK_RETURN_IF_ERROR(built);
  ctx.device.count_gemm(kernel.cooperative);
  return ctx.queue.dispatch(*pipeline, &params, sizeof(params), tensors,
                            gemm_groups(columns, kernel.tile), gemm_groups(rows, kernel.tile),
                            groups_z);
}

Status run_shader(const OpContext& ctx, const std::string& module, const ParamBlock& params,
                  std::span<const BufferBinding> tensors, uint32_t groups_x, uint32_t groups_y,
                  uint32_t groups_z) {
  const Pipeline* pipeline = nullptr;
  SY_VK_RETURN_IF_ERROR(ctx.device.pipelines().get(module, static_cast<uint32_t>(tensors.size()),
                                                   params.mode, &pipeline));
  return ctx.queue.dispatch(*pipeline, &params, sizeof(params), tensors, groups_x, groups_y,
                            groups_z);
}

ScratchBuffer::~ScratchBuffer() {
  if (block_ != nullptr) device_.pool().release(block_);
}

Status ScratchBuffer::allocate(uint64_t size_bytes) {
  return device_.pool().allocate(std::max<uint64_t>(size_bytes, 4), &block_);
}

sy_tensor_desc ScratchBuffer::f32_tensor(std::span<const int64_t> shape) const {
  sy_tensor_desc desc{};
  desc.buffer = reinterpret_cast<sy_buffer>(block_);
  desc.dtype = SY_DTYPE_F32;
  desc.rank = static_cast<uint32_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) desc.shape[d] = shape[d];
  set_contiguous_strides(&desc);
  return desc;
}

}  // namespace sy_vk
