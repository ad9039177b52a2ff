// Loading, checking and running an ONNX graph (switchyard/onnx.h). Ops live in onnx_ops.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "formats/onnx_graph.h"
#include "runtime/file_bytes.h"
#include "runtime/input_file.h"
#include "runtime/memory_budget.h"
#include "switchyard/autograd.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"
#include "switchyard/profile.h"

namespace switchyard {
namespace onnx_detail {
namespace {

// Protobuf refuses messages over 2 GiB; so do we, before parsing.
constexpr size_t kMaxModelBytes = size_t{2} << 30;

// Names come from the file: cut, and made printable (runtime/input_file.h).
std::string quote_name(const std::string& text) {
  return "'" +
         (text.size() > 120 ? detail::printable_text(text.substr(0, 120)) + "..."
                            : detail::printable_text(text)) +
         "'";
}

std::string node_label(const Node& node) {
  return "node " + quote_name(node.name) + " (" + detail::printable_input(node.op, 120) + ")";
}

std::string signature_of(const std::vector<Tensor>& inputs) {
  std::string signature;
  for (const Tensor& input : inputs) {
    signature += dtype_name(input.dtype());
    signature += input.shape().to_string();
    signature += ';';
  }
  return signature;
}

bool is_integer_dtype(DType dtype) {
  return dtype == DType::kI32 || dtype == DType::kI64;
}

}  // namespace

// ---- NodeContext --------------------------------------------------------------------------------

const Value& NodeContext::value(size_t k) const {
  if (!has(k)) fail("input " + std::to_string(k) + " is missing");
  const Value& v = values_[static_cast<size_t>(node_.inputs[k])];
  if (!v.known()) {
    fail("input " + quote_name(model_.value_names[static_cast<size_t>(node_.inputs[k])]) +
         " has no value (an output this importer does not compute)");
  }
  return v;
}

const HostTensor* NodeContext::host(size_t k) const {
  const Value& v = value(k);
  return v.host ? &v.host->tensor : nullptr;
}

const HostTensor& NodeContext::host_values(size_t k) {
  (void)value(k);
  Value& v = values_[static_cast<size_t>(node_.inputs[k])];
  if (!v.host) {
    auto slot = std::make_shared<HostSlot>();
    slot->tensor.type = v.type;
    slot->tensor.shape = v.shape;
    if (is_float_type(v.type) || v.type == kBool) {
      slot->tensor.type = v.type == kBool ? kBool : kFloat;
      if (v.type == kBool) {
        for (const float x : v.device.to_host_float()) slot->tensor.i.push_back(x != 0.0F ? 1 : 0);
      } else {
        slot->tensor.f = v.device.to_host_float();
      }
    } else {
      slot->tensor.i = v.device.to_host_int64();
    }
    slot->uploaded = v.device;
    v.host = std::move(slot);
    v.cacheable = false;  // read from the device: depends on the input values
  }
  return v.host->tensor;
}

std::vector<int64_t> NodeContext::ints(size_t k) {
  const HostTensor& t = host_values(k);
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.is_float()) {
      const double x = t.at(i);
      if (!std::isfinite(x) || std::floor(x) != x || std::fabs(x) > 9.0e18) {
        fail("input " + std::to_string(k) + " must hold whole numbers");
      }
    }
    out[static_cast<size_t>(i)] = t.int_at(i);
  }
  return out;
}

Tensor NodeContext::dev(size_t k) {
  const Value& v = value(k);
  if (v.device.defined()) return v.device;
  HostSlot& slot = *v.host;
  if (!slot.uploaded.defined()) {
    const HostTensor& t = slot.tensor;
    const Shape shape(t.shape);
    if (t.is_float()) {
      slot.uploaded = Tensor::from_host(t.f, shape, model_.device);
    } else if (t.type == kBool) {
      std::vector<float> values(t.i.size());
      for (size_t i = 0; i < t.i.size(); ++i) values[i] = t.i[i] != 0 ? 1.0F : 0.0F;
      slot.uploaded = Tensor::from_host(values, shape, model_.device);
    } else {
      slot.uploaded = Tensor::from_host(t.i, shape, model_.device);
    }
  }
  return slot.uploaded;
}

