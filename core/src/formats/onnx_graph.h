// The ONNX importer's graph: nodes in topological order over numbered values, each value known on
// the host (a constant, or computed from constants and input shapes), on the device, or both.
// onnx_model.cpp loads and checks a file into this form and runs it, onnx_fusion.cpp fuses runs of
// nodes at load, onnx_ops*.cpp hold each op's host and device implementation
// (onnx_ops_internal.h). Private to the formats layer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "formats/onnx_proto.h"
#include "formats/onnx_tensor.h"
#include "switchyard/capture.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/tensor.h"

namespace switchyard::onnx_detail {

// A host value and its device copy, made on first use and kept as long as the value is.
struct HostSlot {
  HostTensor tensor;
  Tensor uploaded;
};

struct Value {
  int32_t type = kUndefined;  // ONNX element type; kUndefined: not computed (yet)
  std::vector<int64_t> shape;
  std::shared_ptr<HostSlot> host;  // set when the values are known on the host
  bool cacheable = false;  // depends only on constants and input shapes: kept per input shape
  // Its shape depends only on constants and input shapes (not on values read from the inputs, as
  // NonZero's does): a Shape of it may be kept per input shape.
  bool fixed_shape = false;
  Tensor device;  // float and bool values as f32 (bool 0/1), integers as i64
  // A sequence (SequenceConstruct, SplitToSequence, ...): its tensors in order, `type` theirs.
  // Only the sequence ops (onnx_ops_sequence.cpp), Identity and control flow's carried values
  // take one; never cached.
  std::shared_ptr<const std::vector<Value>> sequence;

  bool known() const { return type != kUndefined; }
  bool is_sequence() const { return sequence != nullptr; }
};

struct OpDef;
struct Body;

struct Node {
  std::string name;          // the node's name, or "#<index>" when it has none
  std::string op;            // op type; "switchyard.Gelu" / "switchyard.Linear" after fusion
  int version = 0;           // the op's version at the model's opset (onnx_opset.h); 0 if fused
  std::vector<int> inputs;   // value ids, -1 for an omitted optional input
  std::vector<int> outputs;  // value ids, -1 for an omitted optional output
  const onnx::NodeProto* proto = nullptr;
  bool skipped = false;        // folded at load or fused into a later node
  const OpDef* def = nullptr;  // the op's implementation, resolved once at load
  std::string ran;             // "host", "device", "cached" in the last run
  // "switchyard.Conv" (fuse_conv): the convolution's epilogue. Inputs are then x, W, B (-1 when
  // absent) and, when `residual`, the tensor added before the activation; proto is the Conv's.
  bool residual = false;
  ConvEpilogue::Activation activation = ConvEpilogue::Activation::kNone;
  float low = 0.0f, high = 0.0f;  // a fused Clip's bounds
  // "switchyard.Attention" (fuse_attention): inputs q, k^T, v, mask (-1 when absent); the scores
  // are (q k^T) * scale; `causal` when the mask is a constant causal [T, T] one.
  double scale = 1.0;
  bool causal = false;
  // "switchyard.Gelu" and "switchyard.Attention": the rank of the highest-rank one-element
  // constant folded in. Such a constant broadcasts the unfused nodes' result up to its rank with
  // leading 1s ([1, 1, 1] * x of [4] is [1, 1, 4]), so the fused output is lifted to it.
  int lift_rank = 0;
  // If (then_branch, else_branch) and Loop (body): its subgraphs (onnx_control.cpp), and the values
  // of enclosing graphs they read, which the node waits for as it waits for its inputs.
  std::vector<std::shared_ptr<Body>> bodies;
  std::vector<int> captures;
};

// A subgraph of an If or Loop node, over the model's one numbering of values: what it defines is
// numbered [first_value, end_value), apart from every other graph's values, so that a name may be
// used again inside it. Its outputs may be values of an enclosing graph.
struct Body {
  std::vector<Node> nodes;  // topological order
  std::vector<int> inputs;  // Loop: the iteration number, the condition, the carried values
  std::vector<int> outputs;
  std::vector<int32_t> output_types;                // as declared (kUndefined where it is not)
  std::vector<std::vector<int64_t>> output_shapes;  // as declared, -1 for an open extent
  int first_value = 0, end_value = 0;
  std::vector<int> captures;  // values of enclosing graphs that its nodes (or their bodies) read
};

// The values of one input signature: constants, and what was computed on the host from them and
// the input shapes, kept between runs; the rest is cleared after each run.
// Capture and replay of one input signature (docs/capture.md): the recorded pass, the input
// tensors it reads (run() copies the caller's into them) and the outputs it writes.
struct Captured {
  bool seen = false;       // its first (eager) run is done
  uint64_t last_used = 0;  // OnnxModel::Impl::runs when this signature last ran
  std::vector<Tensor> inputs, outputs;
  std::unique_ptr<OpRecording> recording;
  std::string refused;  // why this signature runs eagerly; "" while it may be recorded
};

struct Plan {
  std::vector<Value> values;
  std::unique_ptr<Captured> captured;
};

// A device value's host copy, read back once and kept with it (the value is then no longer
// cacheable: it depends on the input values).
const HostTensor& read_back(Value& v);
// A host tensor on `device`: floats as f32, bools as 0/1 f32, integers as i64.
Tensor upload(const HostTensor& t, const std::shared_ptr<Device>& device);

class NodeContext;
struct OpDef {
  std::function<void(NodeContext&)> host;    // all inputs known on the host (may be empty)
  std::function<void(NodeContext&)> device;  // otherwise (may be empty: host only)
  bool integers_on_host = false;             // integer (not bool) inputs take the host path
  bool sequences = false;                    // takes sequence inputs (the sequence ops)
};
const std::map<std::string, OpDef>& op_table();

}  // namespace switchyard::onnx_detail

