// Autograd: reverse-mode differentiation over the ops of ops.h.
//
// Each op whose input requires a gradient records a node holding what its backward needs; the
// output tensor points at that node, and the node at its inputs, so the graph lives exactly as
// long as the tensors that can reach it. Tensor::backward() walks the graph once in reverse
// topological order and adds each leaf's gradient into its grad(): gradients accumulate across
// backward() calls until zero_grad(). Gradients of broadcast inputs are summed back to the input's
// shape. Inference code wraps itself in a NoGradGuard so that no graph is built at all.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

namespace switchyard {

// Whether ops record autograd nodes on this thread (true unless a NoGradGuard is alive).
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Disables recording for its scope on this thread and restores the previous mode after.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace switchyard

#pragma GCC visibility pop
