// Tensor geometry on the host: names for messages, descriptor checks, numpy broadcasting, and
// the coalescing of iteration spaces that lets most elementwise launches run with rank 1.
//
// Nothing here touches CUDA, so tests/cuda compiles this file directly and checks it without a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "../kernels/kernel_args.h"
#include "status.h"
#include "switchyard/plugin_abi.h"
#include "switchyard/plugin_support/dtype_codec.h"

namespace sy_cuda {

size_t element_size(uint32_t dtype);
const char* dtype_name(uint32_t dtype);
const char* op_name(uint32_t op);
using sy_support::is_float_dtype;  // switchyard/plugin_support/dtype_codec.h

std::string shape_text(uint32_t rank, const int64_t* shape);  // "[2, 3]"
std::string shape_text(const sy_tensor_desc& t);
std::string describe(const sy_tensor_desc& t);  // "bf16 [2, 3] strides [3, 1]"
int64_t numel(const sy_tensor_desc& t);
bool same_shape(const sy_tensor_desc& a, const sy_tensor_desc& b);

// Rank, non-negative shape and strides, dtype, alignment of offset_bytes, the extent inside a
// buffer of `buffer_size` bytes, and for outputs no stride 0 on an axis of size > 1.
Status check_tensor(const char* op, const char* role, const sy_tensor_desc& t, uint64_t buffer_size,
                    bool is_output);

// numpy broadcasting of `in` to (rank, shape): fills `strides` (length rank) with in's strides,
// 0 for a size-1 or missing axis. False when the shapes are not compatible.
bool broadcast_strides(const sy_tensor_desc& in, uint32_t rank, const int64_t* shape,
                       int64_t* strides);

// The numpy broadcast of two shapes into (rank, shape); false when incompatible.
bool broadcast_shapes(uint32_t rank_a, const int64_t* shape_a, uint32_t rank_b,
                      const int64_t* shape_b, uint32_t* rank, int64_t* shape);

// An iteration space over `shape`; operands are filled by the caller.
SyIter make_iter(uint32_t rank, const int64_t* shape);

// Drops size-1 axes and merges neighbouring axes that are contiguous in every operand, keeping
// the row-major order of positions (so a linear index keeps its meaning), then sets index32.
void coalesce(SyIter* iter, SyOperand* const* operands, int count);

SyOperand operand(uint64_t data, uint32_t dtype, const int64_t* strides, uint32_t rank);

// The whole tensor as a kernel argument.
SyTensorArg tensor_arg(uint64_t data, const sy_tensor_desc& t);
// A view of some axes of t (in the given order), e.g. the leading axes of a layer-norm input.
SyTensorArg axes_view(uint64_t data, const sy_tensor_desc& t, const int* axes, int count);

// FILL's integer value for an I32/I64 output: truncation toward zero, NaN -> 0, values beyond
// the dtype's range saturate (the reference's and the vulkan plugin's choice), so that an I32
// fill never wraps.
int64_t fill_integer(double value, uint32_t dtype);

// Threads per cooperating group for a reduction of `length` elements: 32 for short rows up to 1024.
int group_size_for(int64_t length);

}  // namespace sy_cuda
