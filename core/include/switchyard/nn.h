// nn: layers as Modules, built once and run on whichever device their parameters live on.
//
// A Module owns its parameters (leaf tensors with requires_grad) and its child modules. Names are
// stable and ordered: a Sequential's children are "0", "1", ..., so the first Linear's weight is
// "0.weight". named_parameters() / state_dict() list them depth first in registration order, which
// is the order checkpoints store and optimizers see them. Constructors take plain numbers and an
// InitContext (init.h) that says where parameters live and which random stream fills them.
//
// Threads: a Module may be shared by any number of threads for forward passes in eval mode, with
// gradients recorded or not (NoGradGuard is per thread; tests/threads checks CNNs, LSTM, GRU and a
// Transformer on every backend against one thread's bits, and under ThreadSanitizer). Anything
// that changes a module or its parameters needs the module to itself, with no forward pass
// running: train()/eval(), a forward pass in training mode (Dropout advances its offset, BatchNorm
// moves its running statistics), backward through it (it adds into the parameters' gradients),
// zero_grad(), load_state_dict() and an optimizer's step().
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/init.h"
#include "switchyard/ops.h"
#include "switchyard/tensor.h"

namespace switchyard {

// Ordered name -> tensor pairs, as a checkpoint stores them.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  virtual Tensor forward(const Tensor& input) = 0;
  Tensor operator()(const Tensor& input) { return forward(input); }
  // One line: "Linear(in_features=64, out_features=256, bias=true)".
  virtual std::string describe() const = 0;

  std::vector<Tensor> parameters() const;
  NamedTensors named_parameters() const;
  // State that is not trained by gradients (BatchNorm's running statistics), depth first.
  NamedTensors named_buffers() const;
  // The tensors that define the model's state, shared, not copied, in PyTorch's order: each
  // module's parameters, then its buffers, then its children's.
  NamedTensors state_dict() const;
  // Copies values into the parameters and buffers. Throws an Error naming the key on a missing or
  // unexpected key, or a shape or dtype that differs.
  void load_state_dict(const NamedTensors& state);
  void zero_grad();
  int64_t parameter_count() const;

  // Training mode matters to Dropout; set on this module and every child.
  void train(bool training = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const {
    return children_;
  }
  // This module and all below it, depth first (e.g. to find Dropout layers and their state).
  std::vector<Module*> modules();
  // A multi-line listing of the model, one module per line, indented by depth.
  std::string summary() const;

 protected:
  // Marks `value` as a parameter (requires_grad) under `name` and returns it.
  Tensor register_parameter(const std::string& name, Tensor value);
  // Keeps `value` in the state under `name` (saved, loaded, never trained) and returns it.
  Tensor register_buffer(const std::string& name, Tensor value);
  void register_module(const std::string& name, std::shared_ptr<Module> module);
  // Called on every module after load_state_dict wrote new values (BatchNorm reads its count).
  virtual void state_loaded() {}

 private:
  enum class Collect { kParameters, kBuffers, kBoth };
  void collect(const std::string& prefix, Collect what, NamedTensors& out) const;
  void append_summary(int depth, const std::string& name, std::string& out) const;

  NamedTensors parameters_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

class Sequential : public Module {
 public:
  Sequential() = default;
  // Appends a layer named by its position ("0", "1", ...).
  void add(std::shared_ptr<Module> module);
  template <typename M, typename... Args>
  M& emplace(Args&&... args) {
    auto module = std::make_shared<M>(std::forward<Args>(args)...);
    M& ref = *module;
    add(std::move(module));
    return ref;
  }
  size_t size() const { return children().size(); }
  Module& operator[](size_t index) const { return *children()[index].second; }

  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
};

// y = x W^T + b; weight [out, in], bias [out].
class Linear : public Module {
 public:
  Linear(InitContext& init, int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias

 private:
  int64_t in_features_, out_features_;
  Tensor weight_, bias_;
};

// NCHW convolution; weight [out, in / groups, k, k] (PyTorch's layout), bias [out]. groups
// divides in and out; groups = in is depthwise.
class Conv2d : public Module {
 public:
  Conv2d(InitContext& init, int64_t in_channels, int64_t out_channels, int kernel_size,
         int stride = 1, int padding = 0, int dilation = 1, bool bias = true, int groups = 1);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  const Conv2dOptions& options() const { return options_; }

 private:
  int64_t in_channels_, out_channels_;
  int kernel_size_;
  Conv2dOptions options_;
  Tensor weight_, bias_;
};

// Square max pooling; stride defaults to kernel_size (pass 0).
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(int kernel_size, int stride = 0, int padding = 0);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  const Pool2dOptions& options() const { return options_; }

 private:
  Pool2dOptions options_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(int kernel_size, int stride = 0, int padding = 0,
                     bool count_include_pad = true);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  const Pool2dOptions& options() const { return options_; }

 private:
  Pool2dOptions options_;
};

// Collapses axes start_axis..end_axis into one (by default all but the batch axis).
class Flatten : public Module {
 public:
  explicit Flatten(int start_axis = 1, int end_axis = -1);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  int start_axis() const { return start_axis_; }
  int end_axis() const { return end_axis_; }

 private:
  int start_axis_, end_axis_;
};

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& input) override { return relu(input); }
  std::string describe() const override { return "ReLU()"; }
};
class GELU : public Module {
 public:
  Tensor forward(const Tensor& input) override { return gelu(input); }
  std::string describe() const override { return "GELU()"; }
};
class Tanh : public Module {
 public:
  Tensor forward(const Tensor& input) override { return tanh(input); }
  std::string describe() const override { return "Tanh()"; }
};
class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& input) override { return sigmoid(input); }
  std::string describe() const override { return "Sigmoid()"; }
};

