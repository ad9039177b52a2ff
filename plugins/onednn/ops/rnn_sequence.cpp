// LSTM_SEQUENCE and GRU_SEQUENCE (docs/ops.md section 17) on oneDNN's RNN primitives: vanilla LSTM
// (lstm_forward) and linear-before-reset GRU (lbr_gru_forward), one layer and one direction per
// call, forward inference. The training forward (with ws) is rnn_training.cpp's.
//
// Layouts: PyTorch's weight [G*H, in] is oneDNN's ldgoi ({1, 1, in, G, H} with the input channel
// innermost). The primitive is asked for that layout first, so the caller's weights are used in
// place; where oneDNN wants its own layout, a cached reorder converts them on every call. oneDNN's
// LSTM gates are i, f, c~, o, PyTorch's order; its GRU gates are u, r, o where PyTorch has r, z, n,
// so GRU weights go through a scratch copy with the first two gate blocks swapped. oneDNN's bias is
// one vector per gate (b_ih + b_hh), plus b_hn as a fourth for the linear-before-reset GRU.
//
// Converting a weight costs about as much as the layer's recurrence at batch 1 (oneDNN 2.6's
// brgemm RNN wants its blocked layout: about 0.7 ms for a [1024, 256] weight), so converted
// weights are kept. Weights the call promises constant (SY_CALL_CONSTANT_WEIGHTS; the ONNX
// importer's initializers) are kept in device.weights by buffer until it is released, and used
// with no check. Others are kept per device and weight address, and used again only while the
// caller's bytes are unchanged (a memcmp against a saved copy, some 50 us per MB): a training step
// or load_state_dict that rewrites the weights in place gets a fresh conversion.
// f16 and bf16 run through f32 scratch tensors.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "dnnl_util.h"
#include "ops/lstm_recurrence.h"
#include "ops/ops.h"
#include "ops/rnn_training.h"

