// Node: one recorded op of the autograd graph. Private to the core.
#pragma once

#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "switchyard/tensor.h"

namespace switchyard {

class Node;

// Given the gradient of the op's output, returns one gradient per input (an undefined tensor where
// node.needs_grad(i) is false). Runs with gradient recording off.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output, const Node& node)>;

class Node {
 public:
  Node(const char* name, std::vector<Tensor> inputs, BackwardFn backward)
      : name_(name), inputs_(std::move(inputs)), backward_(std::move(backward)) {}

  const char* name() const { return name_; }
  // Inputs that need a gradient; the others are undefined tensors.
  const std::vector<Tensor>& inputs() const { return inputs_; }
  bool needs_grad(size_t input) const { return inputs_[input].defined(); }
  std::vector<Tensor> apply(const Tensor& grad_output) const {
    return backward_(grad_output, *this);
  }

 private:
  const char* name_;
  std::vector<Tensor> inputs_;
  BackwardFn backward_;
};

// True when recording is on and the tensor is a leaf that requires a gradient or an op output
// with a history.
bool needs_grad(const Tensor& tensor);

bool any_needs_grad(std::initializer_list<Tensor> inputs);
bool any_needs_grad(const std::vector<Tensor>& inputs);

// Attaches a node to `output` (making it require a gradient). Inputs that need no gradient are
// stored as undefined tensors, so the backward function can skip work for them.
void attach_node(Tensor& output, const char* name, std::initializer_list<Tensor> inputs,
                 BackwardFn backward);
// The same for an op with any number of inputs (concat).
void attach_node(Tensor& output, const char* name, const std::vector<Tensor>& inputs,
                 BackwardFn backward);

// Records the op when any input needs a gradient. A template so that no std::function is built
// (and nothing allocated) on the common path where nothing needs one, e.g. under NoGradGuard.
template <typename Backward>
void record_op(Tensor& output, const char* name, std::initializer_list<Tensor> inputs,
               Backward&& backward) {
  if (!any_needs_grad(inputs)) return;
  attach_node(output, name, inputs, BackwardFn(std::forward<Backward>(backward)));
}

}  // namespace switchyard
