#include <algorithm>

#include "ops.h"

namespace sy_cuda {

Status OpContext::scratch(uint64_t bytes, CudaBuffer** out) const {
  if (queue.capture != nullptr && queue.capture->updating) {
    return unimplemented(std::string(name) + " allocates scratch, which a captured graph's call " +
                         "cannot take anew");
  }
  SY_CUDA_RETURN_IF_ERROR(device.allocator->allocate(bytes, out));
  const Status status = use(*out);
  if (!status.ok()) {
    device.allocator->release(*out);
    *out = nullptr;
  }
  return status;
}

void OpContext::release(CudaBuffer* buffer) const {
  if (queue.capture != nullptr) {
    queue.capture->held.push_back(buffer);
  } else {
    device.allocator->release(buffer);
  }
}

Status OpContext::use(CudaBuffer* buffer) const {
  if (queue.capture == nullptr) return device.allocator->use_on(buffer, queue.stream);
  // Nothing runs while capturing: each launch of the graph orders its buffers (graph.cpp).
  queue.capture->note_buffer(buffer);
  return ok_status();
}

Status expect_counts(const OpContext& ctx, uint32_t inputs, uint32_t outputs) {
  if (ctx.call.num_inputs == inputs && ctx.call.num_outputs == outputs) return ok_status();
  return invalid_argument(std::string(ctx.name) + ": expected " + std::to_string(inputs) +
                          " input(s) and " + std::to_string(outputs) + " output(s), got " +
                          std::to_string(ctx.call.num_inputs) + " and " +
                          std::to_string(ctx.call.num_outputs));
}

Status expect_float_same(const OpContext& ctx,
                         std::initializer_list<const sy_tensor_desc*> tensors) {
  const sy_tensor_desc* first = *tensors.begin();
  for (const sy_tensor_desc* t : tensors) {
    if (!is_float_dtype(t->dtype) || t->dtype != first->dtype) {
      return invalid_argument(std::string(ctx.name) +
                              ": floating-point tensors must share one of f32/f16/bf16, got " +
                              describe(*first) + " and " + describe(*t));
    }
  }
  return ok_status();
}

Status expect_same_shape(const OpContext& ctx, const sy_tensor_desc& a, const char* a_name,
                         const sy_tensor_desc& b, const char* b_name) {
  if (same_shape(a, b)) return ok_status();
  return invalid_argument(std::string(ctx.name) + ": " + a_name + " " + shape_text(a) + " and " +
                          b_name + " " + shape_text(b) + " must have the same shape");
}

Status enqueue_binary(const OpContext& ctx, int32_t op, const sy_tensor_desc& out,
                      const sy_tensor_desc& in0, const sy_tensor_desc* in1, float scalar) {
  SyElementwiseArgs args{};
  args.iter = make_iter(out.rank, out.shape);
  if (args.iter.numel == 0) return ok_status();
  int64_t strides[SY_MAX_RANK] = {};
  args.out = operand(ctx.address(out), out.dtype, out.strides, out.rank);
  if (!broadcast_strides(in0, out.rank, out.shape, strides)) {
    return invalid_argument(std::string(ctx.name) + ": " + shape_text(in0) +
                            " does not broadcast to " + shape_text(out));
  }
  args.in0 = operand(ctx.address(in0), in0.dtype, strides, out.rank);
  if (in1 != nullptr) {
    if (!broadcast_strides(*in1, out.rank, out.shape, strides)) {
      return invalid_argument(std::string(ctx.name) + ": " + shape_text(*in1) +
                              " does not broadcast to " + shape_text(out));
    }
    args.in1 = operand(ctx.address(*in1), in1->dtype, strides, out.rank);
  } else {
    args.in1 = args.in0;  // never read; keeps coalescing from splitting on garbage strides
    args.use_scalar = 1;
    args.scalar = scalar;
  }
  args.op = op;
  SyOperand* ops[3] = {&args.out, &args.in0, &args.in1};
  coalesce(&args.iter, ops, 3);
  return ctx.launch(Kernel::sy_elementwise, ctx.linear(args.iter.numel), args);
}

Status enqueue_fill(const OpContext& ctx, const sy_tensor_desc& out, double value) {
  SyFillArgs args{};
  args.iter = make_iter(out.rank, out.shape);
  if (args.iter.numel == 0) return ok_status();
  args.out = operand(ctx.address(out), out.dtype, out.strides, out.rank);
  args.float_value = static_cast<float>(value);
  // Saturated to out's integer dtype: the kernel keeps the low 32 bits for I32.
  args.int_value = fill_integer(value, out.dtype);
  SyOperand* ops[1] = {&args.out};
  coalesce(&args.iter, ops, 1);
  return ctx.launch(Kernel::sy_fill, ctx.linear(args.iter.numel), args);
}

Status enqueue_copy(const OpContext& ctx, const sy_tensor_desc& out, uint64_t out_address,
                    const sy_tensor_desc& in, uint64_t in_address) {
  SyCopyArgs args{};
  args.iter = make_iter(out.rank, out.shape);
  if (args.iter.numel == 0) return ok_status();
  int64_t strides[SY_MAX_RANK] = {};
  if (!broadcast_strides(in, out.rank, out.shape, strides)) {
    return invalid_argument(std::string(ctx.name) + ": " + shape_text(in) + " does not match " +
                            shape_text(out));
  }
  args.out = operand(out_address, out.dtype, out.strides, out.rank);
  args.in = operand(in_address, in.dtype, strides, out.rank);
  SyOperand* ops[2] = {&args.out, &args.in};
  coalesce(&args.iter, ops, 2);
  return ctx.launch(Kernel::sy_copy, ctx.linear(args.iter.numel), args);
}

sy_tensor_desc dense_desc(sy_buffer buffer, uint64_t offset_bytes, uint32_t dtype, uint32_t rank,
                          const int64_t* shape) {
  sy_tensor_desc t{};
  t.buffer = buffer;
  t.offset_bytes = offset_bytes;
  t.dtype = dtype;
  t.rank = rank;
  int64_t stride = 1;
  for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
    t.shape[d] = shape[d];
    t.strides[d] = stride;
    stride *= shape[d];
  }
  return t;
}

sy_tensor_desc dense_desc(sy_buffer buffer, uint64_t offset_bytes, uint32_t dtype,
                          std::initializer_list<int64_t> shape) {
  return dense_desc(buffer, offset_bytes, dtype, static_cast<uint32_t>(shape.size()),
                    shape.begin());
}

sy_tensor_desc contiguous_f32(const sy_tensor_desc& like, sy_buffer buffer) {
  return dense_desc(buffer, 0, SY_DTYPE_F32, like.rank, like.shape);
}

Status expect_shape(const OpContext& ctx, const sy_tensor_desc& t, const char* role,
                    std::initializer_list<int64_t> shape) {
  if (t.rank == shape.size() && std::equal(shape.begin(), shape.end(), t.shape)) {
    return ok_status();
  }
  return invalid_argument(std::string(ctx.name) + ": " + role + " " + shape_text(t) +
                          " should be " +
                          shape_text(static_cast<uint32_t>(shape.size()), shape.begin()));
}

}  // namespace sy_cuda
