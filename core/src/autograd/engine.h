// The backward pass. Private to the core.
#pragma once

#include "switchyard/tensor.h"

namespace switchyard {

// Propagates `gradient` (root's shape) back through root's graph into the leaves' grad().
void run_backward(const Tensor& root, const Tensor& gradient);

}  // namespace switchyard
