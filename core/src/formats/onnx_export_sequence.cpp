// ONNX export of the sequence layers (see onnx_export.h): embedding, LSTM and GRU as ONNX's
// recurrent ops, multi-head attention composed of MatMul, Softmax, Reshape and Transpose, the
// Transformer encoder, positional encodings, the CLS token and sequence pooling.
#include <cmath>

#include "formats/onnx_export.h"
#include "formats/onnx_proto.h"
#include "formats/onnx_tensor.h"
#include "switchyard/nn_sequence.h"

namespace switchyard::onnx_detail {
namespace {

[[noreturn]] void refuse(const Module& module, const std::string& why) {
  throw_error(invalid_argument("ONNX export: " + module.describe() + ": " + why));
}

void require_sequence(const Module& module, const Flow& in) {
  if (in.shape.size() != 2) {
    refuse(module, "needs sequence-shaped samples [time, features], got " + shape_text(in.shape));
  }
}

std::string transpose(GraphWriter& g, const std::string& x, const std::vector<int64_t>& perm,
                      const std::string& scope) {
  onnx::NodeProto& node = g.node("Transpose", {x}, scope);
  GraphWriter::attribute(node, "perm", perm);
  return GraphWriter::output(node);
}

std::string reshape(GraphWriter& g, const std::string& x, const std::vector<int64_t>& shape,
                    const std::string& scope) {
  return g.op("Reshape", {x, g.int64s(scoped(scope, "shape"), shape)}, scope);
}

// ---- embedding ----------------------------------------------------------------------------------

// The ids arrive as floats holding whole numbers (the features); Cast truncates as the layer's own
// conversion to int64 does.
Flow export_embedding(GraphWriter& g, const Embedding& embedding, const Flow& in,
                      const std::string& scope) {
  if (in.shape.size() != 1) {
    refuse(embedding, "needs samples of ids [time], got " + shape_text(in.shape));
  }
  onnx::NodeProto& cast = g.node("Cast", {in.value}, scope);
  GraphWriter::attribute(cast, "to", int64_t{kInt64});
  onnx::NodeProto& gather = g.node(
      "Gather", {g.tensor(scoped(scope, "weight"), embedding.weight()), GraphWriter::output(cast)},
      scope);
  GraphWriter::attribute(gather, "axis", int64_t{0});
  return {GraphWriter::output(gather), {in.shape[0], embedding.weight().dim(1)}};
}

// ---- LSTM and GRU -------------------------------------------------------------------------------

// PyTorch's gate blocks in ONNX's order, appended to `out`: ONNX block k is PyTorch block
// order[k] (LSTM ifgo -> iofc, GRU rzn -> zrh).
void append_gates(const Tensor& tensor, const std::vector<int>& order, std::vector<float>& out) {
  const std::vector<float> values = tensor.to(DType::kF32).to_host_float();
  const auto block = static_cast<int64_t>(values.size() / order.size());
  for (const int from : order) {
    out.insert(out.end(), values.begin() + from * block, values.begin() + (from + 1) * block);
  }
}

// One ONNX LSTM or GRU node per layer (both directions in one), time-major as ONNX's layout 0:
// Transpose to [T, B, I] first, chain the layers ([T, D, B, H] -> [T, B, D*H]), transpose back.
// Dropout between layers is training-only.
Flow export_recurrent(GraphWriter& g, const RecurrentBase& rnn, const Flow& in,
                      const std::string& scope) {
  const RecurrentOptions& o = rnn.options();
  require_sequence(rnn, in);
  if (!o.batch_first) refuse(rnn, "only batch_first layers export");
  const bool lstm = dynamic_cast<const LSTM*>(&rnn) != nullptr;
  const int64_t gates = lstm ? 4 : 3, hidden = o.hidden_size, directions = o.bidirectional ? 2 : 1;
  const std::vector<int> order = lstm ? std::vector<int>{0, 3, 1, 2} : std::vector<int>{1, 0, 2};
  std::string x = transpose(g, in.value, {1, 0, 2}, scope);
  for (int layer = 0; layer < o.num_layers; ++layer) {
    const int64_t input = layer == 0 ? o.input_size : directions * hidden;
    std::vector<float> w, r, b;
    for (int64_t d = 0; d < directions; ++d) {
      const std::string suffix = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      append_gates(parameter(rnn, "weight_ih" + suffix), order, w);
      append_gates(parameter(rnn, "weight_hh" + suffix), order, r);
      if (o.bias) {  // ONNX's B is [Wb, Rb] per direction
        append_gates(parameter(rnn, "bias_ih" + suffix), order, b);
        append_gates(parameter(rnn, "bias_hh" + suffix), order, b);
      }
    }
    const std::string name = scoped(scope, "l" + std::to_string(layer));
    std::vector<std::string> inputs = {
        x, g.floats(name + ".W", w, {directions, gates * hidden, input}),
        g.floats(name + ".R", r, {directions, gates * hidden, hidden})};
    if (o.bias) inputs.push_back(g.floats(name + ".B", b, {directions, 2 * gates * hidden}));
    onnx::NodeProto& node = g.node(lstm ? "LSTM" : "GRU", inputs, name);
    GraphWriter::attribute(node, "hidden_size", hidden);
    GraphWriter::attribute(node, "direction",
                           std::string(directions == 2 ? "bidirectional" : "forward"));
    if (!lstm) GraphWriter::attribute(node, "linear_before_reset", int64_t{1});
    const std::string y = GraphWriter::output(node);  // [T, D, B, H]
    if (directions == 1) {
      x = g.op("Squeeze", {y, g.int64s(name + ".axes", {1})}, name);
    } else {  // [T, B, D*H]: forward then reverse features, as the layer concatenates them
      x = reshape(g, transpose(g, y, {0, 2, 1, 3}, name), {0, 0, directions * hidden}, name);
    }
  }
  return {transpose(g, x, {1, 0, 2}, scope), {in.shape[0], directions * hidden}};
}

// ---- attention and the Transformer encoder ------------------------------------------------------

Tensor optional_parameter(const Module& module, const std::string& name) {
  for (const auto& [key, value] : module.named_parameters()) {
    if (key == name) return value;
  }
  return {};
}

// [B, T, E] -> [B, heads, T, E / heads], or with perm {0, 2, 3, 1} the keys' [B, heads, d, T].
std::string split_heads(GraphWriter& g, const std::string& x, int64_t heads, int64_t d,
                        const std::vector<int64_t>& perm, const std::string& scope) {
  return transpose(g, reshape(g, x, {0, 0, heads, d}, scope), perm, scope);
}

// Self-attention on [B, T, E] as MultiheadAttention::attend computes it: one in-projection for
// q, k and v, heads split by Reshape and Transpose, q scaled, q k^T, Softmax, times v, heads
// merged, the out-projection. Attention dropout is training-only.
std::string export_attention(GraphWriter& g, const MultiheadAttention& attention,
                             const std::string& x, const std::string& scope) {
  if (!attention.batch_first()) refuse(attention, "only batch_first layers export");
  const int64_t e = attention.embed_dim(), heads = attention.num_heads(), d = e / heads;
  const std::string qkv =
      export_affine(g, x, parameter(attention, "in_proj_weight"),
                    optional_parameter(attention, "in_proj_bias"), scoped(scope, "in_proj"));
  onnx::NodeProto& split =
      g.node("Split", {qkv, g.int64s(scoped(scope, "split"), {e, e, e})}, scope, 3);
  GraphWriter::attribute(split, "axis", int64_t{2});
  const std::string q = GraphWriter::output(split, 0), k = GraphWriter::output(split, 1),
                    v = GraphWriter::output(split, 2);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const std::string q_heads = g.op(
      "Mul",
      {split_heads(g, q, heads, d, {0, 2, 1, 3}, scope), g.scalar(scoped(scope, "scale"), scale)},
      scope);
  const std::string scores =
      g.op("MatMul", {q_heads, split_heads(g, k, heads, d, {0, 2, 3, 1}, scope)}, scope);
  onnx::NodeProto& softmax = g.node("Softmax", {scores}, scope);
  GraphWriter::attribute(softmax, "axis", int64_t{-1});
  const std::string mixed =
      g.op("MatMul",
           {GraphWriter::output(softmax), split_heads(g, v, heads, d, {0, 2, 1, 3}, scope)}, scope);
  const std::string merged = reshape(g, transpose(g, mixed, {0, 2, 1, 3}, scope), {0, 0, e}, scope);
  const auto& out = dynamic_cast<const Linear&>(child(attention, "out_proj"));
  return export_affine(g, merged, out.weight(), out.bias(), scoped(scope, "out_proj"));
}

std::string export_feed_forward(GraphWriter& g, const TransformerEncoderLayer& layer,
                                const Flow& in, const std::string& scope) {
  const auto& linear1 = dynamic_cast<const Linear&>(child(layer, "linear1"));
  const auto& linear2 = dynamic_cast<const Linear&>(child(layer, "linear2"));
  Flow hidden = export_linear(g, linear1, in, scoped(scope, "linear1"));
  hidden.value = layer.options().activation == "gelu"
                     ? export_gelu(g, hidden.value, scoped(scope, "activation"))
                     : g.op("Relu", {hidden.value}, scoped(scope, "activation"));
  return export_linear(g, linear2, hidden, scoped(scope, "linear2")).value;
}

// TransformerEncoderLayer::encode: post-norm x = norm1(x + sa(x)), norm2(x + ff(x)); pre-norm
// x = x + sa(norm1(x)), x + ff(norm2(x)).
Flow export_encoder_layer(GraphWriter& g, const TransformerEncoderLayer& layer, const Flow& in,
                          const std::string& scope) {
  require_sequence(layer, in);
  const auto& attention = dynamic_cast<const MultiheadAttention&>(child(layer, "self_attn"));
  const auto& norm1 = dynamic_cast<const LayerNorm&>(child(layer, "norm1"));
  const auto& norm2 = dynamic_cast<const LayerNorm&>(child(layer, "norm2"));
  const std::string sa = scoped(scope, "self_attn"), n1 = scoped(scope, "norm1"),
                    n2 = scoped(scope, "norm2");
  if (layer.options().norm_first) {
    const Flow normed = export_layer_norm(g, norm1, in, n1);
    const Flow x{g.op("Add", {in.value, export_attention(g, attention, normed.value, sa)}, scope),
                 in.shape};
    const Flow normed2 = export_layer_norm(g, norm2, x, n2);
    return {g.op("Add", {x.value, export_feed_forward(g, layer, normed2, scope)}, scope), in.shape};
  }
  const Flow sum1{g.op("Add", {in.value, export_attention(g, attention, in.value, sa)}, scope),
                  in.shape};
  const Flow x = export_layer_norm(g, norm1, sum1, n1);
  const Flow sum2{g.op("Add", {x.value, export_feed_forward(g, layer, x, scope)}, scope), in.shape};
  return export_layer_norm(g, norm2, sum2, n2);
}

Flow export_encoder(GraphWriter& g, const TransformerEncoder& encoder, const Flow& in,
                    const std::string& scope) {
  Flow x = in;
  for (const auto& [name, layer] : child(encoder, "layers").children()) {
    x = export_encoder_layer(g, dynamic_cast<const TransformerEncoderLayer&>(*layer), x,
                             scoped(scope, "layers." + name));
  }
  for (const auto& [name, module] : encoder.children()) {
    if (name == "norm") {
      x = export_layer_norm(g, dynamic_cast<const LayerNorm&>(*module), x, scoped(scope, "norm"));
    }
  }
  return x;
}

// ---- positions, CLS token, pooling --------------------------------------------------------------

Flow export_positions(GraphWriter& g, const PositionalEncoding& encoding, const Flow& in,
                      const std::string& scope) {
  require_sequence(encoding, in);
  if (!encoding.batch_first()) refuse(encoding, "only batch_first layers export");
  const int64_t steps = in.shape[0];
  if (steps > encoding.table().dim(0)) refuse(encoding, "the sequence is longer than max_len");
  const std::string positions =
      g.tensor(scoped(scope, "positions"), encoding.table().narrow(0, 0, steps));
  return {g.op("Add", {in.value, positions}, scope), in.shape};
}

// concat(token expanded to [B, 1, d], x) on the time axis; B comes from the input's shape.
Flow export_cls_token(GraphWriter& g, const ClsToken& cls, const Flow& in,
                      const std::string& scope) {
  require_sequence(cls, in);
  const int64_t width = in.shape[1];
  const std::string shape = g.op("Shape", {in.value}, scope);
  const std::string batch = g.op(
      "Slice", {shape, g.int64s(scoped(scope, "zero"), {0}), g.int64s(scoped(scope, "one"), {1})},
      scope);
  onnx::NodeProto& target =
      g.node("Concat", {batch, g.int64s(scoped(scope, "token_shape"), {1, width})}, scope);
  GraphWriter::attribute(target, "axis", int64_t{0});
  const std::string token = g.op("Expand",
                                 {g.tensor(scoped(scope, "cls_token"), parameter(cls, "cls_token")),
                                  GraphWriter::output(target)},
                                 scope);
  onnx::NodeProto& joined_node = g.node("Concat", {token, in.value}, scope);
  GraphWriter::attribute(joined_node, "axis", int64_t{1});
  return {GraphWriter::output(joined_node), {in.shape[0] + 1, width}};
}

Flow export_pool(GraphWriter& g, const SequencePool& pool, const Flow& in,
                 const std::string& scope) {
  require_sequence(pool, in);
  const std::vector<int64_t> shape = {in.shape[1]};
  if (pool.mode() == SequencePool::Mode::kMean) {
    onnx::NodeProto& node = g.node("ReduceMean", {in.value}, scope);
    GraphWriter::attribute(node, "axes", std::vector<int64_t>{1});
    GraphWriter::attribute(node, "keepdims", int64_t{0});
    return {GraphWriter::output(node), shape};
  }
  const int64_t step = pool.mode() == SequencePool::Mode::kLast ? in.shape[0] - 1 : 0;
  onnx::NodeProto& node =
      g.node("Gather", {in.value, g.int64_scalar(scoped(scope, "step"), step)}, scope);
  GraphWriter::attribute(node, "axis", int64_t{1});
  return {GraphWriter::output(node), shape};
}

}  // namespace

bool export_sequence_layer(GraphWriter& g, const Module& module, const Flow& in,
                           const std::string& scope, Flow& out) {
  if (const auto* embedding = dynamic_cast<const Embedding*>(&module)) {
    out = export_embedding(g, *embedding, in, scope);
  } else if (const auto* rnn = dynamic_cast<const RecurrentBase*>(&module)) {
    out = export_recurrent(g, *rnn, in, scope);
  } else if (const auto* attention = dynamic_cast<const MultiheadAttention*>(&module)) {
    require_sequence(*attention, in);
    out = {export_attention(g, *attention, in.value, scope), in.shape};
  } else if (const auto* layer = dynamic_cast<const TransformerEncoderLayer*>(&module)) {
    out = export_encoder_layer(g, *layer, in, scope);
  } else if (const auto* encoder = dynamic_cast<const TransformerEncoder*>(&module)) {
    out = export_encoder(g, *encoder, in, scope);
  } else if (const auto* encoding = dynamic_cast<const PositionalEncoding*>(&module)) {
    out = export_positions(g, *encoding, in, scope);
  } else if (const auto* cls = dynamic_cast<const ClsToken*>(&module)) {
    out = export_cls_token(g, *cls, in, scope);
  } else if (const auto* pool = dynamic_cast<const SequencePool*>(&module)) {
    out = export_pool(g, *pool, in, scope);
  } else {
    return false;
  }
  return true;
}

}  // namespace switchyard::onnx_detail
