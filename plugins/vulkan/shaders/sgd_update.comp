// SGD_UPDATE in place (torch.optim.SGD). t[0] param, t[1] grad, t[2] momentum_buf (param again
// when absent). f[0] lr, f[1] momentum, f[2] dampening, f[3] weight_decay; u[0] nesterov,
// u[1] = 1 when there is a momentum buffer. Bindings: 1 param, 2 grad, 3 momentum_buf.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = WORKGROUP_SIZE) in;
layout(std430, set = 0, binding = 1) buffer Param { STORAGE_T param[]; };
layout(std430, set = 0, binding = 2) readonly buffer Grad { STORAGE_T grad[]; };
layout(std430, set = 0, binding = 3) buffer Buf { STORAGE_T buf[]; };

void main() {
  const float lr = P.f[0], momentum = P.f[1], dampening = P.f[2], weight_decay = P.f[3];
  const bool use_buffer = P.u[1] != 0u && momentum != 0.0, nesterov = P.u[0] != 0u;
  const Cursor cp = cursor(0u), cg = cursor(1u), cb = cursor(2u);
  FOR_EACH_ITEM(i) {
    const uint pi = at(cp, i);
    const float p = TO_F(param[pi]);
    float g = TO_F(grad[at(cg, i)]) + weight_decay * p;
    if (use_buffer) {
      const uint bi = at(cb, i);
      const float b = momentum * TO_F(buf[bi]) + (1.0 - dampening) * g;
      buf[bi] = FROM_F(b);
      g = nesterov ? g + momentum * b : b;
    }
    param[pi] = FROM_F(p - lr * g);
  }
}
