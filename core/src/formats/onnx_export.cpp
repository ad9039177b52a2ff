// ONNX export of a trained model (see onnx_export.h): the graph writer, the plain layers, and the
// model around the network (input scaling, outputs, metadata).
#include "formats/onnx_export.h"

#include <algorithm>
#include <cmath>

#include "formats/onnx_proto.h"
#include "formats/onnx_tensor.h"
#include "runtime/file_bytes.h"
#include "support/json_io.h"
#include "switchyard/autograd.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

// ---- GraphWriter --------------------------------------------------------------------------------

std::string GraphWriter::fresh(const std::string& hint) {
  std::string name = hint.empty() ? "value" : hint;
  for (int k = 1; used_.count(name) != 0; ++k) name = hint + "_" + std::to_string(k);
  used_.insert(name);
  return name;
}

std::string GraphWriter::floats(const std::string& hint, const std::vector<float>& values,
                                const std::vector<int64_t>& shape) {
  HostTensor host;
  host.type = kFloat;
  host.shape = shape;
  host.f = values;
  const std::string name = fresh(hint);
  encode_tensor(host, name, *graph_.add_initializer());
  return name;
}

std::string GraphWriter::tensor(const std::string& hint, const Tensor& value,
                                const std::vector<int64_t>& shape) {
  return floats(hint, value.to(DType::kF32).to_host_float(),
                shape.empty() ? value.shape().to_vector() : shape);
}

std::string GraphWriter::scalar(const std::string& hint, float value) {
  return floats(hint, {value}, {});
}

std::string GraphWriter::int64s(const std::string& hint, const std::vector<int64_t>& values) {
  const std::string name = fresh(hint);
  encode_tensor(HostTensor::ints(values, {static_cast<int64_t>(values.size())}), name,
                *graph_.add_initializer());
  return name;
}

std::string GraphWriter::int64_scalar(const std::string& hint, int64_t value) {
  const std::string name = fresh(hint);
  encode_tensor(HostTensor::scalar_int(value), name, *graph_.add_initializer());
  return name;
}

onnx::NodeProto& GraphWriter::node(const std::string& op, const std::vector<std::string>& inputs,
                                   const std::string& hint, int outputs) {
  onnx::NodeProto& node = *graph_.add_node();
  node.set_op_type(op);
  // Node names are unique too, as ONNX's checker asks.
  node.set_name(fresh(hint + "/" + op));
  for (const std::string& input : inputs) node.add_input(input);
  for (int k = 0; k < outputs; ++k) {
    node.add_output(fresh(hint + "/" + op + (outputs > 1 ? "_" + std::to_string(k) : "")));
  }
  return node;
}

void GraphWriter::rename(const std::string& from, const std::string& to) {
  if (!used_.insert(to).second) {
    throw_error(internal_error("ONNX export: the value name '" + to + "' is taken"));
  }
  const auto& nodes = graph_.node();
  const bool produced = std::any_of(nodes.begin(), nodes.end(), [&](const onnx::NodeProto& node) {
    return std::find(node.output().begin(), node.output().end(), from) != node.output().end();
  });
  if (!produced) {  // a graph input: copied, since it keeps its own name
    onnx::NodeProto& node = *graph_.add_node();
    node.set_op_type("Identity");
    node.set_name(fresh(to + "/Identity"));
    node.add_input(from);
    node.add_output(to);
    return;
  }
  for (onnx::NodeProto& node : *graph_.mutable_node()) {
    for (std::string& name : *node.mutable_input()) {
      if (name == from) name = to;
    }
    for (std::string& name : *node.mutable_output()) {
      if (name == from) name = to;
    }
  }
}

const std::string& GraphWriter::output(const onnx::NodeProto& node, int k) {
  return node.output(k);
}

std::string GraphWriter::op(const std::string& op, const std::vector<std::string>& inputs,
                            const std::string& hint) {
  return output(node(op, inputs, hint));
}

void GraphWriter::attribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
}

