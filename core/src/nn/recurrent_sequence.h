// One direction of one LSTM or GRU layer over a whole sequence as a single autograd node, with
// backpropagation through time written out: the per-step work is elementwise ops on [B, H], and
// the input and weight gradients are a few large matrix products over all steps. Private to nn.
#pragma once

#include "switchyard/tensor.h"

namespace switchyard::detail {

struct RecurrentWeights {
  Tensor w_ih, w_hh, b_ih, b_hh;  // biases may be undefined
};

// x [T, B, in] time-major; h0, c0 [B, H]. Returns packed [T + 1, B, H]: rows 0..T-1 are the
// hidden state at each position (in position order, also when `reverse` runs from T-1 down to 0)
// and row T is the final cell state.
Tensor lstm_sequence(const Tensor& x, const Tensor& h0, const Tensor& c0, const RecurrentWeights& w,
                     bool reverse);

// The same for a GRU: returns [T, B, H].
Tensor gru_sequence(const Tensor& x, const Tensor& h0, const RecurrentWeights& w, bool reverse);

}  // namespace switchyard::detail
