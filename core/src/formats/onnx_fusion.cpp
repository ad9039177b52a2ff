// Fusion at load (fuse_nodes, formats/onnx_graph.h): runs of ONNX nodes that switchyard runs as
// one op. Each pass rewrites nodes in place (the first of a run takes the fused op, the others
// are skipped) and records what it fused in OnnxModel::Impl::fusions (execution_summary).
#include <algorithm>
#include <cmath>

#include "formats/onnx_graph.h"

namespace switchyard::onnx_detail {
namespace {
// How many nodes (and graph outputs) read each value; a value that an If's or a Loop's subgraph
// reads counts as read, and so is never fused away.
std::vector<int> consumer_counts(const OnnxModel::Impl& m) {
  std::vector<int> counts(m.value_names.size(), 0);
  for (const Node& node : m.nodes) {
    if (node.skipped) continue;
    for (const int in : node.inputs) {
      if (in >= 0) ++counts[static_cast<size_t>(in)];
    }
    for (const int in : node.captures) ++counts[static_cast<size_t>(in)];
  }
  for (const int out : m.output_ids) ++counts[static_cast<size_t>(out)];
  return counts;
}

// A one-element float constant: its value, and (when `rank` is given) the highest rank seen so
// far, which the fused node's output takes (Node::lift_rank).
bool constant_scalar(const OnnxModel::Impl& m, int id, double& out, int* rank = nullptr) {
  if (id < 0) return false;
  const Value& v = m.constants[static_cast<size_t>(id)];
  if (!v.host || v.host->tensor.numel() != 1 || !v.host->tensor.is_float()) return false;
  out = v.host->tensor.at(0);
  if (rank != nullptr) *rank = std::max(*rank, static_cast<int>(v.host->tensor.shape.size()));
  return true;
}

// The single live consumer of value `id`, or null.
Node* only_consumer(OnnxModel::Impl& m, const std::vector<int>& counts, int id) {
  if (id < 0 || counts[static_cast<size_t>(id)] != 1) return nullptr;
  for (Node& node : m.nodes) {
    if (node.skipped) continue;
    if (std::find(node.inputs.begin(), node.inputs.end(), id) != node.inputs.end()) return &node;
  }
  return nullptr;
}

// The other input of a binary node, given one of them.
int other_input(const Node& node, int id) {
  if (node.inputs.size() != 2) return -1;
  return node.inputs[0] == id ? node.inputs[1] : node.inputs[0];
}

// x / sqrt(2) -> Erf -> + 1 -> * x -> * 0.5, as torch.onnx exports exact GELU: one gelu op.
void fuse_gelu(OnnxModel::Impl& m) {
  int fused = 0;
  std::vector<int> counts = consumer_counts(m);
  for (Node& erf : m.nodes) {
    if (erf.skipped || erf.op != "Erf" || erf.inputs.size() != 1) continue;
    Node* div = nullptr;
    for (Node& candidate : m.nodes) {
      if (!candidate.skipped && candidate.op == "Div" && !candidate.outputs.empty() &&
          candidate.outputs[0] == erf.inputs[0]) {
        div = &candidate;
      }
    }
    double c = 0;
    int rank = 0;
    if (div == nullptr || div->inputs.size() != 2 ||
        !constant_scalar(m, div->inputs[1], c, &rank) || std::fabs(c - std::sqrt(2.0)) > 1e-4 ||
        counts[static_cast<size_t>(erf.inputs[0])] != 1) {
      continue;
    }
    const int x = div->inputs[0];
    Node* add = only_consumer(m, counts, erf.outputs[0]);
    if (add == nullptr || add->op != "Add" ||
        !constant_scalar(m, other_input(*add, erf.outputs[0]), c, &rank) || c != 1.0)
      continue;
    Node* mul = only_consumer(m, counts, add->outputs[0]);
    if (mul == nullptr || mul->op != "Mul" || other_input(*mul, add->outputs[0]) != x) continue;
    Node* half = only_consumer(m, counts, mul->outputs[0]);
    if (half == nullptr || half->op != "Mul" ||
        !constant_scalar(m, other_input(*half, mul->outputs[0]), c, &rank) || c != 0.5)
      continue;
    div->skipped = erf.skipped = add->skipped = mul->skipped = true;
    half->op = "switchyard.Gelu";
    half->inputs = {x};
    half->lift_rank = rank;
    ++fused;
    counts = consumer_counts(m);
  }
  if (fused > 0) m.fusions.push_back(std::to_string(fused) + " Erf-based GELU into gelu");
}

// MatMul(x, W) + b with constant W [K, N] and b [N]: one linear op (W transposed once).
void fuse_linear(OnnxModel::Impl& m) {
  int fused = 0;
  const std::vector<int> counts = consumer_counts(m);
  for (Node& matmul : m.nodes) {
    if (matmul.skipped || matmul.op != "MatMul" || matmul.inputs.size() != 2 ||
        matmul.outputs.size() != 1)
      continue;
    const int w = matmul.inputs[1];
    if (w < 0 || !m.constants[static_cast<size_t>(w)].host) continue;
    const HostTensor& weight = m.constants[static_cast<size_t>(w)].host->tensor;
    if (weight.shape.size() != 2 || !weight.is_float()) continue;
    Node* add = only_consumer(m, counts, matmul.outputs[0]);
    if (add == nullptr || add->op != "Add" || add->inputs.size() != 2) continue;
    const int b = other_input(*add, matmul.outputs[0]);
    if (b < 0 || !m.constants[static_cast<size_t>(b)].host) continue;
    const HostTensor& bias = m.constants[static_cast<size_t>(b)].host->tensor;
    if (bias.shape != std::vector<int64_t>{weight.shape[1]} || !bias.is_float()) continue;
    matmul.skipped = true;
    add->op = "switchyard.Linear";
    add->inputs = {matmul.inputs[0], w, b};
    ++fused;
  }
  if (fused > 0) m.fusions.push_back(std::to_string(fused) + " MatMul + Add into linear");
}

// The constant scalar bound of a Clip (input k), +-inf where the input is absent; false when it
// is not a constant scalar.
bool clip_bound(const OnnxModel::Impl& m, const Node& clip, size_t k, float absent, float& out) {
  if (k >= clip.inputs.size() || clip.inputs[k] < 0) {
    out = absent;
    return true;
  }
  double value = 0;
  if (!constant_scalar(m, clip.inputs[k], value)) return false;
  out = static_cast<float>(value);
  return true;
}

// Conv, then an Add of another tensor (a residual), then Relu, Clip with constant bounds or
// v * Sigmoid(v), each step taken only where the value has no other consumer: one
// switchyard.Conv node (conv2d_fused) in place of the last node taken. It runs at that node's
// place, since the residual may be computed after the Conv. As torchvision's exports have it:
// ResNet's conv + Add + Relu, MobileNetV2's conv + Clip(0, 6), EfficientNet's conv + SiLU.
void fuse_conv(OnnxModel::Impl& m) {
  int fused = 0;
  const std::vector<int> counts = consumer_counts(m);
  const auto count_of = [&](int id) { return id < 0 ? 0 : counts[static_cast<size_t>(id)]; };
  for (Node& conv : m.nodes) {
    if (conv.skipped || conv.op != "Conv" || conv.outputs.size() != 1 || conv.inputs.size() < 2 ||
        conv.inputs.size() > 3)
      continue;
    Node* last = nullptr;
    int value = conv.outputs[0];
    std::vector<int> inputs = conv.inputs;
    inputs.resize(3, -1);
    bool residual = false;
    ConvEpilogue::Activation activation = ConvEpilogue::Activation::kNone;
    float low = 0.0f, high = 0.0f;
    Node* add = only_consumer(m, counts, value);
    if (add != nullptr && add->op == "Add" && add->outputs.size() == 1) {
      const int other = other_input(*add, value);
      if (other >= 0 && other != value && !m.constants[static_cast<size_t>(other)].host) {
        inputs.push_back(other);
        residual = true;
        last = add;
        value = add->outputs[0];
      }
    }
    Node* next = only_consumer(m, counts, value);
    if (next != nullptr && next->outputs.size() == 1 && next->op == "Relu") {
      activation = ConvEpilogue::Activation::kRelu;
      last = next;
    } else if (next != nullptr && next->outputs.size() == 1 && next->op == "Clip" &&
               next->inputs[0] == value &&
               clip_bound(m, *next, 1, -std::numeric_limits<float>::infinity(), low) &&
               clip_bound(m, *next, 2, std::numeric_limits<float>::infinity(), high) &&
               low <= high) {
      activation = ConvEpilogue::Activation::kClip;
      last = next;
    } else if (count_of(value) == 2) {  // v * Sigmoid(v): SiLU as opset 17 exports it
      Node* sigmoid = nullptr;
      Node* mul = nullptr;
      for (Node& node : m.nodes) {
        if (node.skipped || node.outputs.size() != 1) continue;
        if (node.op == "Sigmoid" && node.inputs == std::vector<int>{value}) sigmoid = &node;
      }
      if (sigmoid != nullptr && count_of(sigmoid->outputs[0]) == 1) {
        mul = only_consumer(m, counts, sigmoid->outputs[0]);
        if (mul != nullptr && (mul->op != "Mul" || mul->outputs.size() != 1 ||
                               other_input(*mul, sigmoid->outputs[0]) != value)) {
          mul = nullptr;
        }
      }
      if (mul != nullptr) {
        activation = ConvEpilogue::Activation::kSilu;
        sigmoid->skipped = true;
        last = mul;
      }
    }
    if (last == nullptr) continue;
    if (add != nullptr && residual && last != add) add->skipped = true;
    conv.skipped = true;
    last->op = "switchyard.Conv";
    last->name = conv.name;
    last->proto = conv.proto;
    last->inputs = inputs;
    last->residual = residual;
    last->activation = activation;
    last->low = low;
    last->high = high;
    ++fused;
  }
  if (fused > 0) {
    m.fusions.push_back(std::to_string(fused) +
                        " Conv (+ Add) (+ Relu, Clip or SiLU) into conv2d_fused");
  }
}

// The live node that computes value `id`, or null (an input, an initializer).
Node* producer(OnnxModel::Impl& m, int id) {
  if (id < 0) return nullptr;
  for (Node& node : m.nodes) {
    if (!node.skipped && !node.outputs.empty() && node.outputs[0] == id) return &node;
  }
  return nullptr;
}

// Follows `id` back through a Mul or Div by a positive constant scalar read by nothing else,
// folding the factor into `scale`; returns the value before it (or `id` when there is none) and
// the node taken, if any.
int through_scalar(OnnxModel::Impl& m, const std::vector<int>& counts, int id, double& scale,
                   Node** taken, int* rank) {
  *taken = nullptr;
  Node* node = producer(m, id);
  if (node == nullptr || counts[static_cast<size_t>(id)] != 1 || node->inputs.size() != 2 ||
      (node->op != "Mul" && node->op != "Div")) {
    return id;
  }
  double c = 0;
  int data = node->inputs[0];
  int constant_rank = 0;
  if (!constant_scalar(m, node->inputs[1], c, &constant_rank)) {
    if (node->op == "Div" || !constant_scalar(m, node->inputs[0], c, &constant_rank)) return id;
    data = node->inputs[1];
  }
  if (!(c > 0.0) || !std::isfinite(c)) return id;
  *rank = std::max(*rank, constant_rank);
  scale *= node->op == "Mul" ? c : 1.0 / c;
  *taken = node;
  return data;
}

// Whether constant value `id` is the additive causal mask of a square [T, T] (or [1, .., 1, T, T])
// score matrix: 0 where j <= i, -inf where j > i.
bool causal_constant(const OnnxModel::Impl& m, int id) {
  const Value& v = m.constants[static_cast<size_t>(id)];
  if (!v.host || !v.host->tensor.is_float()) return false;
  const HostTensor& t = v.host->tensor;
  const size_t rank = t.shape.size();
  if (rank < 2 || t.shape[rank - 1] != t.shape[rank - 2]) return false;
  for (size_t axis = 0; axis + 2 < rank; ++axis) {
    if (t.shape[axis] != 1) return false;
  }
  const int64_t n = t.shape[rank - 1];
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double value = t.at(i * n + j);
      if (j <= i ? value != 0.0 : !(std::isinf(value) && value < 0)) return false;
    }
  }
  return true;
}

