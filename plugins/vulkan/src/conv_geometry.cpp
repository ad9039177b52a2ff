#include "conv_geometry.h"

namespace sy_vk {

Status check_rank4(const OpContext& ctx, const sy_tensor_desc& t, const char* role,
                   const char* layout) {
  if (t.rank == 4) return ok_status();
  return invalid_argument(std::string(op_name(ctx.call.op)) + ": " + role + " " + shape_text(t) +
                          " must be 4-D " + layout);
}

std::string dims_text(int64_t a, int64_t b, int64_t c, int64_t d) {
  return "[" + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) + ", " +
         std::to_string(d) + "]";
}

void encode_geometry(const ConvGeometry& g, bool flag, ParamBlock* params) {
  const int64_t sizes[] = {g.n, g.c, g.h, g.w, g.o, g.oh, g.ow, g.kh, g.kw};
  for (int i = 0; i < 9; ++i) params->u[i] = static_cast<uint32_t>(sizes[i]);
  auto pair = [](int64_t h, int64_t w) {
    return static_cast<uint32_t>(h) | (static_cast<uint32_t>(w) << 16);
  };
  params->u[9] = pair(g.stride_h, g.stride_w);
  params->u[10] = pair(g.pad_h, g.pad_w);
  params->u[11] = pair(g.dilation_h, g.dilation_w);
  params->u[12] = flag ? 1u : 0u;
}

Status check_geometry(const OpContext& ctx, const ConvGeometry& g) {
  const std::string op = op_name(ctx.call.op);
  const int64_t values[] = {g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h, g.dilation_w};
  for (int64_t v : values) {
    if (v > 65535) {
      return unimplemented(op + ": strides, paddings and dilations above 65535 are not supported");
    }
  }
  if (g.oh < 1 || g.ow < 1) {
    return invalid_argument(op + ": the output would be " + std::to_string(g.oh) + " x " +
                            std::to_string(g.ow) + " for input " + std::to_string(g.h) + " x " +
                            std::to_string(g.w) + " and kernel " + std::to_string(g.kh) + " x " +
                            std::to_string(g.kw));
  }
  return ok_status();
}

}  // namespace sy_vk
