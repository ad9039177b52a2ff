// One op call as the op implementations see it, and the checks they share.
//
// Every check raises INVALID_ARGUMENT with a message that starts with the op's name and names the
// tensors by their role ("CONV2D: w must have rank 4 [O, C, KH, KW] but is f32 [3, 3]").
#pragma once

#include <cstdint>
#include <string>

#include "switchyard/plugin_abi.h"
#include "tensor.h"

namespace sy_reference {

const char* op_name(uint32_t op);  // "MATMUL", or "UNKNOWN_OP" beyond the op set

struct OpContext {
  const sy_op_call& call;
  sy_op op;
  const char* name;

  TensorRef input(uint32_t index) const;
  TensorRef output(uint32_t index) const;
  const sy_op_params& params() const { return call.params; }
};

TensorRef tensor_from_desc(const sy_tensor_desc& desc);

// "x f32 [2, 3]"
std::string describe(const char* role, const TensorRef& tensor);

[[noreturn]] void fail(const OpContext& ctx, const std::string& detail);
void require_io_counts(const OpContext& ctx, uint32_t inputs, uint32_t outputs);
void require_float(const OpContext& ctx, const char* role, const TensorRef& tensor);
void require_index(const OpContext& ctx, const char* role, const TensorRef& tensor);
void require_same_dtype(const OpContext& ctx, const char* role, const TensorRef& tensor,
                        const char* reference_role, const TensorRef& reference);
void require_rank(const OpContext& ctx, const char* role, const TensorRef& tensor, uint32_t rank,
                  const char* layout);
void require_shape(const OpContext& ctx, const char* role, const TensorRef& tensor,
                   const Shape& expected);
// numpy broadcast of two shapes (right-aligned); raises naming both when they do not broadcast.
Shape broadcast_shapes(const OpContext& ctx, const char* role_a, const Shape& a, const char* role_b,
                       const Shape& b);
// Raises unless distinct elements of a tensor the op writes are distinct memory (dispatch.cpp).
void require_no_self_overlap(const OpContext& ctx, const sy_tensor_desc& desc,
                             const std::string& role);
// An axis parameter in [0, rank).
void require_axis(const OpContext& ctx, const char* param, int64_t axis, const TensorRef& tensor);

}  // namespace sy_reference