namespace switchyard {

struct OnnxModel::Impl {
  std::filesystem::path path;
  std::string source;  // the file, as messages name it
  std::filesystem::path base_dir;
  std::shared_ptr<Device> device;
  onnx::ModelProto model;
  int64_t opset = 0;

  std::vector<std::string> value_names;
  std::vector<onnx_detail::Node> nodes;  // topological order
  std::vector<int> input_ids, output_ids;
  std::vector<OnnxValueInfo> inputs, outputs;
  std::vector<int32_t> input_types;
  std::vector<onnx_detail::Value> constants;  // initializers and Constant nodes; empty elsewhere
  std::map<std::string, onnx_detail::Plan> plans;  // by input signature
  uint64_t runs = 0;                               // captured runs so far (Captured::last_used)
  // Prepared weights by node (its address: names may repeat in a file) and kind.
  std::map<std::pair<const onnx_detail::Node*, std::string>, std::shared_ptr<void>> node_cache;
  std::vector<std::string> fusions;
  CaptureMode capture = CaptureMode::kOff;
  std::string capture_note = "eager";  // what the last run did (capture_summary)
  std::mutex mutex;
};

namespace onnx_detail {

// What an op implementation sees: its node, its inputs' values, and where its outputs go.
class NodeContext {
 public:
  NodeContext(OnnxModel::Impl& model, Node& node, std::vector<Value>& values)
      : model_(model), node_(node), values_(values) {}

  const Node& node() const { return node_; }
  // The op's version at the model's opset: the opset where ONNX last changed it (onnx_opset.h).
  int version() const { return node_.version; }
  OnnxModel::Impl& model() { return model_; }
  size_t input_count() const { return node_.inputs.size(); }
  bool has(size_t k) const { return k < node_.inputs.size() && node_.inputs[k] >= 0; }
  const Value& value(size_t k) const;
  const std::vector<int64_t>& shape(size_t k) const { return value(k).shape; }
  int32_t type(size_t k) const { return value(k).type; }
  // The host values of input k, or null when it is known only on the device.
  const HostTensor* host(size_t k) const;
  // Input k's host values; a device-only input is read back (and the result is then not cached).
  const HostTensor& host_values(size_t k);
  // Input k's host values, which must be exactly one (a condition, a count, a threshold);
  // `what` names it in the message.
  const HostTensor& one_value(size_t k, const std::string& what);
  // Input k's integer values (any integer type, or whole floats), for shapes, axes, sizes.
  std::vector<int64_t> ints(size_t k);
  // Input k on the device (a host value is uploaded once and kept).
  Tensor dev(size_t k);
  // Input k is a host value that depends only on constants and input shapes: the same in every
  // run of this input signature, so what is prepared from it may be kept (cached()).
  bool constant(size_t k) const { return host(k) != nullptr && value(k).cacheable; }
  // The scalar value of input k when it is a one-element host tensor.
  bool host_scalar(size_t k, double& out) const;

