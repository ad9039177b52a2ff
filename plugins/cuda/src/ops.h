// The ops of the CUDA plugin. Each family validates its call (docs/ops.md) and enqueues its
// kernels on the call's queue; nothing here waits for the GPU.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "allocator.h"
#include "device.h"
#include "geometry.h"
#include "kernels.h"
#include "status.h"
#include "switchyard/plugin_abi.h"

namespace sy_cuda {

// One op call on one queue: what every op function receives.
struct OpContext {
  CudaDevice& device;
  CudaQueue& queue;
  const sy_op_call& call;
  const char* name;  // "ADD", for messages

  static CudaBuffer* buffer_of(const sy_tensor_desc& t) {
    return reinterpret_cast<CudaBuffer*>(t.buffer);
  }
  uint64_t address(const sy_tensor_desc& t) const { return buffer_of(t)->ptr + t.offset_bytes; }
  const sy_tensor_desc& in(uint32_t i) const { return call.inputs[i]; }
  const sy_tensor_desc& out(uint32_t i) const { return call.outputs[i]; }

  // While the queue captures, the launch becomes a graph node (graph.h) and is noted.
  template <typename Args>
  Status launch(Kernel kernel, const LaunchShape& shape, const Args& args) const {
    SY_CUDA_RETURN_IF_ERROR(device.kernels.launch(kernel, shape, queue.stream, args));
    if (queue.capture != nullptr) {
      queue.capture->note_launch(*device.api, queue.stream, device.kernels.function(kernel), shape,
                                 &args, sizeof(Args));
    }
    return ok_status();
  }
  LaunchShape linear(int64_t work_items, uint32_t threads = 256) const {
    return linear_launch(work_items, threads, device.max_blocks());
  }

  // A temporary device buffer for this op, ordered on this queue. Release it right after the
  // kernels that use it are enqueued: the pool keeps it until the queue has passed them. While
  // the queue captures, the graph keeps it instead (its replays write it again); while a call is
  // re-run for graph_update, scratch is refused (its address would differ from the captured one).
  Status scratch(uint64_t bytes, CudaBuffer** out) const;
  void release(CudaBuffer* buffer) const;
  // Orders `buffer` on this queue (CachingAllocator::use_on), or notes it for the graph's launches.
  Status use(CudaBuffer* buffer) const;
};

// Shared checks; messages start with the op name.
Status expect_counts(const OpContext& ctx, uint32_t inputs, uint32_t outputs);
// Every listed tensor has a floating dtype, all the same.
Status expect_float_same(const OpContext& ctx,
                         std::initializer_list<const sy_tensor_desc*> tensors);
Status expect_same_shape(const OpContext& ctx, const sy_tensor_desc& a, const char* a_name,
                         const sy_tensor_desc& b, const char* b_name);

// Building blocks that several families enqueue.
// out = in0 (op) in1 with numpy broadcasting of both inputs to out's shape.
Status enqueue_binary(const OpContext& ctx, int32_t op, const sy_tensor_desc& out,
                      const sy_tensor_desc& in0, const sy_tensor_desc* in1, float scalar);
// out = fill value (converted to out's dtype as FILL does).
Status enqueue_fill(const OpContext& ctx, const sy_tensor_desc& out, double value);
// out = in, any dtypes, same shape (in may also be broadcast to out's shape).
Status enqueue_copy(const OpContext& ctx, const sy_tensor_desc& out, uint64_t out_address,
                    const sy_tensor_desc& in, uint64_t in_address);
// A contiguous f32 tensor of `like`'s shape at the start of `buffer`, for scratch copies.
sy_tensor_desc contiguous_f32(const sy_tensor_desc& like, sy_buffer buffer);
// A row-major tensor of `shape` and `dtype` at `offset_bytes` into `buffer` (a scratch CudaBuffer
// cast to sy_buffer, or a call's tensor's buffer for a view of it).
sy_tensor_desc dense_desc(sy_buffer buffer, uint64_t offset_bytes, uint32_t dtype, uint32_t rank,
                          const int64_t* shape);
sy_tensor_desc dense_desc(sy_buffer buffer, uint64_t offset_bytes, uint32_t dtype,
                          std::initializer_list<int64_t> shape);
// INVALID_ARGUMENT naming the op, the role and both shapes unless t has exactly `shape`.
Status expect_shape(const OpContext& ctx, const sy_tensor_desc& t, const char* role,
                    std::initializer_list<int64_t> shape);
// out = a b (b^T with transpose_b) as a MATMUL of its own (cuBLASLt or the tiled kernel), for ops
// that run as products: `name` labels it in messages ("CONV2D (as MATMUL)").
Status run_product(const OpContext& ctx, const sy_tensor_desc& a, const sy_tensor_desc& b,
                   const sy_tensor_desc& out, bool transpose_b, const char* name);

// Op families.
Status run_elementwise(const OpContext& ctx);    // 1-23
Status run_reduce(const OpContext& ctx);         // 24-27
Status run_softmax(const OpContext& ctx);        // 28-31
Status run_cross_entropy(const OpContext& ctx);  // 32-33
Status run_conv(const OpContext& ctx);           // 34-36
Status run_pool(const OpContext& ctx);           // 37-40
Status run_layer_norm(const OpContext& ctx);     // 41-42
Status run_index(const OpContext& ctx);          // 43-44
Status run_copy(const OpContext& ctx);           // 45
Status run_fill(const OpContext& ctx);           // 46
Status run_random(const OpContext& ctx);         // 47-48
Status run_optimizer(const OpContext& ctx);      // 49-50
Status run_lstm_cell(const OpContext& ctx);      // 51-52
Status run_lstm_sequence(const OpContext& ctx);  // 56, f32
Status run_matmul(const OpContext& ctx);         // 0

}  // namespace sy_cuda
