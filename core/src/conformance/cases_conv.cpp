// CONV2D and both of its backward ops with stride, padding, dilation, non-square kernels, bias,
// 1x1 kernels, a larger layer, and channels-last (permuted) activations; CONV2D_GROUPED and its
// backward ops with groups 1, 2, depthwise (groups = C) and a channel multiplier (O = 2C,
// groups = C), with the same stride, padding and dilation variety; CONV2D_FUSED with each
// activation, with and without a residual, on the blocked and the plain 1x1 paths of onednn.
#include <algorithm>

#include "conformance/cases.h"

namespace switchyard::conformance {
namespace {

struct ConvSpec {
  const char* name;
  int64_t n, c, h, w, o, kh, kw;
  int32_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  bool bias;
  bool channels_last;  // activations stored NHWC: NCHW view with permuted strides
  int32_t groups = 1;  // CONV2D_GROUPED only

  int64_t out_h() const { return (h + 2 * pad_h - dilation_h * (kh - 1) - 1) / stride_h + 1; }
  int64_t out_w() const { return (w + 2 * pad_w - dilation_w * (kw - 1) - 1) / stride_w + 1; }
};

const ConvSpec kConvSpecs[] = {
    {"3x3/bias", 2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 1, 1, true, false},
    // H = W = 8 with stride 2: H = 7 gives the same OH, so backward data must take H from grad_x.
    {"3x3/stride2/pad1", 2, 3, 8, 8, 4, 3, 3, 2, 2, 1, 1, 1, 1, false, false},
    {"3x2/dilation2/pad2/bias", 1, 2, 9, 7, 3, 3, 2, 1, 1, 2, 2, 2, 2, true, false},
    {"2x3/asymmetric_stride_pad_dilation/bias", 2, 2, 6, 9, 3, 2, 3, 2, 1, 0, 1, 1, 2, true, false},
    {"1x1/bias", 2, 5, 4, 4, 6, 1, 1, 1, 1, 0, 0, 1, 1, true, false},
    {"3x3/16x8x12x12/pad1/bias", 4, 8, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1, 1, true, false},
    {"3x3/pad1/channels_last/bias", 2, 3, 6, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, true, true},
    // 30 x 28 output pixels: onednn runs such 1x1 convolutions on NCHW as a GEMM (conv.cpp's
    // plain_one_by_one), from a channels-last input through a reorder.
    {"1x1/30x28/bias", 2, 6, 30, 28, 10, 1, 1, 1, 1, 0, 0, 1, 1, true, false},
    {"1x1/30x28/channels_last", 1, 5, 30, 28, 7, 1, 1, 1, 1, 0, 0, 1, 1, false, true},
    // 1x1 images (squeeze-excitation's layers): onednn's dot-product path.
    {"1x1/pixel/bias", 3, 40, 1, 1, 24, 1, 1, 1, 1, 0, 0, 1, 1, true, false},
    // Kernel rows and columns that read only padding: their weight gradients are 0.
    {"4x4/stride2/pad2/one_column_image/bias", 3, 16, 9, 1, 3, 4, 4, 2, 2, 2, 2, 1, 1, true, false},
};

// CONV2D_GROUPED: groups 1 (the op must accept it), 2, depthwise and a channel multiplier.
const ConvSpec kGroupedSpecs[] = {
    {"groups1/3x3/bias", 2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 1, 1, true, false, 1},
    {"groups2/3x3/stride2/pad1", 2, 4, 8, 8, 6, 3, 3, 2, 2, 1, 1, 1, 1, false, false, 2},
    {"groups2/3x2/dilation2/pad2/bias", 1, 6, 9, 7, 4, 3, 2, 1, 1, 2, 2, 2, 2, true, false, 2},
    {"depthwise/3x3/pad1/bias", 2, 8, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, true, false, 8},
    {"depthwise/3x3/stride2/pad1", 2, 16, 12, 12, 16, 3, 3, 2, 2, 1, 1, 1, 1, false, false, 16},
    {"depthwise/5x5/dilation2/pad4/bias", 1, 4, 11, 10, 4, 5, 5, 1, 1, 4, 4, 2, 2, true, false, 4},
    {"multiplier2/3x3/pad1/bias", 2, 4, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, true, false, 4},
    {"multiplier2/2x3/asymmetric_stride_pad/bias", 2, 3, 6, 9, 6, 2, 3, 2, 1, 0, 1, 1, 1, true,
     false, 3},
    {"depthwise/3x3/pad1/channels_last/bias", 2, 6, 6, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, true, true, 6},
    // Channels-last f32 depthwise runs onednn's own kernel (depthwise_kernel.h): 40 channels (two
    // 16-wide blocks and a tail of 8); 22 and 21 columns (interior runs of 8 + 8 + 4 pixels, and
    // 8 + 8 + 1 + 1 + 1, between the padded edges); stride 2 with a 5x5 kernel; dilation; a kernel
    // wider than the image (edges only).
    {"depthwise/3x3/pad1/channels_last/40x9x22/bias", 2, 40, 9, 22, 40, 3, 3, 1, 1, 1, 1, 1, 1,
     true, true, 40},
    {"depthwise/3x3/pad1/channels_last/24x7x21", 1, 24, 7, 21, 24, 3, 3, 1, 1, 1, 1, 1, 1, false,
     true, 24},
    {"depthwise/5x5/stride2/pad2/channels_last/bias", 2, 20, 13, 19, 20, 5, 5, 2, 2, 2, 2, 1, 1,
     true, true, 20},
    {"depthwise/3x3/dilation2/pad2/channels_last/bias", 1, 17, 10, 12, 17, 3, 3, 1, 1, 2, 2, 2, 2,
     true, true, 17},
    {"depthwise/5x5/pad2/channels_last/3x3_image", 2, 18, 3, 3, 18, 5, 5, 1, 1, 2, 2, 1, 1, true,
     true, 18},
    // 1-D convolution as the importer runs it: H = 1, a 1 x K kernel.
    {"depthwise/1d/1x5/pad2/bias", 2, 6, 1, 17, 6, 1, 5, 1, 1, 0, 2, 1, 1, true, false, 6},
    // Kernel columns that read only padding (a 1-column image, padded by 3 for a 4-wide kernel):
    // their weight gradients are 0 (onednn: oneDNN 2.6's bf16 kernel needs a zeroed scratchpad).
    {"groups1/4x4/stride3x2/pad0x3/one_column_image", 2, 16, 8, 1, 5, 4, 4, 3, 2, 0, 3, 1, 1, false,
     false, 1},
};

HostTensor activation(Generator& gen, sy_dtype dtype, const ConvSpec& spec, Shape shape) {
  HostTensor t = random_tensor(gen, dtype, std::move(shape), -1.0, 1.0);
  return spec.channels_last ? permuted_layout(t, {0, 2, 3, 1}) : t;
}

// An activation-shaped output: channels-last too in a channels-last spec, as the host allocates
// a convolution's output after a channels-last input (SY_CAP_CHANNELS_LAST), so that onednn's
// path without reorders runs.
HostTensor activation_output(sy_dtype dtype, const ConvSpec& spec, const Shape& shape) {
  HostTensor t = zeros(dtype, shape);
  return spec.channels_last ? permuted_layout(t, {0, 2, 3, 1}) : t;
}

OpCase build_conv(Generator& gen, sy_op op, sy_dtype dtype, const ConvSpec& spec) {
  const Shape x_shape = {spec.n, spec.c, spec.h, spec.w};
  const Shape w_shape = {spec.o, spec.c / spec.groups, spec.kh, spec.kw};
  const Shape y_shape = {spec.n, spec.o, spec.out_h(), spec.out_w()};
  OpCase op_case;
  if (op == SY_OP_CONV2D || op == SY_OP_CONV2D_GROUPED) {
    std::vector<HostTensor> inputs = {activation(gen, dtype, spec, x_shape),
                                      random_tensor(gen, dtype, w_shape, -1.0, 1.0)};
    if (spec.bias) inputs.push_back(random_tensor(gen, dtype, {spec.o}, -1.0, 1.0));
    op_case = make_op_case(op, inputs, {activation_output(dtype, spec, y_shape)});
  } else if (op == SY_OP_CONV2D_BACKWARD_DATA || op == SY_OP_CONV2D_GROUPED_BACKWARD_DATA) {
    op_case = make_op_case(
        op, {activation(gen, dtype, spec, y_shape), random_tensor(gen, dtype, w_shape, -1.0, 1.0)},
        {activation_output(dtype, spec, x_shape)});
  } else {
    std::vector<HostTensor> outputs = {zeros(dtype, w_shape)};
    if (spec.bias) outputs.push_back(zeros(dtype, {spec.o}));
    op_case = make_op_case(
        op, {activation(gen, dtype, spec, y_shape), activation(gen, dtype, spec, x_shape)},
        outputs);
  }
  sy_conv2d_params& params = op_case.params.conv2d;
  params.stride_h = spec.stride_h;
  params.stride_w = spec.stride_w;
  params.pad_h = spec.pad_h;
  params.pad_w = spec.pad_w;
  params.dilation_h = spec.dilation_h;
  params.dilation_w = spec.dilation_w;
  params.has_bias = spec.bias ? 1u : 0u;
  if (op == SY_OP_CONV2D_GROUPED || op == SY_OP_CONV2D_GROUPED_BACKWARD_DATA ||
      op == SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT) {
    op_case.params.conv2d_grouped.groups = spec.groups;
  }
  return op_case;
}

// CONV2D_FUSED: a convolution spec, then the residual and the activation (named as in
// sy_activation, upper case: `conformance --filter relu` selects the RELU ops alone).
struct FusedSpec {
  const char* name;
  ConvSpec conv;
  uint32_t activation;
  bool residual;
  float low = 0.0f, high = 0.0f;
  bool nchw_residual = false;  // a dense NCHW residual beside channels-last x and y
};

const FusedSpec kFusedSpecs[] = {
    {"RELU/3x3/pad1/bias", {"", 2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, true, false}, 1, false},
    {"residual/RELU/3x3/16x8x12x12/pad1/bias",
     {"", 2, 8, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1, 1, true, false},
     1,
     true},
    {"CLIP0-6/depthwise/3x3/stride2/pad1/bias",
     {"", 2, 16, 12, 12, 16, 3, 3, 2, 2, 1, 1, 1, 1, true, false, 16},
     2,
     false,
     0.0f,
     6.0f},
    {"SILU/groups2/3x3/channels_last",
     {"", 2, 4, 8, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, false, true, 2},
     3,
     false},
    // NCHW groups 2 (onednn: oneDNN 2.6 cannot build bf16 SILU as this gemm convolution's
    // post-op, so SILU runs as a pass after it).
    {"SILU/groups2/3x3/pad1/bias",
     {"", 1, 8, 16, 15, 8, 3, 3, 1, 1, 1, 1, 1, 1, true, false, 2},
     3,
     false},
    // NCHW in and out: onednn runs the primitive on its blocked layout and SILU over that scratch
    // (990 outputs: whole 16-wide vectors and a tail).
    {"SILU/3x3/pad1/bias/9x11",
     {"", 2, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1, 1, 1, true, false},
     3,
     false},
    {"residual/1x1/bias", {"", 2, 5, 4, 4, 6, 1, 1, 1, 1, 0, 0, 1, 1, true, false}, 0, true},
    // 1x1 images (squeeze-excitation's layers): onednn's dot-product path.
    {"residual/SILU/1x1/pixel/bias",
     {"", 3, 40, 1, 1, 24, 1, 1, 1, 1, 0, 0, 1, 1, true, false},
     3,
     true},
    {"SILU/1x1/pixel/channels_last",
     {"", 2, 40, 1, 1, 24, 1, 1, 1, 1, 0, 0, 1, 1, false, true},
     3,
     false},
    // 30 x 28 outputs: onednn's plain 1x1 path, whose epilogue is a pass of its own.
    {"residual/SILU/1x1/30x28/bias",
     {"", 2, 6, 30, 28, 10, 1, 1, 1, 1, 0, 0, 1, 1, true, false},
     3,
     true},
    {"CLIP-0.5-0.5/1x1/30x28/channels_last",
     {"", 1, 5, 30, 28, 7, 1, 1, 1, 1, 0, 0, 1, 1, false, true},
     2,
     false,
     -0.5f,
     0.5f},
    {"residual/RELU/1x1/30x28",
     {"", 1, 4, 30, 28, 8, 1, 1, 1, 1, 0, 0, 1, 1, false, false},
     1,
     true},
    // Channels-last x, y and residual: onednn's nhwc primitive with the sum post-op; then an
    // NCHW residual (an ONNX graph input added to a convolution's output) beside them.
    {"residual/SILU/3x3/pad1/channels_last/bias",
     {"", 2, 5, 6, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, true, true},
     3,
     true},
    // Channels-last depthwise: onednn's own kernel, the residual and activation in its epilogue.
    {"CLIP0-6/depthwise/3x3/pad1/channels_last/bias",
     {"", 2, 40, 9, 22, 40, 3, 3, 1, 1, 1, 1, 1, 1, true, true, 40},
     2,
     false,
     0.0f,
     6.0f},
    {"residual/RELU/depthwise/3x3/stride2/pad1/channels_last",
     {"", 2, 24, 11, 18, 24, 3, 3, 2, 2, 1, 1, 1, 1, false, true, 24},
     1,
     true},
    {"SILU/depthwise/5x5/stride2/pad2/channels_last/bias",
     {"", 1, 36, 17, 17, 36, 5, 5, 2, 2, 2, 2, 1, 1, true, true, 36},
     3,
     false},
    {"residual_nchw/RELU/3x3/pad1/channels_last/bias",
     {"", 2, 5, 6, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, true, true},
     1,
     true,
     0.0f,
     0.0f,
     true},
    // Channels-last depthwise over 6 and 7 channels with a residual: where onednn has no AVX-512
    // (a CPU without it, or ONEDNN_MAX_CPU_ISA), oneDNN's depthwise kernel; its SSE4.1 one (ISA
    // AVX and below) faulted in the sum post-op on pixels that are not 16 bytes apart (found by
    // drawn cases, 2026-11-29; tests/cli runs this table with the ISA capped).
    {"residual/depthwise/1x5/dilation2x1/6_channels/channels_last/bias",
     {"", 3, 6, 16, 8, 6, 1, 5, 1, 1, 0, 1, 2, 1, true, true, 6},
     0,
     true},
    {"residual_nchw/SILU/depthwise/5x1/pad3x0/7_channels/channels_last",
     {"", 1, 7, 3, 18, 7, 5, 1, 1, 1, 3, 0, 1, 2, false, true, 7},
     3,
     true,
     0.0f,
     0.0f,
     true},
};

OpCase build_fused(Generator& gen, sy_dtype dtype, const FusedSpec& spec) {
  const ConvSpec& c = spec.conv;
  OpCase op_case = build_conv(gen, SY_OP_CONV2D_GROUPED, dtype, c);
  op_case.op = SY_OP_CONV2D_FUSED;
  if (spec.residual) {
    // From -4 to 4: the sums reach both sides of every activation's bends.
    HostTensor r = random_tensor(gen, dtype, {c.n, c.o, c.out_h(), c.out_w()}, -4.0, 4.0);
    op_case.inputs.push_back(
        c.channels_last && !spec.nchw_residual ? permuted_layout(r, {0, 2, 3, 1}) : r);
  }
  sy_conv2d_fused_params& p = op_case.params.conv2d_fused;
  p.activation = spec.activation;
  p.has_residual = spec.residual ? 1u : 0u;
  p.low = spec.low;
  p.high = spec.high;
  return op_case;
}

// A drawn convolution: 1 to 3 images of up to 24 x 24 pixels; kernels 1 to 5 a side, stride 1 to
// 3, dilation 1 or 2, padding up to the dilated kernel's reach; groups 1, or (grouped ops) 2, 3 or
// depthwise with a channel multiplier of 1 or 2; bias; channels-last activations.
ConvSpec draw_conv_spec(Generator& g, bool grouped, std::string& text) {
  ConvSpec spec{};
  spec.name = "";
  spec.n = g.integer(1, 3);
  const int64_t kind = grouped ? g.integer(0, 3) : 0;  // 0: groups 1, 1: 2, 2: 3, 3: depthwise
  if (kind == 3) {
    spec.c = draw_extent(g, 48);
    spec.groups = static_cast<int32_t>(spec.c);
    spec.o = spec.c * g.integer(1, 2);
  } else {
    spec.groups = static_cast<int32_t>(kind + 1);
    spec.c = spec.groups * (kind == 0 ? draw_extent(g, 16) : g.integer(1, 4));
    spec.o = spec.groups * (kind == 0 ? draw_extent(g, 16) : g.integer(1, 4));
  }
  const bool square = chance(g, 0.5);
  spec.kh = g.integer(1, 5);
  spec.kw = square ? spec.kh : g.integer(1, 5);
  spec.stride_h = chance(g, 0.5) ? 1 : static_cast<int32_t>(g.integer(1, 3));
  spec.stride_w = square ? spec.stride_h : static_cast<int32_t>(g.integer(1, 3));
  spec.dilation_h = chance(g, 0.8) ? 1 : 2;
  spec.dilation_w = square ? spec.dilation_h : (chance(g, 0.8) ? 1 : 2);
  spec.pad_h = static_cast<int32_t>(g.integer(0, spec.dilation_h * (spec.kh - 1)));
  spec.pad_w =
      square ? spec.pad_h : static_cast<int32_t>(g.integer(0, spec.dilation_w * (spec.kw - 1)));
  // At least one output pixel.
  spec.h = std::max(draw_extent(g, 24), spec.dilation_h * (spec.kh - 1) + 1 - 2 * spec.pad_h);
  spec.w = std::max(draw_extent(g, 24), spec.dilation_w * (spec.kw - 1) + 1 - 2 * spec.pad_w);
  spec.bias = chance(g, 0.5);
  spec.channels_last = chance(g, 0.3);
  text = "n" + std::to_string(spec.n) + "c" + std::to_string(spec.c) + "h" +
         std::to_string(spec.h) + "w" + std::to_string(spec.w) + "o" + std::to_string(spec.o) +
         "/k" + std::to_string(spec.kh) + "x" + std::to_string(spec.kw) + "/s" +
         std::to_string(spec.stride_h) + "x" + std::to_string(spec.stride_w) + "/p" +
         std::to_string(spec.pad_h) + "x" + std::to_string(spec.pad_w) + "/d" +
         std::to_string(spec.dilation_h) + "x" + std::to_string(spec.dilation_w);
  if (grouped) text += "/g" + std::to_string(spec.groups);
  if (spec.bias) text += "/bias";
  if (spec.channels_last) text += "/channels_last";
  return spec;
}

// A drawn fused convolution: a grouped convolution as above, each activation (CLIP with bounds
// [0, 6] or [-0.5, 0.5]), with a residual half of the time (dense NCHW beside channels-last
// activations a third of those times).
FusedSpec draw_fused_spec(Generator& g, std::string& text) {
  FusedSpec spec{};
  spec.name = "";
  spec.conv = draw_conv_spec(g, true, text);
  spec.activation = static_cast<uint32_t>(g.integer(0, 3));
  if (spec.activation == SY_ACTIVATION_CLIP) {
    const bool relu6 = chance(g, 0.5);
    spec.low = relu6 ? 0.0f : -0.5f;
    spec.high = relu6 ? 6.0f : 0.5f;
  }
  spec.residual = chance(g, 0.5);
  spec.nchw_residual = spec.residual && spec.conv.channels_last && chance(g, 0.33);
  const char* const activations[] = {"NONE", "RELU", "CLIP", "SILU"};
  text += std::string("/") + activations[spec.activation];
  if (spec.residual) text += spec.nchw_residual ? "/residual_nchw" : "/residual";
  return spec;
}

}  // namespace

void add_drawn_conv_cases(CaseTable& table, uint64_t seed, int count) {
  add_drawn_op(table, seed, count, SY_OP_CONV2D_FUSED,
               [](Generator& g, sy_dtype dtype, std::string& text) {
                 const FusedSpec spec = draw_fused_spec(g, text);
                 return [dtype, spec](Generator& gen) { return build_fused(gen, dtype, spec); };
               });
  for (sy_op op : {SY_OP_CONV2D, SY_OP_CONV2D_BACKWARD_DATA, SY_OP_CONV2D_BACKWARD_WEIGHT,
                   SY_OP_CONV2D_GROUPED, SY_OP_CONV2D_GROUPED_BACKWARD_DATA,
                   SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT}) {
    const bool grouped = op == SY_OP_CONV2D_GROUPED || op == SY_OP_CONV2D_GROUPED_BACKWARD_DATA ||
                         op == SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT;
    add_drawn_op(
        table, seed, count, op, [op, grouped](Generator& g, sy_dtype dtype, std::string& text) {
          const ConvSpec spec = draw_conv_spec(g, grouped, text);
          return [op, dtype, spec](Generator& gen) { return build_conv(gen, op, dtype, spec); };
        });
  }
}

void add_conv_cases(CaseTable& table) {
  for (sy_dtype dtype : kFloatDtypes) {
    for (const FusedSpec& spec : kFusedSpecs) {
      add_case(table, SY_OP_CONV2D_FUSED, dtype, spec.name,
               [dtype, spec](Generator& gen) { return build_fused(gen, dtype, spec); });
    }
  }
  for (sy_op op : {SY_OP_CONV2D, SY_OP_CONV2D_BACKWARD_DATA, SY_OP_CONV2D_BACKWARD_WEIGHT}) {
    for (sy_dtype dtype : kFloatDtypes) {
      for (const ConvSpec& spec : kConvSpecs) {
        add_case(table, op, dtype, spec.name,
                 [op, dtype, spec](Generator& gen) { return build_conv(gen, op, dtype, spec); });
      }
    }
  }
  for (sy_op op : {SY_OP_CONV2D_GROUPED, SY_OP_CONV2D_GROUPED_BACKWARD_DATA,
                   SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT}) {
    for (sy_dtype dtype : kFloatDtypes) {
      for (const ConvSpec& spec : kGroupedSpecs) {
        add_case(table, op, dtype, spec.name,
                 [op, dtype, spec](Generator& gen) { return build_conv(gen, op, dtype, spec); });
      }
    }
  }
}

}  // namespace switchyard::conformance
