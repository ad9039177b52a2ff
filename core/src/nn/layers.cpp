// The layers: Sequential, Linear, Conv2d, pooling, Flatten, Dropout, LayerNorm.
#include "switchyard/nn.h"
#include "switchyard/status.h"

namespace switchyard {

namespace {

std::string bool_text(bool value) {
  return value ? "true" : "false";
}

void require_positive(int64_t value, const char* what, const char* layer) {
  if (value < 1) {
    throw_error(invalid_argument(std::string(layer) + ": " + what + " must be >= 1, got " +
                                 std::to_string(value)));
  }
}

Pool2dOptions square_pool(int kernel_size, int stride, int padding, const char* layer) {
  require_positive(kernel_size, "kernel_size", layer);
  if (stride < 0 || padding < 0) {
    throw_error(invalid_argument(std::string(layer) + ": stride and padding must be >= 0"));
  }
  Pool2dOptions options;
  options.kernel_h = options.kernel_w = kernel_size;
  options.stride_h = options.stride_w = stride == 0 ? kernel_size : stride;
  options.pad_h = options.pad_w = padding;
  return options;
}

}  // namespace

void Sequential::add(std::shared_ptr<Module> module) {
  register_module(std::to_string(size()), std::move(module));
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& [name, child] : children()) x = child->forward(x);
  return x;
}

std::string Sequential::describe() const {
  return "Sequential()";
}

Linear::Linear(InitContext& init, int64_t in_features, int64_t out_features, bool bias)
    : in_features_(in_features), out_features_(out_features) {
  require_positive(in_features, "in_features", "Linear");
  require_positive(out_features, "out_features", "Linear");
  weight_ = register_parameter("weight", init_weight(init, Shape{out_features, in_features}));
  if (bias) bias_ = register_parameter("bias", init_bias(init, Shape{out_features}, in_features));
}

Tensor Linear::forward(const Tensor& input) {
  return linear(input, weight_, bias_);
}

std::string Linear::describe() const {
  return "Linear(in_features=" + std::to_string(in_features_) +
         ", out_features=" + std::to_string(out_features_) +
         ", bias=" + bool_text(bias_.defined()) + ")";
}

Conv2d::Conv2d(InitContext& init, int64_t in_channels, int64_t out_channels, int kernel_size,
               int stride, int padding, int dilation, bool bias, int groups)
    : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {
  require_positive(in_channels, "in_channels", "Conv2d");
  require_positive(out_channels, "out_channels", "Conv2d");
  require_positive(kernel_size, "kernel_size", "Conv2d");
  require_positive(stride, "stride", "Conv2d");
  require_positive(dilation, "dilation", "Conv2d");
  if (padding < 0) throw_error(invalid_argument("Conv2d: padding must be >= 0"));
  require_positive(groups, "groups", "Conv2d");
  if (in_channels % groups != 0 || out_channels % groups != 0) {
    throw_error(invalid_argument("Conv2d: groups " + std::to_string(groups) +
                                 " must divide in_channels (" + std::to_string(in_channels) +
                                 ") and out_channels (" + std::to_string(out_channels) + ")"));
  }
  options_.groups = groups;
  options_.stride_h = options_.stride_w = stride;
  options_.pad_h = options_.pad_w = padding;
  options_.dilation_h = options_.dilation_w = dilation;
  const Shape shape{out_channels, in_channels / groups, kernel_size, kernel_size};
  weight_ = register_parameter("weight", init_weight(init, shape));
  if (bias) {
    bias_ = register_parameter("bias",
                               init_bias(init, Shape{out_channels}, compute_fans(shape).fan_in));
  }
}

Tensor Conv2d::forward(const Tensor& input) {
  return conv2d(input, weight_, bias_, options_);
}

std::string Conv2d::describe() const {
  return "Conv2d(in_channels=" + std::to_string(in_channels_) +
         ", out_channels=" + std::to_string(out_channels_) +
         ", kernel_size=" + std::to_string(kernel_size_) +
         ", stride=" + std::to_string(options_.stride_h) +
         ", padding=" + std::to_string(options_.pad_h) +
         ", dilation=" + std::to_string(options_.dilation_h) +
         (options_.groups != 1 ? ", groups=" + std::to_string(options_.groups) : std::string()) +
         ", bias=" + bool_text(bias_.defined()) + ")";
}

