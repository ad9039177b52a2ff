// Loading, checking and running an ONNX graph (switchyard/onnx.h). Ops live in onnx_ops*.cpp,
// fusion in onnx_fusion.cpp, what an op sees in onnx_node_context.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "formats/onnx_functions.h"
#include "formats/onnx_graph.h"
#include "formats/onnx_opset.h"
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

// Reads the graph of m.model into m: values numbered, initializers and inputs decoded and
// checked, nodes checked and put in a topological order, outputs checked, constants folded in.
// One step a method; each returns the first problem as a status naming the file.
class GraphReader {
 public:
  explicit GraphReader(OnnxModel::Impl& m) : m_(m), src_(m.source), graph_(m.model.graph()) {}

  Status read() {
    SY_RETURN_IF_ERROR(check_opset());
    const std::string inlined =
        inline_functions(m_.model, m_.opset, kOnnxMinOpset, kOnnxMaxOpset, node_opsets_);
    if (!inlined.empty()) return fail(inlined);
    SY_RETURN_IF_ERROR(upgrade_nodes());
    SY_RETURN_IF_ERROR(read_initializers());
    SY_RETURN_IF_ERROR(read_inputs());
    SY_RETURN_IF_ERROR(read_nodes());
    SY_ASSIGN_OR_RETURN(const std::vector<size_t> order, topological_order());
    SY_RETURN_IF_ERROR(read_outputs());
    return place_constants(order);
  }

 private:
  Status fail(const std::string& message) const {
    return fail_load(src_, StatusCode::kInvalidArgument, message);
  }

  int id_of(const std::string& name) {
    const auto [it, inserted] = ids_.try_emplace(name, static_cast<int>(m_.value_names.size()));
    if (inserted) m_.value_names.push_back(name);
    return it->second;
  }

  // Every value is defined once: by an initializer, a graph input or a node's output.
  Status define(const std::string& name, const std::string& by) {
    if (name.empty()) return ok_status();
    const auto id = static_cast<size_t>(id_of(name));
    if (defined_.size() <= id) defined_.resize(id + 1, false);
    if (defined_[id]) {
      return fail("value " + quote_name(name) + " is defined twice (again by " + by + ")");
    }
    defined_[id] = true;
    return ok_status();
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
    if (graph_.sparse_initializer_size() > 0) return fail("sparse initializers are not supported");
    return ok_status();
  }

  // Each node's op version; older attribute forms rewritten (onnx_opset.h).
  Status upgrade_nodes() {
    const std::string problem =
        upgrade_graph(*m_.model.mutable_graph(), node_opsets_, m_.opset, versions_);
    return problem.empty() ? ok_status() : fail(problem);
  }

  Status read_initializers() {
    for (const auto& tensor : graph_.initializer()) {
      SY_RETURN_IF_ERROR(define(tensor.name(), "an initializer"));
      Result<HostTensor> decoded = decode_tensor(tensor, "initializer " + quote_name(tensor.name()),
                                                 m_.base_dir, m_.device.get());
      if (!decoded.ok()) return decoded.status().with_context(src_);
      initial_.emplace_back(id_of(tensor.name()), std::move(decoded).value());
      initializer_names_.insert(tensor.name());
    }
    return ok_status();
  }

  // The graph's inputs without an initializer are the model's inputs.
  Status read_inputs() {
    for (const auto& input : graph_.input()) {
      if (initializer_names_.count(input.name()) != 0) continue;
      SY_RETURN_IF_ERROR(define(input.name(), "a graph input"));
      OnnxValueInfo info = value_info(input);
      const int32_t type = input.type().tensor_type().elem_type();
      if (!input.type().has_tensor_type() || !is_supported_type(type)) {
        return fail("input " + quote_name(input.name()) + " has type " + info.element_type +
                    ", which is not supported (float or integer tensors)");
      }
      SY_RETURN_IF_ERROR(check_declared(info, type, "input", true, src_, m_.device.get()));
      m_.input_ids.push_back(id_of(input.name()));
      m_.input_types.push_back(type);
      m_.inputs.push_back(std::move(info));
    }
    return ok_status();
  }

