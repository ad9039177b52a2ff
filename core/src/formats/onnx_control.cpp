// If, Loop and Scan (run_control, formats/onnx_graph.h). A subgraph's nodes run through run_nodes
// over the model's one table of values, as the graph's own do: what a branch or the body computes
// from constants alone is kept between runs, the rest is computed again each time it runs.
#include <algorithm>
#include <atomic>

#include "formats/onnx_graph.h"
#include "formats/onnx_ops_internal.h"

namespace switchyard::onnx_detail {
namespace {

std::atomic<int64_t> loop_iteration_limit{int64_t{1} << 20};

// Value `id` of a subgraph's outputs, which its nodes must have computed.
Value& computed(const OnnxModel::Impl& m, const NodeContext& c, std::vector<Value>& values,
                int id) {
  Value& v = values[static_cast<size_t>(id)];
  if (!v.known()) {
    c.fail("subgraph output " + quote_name(m.value_names[static_cast<size_t>(id)]) +
           " has no value");
  }
  return v;
}

// `from` as the value of `to`: the same storage, kept between runs only when `keep`.
void assign(Value& to, const Value& from, bool keep) {
  to = from;
  to.cacheable = from.cacheable && keep;
  to.fixed_shape = from.fixed_shape && keep;
}

void run_if(OnnxModel::Impl& m, Node& node, std::vector<Value>& values) {
  NodeContext c(m, node, values);
  const bool condition = c.one_value(0, "the condition").at(0) != 0.0;
  // A condition read from the device (or computed from what was) is decided again in each run.
  const bool keep = c.value(0).cacheable;
  Body& branch = *node.bodies[condition ? 0 : 1];
  run_nodes(m, branch.nodes, values);
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] < 0) continue;
    assign(values[static_cast<size_t>(node.outputs[k])], computed(m, c, values, branch.outputs[k]),
           keep);
  }
  node.ran = condition ? "then branch" : "else branch";
}

// Adds one iteration's value to a scan output, which must keep the first iteration's type and
// shape; all of them together within the importer's limits (host values: the host's).
void add_scanned(NodeContext& c, std::vector<Value>& parts, const Value& part, size_t index) {
  if (part.is_sequence()) c.fail("scan output " + std::to_string(index) + " is a sequence");
  if (!parts.empty() && (part.type != parts[0].type || part.shape != parts[0].shape)) {
    c.fail("scan output " + std::to_string(index) + " is " + elem_type_name(parts[0].type) + " " +
           shape_text(parts[0].shape) + " in the first iteration but " + elem_type_name(part.type) +
           " " + shape_text(part.shape) + " in iteration " + std::to_string(parts.size()));
  }
  std::vector<int64_t> shape = part.shape;
  shape.insert(shape.begin(), static_cast<int64_t>(parts.size()) + 1);
  if (part.host)
    check_host_size(c, shape);
  else
    check_size(c, shape);
  parts.push_back(part);
}

// Loop's per-iteration values (add_scanned) stacked along a new first axis, on the host when
// every one is a host value, else on the device. Without iterations: [0] followed by the declared
// shape (open extents as 0).
Value stacked(NodeContext& c, const std::vector<Value>& parts, int32_t declared_type,
              const std::vector<int64_t>& declared_shape) {
  Value out;
  if (parts.empty()) {
    std::vector<int64_t> shape = {0};
    for (const int64_t extent : declared_shape) shape.push_back(std::max<int64_t>(extent, 0));
    const int32_t type = is_supported_type(declared_type) ? declared_type : kFloat;
    out.host = std::make_shared<HostSlot>();
    out.host->tensor = HostTensor::zeros(type, shape);
    out.type = type;
    out.shape = shape;
    return out;
  }
  bool on_host = true;
  for (const Value& part : parts) on_host = on_host && part.host != nullptr;
  out.type = parts[0].type;
  out.shape = parts[0].shape;
  out.shape.insert(out.shape.begin(), static_cast<int64_t>(parts.size()));
  if (on_host) {
    out.host = std::make_shared<HostSlot>();
    HostTensor& t = out.host->tensor;
    t.type = parts[0].host->tensor.type;
    t.shape = out.shape;
    for (const Value& part : parts) {
      const HostTensor& p = part.host->tensor;
      t.f.insert(t.f.end(), p.f.begin(), p.f.end());
      t.i.insert(t.i.end(), p.i.begin(), p.i.end());
    }
    return out;
  }
  std::vector<Tensor> tensors;
  tensors.reserve(parts.size());
  for (const Value& part : parts) {
    tensors.push_back(part.device.defined() ? part.device
                                            : upload(part.host->tensor, c.model().device));
  }
  out.device = stack(tensors, 0);
  return out;
}