void GraphWriter::attribute(onnx::NodeProto& node, const std::string& name, float value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
}

void GraphWriter::attribute(onnx::NodeProto& node, const std::string& name,
                            const std::string& value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(value);
}

void GraphWriter::attribute(onnx::NodeProto& node, const std::string& name,
                            const std::vector<int64_t>& values) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (const int64_t v : values) a.add_ints(v);
}

// ---- lookups ------------------------------------------------------------------------------------

std::string scoped(const std::string& scope, const std::string& name) {
  return scope.empty() ? name : scope + "." + name;
}

Tensor parameter(const Module& module, const std::string& name) {
  for (const auto& [key, value] : module.named_parameters()) {
    if (key == name) return value;
  }
  throw_error(
      internal_error("ONNX export: " + module.describe() + " has no parameter '" + name + "'"));
}

const Module& child(const Module& module, const std::string& name) {
  for (const auto& [key, value] : module.children()) {
    if (key == name) return *value;
  }
  throw_error(internal_error("ONNX export: " + module.describe() + " has no child '" + name + "'"));
}

namespace {

// PyTorch's output extent of a window (the formula build_model uses).
int64_t window_extent(int64_t size, int kernel, int stride, int padding, int dilation) {
  const int64_t span = static_cast<int64_t>(dilation) * (kernel - 1) + 1;
  return (size + 2 * static_cast<int64_t>(padding) - span) / stride + 1;
}

void require_rank(const Module& module, const Flow& in, size_t rank, const char* what) {
  if (in.shape.size() == rank) return;
  throw_error(invalid_argument("ONNX export: " + module.describe() + " needs " + what +
                               " samples, but its input is " + shape_text(in.shape)));
}

// The weight [out, in] transposed to [in, out], the layout MatMul takes.
std::vector<float> transposed(const Tensor& weight) {
  const std::vector<float> w = weight.to(DType::kF32).to_host_float();
  const int64_t rows = weight.dim(0), cols = weight.dim(1);
  std::vector<float> t(w.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = w[r * cols + c];
  }
  return t;
}

Flow export_conv(GraphWriter& g, const Conv2d& conv, const Flow& in, const std::string& scope) {
  require_rank(conv, in, 3, "image-shaped [C, H, W]");
  const Conv2dOptions& o = conv.options();
  const int64_t out_channels = conv.weight().dim(0);
  const int kernel = static_cast<int>(conv.weight().dim(2));
  std::vector<std::string> inputs = {in.value, g.tensor(scoped(scope, "weight"), conv.weight())};
  if (conv.bias().defined()) inputs.push_back(g.tensor(scoped(scope, "bias"), conv.bias()));
  onnx::NodeProto& node = g.node("Conv", inputs, scope);
  GraphWriter::attribute(node, "kernel_shape", std::vector<int64_t>{kernel, kernel});
  GraphWriter::attribute(node, "strides", std::vector<int64_t>{o.stride_h, o.stride_w});
  GraphWriter::attribute(node, "pads", std::vector<int64_t>{o.pad_h, o.pad_w, o.pad_h, o.pad_w});
  GraphWriter::attribute(node, "dilations", std::vector<int64_t>{o.dilation_h, o.dilation_w});
  if (o.groups != 1) GraphWriter::attribute(node, "group", int64_t{o.groups});
  return {GraphWriter::output(node),
          {out_channels, window_extent(in.shape[1], kernel, o.stride_h, o.pad_h, o.dilation_h),
           window_extent(in.shape[2], kernel, o.stride_w, o.pad_w, o.dilation_w)}};
}

Flow export_pool(GraphWriter& g, const Module& pool, const Pool2dOptions& o, bool max,
                 const Flow& in, const std::string& scope) {
  require_rank(pool, in, 3, "image-shaped [C, H, W]");
  onnx::NodeProto& node = g.node(max ? "MaxPool" : "AveragePool", {in.value}, scope);
  GraphWriter::attribute(node, "kernel_shape", std::vector<int64_t>{o.kernel_h, o.kernel_w});
  GraphWriter::attribute(node, "strides", std::vector<int64_t>{o.stride_h, o.stride_w});
  GraphWriter::attribute(node, "pads", std::vector<int64_t>{o.pad_h, o.pad_w, o.pad_h, o.pad_w});
  if (!max) GraphWriter::attribute(node, "count_include_pad", int64_t{o.count_include_pad ? 1 : 0});
  return {GraphWriter::output(node),
          {in.shape[0], window_extent(in.shape[1], o.kernel_h, o.stride_h, o.pad_h, 1),
           window_extent(in.shape[2], o.kernel_w, o.stride_w, o.pad_w, 1)}};
}

// Flatten's axes count the batch axis; ONNX's Flatten keeps axes before `axis` and joins the rest,
// which is Flatten(1, -1); any other range is a Reshape.
Flow export_flatten(GraphWriter& g, const Flatten& flatten, const Flow& in,
                    const std::string& scope) {
  const auto rank = static_cast<int>(in.shape.size()) + 1;
  const int start = flatten.start_axis() < 0 ? flatten.start_axis() + rank : flatten.start_axis();
  const int end = flatten.end_axis() < 0 ? flatten.end_axis() + rank : flatten.end_axis();
  if (start < 1 || end >= rank || start > end) {
    throw_error(invalid_argument("ONNX export: " + flatten.describe() +
                                 " joins the batch axis or is out of range for samples " +
                                 shape_text(in.shape)));
  }
  std::vector<int64_t> shape(in.shape.begin(), in.shape.begin() + (start - 1));
  int64_t joined_extent = 1;
  for (int axis = start; axis <= end; ++axis) joined_extent *= in.shape[axis - 1];
  shape.push_back(joined_extent);
  shape.insert(shape.end(), in.shape.begin() + end, in.shape.end());
  if (start == 1 && end == rank - 1) {
    onnx::NodeProto& node = g.node("Flatten", {in.value}, scope);
    GraphWriter::attribute(node, "axis", int64_t{1});
    return {GraphWriter::output(node), shape};
  }
  std::vector<int64_t> target = {0};
  target.insert(target.end(), shape.begin(), shape.end());
  return {g.op("Reshape", {in.value, g.int64s(scoped(scope, "shape"), target)}, scope), shape};
}

// Eval mode: (x - running_mean) / sqrt(running_var + eps) * weight + bias per channel, the
// layer's own ops in its order; the denominator is computed once here by the ops the layer runs.
Flow export_batch_norm(GraphWriter& g, const BatchNorm& norm, const Flow& in,
                       const std::string& scope) {
  if (!norm.running_mean().defined()) {
    throw_error(invalid_argument("ONNX export: " + norm.describe() +
                                 " normalises by each batch's statistics in eval mode too "
                                 "(track_running_stats false); only running statistics export"));
  }
  if (in.shape.empty() || in.shape.size() > 3) {
    throw_error(invalid_argument("ONNX export: " + norm.describe() + " on samples " +
                                 shape_text(in.shape)));
  }
  std::vector<int64_t> channel(in.shape.size(), 1);
  channel[0] = in.shape[0];
  Tensor denominator;
  {
    NoGradGuard no_grad;
    denominator = sqrt(norm.running_var() + norm.options().epsilon);
  }
  std::string y =
      g.op("Sub", {in.value, g.tensor(scoped(scope, "running_mean"), norm.running_mean(), channel)},
           scope);
  y = g.op("Div", {y, g.tensor(scoped(scope, "running_std"), denominator, channel)}, scope);
  if (norm.weight().defined()) {
    y = g.op("Mul", {y, g.tensor(scoped(scope, "weight"), norm.weight(), channel)}, scope);
    y = g.op("Add", {y, g.tensor(scoped(scope, "bias"), norm.bias(), channel)}, scope);
  }
  return {y, in.shape};
}

}  // namespace

