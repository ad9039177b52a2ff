// Geometry shared by the convolution and pooling shaders. The parameter block holds
// u[0] N, u[1] C, u[2] H, u[3] W, u[4] O (conv; unused by pooling), u[5] OH, u[6] OW, u[7] KH,
// u[8] KW, u[9] strides, u[10] paddings, u[11] dilations (each pair as h | w << 16),
// u[12] a flag: has_bias (conv) or count_include_pad (pooling), u[13] the first group of a grouped
// convolution's dispatch (0 otherwise). For CONV2D_GROUPED, C and O are per group (C/G, O/G) and
// the dispatch's z index adds to u[13]: g_c0 and g_o0 are the group's first input and output
// channel, which the shaders add to the channel coordinates of x, y and w's dim 0.
//
// load_conv_geometry() copies it into per-invocation globals once: the driver cannot tell that
// the parameter block is not written through the other bindings, and would reload it in the
// inner loops otherwise (a 20x slowdown on lavapipe).

uint g_n, g_c, g_h, g_w, g_o, g_oh, g_ow, g_kh, g_kw;
int g_stride_h, g_stride_w, g_pad_h, g_pad_w, g_dilation_h, g_dilation_w;
bool g_flag;
uint g_c0, g_o0;

void load_conv_geometry() {
  g_n = P.u[0];
  g_c = P.u[1];
  g_h = P.u[2];
  g_w = P.u[3];
  g_o = P.u[4];
  g_oh = P.u[5];
  g_ow = P.u[6];
  g_kh = P.u[7];
  g_kw = P.u[8];
  g_stride_h = int(P.u[9] & 0xffffu);
  g_stride_w = int(P.u[9] >> 16);
  g_pad_h = int(P.u[10] & 0xffffu);
  g_pad_w = int(P.u[10] >> 16);
  g_dilation_h = int(P.u[11] & 0xffffu);
  g_dilation_w = int(P.u[11] >> 16);
  g_flag = P.u[12] != 0u;
  const uint group = P.u[13] + gl_WorkGroupID.z;
  g_c0 = group * g_c;
  g_o0 = group * g_o;
}

// The offset and the four strides of a 4-D tensor, cached like the geometry.
struct View4 {
  uint offset;
  uvec4 strides;
};

View4 view4(uint k) {
  View4 v;
  v.offset = P.t[k].offset;
  v.strides = uvec4(uint(P.t[k].strides[0]), uint(P.t[k].strides[1]), uint(P.t[k].strides[2]),
                    uint(P.t[k].strides[3]));
  return v;
}

uint at4(View4 v, uint i0, uint i1, uint i2, uint i3) {
  return v.offset + i0 * v.strides.x + i1 * v.strides.y + i2 * v.strides.z + i3 * v.strides.w;
}

// Splits a row-major index over [d0, d1, d2] into its three coordinates.
uvec3 split3(uint linear, uint d1, uint d2) {
  const uint i2 = linear % d2;
  linear /= d2;
  return uvec3(linear / d1, linear % d1, i2);
}

// Splits a row-major index over [d0, d1, d2, d3] into its four coordinates.
uvec4 split4(uint linear, uint d1, uint d2, uint d3) {
  const uint i3 = linear % d3;
  linear /= d3;
  const uint i2 = linear % d2;
  linear /= d2;
  return uvec4(linear / d1, linear % d1, i2, i3);
}