// After an iteration: what depends on its inputs is computed again in the next.
void forget_iteration(const Body& body, std::vector<Value>& values) {
  for (int id = body.first_value; id < body.end_value; ++id) {
    Value& v = values[static_cast<size_t>(id)];
    if (v.known() && !(v.host && v.cacheable)) v = Value{};
  }
}

// After an iteration, from the body's outputs from `first` on (Loop: after its condition): the
// carried values, then one more value of each scan output.
void collect_iteration(NodeContext& c, std::vector<Value>& values, const Body& body, size_t first,
                       std::vector<Value>& carried, std::vector<std::vector<Value>>& scans) {
  OnnxModel::Impl& m = c.model();
  for (size_t j = 0; j < carried.size(); ++j)
    carried[j] = computed(m, c, values, body.outputs[first + j]);
  for (size_t k = 0; k < scans.size(); ++k) {
    add_scanned(c, scans[k], computed(m, c, values, body.outputs[first + carried.size() + k]), k);
  }
  forget_iteration(body, values);
}

// Loop's and Scan's outputs: the final carried values, then each scan output stacked along its
// axis (`axes`, default 0), prepended where `reverse` says so.
void set_results(NodeContext& c, const Node& node, std::vector<Value>& values, const Body& body,
                 size_t first, const std::vector<Value>& carried,
                 std::vector<std::vector<Value>>& scans, const std::vector<int64_t>& axes,
                 const std::vector<int64_t>& reverse) {
  for (size_t j = 0; j < carried.size(); ++j) {
    if (node.outputs[j] >= 0)
      assign(values[static_cast<size_t>(node.outputs[j])], carried[j], false);
  }
  for (size_t k = 0; k < scans.size(); ++k) {
    const int out = node.outputs[carried.size() + k];
    if (out < 0) continue;
    if (!reverse.empty() && reverse[k] != 0) std::reverse(scans[k].begin(), scans[k].end());
    const size_t at = first + carried.size() + k;
    Value v = stacked(c, scans[k], body.output_types[at], body.output_shapes[at]);
    const int axis = axes.empty() ? 0 : normalize(c, axes[k], v.shape.size());
    if (axis != 0) {  // the new axis moved from the front to `axis`
      std::vector<int> perm;
      for (int a = 1; a <= axis; ++a) perm.push_back(a);
      perm.push_back(0);
      for (int a = axis + 1; a < static_cast<int>(v.shape.size()); ++a) perm.push_back(a);
      if (v.host) {
        v.host->tensor = host_transpose(v.host->tensor, Ints(perm.begin(), perm.end()));
        v.shape = v.host->tensor.shape;
      } else {
        v.device = v.device.permute(perm).contiguous();
        v.shape = v.device.shape().to_vector();
      }
    }
    values[static_cast<size_t>(out)] = std::move(v);
  }
}

// The body's inputs for one iteration: its number, the condition (true) and the carried values.
void enter_iteration(const Body& body, std::vector<Value>& values, int64_t iteration,
                     const std::vector<Value>& carried) {
  Value& number = values[static_cast<size_t>(body.inputs[0])];
  number = Value{};
  number.type = kInt64;
  number.host = std::make_shared<HostSlot>();
  number.host->tensor = HostTensor::scalar_int(iteration);
  number.fixed_shape = true;
  Value& condition = values[static_cast<size_t>(body.inputs[1])];
  condition = Value{};
  condition.type = kBool;
  condition.host = std::make_shared<HostSlot>();
  condition.host->tensor = HostTensor::zeros(kBool, {});
  condition.host->tensor.i[0] = 1;
  condition.fixed_shape = true;
  for (size_t j = 0; j < carried.size(); ++j)
    assign(values[static_cast<size_t>(body.inputs[2 + j])], carried[j], false);
}

// Loop: ONNX's table of trip count and condition, carried values, scan outputs.
void run_loop(OnnxModel::Impl& m, Node& node, std::vector<Value>& values) {
  NodeContext c(m, node, values);
  Body& body = *node.bodies[0];
  const size_t carried_count = node.inputs.size() - 2;
  const size_t scan_count = node.outputs.size() - carried_count;
  // No trip count: until the condition is false. No condition: the trip count. Neither: ONNX's
  // endless loop, refused.
  const bool has_trips = c.has(0), has_condition = c.has(1);
  if (!has_trips && !has_condition)
    c.fail("has neither a trip count nor a condition, so it would never end");
  const int64_t trips = has_trips ? c.one_value(0, "the trip count M").int_at(0) : -1;
  bool going = !has_condition || c.one_value(1, "the condition").at(0) != 0.0;
  std::vector<Value> carried;
  for (size_t j = 0; j < carried_count; ++j) carried.push_back(c.value(2 + j));
  std::vector<std::vector<Value>> scans(scan_count);
  for (int64_t iteration = 0; going && (!has_trips || iteration < trips); ++iteration) {
    if (iteration == max_loop_iterations()) {
      c.fail("runs more than " + std::to_string(max_loop_iterations()) + " iterations" +
             (has_trips ? " (trip count " + std::to_string(trips) + ")" : ""));
    }
    enter_iteration(body, values, iteration, carried);
    run_nodes(m, body.nodes, values);
    if (has_condition) {
      Value& condition = computed(m, c, values, body.outputs[0]);
      if (condition.is_sequence()) c.fail("the body's condition is a sequence");
      const HostTensor& t = read_back(condition);
      if (t.numel() != 1)
        c.fail("the body's condition must hold one value, got shape " + shape_text(t.shape));
      going = t.at(0) != 0.0;
    }
    collect_iteration(c, values, body, 1, carried, scans);
  }
  set_results(c, node, values, body, 1, carried, scans, {}, {});
  node.ran = "looped";
}

