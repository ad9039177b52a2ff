// Reading an ONNX graph into OnnxModel::Impl (read_graph, formats/onnx_graph.h): values
// numbered, initializers and inputs decoded and checked, nodes checked and ordered, outputs
// checked, constants folded in.
#include <algorithm>
#include <map>
#include <set>

#include "formats/onnx_functions.h"
#include "formats/onnx_graph.h"
#include "formats/onnx_opset.h"
#include "runtime/memory_budget.h"
#include "switchyard/device.h"

namespace switchyard::onnx_detail {
namespace {

Status fail_load(const std::string& source, StatusCode code, const std::string& message) {
  return {code, source + ": " + message};
}

std::string supported_list() {
  std::string text;
  for (const std::string& op : onnx_supported_ops()) text += (text.empty() ? "" : ", ") + op;
  return text;
}

// The value info of a graph input or output.
OnnxValueInfo value_info(const onnx::ValueInfoProto& proto) {
  OnnxValueInfo info;
  info.name = proto.name();
  if (proto.type().has_tensor_type()) {
    const auto& tensor = proto.type().tensor_type();
    info.element_type = elem_type_name(tensor.elem_type());
    for (const auto& dim : tensor.shape().dim()) {
      info.shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      info.dim_names.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    }
  } else {
    info.element_type = "not a tensor";
  }
  return info;
}

// A graph input or output as the model declares it, checked before anything of its size is made:
// at most Shape::kMaxRank axes (inputs: switchyard's tensors have no more), and one sample of it
// (dynamic extents counted as 1) within the memory budget of `device`, so that a declared extent
// of 2^40 or 2^62 is refused here, naming the file, rather than by an allocation when a batch of
// it is built (bench model, predict).
Status check_declared(const OnnxValueInfo& info, int32_t type, const char* role, bool input,
                      const std::string& source, const Device* device) {
  const std::string name = std::string(role) + " " + quote_name(info.name);
  if (input && info.shape.size() > static_cast<size_t>(Shape::kMaxRank)) {
    return fail_load(source, StatusCode::kInvalidArgument,
                     name + " has rank " + std::to_string(info.shape.size()) + ", more than the " +
                         std::to_string(Shape::kMaxRank) + " axes a switchyard tensor has");
  }
  std::vector<int64_t> one_sample;
  std::string declared;
  for (size_t a = 0; a < info.shape.size(); ++a) {
    const int64_t extent = info.shape[a];
    one_sample.push_back(extent < 0 ? 1 : extent);
    declared += (a ? ", " : "") +
                (extent >= 0 ? std::to_string(extent)
                             : (info.dim_names[a].empty() ? std::string("?") : info.dim_names[a]));
  }
  if (declared.size() > 300) declared = declared.substr(0, 300) + "...";
  const uint64_t element = is_float_type(type) || type == kBool ? sizeof(float) : sizeof(int64_t);
  return detail::check_shape_budget(
      one_sample, element,
      "one sample of " + name + " (" + info.element_type + " [" + declared + "] as declared)",
      source, device);
}

// Turns Constant nodes into host values.
Result<HostTensor> constant_value(const onnx::NodeProto& node, const std::string& what,
                                  const std::filesystem::path& base_dir, const Device* device) {
  if (node.attribute_size() != 1)
    return invalid_argument(what + " must have exactly one attribute");
  const auto& a = node.attribute(0);
  const std::string& name = a.name();
  if (name == "value") {
    if (a.type() != onnx::AttributeProto::TENSOR)
      return invalid_argument(what + ": value must be a tensor");
    return decode_tensor(a.t(), what, base_dir, device);
  }
  if (name == "value_float" && a.type() == onnx::AttributeProto::FLOAT) {
    HostTensor t = HostTensor::zeros(kFloat, {});
    t.f[0] = a.f();
    return t;
  }
  if (name == "value_floats" && a.type() == onnx::AttributeProto::FLOATS) {
    HostTensor t = HostTensor::zeros(kFloat, {a.floats_size()});
    std::copy(a.floats().begin(), a.floats().end(), t.f.begin());
    return t;
  }
  if (name == "value_int" && a.type() == onnx::AttributeProto::INT)
    return HostTensor::scalar_int(a.i());
  if (name == "value_ints" && a.type() == onnx::AttributeProto::INTS) {
    return HostTensor::ints({a.ints().begin(), a.ints().end()}, {a.ints_size()});
  }
  return invalid_argument(what + ": attribute " + quote_name(name) +
                          " is not supported (value, value_float(s), value_int(s))");
}

// Graphs nest (If's branches, Loop's body) at most this deep.
constexpr int kMaxGraphDepth = 16;

// The attributes that hold the subgraphs of each control-flow op, in the order Node::bodies
// keeps them.
const std::vector<std::string>* body_attributes(const std::string& op) {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"If", {"then_branch", "else_branch"}}, {"Loop", {"body"}}, {"Scan", {"body"}}};
  const auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

// Reads the graph of m.model into m: values numbered, initializers and inputs decoded and
// checked, nodes checked and put in a topological order, outputs checked, constants folded in;
// the same for each subgraph, whose names are looked up in it first, then in the graphs around it.
// One step a method; each returns the first problem as a status naming the file.
class GraphReader {
 public:
  explicit GraphReader(OnnxModel::Impl& m) : m_(m), src_(m.source), graph_(m.model.graph()) {}

