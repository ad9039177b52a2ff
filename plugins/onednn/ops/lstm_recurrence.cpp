// The small-batch LSTM recurrence (lstm_recurrence.h). The step kernel is compiled for AVX-512,
// AVX2 and the baseline and chosen at load time; its sums are GCC vector types, so that the four
// gates' accumulators of one panel stay in registers while the H rows of weights stream past.
#include "ops/lstm_recurrence.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "ops/fast_math.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

typedef float Lanes __attribute__((vector_size(kLstmPanel * sizeof(float))));

int64_t panels_of(int64_t hidden) {
  return (hidden + kLstmPanel - 1) / kLstmPanel;
}

// One step of panels [first, last) for batch row b: the four gate pre-activations, projected
// input plus h_prev W_hh^T, then the cell, writing c and h for those units.
SY_VECTOR_CLONES void step_panels(const LstmRecurrence& r, const float* gates_in,
                                  const float* h_prev, float* c, float* h_out, int64_t first,
                                  int64_t last) {
  const int64_t hidden = r.hidden;
  for (int64_t q = first; q < last; ++q) {
    const int64_t unit = q * kLstmPanel;
    const int64_t n = std::min(kLstmPanel, hidden - unit);
    float start[4][kLstmPanel] = {};
    for (int g = 0; g < 4; ++g) {
      for (int64_t j = 0; j < n; ++j) start[g][j] = gates_in[g * hidden + unit + j];
    }
    // Loads and stores of Lanes go through memcpy: a function returning one would change the
    // baseline clone's ABI (GCC's -Wpsabi).
    Lanes s0, s1, s2, s3;
    std::memcpy(&s0, start[0], sizeof s0);
    std::memcpy(&s1, start[1], sizeof s1);
    std::memcpy(&s2, start[2], sizeof s2);
    std::memcpy(&s3, start[3], sizeof s3);
    const float* block = r.w_hh_packed + q * 4 * hidden * kLstmPanel;
    const float* w1 = block + hidden * kLstmPanel;
    const float* w2 = w1 + hidden * kLstmPanel;
    const float* w3 = w2 + hidden * kLstmPanel;
    for (int64_t k = 0; k < hidden; ++k) {
      const float hk = h_prev[k];
      const int64_t at = k * kLstmPanel;
      Lanes v0, v1, v2, v3;
      std::memcpy(&v0, block + at, sizeof v0);
      std::memcpy(&v1, w1 + at, sizeof v1);
      std::memcpy(&v2, w2 + at, sizeof v2);
      std::memcpy(&v3, w3 + at, sizeof v3);
      s0 += hk * v0;
      s1 += hk * v1;
      s2 += hk * v2;
      s3 += hk * v3;
    }
    float a[4][kLstmPanel];
    std::memcpy(a[0], &s0, sizeof s0);
    std::memcpy(a[1], &s1, sizeof s1);
    std::memcpy(a[2], &s2, sizeof s2);
    std::memcpy(a[3], &s3, sizeof s3);
    for (int64_t j = 0; j < n; ++j) {
      const float cj =
          sigmoid_approx(a[1][j]) * c[unit + j] + sigmoid_approx(a[0][j]) * tanh_approx(a[2][j]);
      c[unit + j] = cj;
      h_out[unit + j] = sigmoid_approx(a[3][j]) * tanh_approx(cj);
    }
  }
}

// Every step for panels [first, last), meeting the other threads once per step.
void run_panels(const LstmRecurrence& r, int64_t first, int64_t last, bool barrier) {
  const int64_t row = r.batch * r.hidden;
  for (int64_t step = 0; step < r.steps; ++step) {
    const int64_t p = r.reverse ? r.steps - 1 - step : step;
    const int64_t previous = r.reverse ? p + 1 : p - 1;
    const float* h_prev = step == 0 ? r.h0 : r.y + previous * row;
    for (int64_t b = 0; b < r.batch; ++b) {
      step_panels(r, r.gates_in + (p * r.batch + b) * 4 * r.hidden, h_prev + b * r.hidden,
                  r.c + b * r.hidden, r.y + p * row + b * r.hidden, first, last);
    }
    if (barrier) {
#pragma omp barrier
    }
  }
}

}  // namespace

int64_t lstm_packed_size(int64_t hidden) {
  return panels_of(hidden) * 4 * hidden * kLstmPanel;
}

void pack_lstm_w_hh(const float* w_hh, int64_t hidden, float* packed) {
  std::fill(packed, packed + lstm_packed_size(hidden), 0.0f);
  for (int64_t q = 0; q < panels_of(hidden); ++q) {
    for (int g = 0; g < 4; ++g) {
      float* block = packed + (q * 4 + g) * hidden * kLstmPanel;
      for (int64_t j = 0; j < kLstmPanel && q * kLstmPanel + j < hidden; ++j) {
        const float* row = w_hh + (g * hidden + q * kLstmPanel + j) * hidden;  // W_hh's row
        for (int64_t k = 0; k < hidden; ++k) block[k * kLstmPanel + j] = row[k];
      }
    }
  }
}

void run_lstm_recurrence(const LstmRecurrence& r, int threads) {
  const int64_t panels = panels_of(r.hidden);
  const int workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, panels)));
  if (workers == 1) {
    run_panels(r, 0, panels, false);
    return;
  }
#pragma omp parallel num_threads(workers)
  {
    // Every thread of the team must reach each barrier, so the team's real size decides the split.
    const int64_t team = omp_get_num_threads();
    const int64_t per = (panels + team - 1) / team;
    const int64_t first = std::min(panels, per * omp_get_thread_num());
    const int64_t last = std::min(panels, first + per);
    run_panels(r, first, last, team > 1);
  }
}

}  // namespace sy_onednn
