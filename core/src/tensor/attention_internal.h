// The composed side of scaled_dot_product_attention (ops.h), for the layers that need the
// probabilities too (MultiheadAttention's need_weights) and for tests that compare the two paths.
// Private to the core.
#pragma once

#include "switchyard/ops.h"

namespace switchyard::detail {

// softmax(q k^T * scale + mask) v from MATMUL, SOFTMAX and MATMUL ops, with autograd through each;
// `options` already checked by the caller. Writes the probabilities (before dropout) to
// *probabilities when it is not null.
Tensor composed_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionOptions& options, Tensor* probabilities);

// While one lives, this thread's scaled_dot_product_attention calls take the composed path even
// where the device has the op, so that tests can compare the two on one device.
class ComposedAttentionScope {
 public:
  ComposedAttentionScope();
  ~ComposedAttentionScope();
  ComposedAttentionScope(const ComposedAttentionScope&) = delete;
  ComposedAttentionScope& operator=(const ComposedAttentionScope&) = delete;

 private:
  bool previous_;
};

}  // namespace switchyard::detail
