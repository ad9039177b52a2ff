// ONNX op versions and the load-time rewriting of older versions' attribute forms
// (formats/onnx_opset.h).
#include "formats/onnx_opset.h"

#include "formats/onnx_graph.h"

#include <algorithm>
#include <map>
#include <vector>

namespace switchyard::onnx_detail {

namespace {

// Each op's versions: the opsets at which ONNX defined or changed it, from docs/Changelog.md of
// ONNX 1.22 (opsets 1 to 27, default domain), and the opset that removed it (0: never). Every op
// of the op table (onnx_ops.cpp) is here; a test checks it.
struct History {
  std::vector<int> since;
  int removed = 0;
};

// Long: a table, one line an op.
const std::map<std::string, History>& histories() {
  static const std::map<std::string, History> table = {
      {"Abs", {{1, 6, 13}}},
      {"Acos", {{7, 22}}},
      {"Acosh", {{9, 22}}},
      {"Add", {{1, 6, 7, 13, 14}}},
      {"And", {{1, 7}}},
      {"ArgMax", {{1, 11, 12, 13}}},
      {"ArgMin", {{1, 11, 12, 13}}},
      {"Asin", {{7, 22}}},
      {"Asinh", {{9, 22}}},
      {"Atan", {{7, 22}}},
      {"Atanh", {{9, 22}}},
      {"AveragePool", {{1, 7, 10, 11, 19, 22}}},
      {"BatchNormalization", {{1, 6, 7, 9, 14, 15}}},
      {"Cast", {{1, 6, 9, 13, 19, 21, 23, 24, 25}}},
      {"CastLike", {{15, 19, 21, 23, 24, 25}}},
      {"Ceil", {{1, 6, 13}}},
      {"Celu", {{12}}},
      {"Clip", {{1, 6, 11, 12, 13}}},
      {"Concat", {{1, 4, 11, 13}}},
      {"Constant", {{1, 9, 11, 12, 13, 19, 21, 23, 24, 25}}},
      {"ConcatFromSequence", {{11}}},
      {"ConstantOfShape", {{9, 20, 21, 23, 24, 25}}},
      {"Conv", {{1, 11, 22}}},
      {"ConvInteger", {{10}}},
      {"ConvTranspose", {{1, 11, 22}}},
      {"Cos", {{7, 22}}},
      {"Cosh", {{9, 22}}},
      {"CumSum", {{11, 14}}},
      {"DepthToSpace", {{1, 11, 13}}},
      {"DequantizeLinear", {{10, 13, 19, 21, 23, 24, 25}}},
      {"Div", {{1, 6, 7, 13, 14}}},
      {"Dropout", {{1, 6, 7, 10, 12, 13, 22}}},
      {"Einsum", {{12}}},
      {"DynamicQuantizeLinear", {{11}}},
      {"Elu", {{1, 6, 22}}},
      {"Equal", {{1, 7, 11, 13, 19}}},
      {"Erf", {{9, 13}}},
      {"Exp", {{1, 6, 13}}},
      {"Expand", {{8, 13}}},
      {"EyeLike", {{9, 22}}},
      {"Flatten", {{1, 9, 11, 13, 21, 23, 24, 25}}},
      {"Floor", {{1, 6, 13}}},
      {"GRU", {{1, 3, 7, 14, 22}}},
      {"Gather", {{1, 11, 13}}},
      {"GatherElements", {{11, 13}}},
      {"GatherND", {{11, 12, 13}}},
      {"Gelu", {{20}}},
      {"Gemm", {{1, 6, 7, 9, 11, 13}}},
      {"GlobalAveragePool", {{1, 22}}},
      {"GlobalLpPool", {{1, 2, 22}}},
      {"GlobalMaxPool", {{1, 22}}},
      {"Greater", {{1, 7, 9, 13}}},
      {"GreaterOrEqual", {{12, 16}}},
      {"GridSample", {{16, 20, 22}}},
      {"GroupNormalization", {{18, 21}}},
      {"HardSigmoid", {{1, 6, 22}}},
      {"HardSwish", {{14, 22}}},
      {"Hardmax", {{1, 11, 13}}},
      {"If", {{1, 11, 13, 16, 19, 21, 23, 24, 25}}},
      {"Identity", {{1, 13, 14, 16, 19, 21, 23, 24, 25}}},
      {"InstanceNormalization", {{1, 6, 22}}},
      {"IsInf", {{10, 20}}},
      {"IsNaN", {{9, 13, 20}}},
      {"LRN", {{1, 13}}},
      {"LSTM", {{1, 7, 14, 22}}},
      {"LayerNormalization", {{17}}},
      {"LeakyRelu", {{1, 6, 16}}},
      {"Less", {{1, 7, 9, 13}}},
      {"LessOrEqual", {{12, 16}}},
      {"Log", {{1, 6, 13}}},
      {"LogSoftmax", {{1, 11, 13}}},
      {"Loop", {{1, 11, 13, 16, 19, 21, 23, 24, 25}}},
      {"LpNormalization", {{1, 22}}},
      {"LpPool", {{1, 2, 11, 18, 22}}},
      {"MatMul", {{1, 9, 13}}},
      {"MatMulInteger", {{10}}},
      {"Max", {{1, 6, 8, 12, 13}}},
      {"MaxPool", {{1, 8, 10, 11, 12, 22}}},
      {"Mean", {{1, 6, 8, 13}}},
      {"MeanVarianceNormalization", {{9, 13}}},
      {"Min", {{1, 6, 8, 12, 13}}},
      {"Mish", {{18, 22}}},
      {"Mod", {{10, 13}}},
      {"Mul", {{1, 6, 7, 13, 14}}},
      {"Neg", {{1, 6, 13}}},
      {"NonMaxSuppression", {{10, 11}}},
      {"NonZero", {{9, 13}}},
      {"Not", {{1}}},
      {"OneHot", {{9, 11}}},
      {"Or", {{1, 7}}},
      {"PRelu", {{1, 6, 7, 9, 16}}},
      {"Pad", {{1, 2, 11, 13, 18, 19, 21, 23, 24, 25}}},
      {"Pow", {{1, 7, 12, 13, 15}}},
      {"QuantizeLinear", {{10, 13, 19, 21, 23, 24, 25}}},
      {"RNN", {{1, 7, 14, 22}}},
      {"Range", {{11, 27}}},
      {"Reciprocal", {{1, 6, 13}}},
      {"ReduceL1", {{1, 11, 13, 18}}},
      {"ReduceL2", {{1, 11, 13, 18}}},
      {"ReduceLogSum", {{1, 11, 13, 18}}},
      {"ReduceLogSumExp", {{1, 11, 13, 18}}},
      {"ReduceMax", {{1, 11, 12, 13, 18, 20}}},
      {"ReduceMean", {{1, 11, 13, 18}}},
      {"ReduceMin", {{1, 11, 12, 13, 18, 20}}},
      {"ReduceProd", {{1, 11, 13, 18}}},
      {"ReduceSum", {{1, 11, 13}}},
      {"ReduceSumSquare", {{1, 11, 13, 18}}},
      {"Relu", {{1, 6, 13, 14}}},
      {"Reshape", {{1, 5, 13, 14, 19, 21, 23, 24, 25}}},
      {"Resize", {{10, 11, 13, 18, 19}}},
      {"RoiAlign", {{10, 16, 22}}},
      {"Round", {{11, 22}}},
      {"Scan", {{8, 9, 11, 16, 19, 21, 23, 24, 25}}},
      {"Scatter", {{9}, 11}},
      {"ScatterElements", {{11, 13, 16, 18}}},
      {"ScatterND", {{11, 13, 16, 18}}},
      {"Selu", {{1, 6, 22}}},
      {"SequenceAt", {{11}}},
      {"SequenceConstruct", {{11}}},
      {"SequenceEmpty", {{11}}},
      {"SequenceErase", {{11}}},
      {"SequenceInsert", {{11}}},
      {"SequenceLength", {{11}}},
      {"Shape", {{1, 13, 15, 19, 21, 23, 24, 25}}},
      {"Shrink", {{9}}},
      {"Sigmoid", {{1, 6, 13}}},
      {"Sign", {{9, 13}}},
      {"Sin", {{7, 22}}},
      {"Sinh", {{9, 22}}},
      {"Size", {{1, 13, 19, 21, 23, 24, 25}}},
      {"Slice", {{1, 10, 11, 13}}},
      {"Softmax", {{1, 11, 13}}},
      {"Softplus", {{1, 22}}},
      {"Softsign", {{1, 22}}},
      {"SpaceToDepth", {{1, 13}}},
      {"Split", {{1, 2, 11, 13, 18}}},
      {"SplitToSequence", {{11, 24}}},
      {"Sqrt", {{1, 6, 13}}},
      {"Squeeze", {{1, 11, 13, 21, 23, 24, 25}}},
      {"Sub", {{1, 6, 7, 13, 14}}},
      {"Sum", {{1, 6, 8, 13}}},
      {"Tan", {{7, 22}}},
      {"Tanh", {{1, 6, 13}}},
      {"ThresholdedRelu", {{10, 22}}},
      {"Tile", {{1, 6, 13}}},
      {"TopK", {{1, 10, 11, 24}}},
      {"Transpose", {{1, 13, 21, 23, 24, 25}}},
      {"Trilu", {{14}}},
      {"Unsqueeze", {{1, 11, 13, 21, 23, 24, 25}}},
      {"Upsample", {{1, 7, 9}, 10}},
      {"Where", {{9, 16}}},
      {"Xor", {{1, 7}}},
  };
  return table;
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

void remove_attribute(onnx::NodeProto& node, const std::string& name) {
  auto* list = node.mutable_attribute();
  for (int k = 0; k < list->size(); ++k) {
    if (list->Get(k).name() == name) {
      list->DeleteSubrange(k, 1);
      return;
    }
  }
}

// Moves attribute `name` (ints or floats; one value with `scalar`) of node `index` into an
// initializer given as input `slot`; a missing optional attribute leaves the input empty.
class Upgrade {
 public:
  Upgrade(onnx::GraphProto& graph, int index) : graph_(graph), index_(index) {
    node_ = graph.mutable_node(index);
  }

  // The node must have exactly `count` inputs (the old version's).
  bool inputs_are(int count) const { return node_->input_size() == count; }

  // Returns false when a required attribute is missing or has the wrong type.
  bool move(const std::string& name, int slot, bool required, bool scalar = false) {
    const onnx::AttributeProto* a = find_attribute(*node_, name);
    if (a == nullptr) {
      if (required) return false;
      set_input(slot, "");
      return true;
    }
    onnx::TensorProto* t = graph_.add_initializer();
    t->set_name("switchyard.opset." + std::to_string(index_) + "." + name);
    const auto type = a->type();
    const bool single = type == onnx::AttributeProto::INT || type == onnx::AttributeProto::FLOAT;
    if (type == onnx::AttributeProto::INT || type == onnx::AttributeProto::INTS) {
      t->set_data_type(onnx::TensorProto::INT64);
      if (single)
        t->add_int64_data(a->i());
      else
        *t->mutable_int64_data() = a->ints();
    } else if (type == onnx::AttributeProto::FLOAT || type == onnx::AttributeProto::FLOATS) {
      t->set_data_type(onnx::TensorProto::FLOAT);
      if (single)
        t->add_float_data(a->f());
      else
        *t->mutable_float_data() = a->floats();
    } else {
      graph_.mutable_initializer()->RemoveLast();
      return false;
    }
    const int count = t->int64_data_size() + t->float_data_size();
    if (!single || !scalar) t->add_dims(count);  // a scalar attribute may stay rank 0
    set_input(slot, t->name());
    remove_attribute(*node_, name);
    return true;
  }

  // Drops trailing empty inputs (an optional input left out at the end).
  void trim() {
    while (node_->input_size() > 0 && node_->input(node_->input_size() - 1).empty())
      node_->mutable_input()->RemoveLast();
  }

 private:
  void set_input(int slot, const std::string& name) {
    while (node_->input_size() <= slot) node_->add_input("");
    node_->set_input(slot, name);
  }

  onnx::GraphProto& graph_;
  int index_;
  onnx::NodeProto* node_;
};

}  // namespace

int op_version(const std::string& op, int64_t opset) {
  const auto it = histories().find(op);
  if (it == histories().end()) return -1;
  const History& h = it->second;
  if (h.removed != 0 && opset >= h.removed) return 0;
  int version = 0;
  for (const int since : h.since) {
    if (since <= opset) version = since;
  }
  return version;
}

std::string op_absence(const std::string& op, int64_t opset) {
  const auto it = histories().find(op);
  if (it == histories().end()) return "";
  const History& h = it->second;
  if (h.removed != 0 && opset >= h.removed)
    return "ONNX removed it at opset " + std::to_string(h.removed);
  return "ONNX added it at opset " + std::to_string(h.since.front());
}

std::string upgrade_node(onnx::GraphProto& graph, int index, int version) {
  // The older versions that take as attributes what later ones take as inputs: op, the first
  // version of the input form, and each attribute's input slot.
  struct Moved {
    const char* attribute;
    int slot;
    bool required, scalar;
  };
  struct OldForm {
    const char* op;
    int until;
    std::vector<Moved> moved;
    const char* attributes;  // for messages
    const char* types;
  };
  static const std::vector<OldForm> forms = {
      {"Slice",
       10,
       {{"starts", 1, true, false}, {"ends", 2, true, false}, {"axes", 3, false, false}},
       "starts, ends and axes are attributes",
       "starts and ends as integer attributes"},
      {"TopK", 10, {{"k", 1, true, false}}, "k is an attribute", "k as an integer attribute"},
      {"Pad",
       11,
       {{"pads", 1, true, false}, {"value", 2, false, true}},
       "pads and value are attributes",
       "pads as integers and value as a float"},
      {"Clip",
       11,
       {{"min", 1, false, true}, {"max", 2, false, true}},
       "min and max are attributes",
       "min and max as floats"},
      {"Split", 13, {{"split", 1, false, false}}, "split is an attribute", "split as integers"},
      {"Upsample", 9, {{"scales", 1, true, false}}, "scales is an attribute", "scales as floats"},
  };
  const onnx::NodeProto& node = graph.node(index);
  const std::string op = node.op_type();
  for (const OldForm& form : forms) {
    if (op != form.op) continue;
    if (version >= form.until) {
      // The input form: one of the old attributes left on the node would be ignored (a Clip that
      // clamps nothing), so it is refused, as ONNX Runtime refuses an unknown attribute.
      for (const Moved& m : form.moved) {
        if (find_attribute(node, m.attribute) != nullptr)
          return "attribute '" + std::string(m.attribute) + "' is not read at " + op + "-" +
                 std::to_string(version) + " (an input since version " +
                 std::to_string(form.until) + ")";
      }
      continue;
    }
    const std::string name = op + "-" + std::to_string(version) + " takes ";
    Upgrade u(graph, index);
    if (!u.inputs_are(1)) return name + "one input (" + form.attributes + ")";
    for (const Moved& m : form.moved) {
      if (!u.move(m.attribute, m.slot, m.required, m.scalar)) return name + form.types;
    }
    u.trim();
  }
  return "";
}

std::string upgrade_graph(onnx::GraphProto& graph, const std::vector<int64_t>& node_opsets,
                          int64_t opset, std::vector<int>& versions) {
  versions.assign(static_cast<size_t>(graph.node_size()), 0);
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto& proto = graph.node(index);
    if (!proto.domain().empty() && proto.domain() != "ai.onnx") continue;
    const int64_t own = node_opsets[static_cast<size_t>(index)];
    const int version = op_version(proto.op_type(), own);
    if (version < 0) continue;  // not an op of the table: the graph reader names it
    Node node;
    node.name = proto.name().empty() ? "#" + std::to_string(index) : proto.name();
    node.op = proto.op_type();
    if (version == 0) {
      return node_label(node) + ": op type " + quote_name(node.op) + " does not exist at opset " +
             std::to_string(own) + " (" + op_absence(node.op, own) + ")";
    }
    // A function may import another opset of the default domain than the model, as long as each
    // op of its body means the same at both (ONNX's IR.md), as ONNX Runtime reads it.
    const int at_model = op_version(node.op, opset);
    if (own != opset && version != at_model) {
      return node_label(node) + ": " + node.op + " is " + node.op + "-" + std::to_string(version) +
             " at its function's opset " + std::to_string(own) + " but " + node.op + "-" +
             std::to_string(at_model) + " at the model's opset " + std::to_string(opset) +
             " (a function's ops must mean the same at both)";
    }
    versions[static_cast<size_t>(index)] = version;
    const std::string problem = upgrade_node(graph, index, version);
    if (!problem.empty()) return node_label(node) + ": " + problem;
  }
  return "";
}

}  // namespace switchyard::onnx_detail