std::string export_affine(GraphWriter& g, const std::string& x, const Tensor& weight,
                          const Tensor& bias, const std::string& scope) {
  const int64_t out = weight.dim(0), features = weight.dim(1);
  const std::string transposed_weight =
      g.floats(scoped(scope, "weight_transposed"), transposed(weight), {features, out});
  const std::string y = g.op("MatMul", {x, transposed_weight}, scope);
  if (!bias.defined()) return y;
  return g.op("Add", {y, g.tensor(scoped(scope, "bias"), bias)}, scope);
}

Flow export_linear(GraphWriter& g, const Linear& linear, const Flow& in, const std::string& scope) {
  if (in.shape.empty() || in.shape.back() != linear.weight().dim(1)) {
    throw_error(invalid_argument("ONNX export: " + linear.describe() + " on samples " +
                                 shape_text(in.shape)));
  }
  std::vector<int64_t> shape = in.shape;
  shape.back() = linear.weight().dim(0);
  return {export_affine(g, in.value, linear.weight(), linear.bias(), scope), shape};
}

Flow export_layer_norm(GraphWriter& g, const LayerNorm& norm, const Flow& in,
                       const std::string& scope) {
  const std::vector<int64_t>& normalized = norm.normalized_shape();
  if (normalized.size() > in.shape.size() ||
      !std::equal(normalized.begin(), normalized.end(), in.shape.end() - normalized.size())) {
    throw_error(invalid_argument("ONNX export: " + norm.describe() + " on samples " +
                                 shape_text(in.shape)));
  }
  // ONNX's epsilon is a float: the layer's double epsilon rounded (1e-5 moves by 2.5e-14).
  onnx::NodeProto& node = g.node("LayerNormalization",
                                 {in.value, g.tensor(scoped(scope, "weight"), norm.gamma()),
                                  g.tensor(scoped(scope, "bias"), norm.beta())},
                                 scope);
  GraphWriter::attribute(node, "axis", -static_cast<int64_t>(normalized.size()));
  GraphWriter::attribute(node, "epsilon", static_cast<float>(norm.epsilon()));
  return {GraphWriter::output(node), in.shape};
}