  // Each node's op known, no subgraphs, every output defined once.
  Status read_nodes() {
    const auto& table = op_table();
    for (int index = 0; index < graph_.node_size(); ++index) {
      const onnx::NodeProto& proto = graph_.node(index);
      Node node;
      node.name = proto.name().empty() ? "#" + std::to_string(index) : proto.name();
      node.op = proto.op_type();
      node.proto = &proto;
      node.version = versions_[static_cast<size_t>(index)];
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
      for (const auto& attribute : proto.attribute()) {
        if (attribute.has_g() || attribute.graphs_size() > 0) {
          return fail(node_label(node) + ": subgraph attributes are not supported");
        }
      }
      for (const auto& output : proto.output()) {
        SY_RETURN_IF_ERROR(define(output, node_label(node)));
        node.outputs.push_back(output.empty() ? -1 : id_of(output));
      }
      for (const auto& input : proto.input())
        node.inputs.push_back(input.empty() ? -1 : id_of(input));
      nodes_.push_back(std::move(node));
    }
    defined_.resize(m_.value_names.size(), false);
    return ok_status();
  }

  // Dangling inputs, then a topological order (Kahn); what is left over lies on a cycle.
  Result<std::vector<size_t>> topological_order() const {
    std::vector<int> producer(m_.value_names.size(), -1);
    for (size_t n = 0; n < nodes_.size(); ++n) {
      for (const int out : nodes_[n].outputs) {
        if (out >= 0) producer[static_cast<size_t>(out)] = static_cast<int>(n);
      }
    }
    std::vector<int> waiting(nodes_.size(), 0);
    std::vector<std::vector<size_t>> consumers_of(nodes_.size());
    for (size_t n = 0; n < nodes_.size(); ++n) {
      for (const int in : nodes_[n].inputs) {
        if (in < 0) continue;
        if (!defined_[static_cast<size_t>(in)]) {
          return fail(node_label(nodes_[n]) + " reads " +
                      quote_name(m_.value_names[static_cast<size_t>(in)]) +
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
    for (size_t n = 0; n < nodes_.size(); ++n) {
      if (waiting[n] == 0) ready.push_back(n);
    }
    for (size_t r = 0; r < ready.size(); ++r) {
      order.push_back(ready[r]);
      for (const size_t c : consumers_of[ready[r]]) {
        if (--waiting[c] == 0) ready.push_back(c);
      }
    }
    for (size_t n = 0; order.size() != nodes_.size() && n < nodes_.size(); ++n) {
      if (waiting[n] > 0) return fail("the graph has a cycle through " + node_label(nodes_[n]));
    }
    return order;
  }

  Status read_outputs() {
    for (const auto& output : graph_.output()) {
      const auto it = ids_.find(output.name());
      if (it == ids_.end() || !defined_[static_cast<size_t>(it->second)]) {
        return fail("graph output " + quote_name(output.name()) + " is never computed");
      }
      OnnxValueInfo info = value_info(output);
      SY_RETURN_IF_ERROR(check_declared(info, output.type().tensor_type().elem_type(), "output",
                                        false, src_, m_.device.get()));
      m_.output_ids.push_back(it->second);
      m_.outputs.push_back(std::move(info));
    }
    if (m_.output_ids.empty()) return fail("the graph has no outputs");
    return ok_status();
  }

  // Initializers and Constant nodes are host values from the start; the nodes go to m in order.
  Status place_constants(const std::vector<size_t>& order) {
    m_.constants.assign(m_.value_names.size(), Value{});
    const auto set_constant = [&](int id, HostTensor tensor) {
      Value& v = m_.constants[static_cast<size_t>(id)];
      v.type = tensor.type;
      v.shape = tensor.shape;
      v.host = std::make_shared<HostSlot>();
      v.host->tensor = std::move(tensor);
      v.cacheable = true;
      v.fixed_shape = true;
    };
    for (auto& [id, tensor] : initial_) set_constant(id, std::move(tensor));
    for (const size_t n : order) {
      Node node = nodes_[n];
      if (node.op == "Constant") {
        Result<HostTensor> value =
            constant_value(*node.proto, node_label(node), m_.base_dir, m_.device.get());
        if (!value.ok()) return value.status().with_context(src_);
        if (node.outputs.size() != 1 || node.outputs[0] < 0) {
          return fail(node_label(node) + " must have one output");
        }
        set_constant(node.outputs[0], std::move(value).value());
        node.skipped = true;
      }
      m_.nodes.push_back(std::move(node));
    }
    return ok_status();
  }

  OnnxModel::Impl& m_;
  const std::string& src_;
  const onnx::GraphProto& graph_;
  std::map<std::string, int> ids_;
  std::vector<bool> defined_;
  std::vector<std::pair<int, HostTensor>> initial_;
  std::set<std::string> initializer_names_;
  std::vector<int64_t> node_opsets_;  // by node index: the model's, or its function's
  std::vector<int> versions_;         // by node index (upgrade_nodes)
  std::vector<Node> nodes_;
};

// The caller's inputs checked against the model's declarations (count, type, shape) and made
// what the graph computes on: on the model's device, float inputs (and bools) as f32.
std::vector<Tensor> checked_inputs(const OnnxModel::Impl& m, const std::vector<Tensor>& given) {
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
    if ((wants_float && !is_floating(t.dtype())) || (wants_int && !is_integer_dtype(t.dtype()))) {
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
  return inputs;
}

// Runs one node on the host (every input a host value, or an op with no device form) or on the
// device; an error names the file and the node.
void run_node(OnnxModel::Impl& m, Node& node, std::vector<Value>& values) {
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

// The graph's outputs as contiguous device tensors (host values uploaded, bools as 0/1 floats).
std::vector<Tensor> output_tensors(const OnnxModel::Impl& m, const std::vector<Value>& values) {
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
  throw_if_error(GraphReader(*impl).read());
  fuse_nodes(*impl);
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

namespace {

// One eager run of the graph for the plan of these inputs' signature.
std::vector<Tensor> run_plan(OnnxModel::Impl& m, Plan& plan, const std::vector<Tensor>& inputs) {
  std::vector<Value>& values = plan.values;
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
    v.fixed_shape = true;
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
    run_node(m, node, values);
  }
  return output_tensors(m, values);
}

std::vector<Tensor> clones(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.clone());
  return out;
}

// Before a new recording: where kMaxRecordings signatures hold one already, the one used least
// recently lets its recording (and the memory it holds) go; that signature records again when it
// comes back. A stream of ever new shapes (sequences of every length) so holds a bounded amount.
void forget_least_recent_recording(OnnxModel::Impl& m) {
  Captured* oldest = nullptr;
  size_t held = 0;
  for (auto& [signature, plan] : m.plans) {
    Captured* c = plan.captured.get();
    if (c == nullptr || c->recording == nullptr) continue;
    ++held;
    if (oldest == nullptr || c->last_used < oldest->last_used) oldest = c;
  }
  if (held < OnnxModel::kMaxRecordings || oldest == nullptr) return;
  oldest->recording.reset();
  oldest->inputs.clear();
  oldest->outputs.clear();
}

// capture on: eager the first time a signature is seen, recorded the second, replayed after.
std::vector<Tensor> run_captured(OnnxModel::Impl& m, Plan& plan,
                                 const std::vector<Tensor>& inputs) {
  if (plan.captured == nullptr) plan.captured = std::make_unique<Captured>();
  Captured& c = *plan.captured;
  if (!c.refused.empty()) {
    m.capture_note = "eager: " + c.refused;
    return run_plan(m, plan, inputs);
  }
  c.last_used = ++m.runs;
  if (c.recording != nullptr) {
    c.recording->replay_reading(c.inputs, inputs);  // reads `inputs` where it can, else copies
    m.capture_note = "replayed " + std::to_string(c.recording->op_count()) + " ops" +
                     (c.recording->native() ? " as one submission" : "");
    return clones(c.outputs);
  }
  if (!c.seen) {
    c.seen = true;
    m.capture_note = "eager (first run of these input shapes)";
    return run_plan(m, plan, inputs);
  }
  forget_least_recent_recording(m);
  c.inputs = clones(inputs);  // recorded on; later runs read theirs instead (or copy into these)
  std::vector<Tensor> outputs;
  std::unique_ptr<OpRecording> recording =
      OpRecording::record(m.device, [&] { outputs = run_plan(m, plan, c.inputs); });
  if (!recording->replayable()) {
    c.refused = recording->reason();
    c.inputs.clear();
    m.capture_note = "eager: " + c.refused;
    return outputs;
  }
  m.capture_note = "recorded " + recording->describe();
  c.outputs = outputs;
  c.recording = std::move(recording);
  return clones(outputs);
}

}  // namespace

std::vector<Tensor> OnnxModel::run_checked(const std::vector<Tensor>& given) {
  Impl& m = *impl_;
  const std::lock_guard<std::mutex> lock(m.mutex);
  NoGradGuard no_grad;
  const std::vector<Tensor> inputs = checked_inputs(m, given);
  const std::string signature = signature_of(inputs);
  const auto [entry, first] = m.plans.try_emplace(signature);
  if (first) entry->second.values = m.constants;
  if (passes_captured(m.capture)) return run_captured(m, entry->second, inputs);
  m.capture_note = "eager";
  return run_plan(m, entry->second, inputs);
}

void OnnxModel::set_capture(CaptureMode mode) {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->capture = mode;
  if (mode == CaptureMode::kOff) {
    for (auto& [signature, plan] : impl_->plans) plan.captured.reset();  // frees what they held
  }
}

CaptureMode OnnxModel::capture() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->capture;
}

std::string OnnxModel::capture_summary() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->capture_note;
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