MaxPool2d::MaxPool2d(int kernel_size, int stride, int padding)
    : options_(square_pool(kernel_size, stride, padding, "MaxPool2d")) {}

Tensor MaxPool2d::forward(const Tensor& input) {
  return max_pool2d(input, options_);
}

std::string MaxPool2d::describe() const {
  return "MaxPool2d(kernel_size=" + std::to_string(options_.kernel_h) +
         ", stride=" + std::to_string(options_.stride_h) +
         ", padding=" + std::to_string(options_.pad_h) + ")";
}

AvgPool2d::AvgPool2d(int kernel_size, int stride, int padding, bool count_include_pad)
    : options_(square_pool(kernel_size, stride, padding, "AvgPool2d")) {
  options_.count_include_pad = count_include_pad;
}

Tensor AvgPool2d::forward(const Tensor& input) {
  return avg_pool2d(input, options_);
}

std::string AvgPool2d::describe() const {
  return "AvgPool2d(kernel_size=" + std::to_string(options_.kernel_h) +
         ", stride=" + std::to_string(options_.stride_h) +
         ", padding=" + std::to_string(options_.pad_h) +
         ", count_include_pad=" + bool_text(options_.count_include_pad) + ")";
}

Flatten::Flatten(int start_axis, int end_axis) : start_axis_(start_axis), end_axis_(end_axis) {}

Tensor Flatten::forward(const Tensor& input) {
  return input.flatten(start_axis_, end_axis_);
}

std::string Flatten::describe() const {
  return "Flatten(start_axis=" + std::to_string(start_axis_) +
         ", end_axis=" + std::to_string(end_axis_) + ")";
}

Dropout::Dropout(double p, uint64_t seed) : p_(p), seed_(seed) {
  if (p < 0.0 || p >= 1.0) {
    throw_error(invalid_argument("Dropout: p must be in [0, 1), got " + std::to_string(p)));
  }
}

Tensor Dropout::forward(const Tensor& input) {
  if (!is_training() || p_ == 0.0) return input;
  return dropout(input, p_, true, seed_, reserve_counters(input.numel()));
}

uint64_t Dropout::reserve_counters(int64_t numel) {
  const uint64_t offset = offset_;
  // Whole Philox blocks per call, like InitContext, so calls never share a counter.
  offset_ += (static_cast<uint64_t>(numel) + 3u) & ~uint64_t{3};
  return offset;
}

std::string Dropout::describe() const {
  return "Dropout(p=" + std::to_string(p_) + ")";
}

void Dropout::set_random_state(uint64_t seed, uint64_t offset) {
  seed_ = seed;
  offset_ = offset;
}

LayerNorm::LayerNorm(InitContext& init, std::vector<int64_t> normalized_shape, double epsilon,
                     bool elementwise_affine)
    : normalized_shape_(std::move(normalized_shape)),
      epsilon_(epsilon),
      affine_(elementwise_affine) {
  if (normalized_shape_.empty()) throw_error(invalid_argument("LayerNorm: empty normalized_shape"));
  if (epsilon <= 0.0) throw_error(invalid_argument("LayerNorm: epsilon must be > 0"));
  const Shape shape(normalized_shape_);
  gamma_ = ones(shape, init.device, init.dtype);
  beta_ = zeros(shape, init.device, init.dtype);
  if (affine_) {
    gamma_ = register_parameter("weight", gamma_);
    beta_ = register_parameter("bias", beta_);
  }
}

Tensor LayerNorm::forward(const Tensor& input) {
  return layer_norm(input, gamma_, beta_, static_cast<int>(normalized_shape_.size()), epsilon_);
}

std::string LayerNorm::describe() const {
  std::string shape;
  for (int64_t extent : normalized_shape_)
    shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
  return "LayerNorm(normalized_shape=[" + shape + "], eps=" + std::to_string(epsilon_) +
         ", elementwise_affine=" + bool_text(affine_) + ")";
}

}  // namespace switchyard
