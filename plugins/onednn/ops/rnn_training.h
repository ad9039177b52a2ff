// LSTM_SEQUENCE's training forward (the call with the fourth output, ws), called by
// rnn_sequence.cpp once it has checked the other tensors; LSTM_SEQUENCE_BACKWARD is declared in
// ops.h. See lstm_training.cpp.
#pragma once

#include <cstdint>

#include "op_context.h"

namespace sy_onednn {

// In f32: x [T, B, input], h0, c0, w_ih, w_hh [, b_ih, b_hh] -> y, h_n, c_n, ws [T, B, 5H].
void lstm_forward_with_ws_f32(OpContext& ctx, int64_t steps, int64_t batch, int64_t input,
                              int64_t hidden);

// In f32: x [T, B, input], h0, w_ih, w_hh [, b_ih, b_hh] -> y, h_n, ws [T, B, 4H].
void gru_forward_with_ws_f32(OpContext& ctx, int64_t steps, int64_t batch, int64_t input,
                             int64_t hidden);

}  // namespace sy_onednn
