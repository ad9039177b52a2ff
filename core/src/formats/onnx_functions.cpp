// Model-local functions (formats/onnx_functions.h): each call replaced by its function's body.
#include "formats/onnx_functions.h"

#include "formats/onnx_graph.h"

#include <map>
#include <utility>
#include <vector>

namespace switchyard::onnx_detail {

namespace {

constexpr int kMaxDepth = 32;
constexpr int kMaxNodes = 1 << 20;

// FunctionProto fields of later IR versions than this onnx.proto knows: attribute_proto (IR 9,
// default attribute values) and overload (IR 10).
constexpr int kAttributeProtoField = 11;
constexpr int kOverloadField = 13;

bool has_unknown_field(const onnx::FunctionProto& f, int number) {
  const auto& unknown = f.unknown_fields();
  for (int k = 0; k < unknown.field_count(); ++k) {
    if (unknown.field(k).number() == number) return true;
  }
  return false;
}

// "node 'name' (Op)" as the graph reader says it: names from the file quoted and made printable.
std::string label(const onnx::NodeProto& node, const std::string& fallback) {
  Node n;
  n.name = node.name().empty() ? fallback : node.name();
  n.op = node.op_type();
  return node_label(n);
}

std::string function_name(const onnx::FunctionProto& f) {
  return "function " + quote_name(f.domain() + "." + f.name());
}

class Inliner {
 public:
  Inliner(const onnx::ModelProto& model, int64_t opset) : opset_(opset) {
    for (const auto& f : model.functions()) functions_[{f.domain(), f.name()}].push_back(&f);
  }

  // Each function's default-domain opset: its own import, else the model's.
  std::string check(int64_t min_opset, int64_t max_opset) {
    for (const auto& [key, list] : functions_) {
      const std::string name = function_name(*list.front());
      if (list.size() > 1) return name + " is defined twice (overloads, IR 10, are not supported)";
      const onnx::FunctionProto& f = *list.front();
      if (has_unknown_field(f, kOverloadField))
        return name + " has an overload name (IR 10), which is not supported";
      int64_t opset = opset_;
      for (const auto& import : f.opset_import()) {
        if (import.domain().empty() || import.domain() == "ai.onnx") opset = import.version();
      }
      if (opset < min_opset || opset > max_opset)
        return name + " imports opset " + std::to_string(opset) + " of the default domain (" +
               std::to_string(min_opset) + " to " + std::to_string(max_opset) + " are supported)";
      opsets_[&f] = opset;
    }
    return "";
  }

  bool calls_function(const onnx::NodeProto& node) const {
    return functions_.count({node.domain(), node.op_type()}) != 0;
  }

  // Appends `node` (of a graph or body whose default-domain opset is `opset`) to out_, or its
  // function's body with the call's names and attributes. `root` labels the graph's node.
  std::string add(const onnx::NodeProto& node, const std::string& where, int64_t opset,
                  const std::string& root, int depth) {
    if (static_cast<int>(out_.size()) >= kMaxNodes)
      return "inlining the model's functions gives more than 2^20 nodes";
    const auto it = functions_.find({node.domain(), node.op_type()});
    if (it == functions_.end()) {
      out_.push_back(node);
      out_opsets_.push_back(opset);
      return "";
    }
    const onnx::FunctionProto& f = *it->second.front();
    if (depth >= kMaxDepth)
      return root + ": function calls nest more than " + std::to_string(kMaxDepth) + " deep (" +
             function_name(f) + " calls itself?)";
    if (node.input_size() > f.input_size() || node.output_size() > f.output_size())
      return label(node, where) + ": more inputs or outputs than " + function_name(f) + " declares";
    const std::string prefix = "switchyard.inline." + std::to_string(calls_++) + "/";
    std::map<std::string, std::string> names;  // the body's value names -> the graph's
    for (int k = 0; k < f.input_size(); ++k)
      names[f.input(k)] = k < node.input_size() ? node.input(k) : "";
    // An output the call leaves out (or names "") stays the body's own value: the body may still
    // read it, which an empty name would turn into an omitted input.
    for (int k = 0; k < f.output_size(); ++k) {
      const bool given = k < node.output_size() && !node.output(k).empty();
      names[f.output(k)] = given ? node.output(k) : prefix + f.output(k);
    }
    std::map<std::string, const onnx::AttributeProto*> given;
    for (const auto& a : node.attribute()) given[a.name()] = &a;
    const bool defaults = has_unknown_field(f, kAttributeProtoField);
    const std::string call = node.name().empty() ? where : node.name();
    for (int k = 0; k < f.node_size(); ++k) {
      onnx::NodeProto body = f.node(k);
      body.set_name(call + "/" + (body.name().empty() ? "#" + std::to_string(k) : body.name()));
      for (std::string& value : *body.mutable_input()) value = renamed(names, prefix, value);
      for (std::string& value : *body.mutable_output()) value = renamed(names, prefix, value);
      std::string problem = bind_attributes(body, given, defaults, node, where);
      if (problem.empty()) problem = add(body, body.name(), opsets_.at(&f), root, depth + 1);
      if (!problem.empty()) return problem;
    }
    return "";
  }

