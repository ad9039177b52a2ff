// ONNX export: a trained model, with the input scaling and output mapping that Predictor puts
// around it, as one self-contained ONNX graph (opset 17). onnx_export.cpp writes the model and the
// plain layers; onnx_export_sequence.cpp the sequence layers (embedding, LSTM, GRU, attention,
// positional encoding, CLS token, pooling). Private to the core.
//
// Every layer becomes the ONNX ops that compute what its eval-mode forward computes, in the same
// order, so that switchyard's importer runs the same switchyard ops on the same values: a linear
// layer is MatMul + Add (fused back into one linear op on import), exact GELU is the Erf pattern
// (fused back into gelu), batch normalisation is Sub, Div, Mul, Add with its denominator computed
// by the ops the layer uses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "switchyard/data.h"
#include "switchyard/nn.h"
#include "switchyard/status.h"
#include "switchyard/train.h"

namespace onnx {
class GraphProto;
class NodeProto;
}  // namespace onnx

namespace switchyard::detail {

// What the exported file needs besides the network: the data layout a checkpoint keeps.
struct OnnxExportSource {
  const BuiltModel* model = nullptr;      // borrowed; its network is read, never run
  std::vector<int64_t> sample_shape;      // per sample, as the network takes it
  std::vector<std::string> class_names;   // classification; empty for regression
  std::vector<std::string> target_names;  // regression; empty for classification
  FeatureScaler scaler;                   // applied to the raw input features
  FeatureScaler target_scaler;            // regression: undone on the outputs
  bool relative_to_last = false;          // data.series offset: last (Predictor's `relative`)
  std::string data_description;           // describe_data(), kept in the metadata
  // How the training table was read (table_record_text, the checkpoint's "data/table"), kept as
  // the metadata switchyard.table so that `switchyard predict model.onnx rows.csv` reads new rows
  // as a checkpoint does. Empty for a model without one (a series, an old checkpoint).
  std::string table_record;
};

// The model as the bytes of an ONNX ModelProto; INVALID_ARGUMENT naming a layer the exporter cannot
// write (UNIMPLEMENTED for a layer type it does not know).
Result<std::vector<uint8_t>> onnx_model_bytes(const OnnxExportSource& source);

// onnx_model_bytes written to `path` atomically; errors name the path.
Status write_onnx_model(const std::filesystem::path& path, const OnnxExportSource& source);

}  // namespace switchyard::detail

namespace switchyard::onnx_detail {

// Builds a graph node by node: unique value and node names, float and int64 initializers, nodes
// with attributes. Every method returns the name of the value it made.
class GraphWriter {
 public:
  explicit GraphWriter(onnx::GraphProto& graph) : graph_(graph) {}

  // A float initializer named after `hint` (made unique).
  std::string floats(const std::string& hint, const std::vector<float>& values,
                     const std::vector<int64_t>& shape);
  // A device tensor's values as a float initializer, reshaped to `shape` (its own when empty).
  std::string tensor(const std::string& hint, const Tensor& value,
                     const std::vector<int64_t>& shape = {});
  std::string scalar(const std::string& hint, float value);                         // shape []
  std::string int64s(const std::string& hint, const std::vector<int64_t>& values);  // shape [n]
  std::string int64_scalar(const std::string& hint, int64_t value);                 // shape []

  // A node of `op` on `inputs` with `outputs` fresh outputs named after `hint`; its attributes are
  // added to the returned node before the next call.
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::string& hint, int outputs = 1);
  // The single output of a node just made.
  static const std::string& output(const onnx::NodeProto& node, int k = 0);
  // node() for the common case: one output, no attributes.
  std::string op(const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& hint);

  // Renames the value `from` to `to` wherever a node reads or writes it (for the graph's outputs,
  // which have fixed names); a graph input is copied by an Identity node instead.
  void rename(const std::string& from, const std::string& to);

  static void attribute(onnx::NodeProto& node, const std::string& name, int64_t value);
  static void attribute(onnx::NodeProto& node, const std::string& name, float value);
  static void attribute(onnx::NodeProto& node, const std::string& name, const std::string& value);
  static void attribute(onnx::NodeProto& node, const std::string& name,
                        const std::vector<int64_t>& values);

 private:
  std::string fresh(const std::string& hint);

  onnx::GraphProto& graph_;
  std::set<std::string> used_;
};

// A value flowing through the network: its name and its shape per sample (no batch axis; the
// batch axis is always first and dynamic).
struct Flow {
  std::string value;
  std::vector<int64_t> shape;
};

// Appends `module` (named `scope` in the state dict, e.g. "2") to the graph; throws Error for a
// module it cannot write.
Flow export_layer(GraphWriter& graph, const Module& module, const Flow& in,
                  const std::string& scope);
// The same for the sequence layers and the layers they are built of; false (nothing written) for
// any other module.
bool export_sequence_layer(GraphWriter& graph, const Module& module, const Flow& in,
                           const std::string& scope, Flow& out);
// y = x W^T + b as MatMul (W [out, in] transposed once, in the file) and Add, the pattern the
// importer fuses back into one linear op; `bias` may be undefined; `scope` names the weights.
std::string export_affine(GraphWriter& graph, const std::string& x, const Tensor& weight,
                          const Tensor& bias, const std::string& scope);
Flow export_linear(GraphWriter& graph, const Linear& linear, const Flow& in,
                   const std::string& scope);
Flow export_layer_norm(GraphWriter& graph, const LayerNorm& norm, const Flow& in,
                       const std::string& scope);
// x * 0.5 * (1 + erf(x / sqrt 2)) in the op order PyTorch exports it, which the importer fuses.
std::string export_gelu(GraphWriter& graph, const std::string& x, const std::string& scope);

// "scope.name", or `name` at the top ("" scope): state-dict names, which name the initializers.
std::string scoped(const std::string& scope, const std::string& name);
// A module's parameter or child by its state-dict name; throws Error (INTERNAL) when missing.
Tensor parameter(const Module& module, const std::string& name);
const Module& child(const Module& module, const std::string& name);

}  // namespace switchyard::onnx_detail
