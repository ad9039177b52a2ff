#include "op_context.h"

#include "error.h"
#include "memory_pool.h"

namespace sy_reference {

const char* op_name(uint32_t op) {
  return sy_op_name(op);
}

TensorRef tensor_from_desc(const sy_tensor_desc& desc) {
  TensorRef tensor;
  tensor.dtype = static_cast<sy_dtype>(desc.dtype);
  tensor.shape.rank = desc.rank;
  for (uint32_t axis = 0; axis < desc.rank; ++axis) {
    tensor.shape.dims[axis] = desc.shape[axis];
    tensor.strides[axis] = desc.strides[axis];
  }
  if (desc.buffer != nullptr) tensor.data = desc.buffer->data + desc.offset_bytes;
  return tensor;
}

TensorRef OpContext::input(uint32_t index) const {
  return tensor_from_desc(call.inputs[index]);
}

TensorRef OpContext::output(uint32_t index) const {
  return tensor_from_desc(call.outputs[index]);
}

std::string describe(const char* role, const TensorRef& tensor) {
  return std::string(role) + " " + dtype_name(tensor.dtype) + " " + tensor.shape.to_string();
}

void fail(const OpContext& ctx, const std::string& detail) {
  raise(SY_STATUS_INVALID_ARGUMENT, std::string(ctx.name) + ": " + detail);
}

void require_io_counts(const OpContext& ctx, uint32_t inputs, uint32_t outputs) {
  if (ctx.call.num_inputs != inputs || ctx.call.num_outputs != outputs) {
    fail(ctx, "expects " + std::to_string(inputs) + " input(s) and " + std::to_string(outputs) +
                  " output(s) with these params, got " + std::to_string(ctx.call.num_inputs) +
                  " and " + std::to_string(ctx.call.num_outputs));
  }
}

void require_float(const OpContext& ctx, const char* role, const TensorRef& tensor) {
  if (!is_float_dtype(tensor.dtype)) {
    fail(ctx, describe(role, tensor) + ": expected a floating-point dtype (f32, f16 or bf16)");
  }
}

void require_index(const OpContext& ctx, const char* role, const TensorRef& tensor) {
  if (!is_index_dtype(tensor.dtype)) {
    fail(ctx, describe(role, tensor) + ": expected an integer dtype (i32 or i64)");
  }
}

void require_same_dtype(const OpContext& ctx, const char* role, const TensorRef& tensor,
                        const char* reference_role, const TensorRef& reference) {
  if (tensor.dtype != reference.dtype) {
    fail(ctx,
         describe(role, tensor) + " must have the dtype of " + describe(reference_role, reference));
  }
}

void require_rank(const OpContext& ctx, const char* role, const TensorRef& tensor, uint32_t rank,
                  const char* layout) {
  if (tensor.shape.rank != rank) {
    fail(ctx, std::string(role) + " must have rank " + std::to_string(rank) + " " + layout +
                  " but is " + describe(role, tensor));
  }
}

void require_shape(const OpContext& ctx, const char* role, const TensorRef& tensor,
                   const Shape& expected) {
  if (!(tensor.shape == expected)) {
    fail(ctx, std::string(role) + " has shape " + tensor.shape.to_string() + " but " +
                  expected.to_string() + " was expected");
  }
}

Shape broadcast_shapes(const OpContext& ctx, const char* role_a, const Shape& a, const char* role_b,
                       const Shape& b) {
  Shape result;
  result.rank = a.rank > b.rank ? a.rank : b.rank;
  for (uint32_t i = 0; i < result.rank; ++i) {
    const int64_t size_a = i < a.rank ? a.dims[a.rank - 1 - i] : 1;
    const int64_t size_b = i < b.rank ? b.dims[b.rank - 1 - i] : 1;
    if (size_a != size_b && size_a != 1 && size_b != 1) {
      fail(ctx, std::string("shapes do not broadcast: ") + role_a + " " + a.to_string() + " vs " +
                    role_b + " " + b.to_string());
    }
    result.dims[result.rank - 1 - i] = size_a == 1 ? size_b : size_a;
  }
  return result;
}

void require_axis(const OpContext& ctx, const char* param, int64_t axis, const TensorRef& tensor) {
  if (axis < 0 || axis >= static_cast<int64_t>(tensor.shape.rank)) {
    fail(ctx, std::string(param) + " = " + std::to_string(axis) + " is not an axis of rank-" +
                  std::to_string(tensor.shape.rank) + " tensor " + tensor.shape.to_string());
  }
}

}  // namespace sy_reference