// Zeroes elements with probability p while training. Its masks come from the counter-based
// generator at (seed, offset); offset advances by the input's element count per call, so a run
// that saves and restores (seed, offset) draws the same masks after a resume.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, uint64_t seed = 0);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  double p() const { return p_; }
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_random_state(uint64_t seed, uint64_t offset);
  // The first Philox counter of a mask over `numel` elements, advancing the state as forward
  // does: for an op that draws this module's mask itself (fused attention's dropout).
  uint64_t reserve_counters(int64_t numel);

 private:
  double p_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// A variational autoencoder's latent layer (Kingma and Welling, 2014), on [batch, in_features]:
// two linear heads give the mean `mu` and the log-variance `logvar` of a diagonal Gaussian over
// `latent` numbers. In training it outputs a sample z = mu + exp(0.5 * logvar) * eps, eps ~ N(0, 1)
// drawn from the counter-based generator at (seed, offset) (the reparameterisation: gradients
// reach mu and logvar through z); in eval mode it outputs mu, so predictions are deterministic.
// Each forward keeps the batch's gaussian_kl_divergence(mu, logvar) (the KL per sample, ops.h),
// which the trainer adds to the loss times `beta` (kl_loss()). Parameters as a PyTorch VAE names
// its heads: "mu.weight" [latent, in], "mu.bias", "logvar.weight", "logvar.bias".
class VaeLatent : public Module {
 public:
  VaeLatent(InitContext& init, int64_t in_features, int64_t latent, double beta = 1.0,
            uint64_t seed = 0);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  int64_t latent() const { return latent_; }
  double beta() const { return beta_; }
  // The KL per sample of the last forward (recorded for autograd when it was), undefined before
  // the first; and beta times it, the term the objective adds.
  const Tensor& last_kl() const { return last_kl_; }
  Tensor kl_loss() const;
  // eps of the next training forward comes from (seed, offset); offset then advances by whole
  // Philox blocks past the batch's batch x latent numbers, like Dropout's.
  void set_random_state(uint64_t seed, uint64_t offset);
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }

 private:
  int64_t latent_;
  double beta_;
  uint64_t seed_;
  uint64_t offset_ = 0;
  std::shared_ptr<Linear> mu_;
  std::shared_ptr<Linear> logvar_;
  Tensor last_kl_;
};

// Normalises over the trailing axes given by normalized_shape; affine gamma (ones) and beta
// (zeros) are parameters when elementwise_affine is true.
class LayerNorm : public Module {
 public:
  LayerNorm(InitContext& init, std::vector<int64_t> normalized_shape, double epsilon = 1e-5,
            bool elementwise_affine = true);
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  double epsilon() const { return epsilon_; }
  // gamma and beta: the parameters, or the fixed ones and zeros without elementwise_affine.
  const Tensor& gamma() const { return gamma_; }
  const Tensor& beta() const { return beta_; }

 private:
  std::vector<int64_t> normalized_shape_;
  double epsilon_;
  bool affine_;
  Tensor gamma_, beta_;
};

// Batch normalisation over axis 1 (channels) of [N, C] or [N, C, L] (spatial_rank 1, PyTorch's
// BatchNorm1d) or [N, C, H, W] (spatial_rank 2, BatchNorm2d). Training normalises by the batch's
// mean and biased variance and moves running_mean / running_var (unbiased) by `momentum`; without
// a momentum they are the cumulative average over num_batches_tracked batches. Eval normalises by
// the running values. State names are PyTorch's: weight, bias, running_mean, running_var,
// num_batches_tracked (i64).
struct BatchNormOptions {
  double epsilon = 1e-5;
  std::optional<double> momentum = 0.1;
  bool affine = true;
  bool track_running_stats = true;
};

class BatchNorm : public Module {
 public:
  BatchNorm(InitContext& init, int64_t num_features, int spatial_rank,
            const BatchNormOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string describe() const override;
  const Tensor& running_mean() const { return running_mean_; }
  const Tensor& running_var() const { return running_var_; }
  const Tensor& weight() const { return weight_; }  // undefined without affine
  const Tensor& bias() const { return bias_; }
  const BatchNormOptions& options() const { return options_; }

 protected:
  void state_loaded() override;

 private:
  void update_running(const Tensor& batch_mean, const Tensor& batch_var, int64_t per_channel);

  int64_t num_features_;
  int spatial_rank_;
  BatchNormOptions options_;
  Tensor weight_, bias_, running_mean_, running_var_, batches_tracked_;
  int64_t batches_ = 0;  // num_batches_tracked, kept on the host as well
};

}  // namespace switchyard

#pragma GCC visibility pop
