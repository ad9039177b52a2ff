// Module: parameters, children, names, state and modes.
#include "switchyard/nn.h"

#include "switchyard/autograd.h"
#include "switchyard/status.h"

namespace switchyard {

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  value.set_requires_grad(true);
  parameters_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  buffers_.emplace_back(name, value);
  return value;
}

void Module::register_module(const std::string& name, std::shared_ptr<Module> module) {
  if (module == nullptr) throw_error(invalid_argument("register_module '" + name + "': null"));
  module->train(training_);
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, Collect what, NamedTensors& out) const {
  if (what != Collect::kBuffers) {
    for (const auto& [name, tensor] : parameters_) out.emplace_back(prefix + name, tensor);
  }
  if (what != Collect::kParameters) {
    for (const auto& [name, tensor] : buffers_) out.emplace_back(prefix + name, tensor);
  }
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", what, out);
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  collect("", Collect::kParameters, out);
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out;
  collect("", Collect::kBuffers, out);
  return out;
}

NamedTensors Module::state_dict() const {
  NamedTensors out;
  collect("", Collect::kBoth, out);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, tensor] : named_parameters()) out.push_back(tensor);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t count = 0;
  for (const Tensor& tensor : parameters()) count += tensor.numel();
  return count;
}

void Module::load_state_dict(const NamedTensors& state) {
  const NamedTensors own = state_dict();
  for (const auto& [name, source] : state) {
    bool known = false;
    for (const auto& [own_name, own_tensor] : own) known = known || own_name == name;
    if (!known) throw_error(invalid_argument("load_state_dict: unexpected key '" + name + "'"));
  }
  NoGradGuard no_grad;
  for (const auto& [name, target] : own) {
    const Tensor* source = nullptr;
    for (const auto& [key, tensor] : state) {
      if (key == name) source = &tensor;
    }
    if (source == nullptr)
      throw_error(invalid_argument("load_state_dict: missing key '" + name + "'"));
    if (source->shape() != target.shape() || source->dtype() != target.dtype()) {
      throw_error(invalid_argument("load_state_dict: '" + name + "' is " +
                                   dtype_name(source->dtype()) + " " + source->shape().to_string() +
                                   " but the model expects " + dtype_name(target.dtype()) + " " +
                                   target.shape().to_string()));
    }
    Tensor destination = target;
    destination.copy_(source->device() == target.device() ? *source : source->to(target.device()));
  }
  for (Module* module : modules()) module->state_loaded();
}

void Module::zero_grad() {
  for (Tensor& tensor : parameters()) tensor.zero_grad();
}

void Module::train(bool training) {
  training_ = training;
  for (auto& [name, child] : children_) child->train(training);
}

std::vector<Module*> Module::modules() {
  std::vector<Module*> out{this};
  for (auto& [name, child] : children_) {
    for (Module* module : child->modules()) out.push_back(module);
  }
  return out;
}

void Module::append_summary(int depth, const std::string& name, std::string& out) const {
  out += std::string(static_cast<size_t>(depth) * 2, ' ');
  if (!name.empty()) out += "(" + name + "): ";
  out += describe() + "\n";
  for (const auto& [child_name, child] : children_)
    child->append_summary(depth + 1, child_name, out);
}

std::string Module::summary() const {
  std::string out;
  append_summary(0, "", out);
  return out;
}

}  // namespace switchyard
