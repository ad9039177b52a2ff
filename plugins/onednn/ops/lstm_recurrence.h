// The recurrence of LSTM_SEQUENCE at small batch, after the input projection: oneDNN 2.6's LSTM
// primitive runs each step's [B, H] x [H, 4H] product as a brgemm call that is slow at B = 1-8
// (about 30 us a step for H = 256 on one Zen 4 core, where the product is 262,144 multiply-adds),
// so rnn_sequence.cpp projects every step's input at once with one threaded matmul and calls this
// for the steps: each step's product from W_hh packed in panels (below), and the cell
// (ops/fast_math.h), with the hidden units split across threads.
#pragma once

#include <cstdint>

namespace sy_onednn {

// Hidden units per panel: one AVX-512 vector of f32.
constexpr int64_t kLstmPanel = 16;

// W_hh [4H, H] (dense, gates i f g o) packed for run_lstm_recurrence: for each panel of
// kLstmPanel hidden units and each gate, H rows of kLstmPanel weights, so that a thread reads its
// units' weights as one stream. `packed` holds lstm_packed_size(H) floats; a last partial panel is
// padded with zeros.
int64_t lstm_packed_size(int64_t hidden);
void pack_lstm_w_hh(const float* w_hh, int64_t hidden, float* packed);

struct LstmRecurrence {
  int64_t steps = 0, batch = 0, hidden = 0;  // T, B, H
  bool reverse = false;                      // steps run from position T-1 down to 0
  const float* gates_in = nullptr;     // [T, B, 4H] dense: x W_ih^T + b_ih + b_hh, gates i f g o
  const float* w_hh_packed = nullptr;  // pack_lstm_w_hh's layout
  const float* h0 = nullptr;           // [B, H] dense
  float* y = nullptr;                  // [T, B, H] dense; y[p] is h after position p
  float* c = nullptr;                  // [B, H] dense: holds c0 on entry and c_n on return
};

// Runs every step on up to `threads` OpenMP threads (each owns a contiguous run of panels and
// meets the others at a barrier per step). h_n is y at the last position processed.
void run_lstm_recurrence(const LstmRecurrence& r, int threads);

}  // namespace sy_onednn
