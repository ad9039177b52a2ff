// model.layers -> nn::Sequential, with input sizes inferred from the data.
#include <sstream>

#include "switchyard/checkpoint.h"
#include "switchyard/train.h"
#include "train/sequence_builder.h"

namespace switchyard {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The output extent of a window sliding over `size` (PyTorch's formula); 0 when the window is
// wider than the padded input, where C++'s division toward zero would make the formula say 1.
int64_t window_output(int64_t size, int kernel, int stride, int padding, int dilation) {
  const int64_t span = static_cast<int64_t>(dilation) * (kernel - 1) + 1;
  const int64_t room = size + 2 * static_cast<int64_t>(padding) - span;
  if (room < 0) return 0;
  return room / stride + 1;
}

// Building state: the activation shape per sample as layers are appended.
struct Builder {
  InitContext& init;
  BuiltModel model;
  std::vector<int64_t> shape;
  std::vector<std::string> parts;
  const std::vector<LayerSpec>& layers;
  size_t layer_index = 0;  // position in model.layers, for error messages
  int64_t class_count = 0;

  Status error(const std::string& what) const { return layer_error(layer_index, what); }

  // "file:line:col: key 'model.layers[i]': ..." for a layer from a YAML file, else
  // "model.layers[i]: ...".
  Status layer_error(size_t index, const std::string& what) const {
    const ConfigNode& node = layers[index].node;
    if (node.valid()) return node.error(what);
    return invalid_argument("model.layers[" + std::to_string(index) + "]: " + what);
  }

  void add_flatten() {
    int64_t count = 1;
    for (const int64_t extent : shape) count *= extent;
    model.network->add(std::make_shared<Flatten>());
    shape = {count};
    parts.push_back("flatten");
  }

  // out_features 0 (the default model's last layer, never a YAML value) is one output per class.
  // On sequences [time, features] the layer maps each step's features (as in PyTorch); other
  // shapes are flattened first.
  Status add_linear(const LayerSpec& layer) {
    if (shape.size() != 1 && shape.size() != 2) add_flatten();
    const int64_t out = layer.out_features > 0 ? layer.out_features : class_count;
    model.network->add(std::make_shared<Linear>(init, shape.back(), out, layer.bias));
    parts.push_back("linear(" + std::to_string(shape.back()) + "->" + std::to_string(out) +
                    (layer.bias ? ",bias)" : ")"));
    shape.back() = out;
    return ok_status();
  }

  Status add_sequence(const LayerSpec& layer) {
    auto built = detail::build_sequence_layer(layer, shape, init);
    if (!built.ok()) return error(built.status().message());
    for (Module* module : built->module->modules()) {
      if (auto* dropout = dynamic_cast<Dropout*>(module)) model.dropouts.push_back(dropout);
    }
    model.network->add(built->module);
    shape = built->shape;
    parts.push_back(built->part);
    return ok_status();
  }

  Status require_image(const std::string& type) const {
    if (shape.size() == 3) return ok_status();
    return error(type + " needs image-shaped samples [C, H, W], but its input is " +
                 shape_text(shape) + "; set data.image_shape (e.g. [1, 8, 8] for digits)");
  }

  Status add_conv(const LayerSpec& layer) {
    SY_RETURN_IF_ERROR(require_image("conv2d"));
    const int stride = layer.stride > 0 ? layer.stride : 1;
    const int64_t h =
        window_output(shape[1], layer.kernel_size, stride, layer.padding, layer.dilation);
    const int64_t w =
        window_output(shape[2], layer.kernel_size, stride, layer.padding, layer.dilation);
    if (h < 1 || w < 1) return error("conv2d turns " + shape_text(shape) + " into nothing");
    if (layer.groups < 1 || shape[0] % layer.groups != 0 ||
        layer.out_channels % layer.groups != 0) {
      return error("conv2d groups " + std::to_string(layer.groups) +
                   " must divide its input channels (" + std::to_string(shape[0]) +
                   ") and out_channels (" + std::to_string(layer.out_channels) + ")");
    }
    model.network->add(std::make_shared<Conv2d>(init, shape[0], layer.out_channels,
                                                layer.kernel_size, stride, layer.padding,
                                                layer.dilation, layer.bias, layer.groups));
    std::ostringstream text;
    text << "conv2d(" << shape[0] << "->" << layer.out_channels << ",k" << layer.kernel_size << ",s"
         << stride << ",p" << layer.padding << ",d" << layer.dilation;
    if (layer.groups != 1) text << ",g" << layer.groups;
    text << (layer.bias ? ",bias)" : ")");
    parts.push_back(text.str());
    shape = {layer.out_channels, h, w};
    return ok_status();
  }

  Status add_pool(const LayerSpec& layer) {
    SY_RETURN_IF_ERROR(require_image(layer.type));
    const int stride = layer.stride > 0 ? layer.stride : layer.kernel_size;
    const int64_t h = window_output(shape[1], layer.kernel_size, stride, layer.padding, 1);
    const int64_t w = window_output(shape[2], layer.kernel_size, stride, layer.padding, 1);
    if (h < 1 || w < 1) return error(layer.type + " turns " + shape_text(shape) + " into nothing");
    if (layer.type == "maxpool2d") {
      model.network->add(std::make_shared<MaxPool2d>(layer.kernel_size, stride, layer.padding));
    } else {
      model.network->add(std::make_shared<AvgPool2d>(layer.kernel_size, stride, layer.padding));
    }
    parts.push_back(layer.type + "(k" + std::to_string(layer.kernel_size) + ",s" +
                    std::to_string(stride) + ",p" + std::to_string(layer.padding) + ")");
    shape = {shape[0], h, w};
    return ok_status();
  }

  // On [features] samples (flattened first otherwise, as linear does): the code has `latent`
  // numbers per sample.
  void add_vae_latent(const LayerSpec& layer) {
    if (shape.size() != 1) add_flatten();
    auto module = std::make_shared<VaeLatent>(init, shape[0], layer.latent, layer.beta, init.seed);
    model.latents.push_back(module.get());
    model.network->add(module);
    std::ostringstream text;
    text << "vae_latent(" << shape[0] << "->" << layer.latent << ",beta" << layer.beta << ")";
    parts.push_back(text.str());
    shape = {layer.latent};
  }

  void add_dropout(const LayerSpec& layer) {
    auto dropout = std::make_shared<Dropout>(layer.p, init.seed);
    model.dropouts.push_back(dropout.get());
    model.network->add(dropout);
    std::ostringstream text;
    text << "dropout(" << layer.p << ")";
    parts.push_back(text.str());
  }

  // Over the whole sample, or over each step's features on sequences [time, features].
  void add_layer_norm(const LayerSpec& layer) {
    const std::vector<int64_t> normalized =
        shape.size() == 2 ? std::vector<int64_t>{shape[1]} : shape;
    model.network->add(std::make_shared<LayerNorm>(init, normalized, layer.eps));
    std::ostringstream text;
    text << "layernorm(" << shape_text(normalized) << ",eps" << layer.eps << ")";
    parts.push_back(text.str());
  }

  Status add(const LayerSpec& layer) {
    const std::string& type = layer.type;
    if (type == "linear") return add_linear(layer);
    if (type == "conv2d") return add_conv(layer);
    if (type == "maxpool2d" || type == "avgpool2d") return add_pool(layer);
    if (detail::is_sequence_layer(type)) return add_sequence(layer);
    if (type == "dropout") {
      add_dropout(layer);
    } else if (type == "vae_latent") {
      add_vae_latent(layer);
    } else if (type == "layernorm") {
      add_layer_norm(layer);
    } else if (type == "flatten") {
      add_flatten();
    } else if (type == "relu") {
      model.network->add(std::make_shared<ReLU>());
      parts.push_back(type);
    } else if (type == "gelu") {
      model.network->add(std::make_shared<GELU>());
      parts.push_back(type);
    } else if (type == "tanh") {
      model.network->add(std::make_shared<Tanh>());
      parts.push_back(type);
    } else if (type == "sigmoid") {
      model.network->add(std::make_shared<Sigmoid>());
      parts.push_back(type);
    } else {
      return error("unknown layer type '" + type + "'");
    }
    return ok_status();
  }
};

}  // namespace

Result<BuiltModel> build_model(const ModelSpec& spec, const std::vector<int64_t>& sample_shape,
                               int64_t class_count, InitContext& init) {
  if (spec.layers.empty()) {
    return invalid_argument(
        "model.layers is empty: list at least one layer, e.g. "
        "[{type: linear, out_features: " +
        std::to_string(class_count) + "}]");
  }
  Builder builder{init, BuiltModel{}, sample_shape, {}, spec.layers, 0, class_count};
  builder.model.network = std::make_shared<Sequential>();
  try {
    for (; builder.layer_index < spec.layers.size(); ++builder.layer_index) {
      SY_RETURN_IF_ERROR(builder.add(spec.layers[builder.layer_index]));
    }
  } catch (const Error& error) {
    // Keeps the code: running out of memory while creating parameters is not a config error.
    const ConfigNode& node = spec.layers[builder.layer_index].node;
    const std::string where = node.valid()
                                  ? node.location().to_string() + ": key '" + node.key_path() + "'"
                                  : "model.layers[" + std::to_string(builder.layer_index) + "]";
    return error.status().with_context(where);
  }
  if (builder.shape != std::vector<int64_t>{class_count}) {
    // About the last layer: that is where the output size comes from.
    return builder.layer_error(spec.layers.size() - 1,
                               "the model's output per sample is " + shape_text(builder.shape) +
                                   ", but the data has " + std::to_string(class_count) +
                                   " classes: end model.layers with {type: linear, out_features: " +
                                   std::to_string(class_count) + "}");
  }
  std::string text = "input" + shape_text(sample_shape);
  for (const auto& part : builder.parts) text += " " + part;
  text += " classes=" + std::to_string(class_count) + " dtype=" + dtype_name(init.dtype);
  builder.model.architecture = text;
  builder.model.fingerprint = fnv1a64(text.data(), text.size());
  return std::move(builder.model);
}

}  // namespace switchyard