bool NodeContext::host_scalar(size_t k, double& out) const {
  if (!has(k)) return false;
  const HostTensor* t = host(k);
  if (t == nullptr || t->numel() != 1) return false;
  out = t->at(0);
  return true;
}

bool NodeContext::inputs_cacheable() const {
  for (const int id : node_.inputs) {
    if (id >= 0 && !values_[static_cast<size_t>(id)].cacheable) return false;
  }
  return true;
}

void NodeContext::set_host(size_t k, HostTensor tensor, bool shape_only) {
  if (!output_used(k)) return;
  Value& v = values_[static_cast<size_t>(node_.outputs[k])];
  v.type = tensor.type;
  v.shape = tensor.shape;
  v.host = std::make_shared<HostSlot>();
  v.host->tensor = std::move(tensor);
  v.cacheable = shape_only || inputs_cacheable();
  v.device = Tensor();
}

void NodeContext::set_device(size_t k, Tensor tensor, int32_t type) {
  if (!output_used(k)) return;
  Value& v = values_[static_cast<size_t>(node_.outputs[k])];
  v.type = type;
  v.shape = tensor.shape().to_vector();
  v.host.reset();
  v.cacheable = false;
  v.device = std::move(tensor);
}

const onnx::AttributeProto* NodeContext::attr(const char* name) const {
  for (const auto& attribute : node_.proto->attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t NodeContext::attr_int(const char* name, int64_t fallback) const {
  const auto* a = attr(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::INT)
    fail(std::string("attribute ") + name + " must be an int");
  return a->i();
}

float NodeContext::attr_float(const char* name, float fallback) const {
  const auto* a = attr(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT)
    fail(std::string("attribute ") + name + " must be a float");
  return a->f();
}

std::string NodeContext::attr_string(const char* name, const std::string& fallback) const {
  const auto* a = attr(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::STRING)
    fail(std::string("attribute ") + name + " must be a string");
  return a->s();
}

std::vector<int64_t> NodeContext::attr_ints(const char* name) const {
  const auto* a = attr(name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::INTS)
    fail(std::string("attribute ") + name + " must be ints");
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> NodeContext::attr_floats(const char* name) const {
  const auto* a = attr(name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::FLOATS)
    fail(std::string("attribute ") + name + " must be floats");
  return {a->floats().begin(), a->floats().end()};
}

std::vector<std::string> NodeContext::attr_strings(const char* name) const {
  const auto* a = attr(name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::STRINGS)
    fail(std::string("attribute ") + name + " must be strings");
  return {a->strings().begin(), a->strings().end()};
}

void NodeContext::fail(const std::string& message) const {
  throw_error(invalid_argument(node_label(node_) + ": " + message));
}

int normalize(const NodeContext& context, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (r == 0 || axis < -r || axis >= r) {
    context.fail("axis " + std::to_string(axis) + " is out of range for rank " +
                 std::to_string(rank));
  }
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

// ---- loading ------------------------------------------------------------------------------------
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

}  // namespace
}  // namespace onnx_detail

using namespace onnx_detail;

namespace {

Status check_and_build(OnnxModel::Impl& m) {
  const std::string& src = m.source;
  const onnx::GraphProto& graph = m.model.graph();

  // Opset of the default domain; any other domain is refused.
  bool found = false;
  for (const auto& opset : m.model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      m.opset = opset.version();
      found = true;
    }
  }
  if (!found)
    return fail_load(src, StatusCode::kInvalidArgument,
                     "the model imports no opset of the default ONNX domain");
  if (m.opset < kOnnxMinOpset || m.opset > kOnnxMaxOpset) {
    return fail_load(src, StatusCode::kInvalidArgument,
                     "opset " + std::to_string(m.opset) +
                         " is not supported (supported: " + std::to_string(kOnnxMinOpset) + " to " +
                         std::to_string(kOnnxMaxOpset) + "; re-export with opset_version=17)");
  }
  if (graph.sparse_initializer_size() > 0) {
    return fail_load(src, StatusCode::kInvalidArgument, "sparse initializers are not supported");
  }

  std::map<std::string, int> ids;
  const auto id_of = [&](const std::string& name) {
    const auto [it, inserted] = ids.try_emplace(name, static_cast<int>(m.value_names.size()));
    if (inserted) m.value_names.push_back(name);
    return it->second;
  };
  std::vector<bool> defined;
  const auto define = [&](const std::string& name, const std::string& by) -> Status {
    if (name.empty()) return ok_status();
    const int id = id_of(name);
    if (defined.size() <= static_cast<size_t>(id))
      defined.resize(static_cast<size_t>(id) + 1, false);
    if (defined[static_cast<size_t>(id)]) {
      return fail_load(src, StatusCode::kInvalidArgument,
                       "value " + quote_name(name) + " is defined twice (again by " + by + ")");
    }
    defined[static_cast<size_t>(id)] = true;
    return ok_status();
  };

  // Initializers.
  std::vector<std::pair<int, HostTensor>> initial;
  std::set<std::string> initializer_names;
  for (const auto& tensor : graph.initializer()) {
    SY_RETURN_IF_ERROR(define(tensor.name(), "an initializer"));
    Result<HostTensor> decoded = decode_tensor(tensor, "initializer " + quote_name(tensor.name()),
                                               m.base_dir, m.device.get());
    if (!decoded.ok()) return decoded.status().with_context(src);
    initial.emplace_back(id_of(tensor.name()), std::move(decoded).value());
    initializer_names.insert(tensor.name());
  }
  // Inputs (those without an initializer are the model's inputs).
  for (const auto& input : graph.input()) {
    if (initializer_names.count(input.name()) != 0) continue;
    SY_RETURN_IF_ERROR(define(input.name(), "a graph input"));
    OnnxValueInfo info = value_info(input);
    const int32_t type = input.type().tensor_type().elem_type();
    if (!input.type().has_tensor_type() || !is_supported_type(type)) {
      return fail_load(src, StatusCode::kInvalidArgument,
                       "input " + quote_name(input.name()) + " has type " + info.element_type +
                           ", which is not supported (float or integer tensors)");
    }
    SY_RETURN_IF_ERROR(check_declared(info, type, "input", true, src, m.device.get()));
    m.input_ids.push_back(id_of(input.name()));
    m.input_types.push_back(type);
    m.inputs.push_back(std::move(info));
  }

  // Nodes: each op known, every output defined once.
  const auto& table = op_table();
  std::vector<Node> nodes;
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto& proto = graph.node(index);
    Node node;
    node.name = proto.name().empty() ? "#" + std::to_string(index) : proto.name();
    node.op = proto.op_type();
    node.proto = &proto;
    if (!proto.domain().empty() && proto.domain() != "ai.onnx") {
      return fail_load(src, StatusCode::kInvalidArgument,
                       node_label(node) + " is in domain " + quote_name(proto.domain()) +
                           ", which is not supported (only the default ONNX domain, opset " +
                           std::to_string(m.opset) + ")");
    }
    if (node.op.rfind("switchyard.", 0) == 0 ||
        (node.op != "Constant" && table.count(node.op) == 0)) {
      return fail_load(src, StatusCode::kInvalidArgument,
                       node_label(node) + ": op type " + quote_name(node.op) +
                           " is not supported at opset " + std::to_string(m.opset) +
                           "; supported: " + supported_list());
    }
    for (const auto& attribute : proto.attribute()) {
      if (attribute.has_g() || attribute.graphs_size() > 0) {
        return fail_load(src, StatusCode::kInvalidArgument,
                         node_label(node) + ": subgraph attributes are not supported");
      }
    }
    for (const auto& output : proto.output()) {
      SY_RETURN_IF_ERROR(define(output, node_label(node)));
      node.outputs.push_back(output.empty() ? -1 : id_of(output));
    }
    for (const auto& input : proto.input())
      node.inputs.push_back(input.empty() ? -1 : id_of(input));
    nodes.push_back(std::move(node));
  }
  defined.resize(m.value_names.size(), false);

  // Dangling inputs, then a topological order (Kahn); what is left over lies on a cycle.
  std::vector<int> producer(m.value_names.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (const int out : nodes[n].outputs) {
      if (out >= 0) producer[static_cast<size_t>(out)] = static_cast<int>(n);
    }
  }
  std::vector<int> waiting(nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers_of(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (const int in : nodes[n].inputs) {
      if (in < 0) continue;
      if (!defined[static_cast<size_t>(in)]) {
        return fail_load(src, StatusCode::kInvalidArgument,
                         node_label(nodes[n]) + " reads " +
                             quote_name(m.value_names[static_cast<size_t>(in)]) +
                             ", which no node, input or initializer defines");
      }
      const int p = producer[static_cast<size_t>(in)];
      if (p >= 0) {
        ++waiting[n];
        consumers_of[static_cast<size_t>(p)].push_back(n);
      }
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
  if (order.size() != nodes.size()) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (waiting[n] > 0) {
        return fail_load(src, StatusCode::kInvalidArgument,
                         "the graph has a cycle through " + node_label(nodes[n]));
      }
    }
  }
  for (const auto& output : graph.output()) {
    const auto it = ids.find(output.name());
    if (it == ids.end() || !defined[static_cast<size_t>(it->second)]) {
      return fail_load(src, StatusCode::kInvalidArgument,
                       "graph output " + quote_name(output.name()) + " is never computed");
    }
    OnnxValueInfo info = value_info(output);
    SY_RETURN_IF_ERROR(check_declared(info, output.type().tensor_type().elem_type(), "output",
                                      false, src, m.device.get()));
    m.output_ids.push_back(it->second);
    m.outputs.push_back(std::move(info));
  }
  if (m.output_ids.empty())
    return fail_load(src, StatusCode::kInvalidArgument, "the graph has no outputs");

  // Constants: initializers and Constant nodes, host values from the start.
  m.constants.assign(m.value_names.size(), Value{});
  for (auto& [id, tensor] : initial) {
    Value& v = m.constants[static_cast<size_t>(id)];
    v.type = tensor.type;
    v.shape = tensor.shape;
    v.host = std::make_shared<HostSlot>();
    v.host->tensor = std::move(tensor);
    v.cacheable = true;
  }
  for (const size_t n : order) {
    Node node = nodes[n];
    if (node.op == "Constant") {
      Result<HostTensor> value =
          constant_value(*node.proto, node_label(node), m.base_dir, m.device.get());
      if (!value.ok()) return value.status().with_context(src);
      if (node.outputs.size() != 1 || node.outputs[0] < 0) {
        return fail_load(src, StatusCode::kInvalidArgument,
                         node_label(node) + " must have one output");
      }
      Value& v = m.constants[static_cast<size_t>(node.outputs[0])];
      v.type = value->type;
      v.shape = value->shape;
      v.host = std::make_shared<HostSlot>();
      v.host->tensor = std::move(value).value();
      v.cacheable = true;
      node.skipped = true;
    }
    m.nodes.push_back(std::move(node));
  }
  return ok_status();
}

// ---- fusion -------------------------------------------------------------------------------------

// How many nodes (and graph outputs) read each value.
std::vector<int> consumer_counts(const OnnxModel::Impl& m) {
  std::vector<int> counts(m.value_names.size(), 0);
  for (const Node& node : m.nodes) {
    if (node.skipped) continue;
    for (const int in : node.inputs) {
      if (in >= 0) ++counts[static_cast<size_t>(in)];
    }
  }
  for (const int out : m.output_ids) ++counts[static_cast<size_t>(out)];
  return counts;
}

bool constant_scalar(const OnnxModel::Impl& m, int id, double& out) {
  if (id < 0) return false;
  const Value& v = m.constants[static_cast<size_t>(id)];
  if (!v.host || v.host->tensor.numel() != 1 || !v.host->tensor.is_float()) return false;
  out = v.host->tensor.at(0);
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
    if (div == nullptr || div->inputs.size() != 2 || !constant_scalar(m, div->inputs[1], c) ||
        std::fabs(c - std::sqrt(2.0)) > 1e-4 || counts[static_cast<size_t>(erf.inputs[0])] != 1) {
      continue;
    }
    const int x = div->inputs[0];
    Node* add = only_consumer(m, counts, erf.outputs[0]);
    if (add == nullptr || add->op != "Add" ||
        !constant_scalar(m, other_input(*add, erf.outputs[0]), c) || c != 1.0)
      continue;
    Node* mul = only_consumer(m, counts, add->outputs[0]);
    if (mul == nullptr || mul->op != "Mul" || other_input(*mul, add->outputs[0]) != x) continue;
    Node* half = only_consumer(m, counts, mul->outputs[0]);
    if (half == nullptr || half->op != "Mul" ||
        !constant_scalar(m, other_input(*half, mul->outputs[0]), c) || c != 0.5)
      continue;
    div->skipped = erf.skipped = add->skipped = mul->skipped = true;
    half->op = "switchyard.Gelu";
    half->inputs = {x};
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

}  // namespace

// ---- OnnxModel ----------------------------------------------------------------------------------

OnnxModel::OnnxModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnnxModel::~OnnxModel() = default;

std::unique_ptr<OnnxModel> OnnxModel::load(const std::filesystem::path& path,
                                           std::shared_ptr<Device> device) {
  const std::vector<uint8_t> bytes = value_or_throw(detail::read_input_bytes(path, "ONNX model"));
  std::filesystem::path base = path.parent_path();
  if (base.empty()) base = ".";
  std::unique_ptr<OnnxModel> model = load_bytes(bytes, path.string(), base, std::move(device));
  model->impl_->path = path;
  return model;
}

std::unique_ptr<OnnxModel> OnnxModel::load_bytes(const std::vector<uint8_t>& bytes,
                                                 const std::string& source,
                                                 const std::filesystem::path& base_dir,
                                                 std::shared_ptr<Device> device) {
  if (!device) throw_error(invalid_argument(source + ": no device to load the ONNX model on"));
  auto impl = std::make_unique<Impl>();
  impl->source = source;
  impl->base_dir = base_dir;
  impl->device = std::move(device);
  if (bytes.size() > kMaxModelBytes) {
    throw_error(invalid_argument(
        source + ": " + std::to_string(bytes.size()) +
        " bytes is more than protobuf reads (2 GiB); keep the weights as external data"));
  }
  if (!impl->model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw_error(data_loss(
        source + ": not a readable ONNX model (the protobuf message is damaged or truncated, " +
        std::to_string(bytes.size()) + " bytes)"));
  }
  if (!impl->model.has_graph()) {
    throw_error(data_loss(source + ": not an ONNX model (no graph; " +
                          std::to_string(bytes.size()) + " bytes)"));
  }
  throw_if_error(check_and_build(*impl));
  fuse_gelu(*impl);
  fuse_linear(*impl);
  fuse_conv(*impl);
  for (Node& node : impl->nodes) {
    if (!node.skipped) node.def = &op_table().at(node.op);
  }
  return std::unique_ptr<OnnxModel>(new OnnxModel(std::move(impl)));
}

std::vector<Tensor> OnnxModel::run(const std::vector<Tensor>& given) {
  try {
    return run_checked(given);
  } catch (const Error& error) {
    if (error.status().message().find(impl_->source) != std::string::npos) throw;
    throw_error(error.status().with_context(impl_->source));
  } catch (const std::exception& error) {
    throw_error(invalid_argument(impl_->source + ": " + error.what()));
  }
}

std::vector<Tensor> OnnxModel::run_checked(const std::vector<Tensor>& given) {
  Impl& m = *impl_;
  const std::lock_guard<std::mutex> lock(m.mutex);
  NoGradGuard no_grad;
  if (given.size() != m.inputs.size()) {
    throw_error(invalid_argument(m.source + ": the model takes " + std::to_string(m.inputs.size()) +
                                 " input(s), got " + std::to_string(given.size())));
  }
  std::vector<Tensor> inputs(given.size());
  for (size_t k = 0; k < given.size(); ++k) {
    const OnnxValueInfo& info = m.inputs[k];
    const Tensor& t = given[k];
    if (!t.defined())
      throw_error(
          invalid_argument(m.source + ": input " + quote_name(info.name) + " is undefined"));
    const bool wants_float = is_float_type(m.input_types[k]);
    const bool wants_int = !wants_float && m.input_types[k] != kBool;
    if (wants_float && !is_floating(t.dtype())) {
      throw_error(invalid_argument(m.source + ": input " + quote_name(info.name) + " is " +
                                   info.element_type + ", got " + dtype_name(t.dtype())));
    }
    if (wants_int && !is_integer_dtype(t.dtype())) {
      throw_error(invalid_argument(m.source + ": input " + quote_name(info.name) + " is " +
                                   info.element_type + ", got " + dtype_name(t.dtype())));
    }
    bool fits = info.shape.empty() || static_cast<size_t>(t.rank()) == info.shape.size();
    for (size_t a = 0; fits && a < info.shape.size(); ++a) {
      if (info.shape[a] >= 0 && info.shape[a] != t.dim(static_cast<int>(a))) fits = false;
    }
    if (!fits) {
      std::string expected;
      for (size_t a = 0; a < info.shape.size(); ++a) {
        expected += (a ? ", " : "") + (info.shape[a] >= 0
                                           ? std::to_string(info.shape[a])
                                           : (info.dim_names[a].empty() ? "?" : info.dim_names[a]));
      }
      throw_error(invalid_argument(m.source + ": input " + quote_name(info.name) + " has shape [" +
                                   expected + "], got " + t.shape().to_string()));
    }
    Tensor on_device = t.device() == m.device ? t : t.to(m.device);
    if (wants_float && on_device.dtype() != DType::kF32) on_device = on_device.to(DType::kF32);
    if (m.input_types[k] == kBool) on_device = on_device.to(DType::kF32);
    inputs[k] = on_device;
  }

  const std::string signature = signature_of(inputs);
  const auto [entry, first] = m.plans.try_emplace(signature);
  if (first) entry->second.values = m.constants;
  std::vector<Value>& values = entry->second.values;
  // After the run (or a failure), only what depends on constants and input shapes alone stays.
  struct ClearTransient {
    std::vector<Value>& values;
    ~ClearTransient() {
      for (Value& v : values) {
        if (v.known() && !(v.host && v.cacheable)) v = Value{};
      }
    }
  } clear_transient{values};
  for (size_t k = 0; k < inputs.size(); ++k) {
    Value& v = values[static_cast<size_t>(m.input_ids[k])];
    v.type = m.input_types[k];
    v.shape = inputs[k].shape().to_vector();
    v.device = inputs[k];
    v.cacheable = false;
  }
  for (Node& node : m.nodes) {
    if (node.skipped) continue;
    bool done = !node.outputs.empty();
    for (const int out : node.outputs) {
      if (out >= 0 && !values[static_cast<size_t>(out)].known()) done = false;
    }
    if (done) {
      node.ran = "cached";
      continue;
    }
    const OpDef& def = *node.def;
    NodeContext context(m, node, values);
    try {
      bool on_host = static_cast<bool>(def.host);
      bool integers = false;
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        if (!context.has(k)) continue;
        const Value& v = context.value(k);
        if (!v.host) on_host = false;
        if (!is_float_type(v.type) && v.type != kBool) integers = true;
      }
      if (!on_host && !def.device) on_host = true;  // host-only op: read device inputs back
      if (!on_host && def.host && def.integers_on_host && integers) on_host = true;
      ProfileSpan span = profile_span(node.op);
      if (on_host)
        def.host(context);
      else
        def.device(context);
      node.ran = on_host ? "host" : "device";
    } catch (const Error& error) {
      const std::string message = error.status().message();
      const bool named = message.rfind("node ", 0) == 0;
      throw_error(Status(error.status().code(),
                         m.source + ": " + (named ? message : node_label(node) + ": " + message)));
    } catch (const std::exception& error) {  // a library's exception: still an error, not a crash
      throw_error(invalid_argument(m.source + ": " + node_label(node) + ": " + error.what()));
    }
  }
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < m.output_ids.size(); ++k) {
    const int id = m.output_ids[k];
    const Value& v = values[static_cast<size_t>(id)];
    if (!v.known()) {
      throw_error(internal_error(m.source + ": output " +
                                 quote_name(m.value_names[static_cast<size_t>(id)]) +
                                 " was not computed"));
    }
    Tensor out = v.device;
    if (!out.defined()) {
      const HostTensor& t = v.host->tensor;
      if (t.is_float())
        out = Tensor::from_host(t.f, Shape(t.shape), m.device);
      else if (t.type == kBool) {
        std::vector<float> f(t.i.size());
        for (size_t i = 0; i < t.i.size(); ++i) f[i] = t.i[i] != 0 ? 1.0F : 0.0F;
        out = Tensor::from_host(f, Shape(t.shape), m.device);
      } else {
        out = Tensor::from_host(t.i, Shape(t.shape), m.device);
      }
    }
    outputs.push_back(out.contiguous());
  }
  return outputs;
}

