// The geometry of a 2-D convolution or pooling call and its checks, shared by ops_conv.cpp and
// ops_pool.cpp, and its encoding for shaders/conv_common.glsl.
#pragma once

#include <cstdint>
#include <string>

#include "op_context.h"

namespace sy_vk {

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input [N, C, H, W]
  int64_t o = 0;                       // output channels (conv only)
  int64_t oh = 0, ow = 0;              // output spatial size
  int64_t kh = 0, kw = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
};

// floor((size + 2 pad - dilation (kernel - 1) - 1) / stride) + 1; may be < 1.
inline int64_t conv_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t pad,
                                int64_t dilation) {
  const int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// INVALID_ARGUMENT naming the tensor unless it is 4-D.
Status check_rank4(const OpContext& ctx, const sy_tensor_desc& t, const char* role,
                   const char* layout);

// Writes u[0..12] of the parameter block as conv_common.glsl reads them.
void encode_geometry(const ConvGeometry& g, bool flag, ParamBlock* params);

// Checks that OH and OW are >= 1 and that the strides, paddings and dilations fit the shaders.
Status check_geometry(const OpContext& ctx, const ConvGeometry& g);

// "[N, C, H, W]"-style text of four sizes, for messages.
std::string dims_text(int64_t a, int64_t b, int64_t c, int64_t d);

}  // namespace sy_vk