namespace sy_onednn {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct RnnEntry : CachedPrimitive {
  dnnl::primitive primitive;
  memory::desc src_layer, state, bias, dst_layer;
  ArgLayout weights_layer, weights_iter;
  memory::desc scratchpad;
};

struct RnnShape {
  int64_t t = 0, b = 0, in = 0, h = 0, g = 0;
  bool lstm = true;
  int states = 1;  // 2 for LSTM (h and c)
};

RnnShape checked_shape(OpContext& ctx) {
  RnnShape s;
  s.lstm = ctx.op == SY_OP_LSTM_SEQUENCE;
  s.states = s.lstm ? 2 : 1;
  s.g = s.lstm ? 4 : 3;
  const sy_rnn_params& p = ctx.params.rnn;
  if (p.reverse > 1 || p.has_bias > 1) {
    ctx.fail_shape(cat("params.rnn.reverse and has_bias must be 0 or 1, got ", p.reverse, " and ",
                       p.has_bias));
  }
  // The optional last output is ws (rnn_training.cpp).
  const bool with_ws = ctx.num_outputs == s.states + 2;
  ctx.require_counts(s.states + 3 + (p.has_bias != 0 ? 2 : 0), s.states + 1 + (with_ws ? 1 : 0));
  const TensorView& x = ctx.in[0];
  ctx.require_float(x, "x");
  if (x.rank != 3) ctx.fail_shape(cat("x has shape ", shape_string(x), ", expected [T, B, input]"));
  s.t = x.shape[0];
  s.b = x.shape[1];
  s.in = x.shape[2];
  s.h = p.hidden_size;
  if (s.t < 1 || s.b < 1 || s.h < 1) {
    ctx.fail_shape(cat("needs at least one step, one sequence and hidden_size >= 1; got x ",
                       shape_string(x), " and hidden_size ", s.h));
  }
  const int64_t state[2] = {s.b, s.h};
  const char* state_roles[2] = {"h0", "c0"};
  for (int k = 0; k < s.states; ++k) {
    ctx.require_same_dtype(x, "x", ctx.in[1 + k], state_roles[k]);
    ctx.require_shape(ctx.in[1 + k], state_roles[k], state, 2);
  }
  const int w = 1 + s.states;
  const int64_t w_ih[2] = {s.g * s.h, s.in};
  const int64_t w_hh[2] = {s.g * s.h, s.h};
  const int64_t bias[1] = {s.g * s.h};
  ctx.require_same_dtype(x, "x", ctx.in[w], "w_ih");
  ctx.require_shape(ctx.in[w], "w_ih", w_ih, 2);
  ctx.require_same_dtype(x, "x", ctx.in[w + 1], "w_hh");
  ctx.require_shape(ctx.in[w + 1], "w_hh", w_hh, 2);
  if (p.has_bias != 0) {
    ctx.require_same_dtype(x, "x", ctx.in[w + 2], "b_ih");
    ctx.require_shape(ctx.in[w + 2], "b_ih", bias, 1);
    ctx.require_same_dtype(x, "x", ctx.in[w + 3], "b_hh");
    ctx.require_shape(ctx.in[w + 3], "b_hh", bias, 1);
  }
  const int64_t y[3] = {s.t, s.b, s.h};
  ctx.require_same_dtype(x, "x", ctx.out[0], "y");
  ctx.require_shape(ctx.out[0], "y", y, 3);
  const char* out_roles[2] = {"h_n", "c_n"};
  for (int k = 0; k < s.states; ++k) {
    ctx.require_same_dtype(x, "x", ctx.out[1 + k], out_roles[k]);
    ctx.require_shape(ctx.out[1 + k], out_roles[k], state, 2);
  }
  return s;
}

// The primitive for `s`, with weights in ldgoi where oneDNN takes them so (else its own layout).
std::shared_ptr<RnnEntry> make_entry(const OpContext& ctx, const RnnShape& s, bool reverse) {
  auto entry = std::make_shared<RnnEntry>();
  const dnnl::engine& engine = ctx.device.engine;
  entry->src_layer = memory::desc({s.t, s.b, s.in}, dt::f32, tag::tnc);
  entry->dst_layer = memory::desc({s.t, s.b, s.h}, dt::f32, tag::tnc);
  entry->state = memory::desc({1, 1, s.b, s.h}, dt::f32, tag::ldnc);
  entry->bias = memory::desc({1, 1, s.lstm ? s.g : s.g + 1, s.h}, dt::f32, tag::ldgo);
  const memory::desc user_layer({1, 1, s.in, s.g, s.h}, dt::f32, tag::ldgoi);
  const memory::desc user_iter({1, 1, s.h, s.g, s.h}, dt::f32, tag::ldgoi);
  const auto direction = reverse ? dnnl::rnn_direction::unidirectional_right2left
                                 : dnnl::rnn_direction::unidirectional_left2right;
  const auto prop = dnnl::prop_kind::forward_inference;
  auto build = [&](const memory::desc& layer, const memory::desc& iter) {
    const memory::desc& st = entry->state;
    if (s.lstm) {
      dnnl::lstm_forward::desc desc(prop, direction, entry->src_layer, st, st, layer, iter,
                                    entry->bias, entry->dst_layer, st, st);
      dnnl::lstm_forward::primitive_desc pd(desc, primitive_attr(ctx), engine);
      entry->primitive = dnnl::lstm_forward(pd);
      entry->scratchpad = pd.scratchpad_desc();
      entry->weights_layer = make_input_layout(engine, user_layer, pd.weights_layer_desc());
      entry->weights_iter = make_input_layout(engine, user_iter, pd.weights_iter_desc());
    } else {
      dnnl::lbr_gru_forward::desc desc(prop, direction, entry->src_layer, st, layer, iter,
                                       entry->bias, entry->dst_layer, st);
      dnnl::lbr_gru_forward::primitive_desc pd(desc, primitive_attr(ctx), engine);
      entry->primitive = dnnl::lbr_gru_forward(pd);
      entry->scratchpad = pd.scratchpad_desc();
      entry->weights_layer = make_input_layout(engine, user_layer, pd.weights_layer_desc());
      entry->weights_iter = make_input_layout(engine, user_iter, pd.weights_iter_desc());
    }
  };
  try {
    build(user_layer, user_iter);
  } catch (const dnnl::error& e) {
    if (e.status != dnnl_unimplemented) throw;
    const memory::desc any_layer({1, 1, s.in, s.g, s.h}, dt::f32, tag::any);
    const memory::desc any_iter({1, 1, s.h, s.g, s.h}, dt::f32, tag::any);
    build(any_layer, any_iter);
  }
  return entry;
}

// A dense [G*H, width] copy of a weight (any strides) in oneDNN's gate order: GRU's r and z blocks
// trade places; LSTM weights that are already dense are used as they are.
float* weights_in_dnnl_order(OpContext& ctx, const RnnShape& s, const TensorView& w) {
  if (s.lstm && w.is_contiguous()) return w.as<float>();
  const int64_t width = w.shape[1];
  const int64_t shape[2] = {s.g * s.h, width};
  TensorView dense = ctx.scratch_view(SY_DTYPE_F32, 2, shape);
  copy_view(w, dense, 1);
  if (!s.lstm) {
    float* data = dense.as<float>();
    const int64_t block = s.h * width;
    for (int64_t k = 0; k < block; ++k) std::swap(data[k], data[block + k]);
  }
  return dense.as<float>();
}

// oneDNN's bias {G (+1 for GRU), H}: LSTM b_ih + b_hh per gate; GRU u = z, r, then b_in and b_hn.
float* combined_bias(OpContext& ctx, const RnnShape& s, int first_bias) {
  const int64_t rows = s.lstm ? s.g : s.g + 1;
  auto* bias = static_cast<float*>(ctx.scratch(static_cast<size_t>(rows * s.h) * sizeof(float)));
  std::memset(bias, 0, static_cast<size_t>(rows * s.h) * sizeof(float));
  if (ctx.params.rnn.has_bias == 0) return bias;
  const TensorView& b_ih = ctx.in[first_bias];
  const TensorView& b_hh = ctx.in[first_bias + 1];
  auto at = [](const TensorView& v, int64_t k) { return v.as<float>()[k * v.strides[0]]; };
  for (int64_t gate = 0; gate < s.g; ++gate) {
    // PyTorch's gate `gate` goes to oneDNN's row `row`.
    const int64_t row = s.lstm || gate == 2 ? gate : 1 - gate;
    for (int64_t j = 0; j < s.h; ++j) {
      const int64_t k = gate * s.h + j;
      if (!s.lstm && gate == 2) {
        bias[2 * s.h + j] = at(b_ih, k);
        bias[3 * s.h + j] = at(b_hh, k);
      } else {
        bias[row * s.h + j] = at(b_ih, k) + at(b_hh, k);
      }
    }
  }
  return bias;
}

// A weight in the primitive's layout, and the caller's bytes it was converted from.
struct ConvertedWeight {
  std::vector<char> source;
  std::vector<char> converted;
};

// (device, op, which weight, caller's address, T, B, in, H).
using WeightKey =
    std::tuple<const void*, uint32_t, int, const void*, int64_t, int64_t, int64_t, int64_t>;

// Shared by every device of the plugin, so guarded; entries hold their memory alive through
// shared_ptr while a call uses them even if another device's call clears the map.
std::mutex g_weights_mutex;
std::map<WeightKey, std::shared_ptr<const ConvertedWeight>> g_weights;
constexpr size_t kMaxConvertedWeights = 64;

// `w` converted by `convert` (which returns `size` converted bytes): a cached conversion while the
// caller's bytes are unchanged, else a fresh one (`kept` holds either while the call uses it).
void* cached_conversion(const WeightKey& key, const TensorView& w, size_t size,
                        std::shared_ptr<const void>& kept, const std::function<void*()>& convert) {
  const auto bytes = static_cast<size_t>(w.numel()) * sizeof(float);
  std::shared_ptr<const ConvertedWeight> hold;
  {
    const std::lock_guard<std::mutex> lock(g_weights_mutex);
    const auto found = g_weights.find(key);
    if (found != g_weights.end()) hold = found->second;
  }
  if (hold != nullptr && hold->source.size() == bytes &&
      std::memcmp(hold->source.data(), w.data, bytes) == 0) {
    kept = std::shared_ptr<const void>(hold, hold->converted.data());
    return const_cast<char*>(hold->converted.data());
  }
  void* converted = convert();
  auto fresh = std::make_shared<ConvertedWeight>();
  fresh->source.assign(w.data, w.data + bytes);
  const auto* begin = static_cast<const char*>(converted);
  fresh->converted.assign(begin, begin + size);
  kept = std::shared_ptr<const void>(fresh, fresh->converted.data());
  const std::lock_guard<std::mutex> lock(g_weights_mutex);
  if (g_weights.size() >= kMaxConvertedWeights) g_weights.clear();
  g_weights[key] = fresh;
  return converted;
}

// Input `input` (the caller's `w`) converted by `convert` to `internal` (internal.get_size()
// bytes; `user` is w's own layout), kept as the file's comment says: in device.weights by buffer
// where the call promises the input constant, else cached under `key` by the caller's bytes.
void* converted_weight(OpContext& ctx, int input, const WeightKey& key, const TensorView& w,
                       const memory::desc& user, const memory::desc& internal,
                       std::shared_ptr<const void>& kept, const std::function<void*()>& convert) {
  if (ctx.constant_buffer[input] != 0) {
    return kept_conversion(ctx, input, w, user, internal, kept, convert);
  }
  return cached_conversion(key, w, internal.get_size(), kept, convert);
}

// Input `input` (w_ih or w_hh) in the primitive's layout: the caller's own bytes where the
// layouts agree, else a converted_weight.
void* weights_for(OpContext& ctx, const RnnShape& s, const ArgLayout& layout, int input,
                  std::shared_ptr<const void>& kept) {
  const TensorView& w = ctx.in[input];
  const auto convert = [&] { return prepare_input(ctx, layout, weights_in_dnnl_order(ctx, s, w)); };
  if (layout.same || !w.is_contiguous()) return convert();
  const int which = input - (1 + s.states);  // 0 w_ih, 1 w_hh
  const WeightKey key{&ctx.device, ctx.op, which, w.data, s.t, s.b, s.in, s.h};
  return converted_weight(ctx, input, key, w, layout.user, layout.internal, kept, convert);
}

// --- The small-batch LSTM: one input projection, then run_lstm_recurrence ----------------------

// Batches up to this take the projected path (lstm_recurrence.h); larger ones the primitive, whose
// per-step brgemm is efficient once a step has rows to share its weight reads.
constexpr int64_t kMaxProjectedBatch = 4;
constexpr int64_t kProjectionKey = 0x70726f6a;  // "proj": the projection's cache entries

struct ProjectionEntry : CachedPrimitive {
  dnnl::primitive primitive;
  memory::desc src, bias, dst, scratchpad;
  ArgLayout weights;  // W_ih as the transposed [in, 4H] operand, or packed
};

// gates [T * B, 4H] = x W_ih^T + (b_ih + b_hh), one oneDNN matmul over every step. W_ih (input
// `input`) is read in place as the transposed [in, 4H] operand, or, where the call promises it
// constant, packed once into the layout oneDNN picks and kept: oneDNN 2.6 reads a transposed
// operand slowly at few rows (the text RNN's [50, 2000] x [2000, 1024]: 999 us in place, 883
// packed, on a 2-core Zen 4).
void project_inputs(OpContext& ctx, const RnnShape& s, const TensorView& x, const TensorView& w_ih,
                    int input, const float* bias, float* gates) {
  const int64_t rows = s.t * s.b;
  const int64_t cols = s.g * s.h;
  const double flops = 2.0 * static_cast<double>(rows * cols) * static_cast<double>(s.in);
  const int threads = ctx.threads_for(static_cast<int64_t>(flops), kMinFlops);
  ctx.use_threads(threads);
  const bool pack = ctx.constant_buffer[input] != 0 && w_ih.data == ctx.in[input].data;
  CacheKeyBuilder key(ctx.op);
  key.add(kProjectionKey).add(threads).add(rows).add(s.in).add(cols).add(pack);
  auto entry = ctx.device.primitives.get_or_create<ProjectionEntry>(key.finish(), [&] {
    auto made = std::make_shared<ProjectionEntry>();
    made->src = memory::desc({rows, s.in}, dt::f32, tag::ab);
    const memory::desc transposed({s.in, cols}, dt::f32, tag::ba);
    made->bias = memory::desc({1, cols}, dt::f32, tag::ab);
    made->dst = memory::desc({rows, cols}, dt::f32, tag::ab);
    const memory::desc weights = pack ? memory::desc({s.in, cols}, dt::f32, tag::any) : transposed;
    dnnl::matmul::desc desc(made->src, weights, made->bias, made->dst);
    dnnl::matmul::primitive_desc pd(desc, primitive_attr(ctx), ctx.device.engine);
    made->primitive = dnnl::matmul(pd);
    made->weights = make_input_layout(ctx.device.engine, transposed, pd.weights_desc());
    made->scratchpad = pd.scratchpad_desc();
    return made;
  });
  std::shared_ptr<const void> kept;
  void* weights = constant_weights(ctx, entry->weights, w_ih, kept, input);
  execute_primitive(ctx, entry->primitive, entry->scratchpad,
                    {{DNNL_ARG_SRC, &entry->src, x.data},
                     {DNNL_ARG_WEIGHTS, &entry->weights.internal, weights},
                     {DNNL_ARG_BIAS, &entry->bias, const_cast<float*>(bias)},
                     {DNNL_ARG_DST, &entry->dst, gates}});
}

// W_hh (input `input`) in pack_lstm_w_hh's panels, kept like the primitive's weights.
const float* packed_w_hh(OpContext& ctx, const RnnShape& s, const TensorView& w_hh, int input,
                         std::shared_ptr<const void>& kept) {
  // The descriptors only key the kept copy and size it: the caller's [4H, H] and the panels.
  const memory::desc user({s.g * s.h, s.h}, dt::f32, tag::ab);
  const memory::desc panels({lstm_packed_size(s.h)}, dt::f32, tag::a);
  const auto pack = [&] {
    void* packed = ctx.scratch(panels.get_size());
    pack_lstm_w_hh(w_hh.as<float>(), s.h, static_cast<float*>(packed));
    return packed;
  };
  const WeightKey key{&ctx.device, ctx.op, 2, w_hh.data, 0, 0, 0, s.h};
  return static_cast<const float*>(
      converted_weight(ctx, input, key, w_hh, user, panels, kept, pack));
}

// LSTM_SEQUENCE as one input projection and run_lstm_recurrence (B <= kMaxProjectedBatch).
void lstm_projected_f32(OpContext& ctx, const RnnShape& s) {
  const int w = 1 + s.states;  // (x, h0, c0, w_ih, w_hh [, b_ih, b_hh])
  const TensorView x = dense_copy(ctx, ctx.in[0], SY_DTYPE_F32);
  const TensorView h0 = dense_copy(ctx, ctx.in[1], SY_DTYPE_F32);
  const TensorView w_ih = dense_copy(ctx, ctx.in[w], SY_DTYPE_F32);
  const TensorView w_hh = dense_copy(ctx, ctx.in[w + 1], SY_DTYPE_F32);
  float* bias = combined_bias(ctx, s, w + 2);  // LSTM: rows i, f, g, o of b_ih + b_hh, as [4H]
  const int64_t gate_bytes = s.t * s.b * s.g * s.h * static_cast<int64_t>(sizeof(float));
  auto* gates = static_cast<float*>(ctx.scratch(static_cast<size_t>(gate_bytes)));
  project_inputs(ctx, s, x, w_ih, w, bias, gates);
  std::shared_ptr<const void> hold;
  TensorView y = ctx.out[0].is_contiguous()
                     ? ctx.out[0]
                     : ctx.scratch_view(SY_DTYPE_F32, ctx.out[0].rank, ctx.out[0].shape);
  TensorView c = ctx.out[2].is_contiguous()
                     ? ctx.out[2]
                     : ctx.scratch_view(SY_DTYPE_F32, ctx.out[2].rank, ctx.out[2].shape);
  copy_view(ctx.in[2], c, 1);
  LstmRecurrence r;
  r.steps = s.t;
  r.batch = s.b;
  r.hidden = s.h;
  r.reverse = ctx.params.rnn.reverse != 0;
  r.gates_in = gates;
  r.w_hh_packed = packed_w_hh(ctx, s, w_hh, w + 1, hold);
  r.h0 = h0.as<float>();
  r.y = y.as<float>();
  r.c = c.as<float>();
  // A step is 2 B 4H H flops, some 0.5 MFLOP at B = 1 and H = 256: two threads pay for their
  // barrier once a step is about that large.
  const int threads = ctx.threads_for(2 * s.b * s.g * s.h * s.h, int64_t{1} << 18);
  ctx.use_threads(threads);
  run_lstm_recurrence(r, threads);
  if (y.data != ctx.out[0].data) copy_view(y, ctx.out[0], 1);
  if (c.data != ctx.out[2].data) copy_view(c, ctx.out[2], 1);
  // h_n is y at the last position processed.
  const int64_t last = r.reverse ? 0 : s.t - 1;
  TensorView h_last = y;
  h_last.rank = 2;
  h_last.data = y.data + last * y.strides[0] * static_cast<int64_t>(sizeof(float));
  h_last.shape[0] = y.shape[1];
  h_last.shape[1] = y.shape[2];
  h_last.strides[0] = y.strides[1];
  h_last.strides[1] = y.strides[2];
  copy_view(h_last, ctx.out[1], 1);
}

void rnn_sequence_f32(OpContext& ctx) {
  const RnnShape s = checked_shape(ctx);
  if (ctx.num_outputs == s.states + 2) {
    if (s.lstm) return lstm_forward_with_ws_f32(ctx, s.t, s.b, s.in, s.h);
    return gru_forward_with_ws_f32(ctx, s.t, s.b, s.in, s.h);
  }
  if (s.lstm && s.b <= kMaxProjectedBatch) return lstm_projected_f32(ctx, s);
  const bool reverse = ctx.params.rnn.reverse != 0;
  // Threads by the work of one step, not of the sequence: the primitive meets its threads at a
  // barrier every step, and at batch 1 a step is some 10-20 us of work, less than waking a second
  // thread costs on a busy machine (op_context.h).
  const int64_t step_flops = 2 * s.b * s.g * s.h * (s.in + s.h);
  const int threads = ctx.threads_for(step_flops, kMinFlops);
  ctx.use_threads(threads);
  CacheKeyBuilder key(ctx.op);
  key.add(threads).add(reverse ? 1 : 0).add(s.t).add(s.b).add(s.in).add(s.h);
  auto entry = ctx.device.primitives.get_or_create<RnnEntry>(
      key.finish(), [&] { return make_entry(ctx, s, reverse); });
  const int w = 1 + s.states;
  const TensorView x = dense_copy(ctx, ctx.in[0], SY_DTYPE_F32);
  const TensorView h0 = dense_copy(ctx, ctx.in[1], SY_DTYPE_F32);
  const TensorView c0 = s.lstm ? dense_copy(ctx, ctx.in[2], SY_DTYPE_F32) : TensorView();
  std::shared_ptr<const void> hold_layer, hold_iter;
  void* w_layer = weights_for(ctx, s, entry->weights_layer, w, hold_layer);
  void* w_iter = weights_for(ctx, s, entry->weights_iter, w + 1, hold_iter);
  float* bias = combined_bias(ctx, s, w + 2);
  TensorView outs[3];
  for (int k = 0; k <= s.states; ++k) {
    outs[k] = ctx.out[k].is_contiguous()
                  ? ctx.out[k]
                  : ctx.scratch_view(SY_DTYPE_F32, ctx.out[k].rank, ctx.out[k].shape);
  }
  execute_primitive(ctx, entry->primitive, entry->scratchpad,
                    {{DNNL_ARG_SRC_LAYER, &entry->src_layer, x.data},
                     {DNNL_ARG_SRC_ITER, &entry->state, h0.data},
                     {DNNL_ARG_SRC_ITER_C, &entry->state, s.lstm ? c0.data : nullptr},
                     {DNNL_ARG_WEIGHTS_LAYER, &entry->weights_layer.internal, w_layer},
                     {DNNL_ARG_WEIGHTS_ITER, &entry->weights_iter.internal, w_iter},
                     {DNNL_ARG_BIAS, &entry->bias, bias},
                     {DNNL_ARG_DST_LAYER, &entry->dst_layer, outs[0].data},
                     {DNNL_ARG_DST_ITER, &entry->state, outs[1].data},
                     {DNNL_ARG_DST_ITER_C, &entry->state, s.lstm ? outs[2].data : nullptr}});
  for (int k = 0; k <= s.states; ++k) {
    if (outs[k].data != ctx.out[k].data) copy_view(outs[k], ctx.out[k], 1);
  }
}

}  // namespace

void run_rnn_sequence(OpContext& ctx) {
  const uint32_t dtype = ctx.in[0].dtype;
  if (dtype == SY_DTYPE_F32) {
    rnn_sequence_f32(ctx);
  } else {
    run_through_f32(ctx, rnn_sequence_f32, dtype);
  }
}

}  // namespace sy_onednn