  // shape_only: computed from input shapes alone (Shape, Size), so kept per input shape where
  // those are fixed by the input signature (Value::fixed_shape).
  void set_host(size_t k, HostTensor tensor, bool shape_only = false);
  void set_device(size_t k, Tensor tensor, int32_t type);
  // Input k's tensors when it is a sequence (else fails), and a sequence of `type` as output k.
  const std::vector<Value>& sequence(size_t k) const;
  void set_sequence(size_t k, std::vector<Value> items, int32_t type);
  // `v` (an input's value, or a sequence's element) as output k, not kept between runs.
  void set_value(size_t k, const Value& v);
  bool output_used(size_t k) const { return k < node_.outputs.size() && node_.outputs[k] >= 0; }
  size_t output_count() const { return node_.outputs.size(); }

  const onnx::AttributeProto* attr(const char* name) const;
  int64_t attr_int(const char* name, int64_t fallback) const;
  float attr_float(const char* name, float fallback) const;
  std::string attr_string(const char* name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const char* name) const;
  std::vector<float> attr_floats(const char* name) const;
  std::vector<std::string> attr_strings(const char* name) const;

  // A per-node cache of prepared weights (made once, kept with the model): only for what is
  // made from constant() inputs.
  template <typename T>
  std::shared_ptr<T> cached(const std::string& key,
                            const std::function<std::shared_ptr<T>()>& make) {
    auto& slot = model_.node_cache[{&node_, key}];
    if (!slot) slot = make();
    return std::static_pointer_cast<T>(slot);
  }

  // INVALID_ARGUMENT naming the node; the caller adds the file.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  bool inputs_cacheable() const;
  // Every input's shape fixed by the input signature, and every host value among the inputs
  // cacheable (a value read from the device can decide an output's shape).
  bool outputs_shape_fixed() const;

  OnnxModel::Impl& model_;
  Node& node_;
  std::vector<Value>& values_;
};

// Normalises an ONNX axis for `rank`, or fails naming the node.
int normalize(const NodeContext& context, int64_t axis, size_t rank);

// A name from the file in quotes, cut to 120 characters and made printable
// (runtime/input_file.h): 'name'.
std::string quote_name(const std::string& text);
// "node 'name' (Op)".
std::string node_label(const Node& node);

// Reads m.model's graph into m (onnx_graph_reader.cpp): values numbered, initializers and inputs
// decoded and checked, nodes checked and put in a topological order, outputs checked, constants
// folded in. Returns the first problem, naming the file.
Status read_graph(OnnxModel::Impl& m);

// Runs `nodes` (the graph's or a subgraph's, in order) over `values`: a node whose outputs are
// known (kept from an earlier run of this input signature) is skipped, If and Loop run their
// subgraphs (run_control), any other node its op on the host or the device.
void run_nodes(OnnxModel::Impl& m, std::vector<Node>& nodes, std::vector<Value>& values);
// If: the branch its condition picks; Loop: its body, iteration after iteration
// (onnx_control.cpp).
void run_control(OnnxModel::Impl& m, Node& node, std::vector<Value>& values);

// Fuses runs of nodes that switchyard runs as one op (onnx_fusion.cpp): Erf-based GELU, MatMul +
// Add, Conv (+ Add) (+ Relu, Clip or SiLU). Called once at load, after the graph is read.
void fuse_nodes(OnnxModel::Impl& m);

}  // namespace onnx_detail
}  // namespace switchyard
