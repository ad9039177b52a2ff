// Autograd: grad mode, node recording and the backward pass.
#include "autograd/engine.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "autograd/node.h"
#include "switchyard/autograd.h"
#include "switchyard/ops.h"
#include "switchyard/status.h"
#include "tensor/tensor_impl.h"

namespace switchyard {

namespace {

thread_local bool t_grad_enabled = true;
thread_local LeafGradientReadyHook t_leaf_ready_hook;

// Nodes reachable from `root`, each after every node it feeds into (reverse topological order of
// the data flow), found with an explicit stack so that deep graphs cannot overflow the C++ stack.
std::vector<Node*> nodes_in_backward_order(Node* root) {
  std::vector<Node*> post_order;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, size_t>> stack;
  stack.emplace_back(root, 0);
  visited.insert(root);
  while (!stack.empty()) {
    auto& [node, next_input] = stack.back();
    if (next_input < node->inputs().size()) {
      const Tensor& input = node->inputs()[next_input++];
      Node* child = input.defined() ? input.impl()->grad_fn.get() : nullptr;
      if (child != nullptr && visited.insert(child).second) stack.emplace_back(child, 0);
      continue;
    }
    post_order.push_back(node);
    stack.pop_back();
  }
  return {post_order.rbegin(), post_order.rend()};
}

void accumulate_leaf(TensorImpl& leaf, const Tensor& gradient) {
  // Gradients are never written in place, so a leaf may share the storage of the gradient it was
  // handed; accumulation makes a new tensor.
  leaf.grad = leaf.grad.defined() ? add(leaf.grad, gradient) : gradient;
}

void check_gradient_shape(const Node& node, size_t input, const Tensor& gradient) {
  const Tensor& target = node.inputs()[input];
  if (gradient.shape() != target.shape() || gradient.dtype() != target.dtype()) {
    throw_error(internal_error(std::string("backward of '") + node.name() + "' returned a " +
                               dtype_name(gradient.dtype()) + " gradient of shape " +
                               gradient.shape().to_string() + " for input " +
                               std::to_string(input) + " of " + dtype_name(target.dtype()) + " " +
                               target.shape().to_string()));
  }
}

// For each position in `order`, the leaves whose last contribution comes from that node, so that
// the ready hook fires for each leaf right after its gradient is final.
std::vector<std::vector<Tensor>> leaves_final_after(const std::vector<Node*>& order) {
  const auto for_each_leaf_input = [&](auto&& visit) {
    for (size_t position = 0; position < order.size(); ++position) {
      const Node& node = *order[position];
      for (size_t i = 0; i < node.inputs().size(); ++i) {
        const Tensor& input = node.inputs()[i];
        if (node.needs_grad(i) && input.impl()->grad_fn == nullptr) visit(position, input);
      }
    }
  };
  std::unordered_map<TensorImpl*, size_t> last_user;
  for_each_leaf_input(
      [&](size_t position, const Tensor& leaf) { last_user[leaf.impl()] = position; });
  // Filled in graph order (not the map's), so that every process sees the same sequence.
  std::vector<std::vector<Tensor>> final_after(order.size());
  for_each_leaf_input([&](size_t position, const Tensor& leaf) {
    auto found = last_user.find(leaf.impl());
    if (found == last_user.end() || found->second != position) return;
    final_after[position].push_back(leaf);
    last_user.erase(found);
  });
  return final_after;
}

}  // namespace

LeafGradientReadyScope::LeafGradientReadyScope(LeafGradientReadyHook hook)
    : previous_(std::move(t_leaf_ready_hook)) {
  t_leaf_ready_hook = std::move(hook);
}

LeafGradientReadyScope::~LeafGradientReadyScope() {
  t_leaf_ready_hook = std::move(previous_);
}

bool is_grad_enabled() {
  return t_grad_enabled;
}
void set_grad_enabled(bool enabled) {
  t_grad_enabled = enabled;
}
NoGradGuard::NoGradGuard() : previous_(t_grad_enabled) {
  t_grad_enabled = false;
}
NoGradGuard::~NoGradGuard() {
  t_grad_enabled = previous_;
}

bool needs_grad(const Tensor& tensor) {
  return t_grad_enabled && tensor.defined() && tensor.impl()->requires_grad;
}

namespace {

template <typename Inputs>
bool any_input_needs_grad(const Inputs& inputs) {
  if (!t_grad_enabled) return false;
  for (const Tensor& input : inputs) {
    if (input.defined() && input.impl()->requires_grad) return true;
  }
  return false;
}

template <typename Inputs>
void attach_node_to(Tensor& output, const char* name, const Inputs& inputs, BackwardFn backward) {
  std::vector<Tensor> edges;
  edges.reserve(inputs.size());
  for (const Tensor& input : inputs) edges.push_back(needs_grad(input) ? input : Tensor());
  output.impl()->grad_fn = std::make_shared<Node>(name, std::move(edges), std::move(backward));
  output.impl()->requires_grad = true;
}

}  // namespace

bool any_needs_grad(std::initializer_list<Tensor> inputs) {
  return any_input_needs_grad(inputs);
}

bool any_needs_grad(const std::vector<Tensor>& inputs) {
  return any_input_needs_grad(inputs);
}

void attach_node(Tensor& output, const char* name, std::initializer_list<Tensor> inputs,
                 BackwardFn backward) {
  attach_node_to(output, name, inputs, std::move(backward));
}

void attach_node(Tensor& output, const char* name, const std::vector<Tensor>& inputs,
                 BackwardFn backward) {
  attach_node_to(output, name, inputs, std::move(backward));
}

void run_backward(const Tensor& root, const Tensor& gradient) {
  const TensorImpl& root_impl = checked_impl(root, "backward");
  if (!root_impl.requires_grad) {
    throw_error(
        invalid_argument("backward() on a tensor that does not require a gradient (no "
                         "input of the computation had requires_grad set)"));
  }
  if (gradient.shape() != root_impl.shape) {
    throw_error(invalid_argument("backward(): gradient shape " + gradient.shape().to_string() +
                                 " differs from the tensor's " + root_impl.shape.to_string()));
  }
  NoGradGuard no_grad;
  const LeafGradientReadyHook& ready = t_leaf_ready_hook;
  if (root_impl.grad_fn == nullptr) {
    accumulate_leaf(*root.impl(), gradient);
    if (ready) ready(root);
    return;
  }
  std::unordered_map<Node*, Tensor> pending;
  pending.emplace(root_impl.grad_fn.get(), gradient);
  const std::vector<Node*> order = nodes_in_backward_order(root_impl.grad_fn.get());
  const std::vector<std::vector<Tensor>> final_after =
      ready ? leaves_final_after(order) : std::vector<std::vector<Tensor>>();
  for (size_t position = 0; position < order.size(); ++position) {
    Node* node = order[position];
    // Runs after this node, whether or not it had a gradient to propagate.
    const auto announce_final_leaves = [&] {
      if (!ready) return;
      for (const Tensor& leaf : final_after[position]) ready(leaf);
      ready(Tensor());
    };
    auto found = pending.find(node);
    if (found == pending.end()) {
      announce_final_leaves();
      continue;
    }
    const Tensor grad_output = std::move(found->second);
    pending.erase(found);
    const std::vector<Tensor> grads = node->apply(grad_output);
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      if (!node->needs_grad(i) || i >= grads.size() || !grads[i].defined()) continue;
      check_gradient_shape(*node, i, grads[i]);
      TensorImpl& input = *node->inputs()[i].impl();
      if (input.grad_fn == nullptr) {
        accumulate_leaf(input, grads[i]);
        continue;
      }
      auto [slot, inserted] = pending.try_emplace(input.grad_fn.get(), grads[i]);
      if (!inserted) slot->second = add(slot->second, grads[i]);
    }
    announce_final_leaves();
  }
}

std::string Tensor::grad_fn_name() const {
  if (!defined() || impl_->grad_fn == nullptr) return "";
  return impl_->grad_fn->name();
}

}  // namespace switchyard
