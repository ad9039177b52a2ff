// The backward pass. Private to the core.
#pragma once

#include <functional>

#include "switchyard/tensor.h"

namespace switchyard {

// Called by run_backward as soon as a leaf's gradient for this backward pass is complete (every
// node that feeds it has run), while the rest of the pass goes on: data-parallel training starts
// the allreduce of a bucket of gradients there (PyTorch's post-accumulate-grad hook). It is also
// called with an undefined tensor after every node, so that the caller can drive the progress of
// what it started (MPI progresses a non-blocking collective only inside MPI calls).
using LeafGradientReadyHook = std::function<void(const Tensor& leaf)>;

// Installs `hook` on this thread for the scope's lifetime (and restores the previous one).
class LeafGradientReadyScope {
 public:
  explicit LeafGradientReadyScope(LeafGradientReadyHook hook);
  ~LeafGradientReadyScope();
  LeafGradientReadyScope(const LeafGradientReadyScope&) = delete;
  LeafGradientReadyScope& operator=(const LeafGradientReadyScope&) = delete;

 private:
  LeafGradientReadyHook previous_;
};

// Propagates `gradient` (root's shape) back through root's graph into the leaves' grad().
void run_backward(const Tensor& root, const Tensor& gradient);

}  // namespace switchyard
