// Fused SGD and Adam/AdamW updates, in place (section 15 of docs/ops.md), computed in f32 with
// each updated tensor rounded once to its storage type.
#include <math.h>

#include "common.cuh"

extern "C" __global__ void sy_optimizer_update(SyOptimArgs a) {
  using namespace sy;
  const SyOperand* ops[4] = {&a.param, &a.grad, &a.state0, &a.state1};
  auto body = [&](int64_t, const int64_t* off) {
    float p = load_float(a.param.data, a.param.dtype, off[0]);
    float g = load_float(a.grad.data, a.grad.dtype, off[1]);
    if (a.op == kSgdUpdate) {
      g = g + a.weight_decay * p;
      if (a.has_momentum_buffer) {
        float buf = load_float(a.state0.data, a.state0.dtype, off[2]);
        buf = a.momentum * buf + (1.0f - a.dampening) * g;
        store_float(a.state0.data, a.state0.dtype, off[2], buf);
        g = a.nesterov ? g + a.momentum * buf : buf;
      }
      p = p - a.lr * g;
    } else {
      if (a.decoupled_weight_decay) {
        p = p * (1.0f - a.lr * a.weight_decay);
      } else {
        g = g + a.weight_decay * p;
      }
      float m = load_float(a.state0.data, a.state0.dtype, off[2]);
      float v = load_float(a.state1.data, a.state1.dtype, off[3]);
      m = a.beta1 * m + (1.0f - a.beta1) * g;
      v = a.beta2 * v + (1.0f - a.beta2) * g * g;
      store_float(a.state0.data, a.state0.dtype, off[2], m);
      store_float(a.state1.data, a.state1.dtype, off[3], v);
      const float m_hat = m / a.bias_correction1;
      const float v_hat = v / a.bias_correction2;
      p = p - a.lr * m_hat / (sqrtf(v_hat) + a.epsilon);
    }
    store_float(a.param.data, a.param.dtype, off[0], p);
  };
  // Offsets are computed for every operand slot; unused slots have zero strides on the host.
  for_each_position<4>(a.iter, ops, body);
}
