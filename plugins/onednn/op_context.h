// OpContext: one dispatched call, resolved: its device and queue, its tensors as checked views,
// and the validation helpers every op family uses to produce specific error messages.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "device.h"
#include "error.h"
#include "tensor_view.h"

namespace sy_onednn {

// How much work each extra thread must get before an op runs in parallel: about 8-16 us of it
// at in-cache speed. Inside a model the OpenMP workers are awake (the op before was a parallel
// oneDNN primitive, and libgomp spins a while before it sleeps), so a split costs a microsecond
// or two, and an op's inputs often come from L3 or the other core's cache (the product before
// wrote half of them), where one thread streams far below the in-cache rate. BERT at batch 1
// (2-core Zen 4, 2 threads, `bench model --profile`): its [128, 768] residual adds, layer norms
// and head-merging copies took 36, 47 and 28 us a call on one thread, 25, 26 and 15 on two, and
// on a host whose other tenants loaded memory 170, 163 and 137 on one thread. On a busy machine
// adaptive_threads drops back to one thread (waking a descheduled worker costs a time slice).
// Until 2026-11-29 they were 262144, 65536 and 32768 elements.
constexpr int64_t kMinMemoryBoundElements = 32768;    // plain loops, ~0.25 ns per element
constexpr int64_t kMinRowElements = 16384;            // softmax, pooling, norms: ~0.5-1 ns each
constexpr int64_t kMinTranscendentalElements = 8192;  // libm exp/erf/log, Philox: ~1-5 ns
// Matmul and convolution: oneDNN's kernels split even small products well. 16 MFLOP kept every
// product of digits-mlp (64-256-256-10, batch 64) on one thread; 2 MFLOP made its epoch 8.7 -> 7.6
// ms on 2 quiet threads; 1 MFLOP (2026-11-29, session 10) splits its two 2.1 MFLOP products too
// (the first layer and its weight gradient, K or M = 64): 26.2 -> 16.9 and 24.7 -> 15.5 us a call,
// medians of a 10-epoch profile, in a quiet phase of the host; in a loaded one both took ~23 us
// either way. On a busy machine adaptive_threads drops back to one thread.
constexpr int64_t kMinFlops = int64_t{1} << 20;

// "MATMUL", "ADD", ... as in docs/ops.md.
const char* op_name(uint32_t op);

struct OpContext {
  sy_device_s& device;
  sy_queue_s& queue;
  uint32_t op;
  const sy_op_params& params;
  int num_inputs = 0;
  int num_outputs = 0;
  TensorView in[SY_MAX_OP_INPUTS];
  TensorView out[SY_MAX_OP_OUTPUTS];
  // Per input, the id of its buffer where the call promises that input constant
  // (SY_CALL_CONSTANT_WEIGHTS: input 1 of the convolutions and MATMUL, w_ih and w_hh of the
  // sequence ops), else 0: conversions of it may be kept in device.weights.
  uint64_t constant_buffer[SY_MAX_OP_INPUTS] = {};

  OpContext(sy_device_s& dev, sy_queue_s& q, uint32_t op_id, const sy_op_params& op_params)
      : device(dev), queue(q), op(op_id), params(op_params) {}

  const char* name() const { return op_name(op); }

  // The thread count for `work` units (elements, or flops): at most the device's threads, and
  // at least min_work_per_thread units for each (see the constants above).
  int threads_for(int64_t work, int64_t min_work_per_thread = kMinMemoryBoundElements) const;
  // Makes the next OpenMP regions (oneDNN's and ours) on this thread use `threads` threads.
  void use_threads(int threads) const;

  // Scratch memory valid until the end of this dispatch.
  void* scratch(size_t bytes) { return queue.workspace.acquire(bytes); }
  TensorView scratch_view(uint32_t dtype, int rank, const int64_t* shape);

  // Validation: each fails with INVALID_ARGUMENT and a message naming the op and the operands.
  void require_counts(int inputs, int outputs) const;
  void require_dtype_in(const TensorView& view, const char* role,
                        std::initializer_list<uint32_t> allowed) const;
  void require_float(const TensorView& view, const char* role) const;
  void require_same_dtype(const TensorView& a, const char* role_a, const TensorView& b,
                          const char* role_b) const;
  void require_shape(const TensorView& view, const char* role, const int64_t* shape,
                     int rank) const;
  void require_same_shape(const TensorView& a, const char* role_a, const TensorView& b,
                          const char* role_b) const;
  [[noreturn]] void fail_shape(const std::string& what) const;
};

}  // namespace sy_onednn