  Status read() {
    SY_RETURN_IF_ERROR(check_opset());
    std::vector<int64_t> node_opsets;  // by node index: the model's, or its function's
    const std::string inlined =
        inline_functions(m_.model, m_.opset, kOnnxMinOpset, kOnnxMaxOpset, node_opsets);
    if (!inlined.empty()) return fail(inlined);
    SY_RETURN_IF_ERROR(upgrade(*m_.model.mutable_graph(), node_opsets, 0));
    scopes_.emplace_back();
    SY_RETURN_IF_ERROR(read_initializers(graph_));
    SY_RETURN_IF_ERROR(read_inputs());
    SY_ASSIGN_OR_RETURN(std::vector<Node> nodes, read_nodes(graph_, "", 0));
    SY_RETURN_IF_ERROR(place_nodes(std::move(nodes), m_.nodes));
    SY_RETURN_IF_ERROR(read_outputs());
    m_.constants.assign(m_.value_names.size(), Value{});
    for (auto& [id, tensor] : initial_) {
      Value& v = m_.constants[static_cast<size_t>(id)];
      v.type = tensor.type;
      v.shape = tensor.shape;
      v.host = std::make_shared<HostSlot>();
      v.host->tensor = std::move(tensor);
      v.cacheable = true;
      v.fixed_shape = true;
    }
    return ok_status();
  }

 private:
  Status fail(const std::string& message) const {
    return fail_load(src_, StatusCode::kInvalidArgument, message);
  }

