// Loading and running an ONNX graph (switchyard/onnx.h). Reading and checking the file is in
// onnx_graph_reader.cpp, ops in onnx_ops*.cpp, fusion in onnx_fusion.cpp, what an op sees in
// onnx_node_context.cpp.
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
}  // namespace onnx_detail

using namespace onnx_detail;

namespace {

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
      if (v.is_sequence() && !def.sequences) {
        context.fail("input " + std::to_string(k) +
                     " is a sequence; only the sequence ops, Identity and control flow take one");
      }
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

// Each node's implementation, looked up once at load, subgraphs' nodes included.
void resolve_ops(std::vector<Node>& nodes) {
  for (Node& node : nodes) {
    if (!node.skipped) node.def = &op_table().at(node.op);
    for (const auto& body : node.bodies) resolve_ops(body->nodes);
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
    if (v.is_sequence()) {
      throw_error(invalid_argument(m.source + ": output " +
                                   quote_name(m.value_names[static_cast<size_t>(id)]) +
                                   " is a sequence; a model's outputs must be tensors"));
    }
    const Tensor out = v.device.defined() ? v.device : upload(v.host->tensor, m.device);
    outputs.push_back(out.contiguous());
  }
  return outputs;
}

}  // namespace

void onnx_detail::run_nodes(OnnxModel::Impl& m, std::vector<Node>& nodes,
                            std::vector<Value>& values) {
  for (Node& node : nodes) {
    if (node.skipped) continue;
    bool done = !node.outputs.empty();
    for (const int out : node.outputs) {
      if (out >= 0 && !values[static_cast<size_t>(out)].known()) done = false;
    }
    if (done) {
      node.ran = "cached";
      continue;
    }
    if (node.bodies.empty())
      run_node(m, node, values);
    else
      run_control(m, node, values);
  }
}

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
  throw_if_error(read_graph(*impl));
  fuse_nodes(*impl);
  resolve_ops(impl->nodes);
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
  run_nodes(m, m.nodes, values);
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
  std::unique_ptr<OpRecording> recording = OpRecording::record(m.device, [&] {
    outputs = run_plan(m, plan, c.inputs);
    // An output that is an input or a view of one (Identity, a Transpose or Reshape of it) is
    // copied by a recorded op: a replay reads its new inputs where they are, never writing the
    // recorded ones, so such an output would give the recorded run's values again.
    for (Tensor& out : outputs) {
      for (const Tensor& in : c.inputs) {
        if (out.shares_storage_with(in)) {
          out = out.clone();
          break;
        }
      }
    }
  });
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
  return upload(t, device);
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
  const std::function<void(const std::vector<Node>&)> tally = [&](const std::vector<Node>& nodes) {
    for (const Node& node : nodes) {
      if (node.skipped) {
        ++folded;
        continue;
      }
      if (!node.ran.empty()) ++counts[node.op][node.ran];
      for (const auto& body : node.bodies) tally(body->nodes);
    }
  };
  tally(m.nodes);
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
