// LSTM_CELL and LSTM_CELL_BACKWARD (docs/ops.md section 16): one thread per (row, hidden unit)
// reads its four gates, computes in f32 and rounds each output once.
#include <math.h>

#include "common.cuh"

namespace sy {
namespace {

__device__ __forceinline__ float sigmoid_of(float v) {
  return 1.0f / (1.0f + expf(-v));
}

// Element (row, column) of a rank-2 tensor.
__device__ __forceinline__ int64_t at(const SyTensorArg& t, int64_t row, int64_t column) {
  return row * t.strides[0] + column * t.strides[1];
}

}  // namespace
}  // namespace sy

extern "C" __global__ void sy_lstm_cell(SyLstmCellArgs a) {
  using namespace sy;
  const int64_t h = a.hidden;
  for (int64_t k = global_thread(); k < a.batch * h; k += grid_stride()) {
    const int64_t r = k / h, j = k - r * h;
    if (a.backward == 0) {
      const SyTensorArg& z = a.in[0];
      const float i = sigmoid_of(load(z, at(z, r, j)));
      const float f = sigmoid_of(load(z, at(z, r, h + j)));
      const float g = tanhf(load(z, at(z, r, 2 * h + j)));
      const float o = sigmoid_of(load(z, at(z, r, 3 * h + j)));
      const float c = f * load(a.in[1], at(a.in[1], r, j)) + i * g;
      store(a.out[0], at(a.out[0], r, j), o * tanhf(c));
      store(a.out[1], at(a.out[1], r, j), c);
      const SyTensorArg& act = a.out[2];
      store(act, at(act, r, j), i);
      store(act, at(act, r, h + j), f);
      store(act, at(act, r, 2 * h + j), g);
      store(act, at(act, r, 3 * h + j), o);
    } else {
      const SyTensorArg& act = a.in[2];
      const float i = load(act, at(act, r, j));
      const float f = load(act, at(act, r, h + j));
      const float g = load(act, at(act, r, 2 * h + j));
      const float o = load(act, at(act, r, 3 * h + j));
      const float t = tanhf(load(a.in[4], at(a.in[4], r, j)));
      const float dh = load(a.in[0], at(a.in[0], r, j));
      const float dc = load(a.in[1], at(a.in[1], r, j)) + dh * o * (1.0f - t * t);
      const float c_prev = load(a.in[3], at(a.in[3], r, j));
      const SyTensorArg& dz = a.out[0];
      store(dz, at(dz, r, j), dc * g * i * (1.0f - i));
      store(dz, at(dz, r, h + j), dc * c_prev * f * (1.0f - f));
      store(dz, at(dz, r, 2 * h + j), dc * i * (1.0f - g * g));
      store(dz, at(dz, r, 3 * h + j), dh * t * o * (1.0f - o));
      store(a.out[1], at(a.out[1], r, j), dc * f);
    }
  }
}

// One step of LSTM_SEQUENCE: one thread per (row, hidden unit), the state in f32 throughout.
extern "C" __global__ void sy_lstm_step(SyLstmStepArgs a) {
  using namespace sy;
  const int64_t h = a.hidden;
  const float* gates = reinterpret_cast<const float*>(a.gates);
  const float* gx = reinterpret_cast<const float*>(a.gx);
  float* hs = reinterpret_cast<float*>(a.h);
  float* cs = reinterpret_cast<float*>(a.c);
  for (int64_t k = global_thread(); k < a.batch * h; k += grid_stride()) {
    const int64_t r = k / h, j = k - r * h;
    float z[4];
    for (int gate = 0; gate < 4; ++gate) {
      const int64_t column = gate * h + j, at_rc = r * 4 * h + column;
      z[gate] = gates[at_rc] + gx[at_rc];
      if (a.has_bias) {
        z[gate] +=
            load(a.b_ih, column * a.b_ih.strides[0]) + load(a.b_hh, column * a.b_hh.strides[0]);
      }
    }
    const float i = sigmoid_of(z[0]), f = sigmoid_of(z[1]), g = tanhf(z[2]);
    const float o = sigmoid_of(z[3]);
    const float c = f * cs[k] + i * g;
    const float hv = o * tanhf(c);
    cs[k] = c;
    hs[k] = hv;
    store(a.y, a.position * a.y.strides[0] + r * a.y.strides[1] + j * a.y.strides[2], hv);
  }
}
