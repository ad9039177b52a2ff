// Optimizers: SGD and Adam(W) as one fused op per parameter.
#include <cmath>

#include "switchyard/autograd.h"
#include "switchyard/ops.h"
#include "switchyard/optim.h"
#include "switchyard/status.h"
#include "tensor/dispatch_internal.h"

namespace switchyard {

namespace {

const Tensor& find_state(const NamedTensors& state, const std::string& key) {
  for (const auto& [name, tensor] : state) {
    if (name == key) return tensor;
  }
  throw_error(invalid_argument("optimizer load_state_dict: missing key '" + key + "'"));
}

void load_into(Tensor& target, const NamedTensors& state, const std::string& key) {
  const Tensor& source = find_state(state, key);
  if (source.shape() != target.shape()) {
    throw_error(invalid_argument("optimizer load_state_dict: '" + key + "' has shape " +
                                 source.shape().to_string() + ", expected " +
                                 target.shape().to_string()));
  }
  target.copy_(source.device() == target.device() ? source : source.to(target.device()));
}

std::vector<Tensor> zero_states(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> states;
  states.reserve(parameters.size());
  for (const Tensor& parameter : parameters) states.push_back(zeros_like(parameter));
  return states;
}

}  // namespace

Optimizer::Optimizer(std::vector<Tensor> parameters, double lr)
    : parameters_(std::move(parameters)), lr_(lr) {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (!parameters_[i].defined() || !parameters_[i].is_leaf()) {
      throw_error(invalid_argument("optimizer: parameter " + std::to_string(i) +
                                   " is undefined or not a leaf tensor"));
    }
  }
  if (!(lr >= 0.0)) throw_error(invalid_argument("optimizer: lr must be >= 0"));
}

void Optimizer::zero_grad() {
  for (Tensor& parameter : parameters_) parameter.zero_grad();
}

Tensor Optimizer::step_tensor() const {
  const std::shared_ptr<Device> device =
      parameters_.empty() ? nullptr : parameters_.front().device();
  if (device == nullptr) throw_error(invalid_argument("optimizer has no parameters"));
  return Tensor::from_host(std::vector<int64_t>{step_count_}, Shape{1}, device);
}

void Optimizer::load_step(const NamedTensors& state) {
  step_count_ = static_cast<int64_t>(find_state(state, "step").item());
}

// ---- SGD ----------------------------------------------------------------------------------------

Sgd::Sgd(std::vector<Tensor> parameters, const SgdOptions& options)
    : Optimizer(std::move(parameters), options.lr), options_(options) {
  if (options.nesterov && (options.momentum <= 0.0 || options.dampening != 0.0)) {
    throw_error(invalid_argument("SGD: nesterov needs momentum > 0 and dampening = 0"));
  }
  if (options.momentum != 0.0) momentum_buffers_ = zero_states(parameters_);
}

sy_op_params Sgd::update_params() const {
  sy_op_params params{};
  params.sgd = {lr_,
                options_.momentum,
                options_.dampening,
                options_.weight_decay,
                options_.nesterov ? 1u : 0u,
                0u};
  return params;
}

std::pair<sy_op, sy_op_params> Sgd::replayed_step() {
  const sy_op_params params = update_params();
  ++step_count_;
  return {SY_OP_SGD_UPDATE, params};
}

void Sgd::step() {
  const sy_op_params params = update_params();
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Tensor grad = parameters_[i].grad();
    if (!grad.defined()) continue;
    if (momentum_buffers_.empty()) {
      run_op(SY_OP_SGD_UPDATE, {parameters_[i], grad}, {}, params);
    } else {
      run_op(SY_OP_SGD_UPDATE, {parameters_[i], grad, momentum_buffers_[i]}, {}, params);
    }
  }
  ++step_count_;
}

NamedTensors Sgd::state_dict() const {
  NamedTensors state;
  for (size_t i = 0; i < momentum_buffers_.size(); ++i) {
    state.emplace_back(std::to_string(i) + ".momentum_buffer", momentum_buffers_[i]);
  }
  state.emplace_back("step", step_tensor());
  return state;
}

void Sgd::load_state_dict(const NamedTensors& state) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < momentum_buffers_.size(); ++i) {
    load_into(momentum_buffers_[i], state, std::to_string(i) + ".momentum_buffer");
  }
  load_step(state);
}

// ---- Adam ---------------------------------------------------------------------------------------

Adam::Adam(std::vector<Tensor> parameters, const AdamOptions& options)
    : Optimizer(std::move(parameters), options.lr),
      options_(options),
      exp_avg_(zero_states(parameters_)),
      exp_avg_sq_(zero_states(parameters_)) {}

sy_op_params Adam::update_params() const {
  sy_op_params params{};
  params.adam.lr = lr_;
  params.adam.beta1 = options_.beta1;
  params.adam.beta2 = options_.beta2;
  params.adam.epsilon = options_.epsilon;
  params.adam.weight_decay = options_.weight_decay;
  params.adam.decoupled_weight_decay = options_.decoupled_weight_decay ? 1u : 0u;
  params.adam.step = step_count_;
  return params;
}

std::pair<sy_op, sy_op_params> Adam::replayed_step() {
  ++step_count_;
  return {SY_OP_ADAM_UPDATE, update_params()};
}

void Adam::step() {
  ++step_count_;
  const sy_op_params params = update_params();
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Tensor grad = parameters_[i].grad();
    if (!grad.defined()) continue;
    run_op(SY_OP_ADAM_UPDATE, {parameters_[i], grad, exp_avg_[i], exp_avg_sq_[i]}, {}, params);
  }
}

NamedTensors Adam::state_dict() const {
  NamedTensors state;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    state.emplace_back(std::to_string(i) + ".exp_avg", exp_avg_[i]);
    state.emplace_back(std::to_string(i) + ".exp_avg_sq", exp_avg_sq_[i]);
  }
  state.emplace_back("step", step_tensor());
  return state;
}

void Adam::load_state_dict(const NamedTensors& state) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    load_into(exp_avg_[i], state, std::to_string(i) + ".exp_avg");
    load_into(exp_avg_sq_[i], state, std::to_string(i) + ".exp_avg_sq");
  }
  load_step(state);
}

namespace {

AdamOptions adamw_options(AdamOptions options) {
  options.decoupled_weight_decay = true;
  return options;
}

}  // namespace

AdamW::AdamW(std::vector<Tensor> parameters, AdamOptions options)
    : Adam(std::move(parameters), adamw_options(options)) {}

}  // namespace switchyard