std::string export_gelu(GraphWriter& g, const std::string& x, const std::string& scope) {
  const std::string scaled =
      g.op("Div", {x, g.scalar(scoped(scope, "sqrt2"), static_cast<float>(std::sqrt(2.0)))}, scope);
  const std::string erf = g.op("Erf", {scaled}, scope);
  const std::string shifted = g.op("Add", {erf, g.scalar(scoped(scope, "one"), 1.0F)}, scope);
  const std::string product = g.op("Mul", {x, shifted}, scope);
  return g.op("Mul", {product, g.scalar(scoped(scope, "half"), 0.5F)}, scope);
}

namespace {

// The elementwise activations: ONNX op types, or "" for another module.
std::string activation_op(const Module& module) {
  if (dynamic_cast<const ReLU*>(&module) != nullptr) return "Relu";
  if (dynamic_cast<const Tanh*>(&module) != nullptr) return "Tanh";
  if (dynamic_cast<const Sigmoid*>(&module) != nullptr) return "Sigmoid";
  return "";
}

}  // namespace

Flow export_layer(GraphWriter& g, const Module& module, const Flow& in, const std::string& scope) {
  if (const auto* linear = dynamic_cast<const Linear*>(&module)) {
    return export_linear(g, *linear, in, scope);
  }
  if (const auto* conv = dynamic_cast<const Conv2d*>(&module)) {
    return export_conv(g, *conv, in, scope);
  }
  if (const auto* pool = dynamic_cast<const MaxPool2d*>(&module)) {
    return export_pool(g, *pool, pool->options(), true, in, scope);
  }
  if (const auto* pool = dynamic_cast<const AvgPool2d*>(&module)) {
    return export_pool(g, *pool, pool->options(), false, in, scope);
  }
  if (const auto* flatten = dynamic_cast<const Flatten*>(&module)) {
    return export_flatten(g, *flatten, in, scope);
  }
  if (dynamic_cast<const Dropout*>(&module) != nullptr) return in;  // identity in eval mode
  if (const std::string op = activation_op(module); !op.empty()) {
    return {g.op(op, {in.value}, scope), in.shape};
  }
  if (dynamic_cast<const GELU*>(&module) != nullptr) {
    return {export_gelu(g, in.value, scope), in.shape};
  }
  if (const auto* norm = dynamic_cast<const LayerNorm*>(&module)) {
    return export_layer_norm(g, *norm, in, scope);
  }
  if (const auto* norm = dynamic_cast<const BatchNorm*>(&module)) {
    return export_batch_norm(g, *norm, in, scope);
  }
  if (dynamic_cast<const VaeLatent*>(&module) != nullptr) {
    // Eval mode outputs the mean head alone.
    return export_linear(g, dynamic_cast<const Linear&>(child(module, "mu")), in,
                         scoped(scope, "mu"));
  }
  if (const auto* sequential = dynamic_cast<const Sequential*>(&module)) {
    Flow flow = in;
    for (const auto& [name, layer] : sequential->children()) {
      flow = export_layer(g, *layer, flow, scoped(scope, name));
    }
    return flow;
  }
  Flow out;
  if (export_sequence_layer(g, module, in, scope, out)) return out;
  throw_error(
      unimplemented("ONNX export: no ONNX form for layer " + scope + ", " + module.describe()));
}

}  // namespace switchyard::onnx_detail

