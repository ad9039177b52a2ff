// BatchNorm1d / BatchNorm2d, composed from reductions and elementwise ops.
#include "switchyard/autograd.h"
#include "switchyard/nn.h"
#include "switchyard/status.h"
#include "tensor/capture_internal.h"

namespace switchyard {

BatchNorm::BatchNorm(InitContext& init, int64_t num_features, int spatial_rank,
                     const BatchNormOptions& options)
    : num_features_(num_features), spatial_rank_(spatial_rank), options_(options) {
  const char* name = spatial_rank == 2 ? "BatchNorm2d" : "BatchNorm1d";
  if (num_features < 1) {
    throw_error(invalid_argument(std::string(name) + ": num_features must be >= 1, got " +
                                 std::to_string(num_features)));
  }
  if (spatial_rank != 1 && spatial_rank != 2) {
    throw_error(invalid_argument("BatchNorm: spatial_rank must be 1 or 2"));
  }
  if (options.epsilon <= 0.0)
    throw_error(invalid_argument(std::string(name) + ": eps must be > 0"));
  if (options.momentum && (*options.momentum < 0.0 || *options.momentum > 1.0)) {
    throw_error(invalid_argument(std::string(name) + ": momentum must be in [0, 1]"));
  }
  const Shape shape{num_features};
  if (options.affine) {
    weight_ = register_parameter("weight", ones(shape, init.device, init.dtype));
    bias_ = register_parameter("bias", zeros(shape, init.device, init.dtype));
  }
  if (options.track_running_stats) {
    running_mean_ = register_buffer("running_mean", zeros(shape, init.device, DType::kF32));
    running_var_ = register_buffer("running_var", ones(shape, init.device, DType::kF32));
    batches_tracked_ =
        register_buffer("num_batches_tracked", zeros(Shape{}, init.device, DType::kI64));
  }
}

Tensor BatchNorm::forward(const Tensor& input) {
  const int rank = input.rank();
  const bool shape_ok = spatial_rank_ == 2 ? rank == 4 : (rank == 2 || rank == 3);
  if (!shape_ok || input.dim(1) != num_features_) {
    throw_error(invalid_argument(describe() + ": expects input " +
                                 (spatial_rank_ == 2 ? "[N, C, H, W]" : "[N, C] or [N, C, L]") +
                                 " with C = " + std::to_string(num_features_) + ", got " +
                                 input.shape().to_string()));
  }
  std::vector<int> axes{0};
  for (int axis = 2; axis < rank; ++axis) axes.push_back(axis);
  Shape channel_shape(std::vector<int64_t>(static_cast<size_t>(rank), 1));
  channel_shape[1] = num_features_;
  const Tensor x = input.dtype() == DType::kF32 ? input : input.to(DType::kF32);
  Tensor y;
  if (is_training() || !running_mean_.defined()) {
    const Tensor batch_mean = mean(x, axes, true);
    const Tensor centred = x - batch_mean;
    const Tensor batch_var = mean(centred * centred, axes, true);
    y = centred / sqrt(batch_var + options_.epsilon);
    if (is_training() && running_mean_.defined()) {
      update_running(batch_mean, batch_var, x.numel() / num_features_);
    }
  } else {
    y = (x - running_mean_.reshape(channel_shape)) /
        sqrt(running_var_.reshape(channel_shape) + options_.epsilon);
  }
  if (weight_.defined()) {
    y = y * weight_.to(DType::kF32).reshape(channel_shape) +
        bias_.to(DType::kF32).reshape(channel_shape);
  }
  return y.dtype() == input.dtype() ? y : y.to(input.dtype());
}

void BatchNorm::update_running(const Tensor& batch_mean, const Tensor& batch_var,
                               int64_t per_channel) {
  NoGradGuard no_grad;
  ++batches_;
  Tensor count =
      Tensor::from_host(std::vector<int64_t>{batches_}, Shape{}, batches_tracked_.device());
  batches_tracked_.copy_(count);
  if (detail::capture_active()) {
    // A replayed pass (capture.h) copies `count` again: each replay first counts its batch on the
    // host and puts the new count there. Without a momentum the factor below, baked into the
    // recorded calls, would change every pass.
    if (!options_.momentum) {
      detail::capture_refuse(describe() +
                             " without a momentum averages over every batch so far, a factor "
                             "that changes each pass");
    }
    detail::capture_before_replay([this, count]() mutable {
      NoGradGuard replay_no_grad;
      ++batches_;
      count.copy_(Tensor::from_host(std::vector<int64_t>{batches_}, Shape{}, count.device()));
    });
  }
  const double factor =
      options_.momentum ? *options_.momentum : 1.0 / static_cast<double>(batches_);
  const double unbiased =
      per_channel > 1 ? static_cast<double>(per_channel) / static_cast<double>(per_channel - 1)
                      : 1.0;
  const Shape shape{num_features_};
  running_mean_.copy_(running_mean_ * (1.0 - factor) + batch_mean.reshape(shape) * factor);
  running_var_.copy_(running_var_ * (1.0 - factor) +
                     batch_var.reshape(shape) * (unbiased * factor));
}

void BatchNorm::state_loaded() {
  if (batches_tracked_.defined()) {
    batches_ = static_cast<int64_t>(batches_tracked_.to(DType::kF32).item());
  }
}

std::string BatchNorm::describe() const {
  return std::string(spatial_rank_ == 2 ? "BatchNorm2d(" : "BatchNorm1d(") +
         std::to_string(num_features_) + ", eps=" + std::to_string(options_.epsilon) +
         ", momentum=" + (options_.momentum ? std::to_string(*options_.momentum) : "None") +
         ", affine=" + (options_.affine ? "true" : "false") +
         ", track_running_stats=" + (options_.track_running_stats ? "true" : "false") + ")";
}

}  // namespace switchyard