const std::vector<OnnxValueInfo>& OnnxModel::inputs() const {
  return impl_->inputs;
}
const std::vector<OnnxValueInfo>& OnnxModel::outputs() const {
  return impl_->outputs;
}
int64_t OnnxModel::opset() const {
  return impl_->opset;
}
const std::filesystem::path& OnnxModel::path() const {
  return impl_->path;
}
const std::shared_ptr<Device>& OnnxModel::device() const {
  return impl_->device;
}

std::string OnnxModel::describe() const {
  const Impl& m = *impl_;
  std::ostringstream out;
  out << m.source << ": ONNX IR " << m.model.ir_version() << ", opset " << m.opset;
  if (!m.model.producer_name().empty()) {
    out << ", from " << m.model.producer_name() << ' ' << m.model.producer_version();
  }
  out << ", graph " << quote_name(m.model.graph().name()) << ", " << m.model.graph().node_size()
      << " nodes, " << m.model.graph().initializer_size() << " initializers";
  return out.str();
}

std::map<std::string, std::string> OnnxModel::metadata() const {
  std::map<std::string, std::string> entries;
  for (const auto& entry : impl_->model.metadata_props()) entries[entry.key()] = entry.value();
  return entries;
}

bool is_onnx_path(const std::filesystem::path& path) {
  return path.extension() == ".onnx";
}