// Attention as torch.onnx.export writes nn.MultiheadAttention and F.scaled_dot_product_attention:
// MatMul(q [* c], k^T [* c]) [* c] [+ mask] -> Softmax over the last axis -> MatMul with v, each
// intermediate read by nothing else: one switchyard.Attention node (scaled_dot_product_attention)
// in place of the last MatMul, with the constant factors folded into its scale. Its inputs are q,
// k^T, v and the mask (-1 when absent); a constant causal [T, T] mask also sets `causal`, which
// the node uses when the scores are that square.
void fuse_attention(OnnxModel::Impl& m) {
  int fused = 0;
  const std::vector<int> counts = consumer_counts(m);
  for (Node& softmax : m.nodes) {
    if (softmax.skipped || softmax.op != "Softmax" || softmax.inputs.size() != 1 ||
        softmax.outputs.size() != 1) {
      continue;
    }
    const onnx::AttributeProto* axis_attr = nullptr;
    for (const auto& a : softmax.proto->attribute()) {
      if (a.name() == "axis") axis_attr = &a;
    }
    if (axis_attr != nullptr &&
        (axis_attr->type() != onnx::AttributeProto::INT || axis_attr->i() != -1)) {
      continue;
    }
    if (axis_attr == nullptr && softmax.version < 13) continue;  // axis 1, the 2-D form
    Node* product = only_consumer(m, counts, softmax.outputs[0]);
    if (product == nullptr || product->op != "MatMul" || product->inputs.size() != 2 ||
        product->inputs[0] != softmax.outputs[0] || product->outputs.size() != 1) {
      continue;
    }
    // Back from the softmax: [+ mask], [* or / c], MatMul(q, k^T).
    std::vector<Node*> taken;
    int value = softmax.inputs[0];
    int mask = -1;
    Node* add = producer(m, value);
    if (add != nullptr && add->op == "Add" && add->inputs.size() == 2 &&
        counts[static_cast<size_t>(value)] == 1) {
      Node* left = producer(m, add->inputs[0]);
      const bool scores_left =
          left != nullptr && (left->op == "MatMul" || left->op == "Mul" || left->op == "Div");
      mask = scores_left ? add->inputs[1] : add->inputs[0];
      value = scores_left ? add->inputs[0] : add->inputs[1];
      taken.push_back(add);
    }
    double scale = 1.0;
    int rank = 0;
    Node* scaled = nullptr;
    value = through_scalar(m, counts, value, scale, &scaled, &rank);
    if (scaled != nullptr) taken.push_back(scaled);
    Node* scores = producer(m, value);
    if (scores == nullptr || scores->op != "MatMul" || scores->inputs.size() != 2 ||
        counts[static_cast<size_t>(value)] != 1) {
      continue;
    }
    taken.push_back(scores);
    Node* q_scaled = nullptr;
    Node* k_scaled = nullptr;
    const int q = through_scalar(m, counts, scores->inputs[0], scale, &q_scaled, &rank);
    const int k_t = through_scalar(m, counts, scores->inputs[1], scale, &k_scaled, &rank);
    for (Node* node : {q_scaled, k_scaled}) {
      if (node != nullptr) taken.push_back(node);
    }
    for (Node* node : taken) node->skipped = true;
    softmax.skipped = true;
    product->op = "switchyard.Attention";
    product->inputs = {q, k_t, product->inputs[1], mask};
    product->scale = scale;
    product->lift_rank = rank;
    product->causal = mask >= 0 && causal_constant(m, mask);
    ++fused;
  }
  if (fused > 0) {
    m.fusions.push_back(std::to_string(fused) +
                        " MatMul (+ scale) (+ mask) + Softmax + MatMul into "
                        "scaled_dot_product_attention");
  }
}