// Scan's per-input and per-output attribute (axes, directions): one value each, default 0.
std::vector<int64_t> per_value(NodeContext& c, const char* name, size_t count) {
  std::vector<int64_t> values = c.attr_ints(name);
  if (values.empty()) values.assign(count, 0);
  if (values.size() != count) {
    c.fail(std::string(name) + " has " + std::to_string(values.size()) + " values for " +
           std::to_string(count));
  }
  return values;
}

// Scan (9 and later): the body once per position of the scan inputs (each along its axis, forward
// or in reverse), the N states carried, each scan output stacked along its axis (appended, or
// prepended for direction 1). Scan-8's batch axis and sequence_lens are refused at load.
void run_scan(OnnxModel::Impl& m, Node& node, std::vector<Value>& values) {
  NodeContext c(m, node, values);
  Body& body = *node.bodies[0];
  const auto scan_count = static_cast<size_t>(c.attr_int("num_scan_inputs", 0));
  const size_t state_count = node.inputs.size() - scan_count;
  const size_t output_count = node.outputs.size() - state_count;
  const std::vector<int64_t> in_axes = per_value(c, "scan_input_axes", scan_count);
  const std::vector<int64_t> in_reverse = per_value(c, "scan_input_directions", scan_count);
  const std::vector<int64_t> out_axes = per_value(c, "scan_output_axes", output_count);
  const std::vector<int64_t> out_reverse = per_value(c, "scan_output_directions", output_count);
  std::vector<Value> states, inputs;
  std::vector<int> axes;
  for (size_t j = 0; j < state_count; ++j) states.push_back(c.value(j));
  int64_t steps = -1;
  for (size_t i = 0; i < scan_count; ++i) {
    inputs.push_back(c.value(state_count + i));
    if (inputs.back().is_sequence()) c.fail("scan input " + std::to_string(i) + " is a sequence");
    const std::vector<int64_t>& shape = inputs.back().shape;
    axes.push_back(normalize(c, in_axes[i], shape.size()));
    const int64_t extent = shape[static_cast<size_t>(axes.back())];
    if (steps >= 0 && extent != steps) {
      c.fail("scan input " + std::to_string(i) + " is " + std::to_string(extent) +
             " long, scan input 0 " + std::to_string(steps));
    }
    steps = extent;
  }
  std::vector<std::vector<Value>> scans(output_count);
  for (int64_t t = 0; t < steps; ++t) {
    for (size_t j = 0; j < state_count; ++j)
      assign(values[static_cast<size_t>(body.inputs[j])], states[j], false);
    for (size_t i = 0; i < scan_count; ++i) {
      const int64_t at = in_reverse[i] != 0 ? steps - 1 - t : t;
      assign(values[static_cast<size_t>(body.inputs[state_count + i])],
             slice_along(inputs[i], axes[i], at, 1, true), false);
    }
    run_nodes(m, body.nodes, values);
    collect_iteration(c, values, body, 0, states, scans);
  }
  set_results(c, node, values, body, 0, states, scans, out_axes, out_reverse);
  node.ran = "scanned";
}

}  // namespace

int64_t max_loop_iterations() {
  return loop_iteration_limit.load(std::memory_order_relaxed);
}
void set_max_loop_iterations(int64_t limit) {
  loop_iteration_limit.store(limit, std::memory_order_relaxed);
}

void run_control(OnnxModel::Impl& m, Node& node, std::vector<Value>& values) {
  try {
    if (node.op == "If")
      run_if(m, node, values);
    else if (node.op == "Loop")
      run_loop(m, node, values);
    else
      run_scan(m, node, values);
  } catch (const Error& error) {
    const std::string message = error.status().message();
    if (message.find(m.source) != std::string::npos || message.rfind("node ", 0) == 0) throw;
    throw_error(Status(error.status().code(), node_label(node) + ": " + message));
  }
}

}  // namespace switchyard::onnx_detail