  std::vector<onnx::NodeProto>& nodes() { return out_; }
  const std::vector<int64_t>& opsets() const { return out_opsets_; }

 private:
  static std::string renamed(const std::map<std::string, std::string>& names,
                             const std::string& prefix, const std::string& value) {
    if (value.empty()) return value;
    const auto it = names.find(value);
    return it != names.end() ? it->second : prefix + value;
  }

  // An attribute that refers to one of the call's (ref_attr_name) takes its value; one the call
  // does not give is left out, so the op's default applies (IR 8). A function that declares its
  // own defaults (IR 9's attribute_proto, unknown to this onnx.proto) is refused there.
  static std::string bind_attributes(
      onnx::NodeProto& body, const std::map<std::string, const onnx::AttributeProto*>& given,
      bool defaults, const onnx::NodeProto& call, const std::string& where) {
    auto* list = body.mutable_attribute();
    for (int a = 0; a < list->size();) {
      onnx::AttributeProto& attribute = *list->Mutable(a);
      if (attribute.ref_attr_name().empty()) {
        ++a;
        continue;
      }
      const auto it = given.find(attribute.ref_attr_name());
      if (it != given.end()) {
        const std::string name = attribute.name();
        attribute = *it->second;
        attribute.set_name(name);
        ++a;
      } else if (defaults) {
        return label(call, where) + ": attribute " + quote_name(attribute.ref_attr_name()) +
               " is not given and the function's default values (IR 9) are not supported";
      } else {
        list->DeleteSubrange(a, 1);
      }
    }
    return "";
  }

  int64_t opset_;
  std::map<std::pair<std::string, std::string>, std::vector<const onnx::FunctionProto*>> functions_;
  std::map<const onnx::FunctionProto*, int64_t> opsets_;
  std::vector<onnx::NodeProto> out_;
  std::vector<int64_t> out_opsets_;  // each node's default-domain opset
  int calls_ = 0;
};

}  // namespace

std::string inline_functions(onnx::ModelProto& model, int64_t opset, int64_t min_opset,
                             int64_t max_opset, std::vector<int64_t>& node_opsets) {
  const onnx::GraphProto& graph = model.graph();
  node_opsets.assign(static_cast<size_t>(graph.node_size()), opset);
  if (model.functions_size() == 0) return "";
  Inliner inliner(model, opset);
  std::string problem = inliner.check(min_opset, max_opset);
  if (!problem.empty()) return problem;
  bool any = false;
  for (const auto& node : graph.node()) any = any || inliner.calls_function(node);
  if (!any) return "";
  for (int k = 0; k < graph.node_size(); ++k) {
    const std::string where = "#" + std::to_string(k);
    onnx::NodeProto node = graph.node(k);
    if (node.name().empty()) node.set_name(where);  // its index before inlining, for messages
    problem = inliner.add(node, where, opset, label(node, where), 0);
    if (!problem.empty()) return problem;
  }
  node_opsets = inliner.opsets();
  auto* nodes = model.mutable_graph()->mutable_node();
  nodes->Clear();
  for (onnx::NodeProto& node : inliner.nodes()) *nodes->Add() = std::move(node);
  return "";
}

}  // namespace switchyard::onnx_detail