  // The value `name` names in the innermost graph that defines it, or -1.
  int lookup(const std::string& name) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      const auto it = scope->find(name);
      if (it != scope->end()) return it->second;
    }
    return -1;
  }

  // Every value is defined once in its graph: by an initializer, a graph input or a node's
  // output. A subgraph may define a name of an enclosing graph again; inside it, the name is its
  // own value.
  Result<int> define(const std::string& name, const std::string& by) {
    if (name.empty()) return -1;
    auto& scope = scopes_.back();
    if (scope.count(name) != 0) {
      return fail("value " + quote_name(name) + " is defined twice (again by " + by + ")");
    }
    const int id = static_cast<int>(m_.value_names.size());
    m_.value_names.push_back(name);
    scope.emplace(name, id);
    return id;
  }

  // The opset of the default domain; any other domain is refused.
  Status check_opset() {
    bool found = false;
    for (const auto& opset : m_.model.opset_import()) {
      if (opset.domain().empty() || opset.domain() == "ai.onnx") {
        m_.opset = opset.version();
        found = true;
      }
    }
    if (!found) return fail("the model imports no opset of the default ONNX domain");
    if (m_.opset < kOnnxMinOpset || m_.opset > kOnnxMaxOpset) {
      return fail("opset " + std::to_string(m_.opset) +
                  " is not supported (supported: " + std::to_string(kOnnxMinOpset) + " to " +
                  std::to_string(kOnnxMaxOpset) + "; re-export with opset_version=17)");
    }
    return ok_status();
  }

  // Each node's op version, older attribute forms rewritten (onnx_opset.h), in `graph` and its
  // subgraphs; a subgraph's nodes are read at the opset of the node that holds it.
  Status upgrade(onnx::GraphProto& graph, const std::vector<int64_t>& node_opsets, int depth) {
    if (depth > kMaxGraphDepth) {
      return fail("subgraphs nest more than " + std::to_string(kMaxGraphDepth) + " deep");
    }
    if (graph.sparse_initializer_size() > 0) return fail("sparse initializers are not supported");
    std::vector<int>& versions = versions_[&graph];
    const std::string problem = upgrade_graph(graph, node_opsets, m_.opset, versions);
    if (!problem.empty()) return fail(problem);
    for (int index = 0; index < graph.node_size(); ++index) {
      for (auto& attribute : *graph.mutable_node(index)->mutable_attribute()) {
        if (!attribute.has_g()) continue;
        onnx::GraphProto& body = *attribute.mutable_g();
        const std::vector<int64_t> opsets(static_cast<size_t>(body.node_size()),
                                          node_opsets[static_cast<size_t>(index)]);
        SY_RETURN_IF_ERROR(upgrade(body, opsets, depth + 1));
      }
    }
    return ok_status();
  }

  Status read_initializers(const onnx::GraphProto& graph) {
    for (const auto& tensor : graph.initializer()) {
      SY_ASSIGN_OR_RETURN(const int id, define(tensor.name(), "an initializer"));
      Result<HostTensor> decoded = decode_tensor(tensor, "initializer " + quote_name(tensor.name()),
                                                 m_.base_dir, m_.device.get());
      if (!decoded.ok()) return decoded.status().with_context(src_);
      if (id >= 0) initial_.emplace_back(id, std::move(decoded).value());
      if (&graph == &graph_) initializer_names_.insert(tensor.name());
    }
    return ok_status();
  }

  // The graph's inputs without an initializer are the model's inputs.
  Status read_inputs() {
    for (const auto& input : graph_.input()) {
      if (initializer_names_.count(input.name()) != 0) continue;
      SY_ASSIGN_OR_RETURN(const int id, define(input.name(), "a graph input"));
      OnnxValueInfo info = value_info(input);
      const int32_t type = input.type().tensor_type().elem_type();
      if (!input.type().has_tensor_type() || !is_supported_type(type)) {
        return fail("input " + quote_name(input.name()) + " has type " + info.element_type +
                    ", which is not supported (float or integer tensors)");
      }
      SY_RETURN_IF_ERROR(check_declared(info, type, "input", true, src_, m_.device.get()));
      m_.input_ids.push_back(id);
      m_.input_types.push_back(type);
      m_.inputs.push_back(std::move(info));
    }
    return ok_status();
  }

  // The nodes of `graph` (names prefixed with `prefix`): each op known, every output defined once
  // in the graph, every input a value of it or of an enclosing graph, subgraphs read in turn.
  Result<std::vector<Node>> read_nodes(const onnx::GraphProto& graph, const std::string& prefix,
                                       int depth) {
    const auto& table = op_table();
    const std::vector<int>& versions = versions_.at(&graph);
    std::vector<Node> nodes;
    for (int index = 0; index < graph.node_size(); ++index) {
      const onnx::NodeProto& proto = graph.node(index);
      Node node;
      node.name = prefix + (proto.name().empty() ? "#" + std::to_string(index) : proto.name());
      node.op = proto.op_type();
      node.proto = &proto;
      node.version = versions[static_cast<size_t>(index)];
      if (!proto.domain().empty() && proto.domain() != "ai.onnx") {
        return fail(node_label(node) + " is in domain " + quote_name(proto.domain()) +
                    ", which is not supported (only the default ONNX domain, opset " +
                    std::to_string(m_.opset) + ")");
      }
      if (node.op.rfind("switchyard.", 0) == 0 ||
          (node.op != "Constant" && table.count(node.op) == 0)) {
        return fail(node_label(node) + ": op type " + quote_name(node.op) +
                    " is not supported at opset " + std::to_string(m_.opset) +
                    "; supported: " + supported_list());
      }
      for (const auto& output : proto.output()) {
        SY_ASSIGN_OR_RETURN(const int id, define(output, node_label(node)));
        node.outputs.push_back(id);
      }
      nodes.push_back(std::move(node));
    }
    for (Node& node : nodes) {  // every name of the graph is defined now
      for (const auto& input : node.proto->input()) {
        const int id = input.empty() ? -1 : lookup(input);
        if (!input.empty() && id < 0) {
          return fail(node_label(node) + " reads " + quote_name(input) +
                      ", which no node, input or initializer defines");
        }
        node.inputs.push_back(id);
      }
      SY_RETURN_IF_ERROR(read_bodies(node, depth));
    }
    return nodes;
  }

  // An If's or a Loop's subgraphs, by attribute name; any other op's subgraph is refused.
  Status read_bodies(Node& node, int depth) {
    const std::vector<std::string>* names = body_attributes(node.op);
    for (const auto& attribute : node.proto->attribute()) {
      const bool listed = names != nullptr &&
                          std::find(names->begin(), names->end(), attribute.name()) != names->end();
      if ((attribute.has_g() && !listed) || attribute.graphs_size() > 0) {
        return fail(node_label(node) + ": subgraph attribute " + quote_name(attribute.name()) +
                    " is not supported (If's branches and Loop's body are)");
      }
    }
    if (names == nullptr) return ok_status();
    std::set<int> captures;
    for (const std::string& name : *names) {
      const onnx::AttributeProto* attribute = nullptr;
      for (const auto& a : node.proto->attribute()) {
        if (a.name() == name) attribute = &a;
      }
      if (attribute == nullptr || !attribute->has_g()) {
        return fail(node_label(node) + " has no graph attribute " + quote_name(name));
      }
      SY_ASSIGN_OR_RETURN(std::shared_ptr<Body> body,
                          read_body(attribute->g(), node.name + "/" + name + "/", depth + 1));
      captures.insert(body->captures.begin(), body->captures.end());
      node.bodies.push_back(std::move(body));
    }
    node.captures.assign(captures.begin(), captures.end());
    return check_signature(node);
  }

  Result<std::shared_ptr<Body>> read_body(const onnx::GraphProto& graph, const std::string& prefix,
                                          int depth) {
    auto body = std::make_shared<Body>();
    body->first_value = static_cast<int>(m_.value_names.size());
    scopes_.emplace_back();
    SY_RETURN_IF_ERROR(read_initializers(graph));
    for (const auto& input : graph.input()) {
      if (input.has_type() && !input.type().has_tensor_type() &&
          !input.type().has_sequence_type()) {
        return fail("subgraph input " + quote_name(prefix + input.name()) +
                    " is neither a tensor nor a sequence (optionals are not supported)");
      }
      SY_ASSIGN_OR_RETURN(const int id, define(input.name(), "a subgraph input"));
      body->inputs.push_back(id);
    }
    SY_ASSIGN_OR_RETURN(std::vector<Node> nodes, read_nodes(graph, prefix, depth));
    SY_RETURN_IF_ERROR(place_nodes(std::move(nodes), body->nodes));
    for (const auto& output : graph.output()) {
      const int id = lookup(output.name());
      if (id < 0) {
        return fail("subgraph output " + quote_name(prefix + output.name()) + " is never computed");
      }
      if (output.has_type() && !output.type().has_tensor_type() &&
          !output.type().has_sequence_type()) {
        return fail("subgraph output " + quote_name(prefix + output.name()) +
                    " is neither a tensor nor a sequence (optionals are not supported)");
      }
      body->outputs.push_back(id);
      const OnnxValueInfo info = value_info(output);
      body->output_types.push_back(output.type().tensor_type().elem_type());
      body->output_shapes.push_back(info.shape);
    }
    scopes_.pop_back();
    body->end_value = static_cast<int>(m_.value_names.size());
    // What it reads from the graphs around it: a node's inputs and its own subgraphs' captures,
    // and outputs passed through, outside its own range.
    std::set<int> captures;
    const auto outside = [&](int id) {
      if (id >= 0 && (id < body->first_value || id >= body->end_value)) captures.insert(id);
    };
    for (const Node& n : body->nodes) {
      for (const int id : n.inputs) outside(id);
      for (const int id : n.captures) outside(id);
    }
    for (const int id : body->outputs) outside(id);
    body->captures.assign(captures.begin(), captures.end());
    return body;
  }

  // An int attribute of the node, or 0.
  static int64_t attribute_int(const Node& node, const std::string& name) {
    for (const auto& a : node.proto->attribute()) {
      if (a.name() == name) return a.i();
    }
    return 0;
  }

  // The counts ONNX requires: If has one input, and branches without inputs that give as many
  // outputs as the node has; Loop's body takes the iteration number, the condition and the N
  // carried values, and gives the condition, N carried values and K scan outputs.
  Status check_signature(const Node& node) const {
    if (node.op == "If") {
      if (node.inputs.size() != 1 || node.inputs[0] < 0)
        return fail(node_label(node) + " needs one input, the condition");
      for (const auto& body : node.bodies) {
        if (!body->inputs.empty() || body->outputs.size() != node.outputs.size()) {
          return fail(node_label(node) + ": each branch must take no inputs and give " +
                      std::to_string(node.outputs.size()) + " output(s), as the node does");
        }
      }
      return ok_status();
    }
    const Body& body = *node.bodies.at(0);
    // Each iteration writes the body's inputs: an unnamed one (a hostile file) has no value.
    for (const int input : body.inputs) {
      if (input < 0) return fail(node_label(node) + ": the body's inputs must all be named");
    }
    if (node.op == "Scan") {
      if (node.version < 9) {
        return fail(node_label(node) +
                    ": Scan-8 (a batch axis and sequence_lens) is not supported; opset 9 or later");
      }
      const int64_t scans = attribute_int(node, "num_scan_inputs");
      if (scans < 1 || static_cast<size_t>(scans) > node.inputs.size() ||
          body.inputs.size() != node.inputs.size() || body.outputs.size() != node.outputs.size() ||
          node.inputs.size() - static_cast<size_t>(scans) > node.outputs.size()) {
        return fail(node_label(node) + ": num_scan_inputs " + std::to_string(scans) + ", " +
                    std::to_string(node.inputs.size()) + " inputs and " +
                    std::to_string(node.outputs.size()) + " outputs do not fit a body of " +
                    std::to_string(body.inputs.size()) + " inputs and " +
                    std::to_string(body.outputs.size()) + " outputs (states, then scans)");
      }
      return ok_status();
    }
    if (node.inputs.size() < 2 || body.inputs.size() != node.inputs.size() ||
        body.outputs.size() != node.outputs.size() + 1 ||
        node.outputs.size() + 2 < body.inputs.size()) {
      return fail(node_label(node) + ": the body takes " + std::to_string(body.inputs.size()) +
                  " inputs and gives " + std::to_string(body.outputs.size()) +
                  " outputs; with N carried values it must take 2 + N (the node has " +
                  std::to_string(node.inputs.size()) + " inputs, 2 + N) and give 1 + N + K (the " +
                  "node has " + std::to_string(node.outputs.size()) + " outputs, N + K)");
    }
    return ok_status();
  }

  // The nodes of one graph in a topological order (Kahn), Constant nodes folded into constants;
  // what is left over lies on a cycle. A node waits for its inputs and for what its subgraphs
  // read of this graph.
  Status place_nodes(std::vector<Node> nodes, std::vector<Node>& placed) {
    std::map<int, size_t> producer;
    for (size_t n = 0; n < nodes.size(); ++n) {
      for (const int out : nodes[n].outputs) {
        if (out >= 0) producer[out] = n;
      }
    }
    std::vector<int> waiting(nodes.size(), 0);
    std::vector<std::vector<size_t>> consumers_of(nodes.size());
    for (size_t n = 0; n < nodes.size(); ++n) {
      std::set<int> reads(nodes[n].inputs.begin(), nodes[n].inputs.end());
      reads.insert(nodes[n].captures.begin(), nodes[n].captures.end());
      for (const int in : reads) {
        const auto p = producer.find(in);
        if (in < 0 || p == producer.end()) continue;
        ++waiting[n];
        consumers_of[p->second].push_back(n);
      }
    }
    std::vector<size_t> ready, order;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (waiting[n] == 0) ready.push_back(n);
    }
    for (size_t r = 0; r < ready.size(); ++r) {
      order.push_back(ready[r]);
      for (const size_t c : consumers_of[ready[r]]) {
        if (--waiting[c] == 0) ready.push_back(c);
      }
    }
    for (size_t n = 0; order.size() != nodes.size() && n < nodes.size(); ++n) {
      if (waiting[n] > 0) return fail("the graph has a cycle through " + node_label(nodes[n]));
    }
    for (const size_t n : order) {
      Node& node = nodes[n];
      if (node.op == "Constant") {
        Result<HostTensor> value =
            constant_value(*node.proto, node_label(node), m_.base_dir, m_.device.get());
        if (!value.ok()) return value.status().with_context(src_);
        if (node.outputs.size() != 1 || node.outputs[0] < 0) {
          return fail(node_label(node) + " must have one output");
        }
        initial_.emplace_back(node.outputs[0], std::move(value).value());
        node.skipped = true;
      }
      placed.push_back(std::move(node));
    }
    return ok_status();
  }

  Status read_outputs() {
    for (const auto& output : graph_.output()) {
      const int id = scopes_.front().count(output.name()) != 0 ? lookup(output.name()) : -1;
      if (id < 0) return fail("graph output " + quote_name(output.name()) + " is never computed");
      OnnxValueInfo info = value_info(output);
      SY_RETURN_IF_ERROR(check_declared(info, output.type().tensor_type().elem_type(), "output",
                                        false, src_, m_.device.get()));
      m_.output_ids.push_back(id);
      m_.outputs.push_back(std::move(info));
    }
    if (m_.output_ids.empty()) return fail("the graph has no outputs");
    return ok_status();
  }

  OnnxModel::Impl& m_;
  const std::string& src_;
  const onnx::GraphProto& graph_;
  std::vector<std::map<std::string, int>> scopes_;                // the graph being read last
  std::map<const onnx::GraphProto*, std::vector<int>> versions_;  // by node index (upgrade)
  std::vector<std::pair<int, HostTensor>> initial_;
  std::set<std::string> initializer_names_;
};

}  // namespace

Status read_graph(OnnxModel::Impl& m) {
  return GraphReader(m).read();
}

}  // namespace switchyard::onnx_detail
