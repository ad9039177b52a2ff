// One direction of one LSTM or GRU layer over a whole sequence as a single autograd node, with
// backpropagation through time written out: the per-step work is elementwise ops on [B, H], and
// the input and weight gradients are a few large matrix products over all steps. Private to nn.
#pragma once

#include "switchyard/tensor.h"

namespace switchyard::detail {

struct RecurrentWeights {
  Tensor w_ih, w_hh, b_ih, b_hh;  // biases may be undefined
  // The caller promises that w_ih's and w_hh's bytes never change while their storage lives (the
  // ONNX importer's initializers): the fused op may keep them converted (SY_CALL_CONSTANT_WEIGHTS).
  // Leave it false for weights that training or the caller rewrite.
  bool constant = false;
};

// The whole sequence runs as one LSTM_SEQUENCE or GRU_SEQUENCE op where the device has it for the
// dtype (docs/ops.md section 17); when something needs a gradient, only where the device also has
// the backward (LSTM_SEQUENCE_BACKWARD, GRU_SEQUENCE_BACKWARD). Otherwise the sequence is composed
// from MATMUL and LSTM_CELL or elementwise ops per step. Each
// call opens a profile span that names the path: "lstm_sequence: fused" or "...: composed".
//
// x [T, B, in] time-major (any strides); h0, c0 [B, H]. Returns packed [T + 1, B, H]: rows 0..T-1
// are the hidden state at each position (in position order, also when `reverse` runs from T-1 down
// to 0) and row T is the final cell state.
Tensor lstm_sequence(const Tensor& x, const Tensor& h0, const Tensor& c0, const RecurrentWeights& w,
                     bool reverse);

// The same for a GRU: returns [T, B, H].
Tensor gru_sequence(const Tensor& x, const Tensor& h0, const RecurrentWeights& w, bool reverse);

// While one lives, this thread's sequences take the composed path even where the fused op exists,
// so that tests can compare the two on one device.
class ComposedRecurrentScope {
 public:
  ComposedRecurrentScope();
  ~ComposedRecurrentScope();
  ComposedRecurrentScope(const ComposedRecurrentScope&) = delete;
  ComposedRecurrentScope& operator=(const ComposedRecurrentScope&) = delete;

 private:
  bool previous_;
};

}  // namespace switchyard::detail