// Nodes whose outputs no graph output needs, directly or through later nodes (a subgraph's reads
// included), are skipped, as ONNX Runtime removes them: a dead node neither costs a run nor fails
// one (a MaxPool whose window does not fit, feeding nothing). The graph's own nodes only.
void prune_dead_nodes(OnnxModel::Impl& m) {
  std::vector<char> live(m.value_names.size(), 0);
  for (const int out : m.output_ids) live[static_cast<size_t>(out)] = 1;
  int pruned = 0;
  for (auto node = m.nodes.rbegin(); node != m.nodes.rend(); ++node) {  // topological, reversed
    if (node->skipped) continue;
    const bool needed = std::any_of(node->outputs.begin(), node->outputs.end(), [&](int out) {
      return out >= 0 && live[static_cast<size_t>(out)];
    });
    if (!needed) {
      node->skipped = true;
      ++pruned;
      continue;
    }
    for (const int in : node->inputs) {
      if (in >= 0) live[static_cast<size_t>(in)] = 1;
    }
    for (const int in : node->captures) live[static_cast<size_t>(in)] = 1;
  }
  if (pruned > 0) m.fusions.push_back(std::to_string(pruned) + " nodes no output needs, not run");
}

}  // namespace

void fuse_nodes(OnnxModel::Impl& m) {
  prune_dead_nodes(m);
  fuse_gelu(m);
  fuse_linear(m);
  fuse_conv(m);
  fuse_attention(m);
}

}  // namespace switchyard::onnx_detail