namespace switchyard::detail {
namespace {

using onnx_detail::Flow;
using onnx_detail::GraphWriter;

constexpr int64_t kOpset = 17;
constexpr int64_t kIrVersion = 8;  // ONNX 1.12, the first release with opset 17

void set_tensor_type(onnx::ValueInfoProto& info, const std::string& name, int64_t width,
                     const std::string& doc) {
  info.set_name(name);
  info.set_doc_string(doc);
  onnx::TypeProto::Tensor& type = *info.mutable_type()->mutable_tensor_type();
  type.set_elem_type(onnx_detail::kFloat);
  type.mutable_shape()->add_dim()->set_dim_param("batch");
  type.mutable_shape()->add_dim()->set_dim_value(width);
}

bool all_equal(const std::vector<float>& values, float value) {
  for (const float v : values) {
    if (v != value) return false;
  }
  return true;
}

// Predictor::predict_into's preparation of raw rows: the window's last value subtracted (series
// with offset: last; `level` is set to it), then (x - offset) * factor, then the sample shape.
// Steps that cannot change a value (subtracting zeros, multiplying by ones) are left out.
Flow prepare_input(GraphWriter& g, const OnnxExportSource& source, int64_t width,
                   std::string& level) {
  std::string x = "features";
  if (source.relative_to_last) {
    onnx::NodeProto& slice = g.node("Slice",
                                    {x, g.int64s("last_start", {width - 1}),
                                     g.int64s("last_end", {width}), g.int64s("last_axis", {1})},
                                    "level");
    level = GraphWriter::output(slice);
    x = g.op("Sub", {x, level}, "relative");
  }
  const FeatureScaler& scaler = source.scaler;
  if (!scaler.offset.empty()) {
    if (!all_equal(scaler.offset, 0.0F)) {
      x = g.op("Sub", {x, g.floats("scaler.offset", scaler.offset, {width})}, "scale");
    }
    if (!all_equal(scaler.factor, 1.0F)) {
      x = g.op("Mul", {x, g.floats("scaler.factor", scaler.factor, {width})}, "scale");
    }
  }
  if (source.sample_shape.size() > 1) {
    std::vector<int64_t> target = {0};
    target.insert(target.end(), source.sample_shape.begin(), source.sample_shape.end());
    x = g.op("Reshape", {x, g.int64s("sample_shape", target)}, "sample");
  }
  return {x, source.sample_shape};
}

// Classification: "probabilities" (softmax, what predict reports) and "logits". Regression:
// "values" in the targets' units, as predict_into gives them.
void add_outputs(GraphWriter& g, onnx::GraphProto& graph, const OnnxExportSource& source,
                 const std::string& network_output, const std::string& level, int64_t outputs) {
  const auto add_output = [&](const std::string& from, const std::string& name,
                              const std::string& doc) {
    g.rename(from, name);
    set_tensor_type(*graph.add_output(), name, outputs, doc);
  };
  if (source.target_names.empty()) {
    onnx::NodeProto& softmax = g.node("Softmax", {network_output}, "probabilities");
    GraphWriter::attribute(softmax, "axis", int64_t{1});
    add_output(GraphWriter::output(softmax), "probabilities",
               "softmax of the logits, one column per class (metadata switchyard.class_names)");
    add_output(network_output, "logits", "the network's outputs, one column per class");
    return;
  }
  std::string y = network_output;
  const FeatureScaler& scaler = source.target_scaler;
  if (!scaler.offset.empty()) {
    y = g.op("Div", {y, g.floats("target_scaler.factor", scaler.factor, {outputs})}, "unscale");
    y = g.op("Add", {y, g.floats("target_scaler.offset", scaler.offset, {outputs})}, "unscale");
  }
  if (!level.empty()) y = g.op("Add", {y, level}, "level");
  add_output(y, "values",
             "predictions in the targets' units, one column per target (metadata "
             "switchyard.target_names)");
}

void add_metadata(onnx::ModelProto& model, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto& entry = *model.add_metadata_props();
  entry.set_key(key);
  entry.set_value(value);
}

}  // namespace

Result<std::vector<uint8_t>> onnx_model_bytes(const OnnxExportSource& source) {
  if (source.model == nullptr || !source.model->network) {
    return invalid_argument("ONNX export: no model");
  }
  int64_t width = 1;
  for (const int64_t extent : source.sample_shape) width *= extent;
  const bool regression = !source.target_names.empty();
  const auto outputs =
      static_cast<int64_t>(regression ? source.target_names.size() : source.class_names.size());
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("switchyard");
  model.set_producer_version(SWITCHYARD_VERSION);
  model.set_doc_string(source.model->architecture);
  model.add_opset_import()->set_version(kOpset);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("switchyard");
  set_tensor_type(*graph.add_input(), "features", width,
                  "raw (unscaled) features, one row per sample, as `switchyard predict` reads "
                  "them; the graph scales them as training did");
  GraphWriter g(graph);
  try {
    std::string level;
    Flow flow = prepare_input(g, source, width, level);
    flow = onnx_detail::export_layer(g, *source.model->network, flow, "");
    if (flow.shape != std::vector<int64_t>{outputs}) {
      return invalid_argument("ONNX export: the network's output per sample is " +
                              onnx_detail::shape_text(flow.shape) + ", expected [" +
                              std::to_string(outputs) + "]");
    }
    add_outputs(g, graph, source, flow.value, level, outputs);
  } catch (const Error& error) {
    return error.status();
  }
  add_metadata(model, "switchyard.architecture", source.model->architecture);
  add_metadata(model, "switchyard.data", source.data_description);
  if (!source.table_record.empty()) add_metadata(model, "switchyard.table", source.table_record);
  add_metadata(model, regression ? "switchyard.target_names" : "switchyard.class_names",
               json_text(Json(regression ? source.target_names : source.class_names)));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return internal_error("ONNX export: the model does not serialize (over 2 GiB?)");
  }
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

Status write_onnx_model(const std::filesystem::path& path, const OnnxExportSource& source) {
  const std::string context = "exporting ONNX model " + path.string();
  Result<std::vector<uint8_t>> bytes = onnx_model_bytes(source);
  if (!bytes.ok()) return bytes.status().with_context(context);
  return write_file_atomically(path, *bytes, "ONNX model").with_context(context);
}

}  // namespace switchyard::detail