Tensor load_onnx_tensor(const std::filesystem::path& path, const std::shared_ptr<Device>& device) {
  const std::vector<uint8_t> bytes = value_or_throw(detail::read_input_bytes(path, "ONNX tensor"));
  onnx::TensorProto proto;
  if (bytes.size() > kMaxModelBytes ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw_error(data_loss(path.string() + ": not a readable ONNX TensorProto"));
  }
  std::filesystem::path base = path.parent_path();
  if (base.empty()) base = ".";
  const HostTensor t = value_or_throw(decode_tensor(proto, path.string(), base));
  if (t.shape.size() > static_cast<size_t>(Shape::kMaxRank)) {
    throw_error(invalid_argument(path.string() + ": rank " + std::to_string(t.shape.size()) +
                                 " is too high"));
  }
  if (t.is_float()) return Tensor::from_host(t.f, Shape(t.shape), device);
  if (t.type == kBool) {
    std::vector<float> f(t.i.size());
    for (size_t k = 0; k < t.i.size(); ++k) f[k] = t.i[k] != 0 ? 1.0F : 0.0F;
    return Tensor::from_host(f, Shape(t.shape), device);
  }
  return Tensor::from_host(t.i, Shape(t.shape), device);
}

void save_onnx_tensor(const std::filesystem::path& path, const Tensor& tensor,
                      const std::string& name) {
  HostTensor t;
  t.shape = tensor.shape().to_vector();
  if (is_floating(tensor.dtype())) {
    t.type = kFloat;
    t.f = tensor.to_host_float();
  } else {
    t.type = kInt64;
    t.i = tensor.to_host_int64();
  }
  onnx::TensorProto proto;
  encode_tensor(t, name, proto);
  std::string bytes;
  proto.SerializeToString(&bytes);
  throw_if_error(detail::write_file_atomically(
      path, std::vector<uint8_t>(bytes.begin(), bytes.end()), "ONNX tensor"));
}

std::string OnnxModel::execution_summary() const {
  Impl& m = *impl_;
  const std::lock_guard<std::mutex> lock(m.mutex);  // run() writes node.ran
  std::map<std::string, std::map<std::string, int>> counts;
  int folded = 0;
  for (const Node& node : m.nodes) {
    if (node.skipped) {
      ++folded;
      continue;
    }
    if (!node.ran.empty()) ++counts[node.op][node.ran];
  }
  std::ostringstream out;
  bool first = true;
  for (const auto& [op, by] : counts) {
    for (const auto& [where, count] : by) {
      out << (first ? "" : ", ") << op << ' ' << count << ' ' << where;
      first = false;
    }
  }
  out << "; " << folded << " nodes folded at load or fused";
  for (const std::string& fusion : m.fusions) out << "; fused " << fusion;
  return out.str();
}

}  // namespace switchyard
