// ADAM_UPDATE in place (torch.optim.Adam / AdamW). t[0] param, t[1] grad, t[2] m, t[3] v.
// f[0] lr, f[1] beta1, f[2] beta2, f[3] epsilon, f[4] weight_decay, f[5] 1 - beta1^step,
// f[6] 1 - beta2^step (from the host, in double); u[0] = 1 for decoupled weight decay (AdamW).
// Bindings: 1 param, 2 grad, 3 m, 4 v.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) buffer Param { STORAGE_T param[]; };
layout(std430, set = 0, binding = 2) readonly buffer Grad { STORAGE_T grad[]; };
layout(std430, set = 0, binding = 3) buffer M { STORAGE_T m_state[]; };
layout(std430, set = 0, binding = 4) buffer V { STORAGE_T v_state[]; };

void main() {
  const float lr = P.f[0], beta1 = P.f[1], beta2 = P.f[2], epsilon = P.f[3];
  const float weight_decay = P.f[4], correction1 = P.f[5], correction2 = P.f[6];
  const bool decoupled = P.u[0] != 0u;
  const Cursor cp = cursor(0u), cg = cursor(1u), cm = cursor(2u), cv = cursor(3u);
  FOR_EACH_ITEM(i) {
    const uint pi = at(cp, i), mi = at(cm, i), vi = at(cv, i);
    float p = TO_F(param[pi]);
    float g = TO_F(grad[at(cg, i)]);
    if (decoupled) {
      p = p * (1.0 - lr * weight_decay);
    } else {
      g = g + weight_decay * p;
    }
    const float m = beta1 * TO_F(m_state[mi]) + (1.0 - beta1) * g;
    const float v = beta2 * TO_F(v_state[vi]) + (1.0 - beta2) * g * g;
    m_state[mi] = FROM_F(m);
    v_state[vi] = FROM_F(v);
    const float m_hat = m / correction1;
    const float v_hat = v / correction2;
    param[pi] = FROM_F(p - lr * m_hat / (sqrt(v_hat) + epsilon));
  }
}
