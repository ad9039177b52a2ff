// NodeContext (formats/onnx_graph.h): what an ONNX op implementation reads and writes, and the
// names messages give to a model's nodes and values.
#include <cmath>
#include <limits>

#include "formats/onnx_graph.h"
#include "runtime/input_file.h"

namespace switchyard::onnx_detail {

// Names come from the file: cut, and made printable (runtime/input_file.h).
std::string quote_name(const std::string& text) {
  return detail::quote_name(text, 120);
}

std::string node_label(const Node& node) {
  return "node " + quote_name(node.name) + " (" + detail::printable_input(node.op, 120) + ")";
}

const Value& NodeContext::value(size_t k) const {
  if (!has(k)) fail("input " + std::to_string(k) + " is missing");
  const Value& v = values_[static_cast<size_t>(node_.inputs[k])];
  if (!v.known()) {
    fail("input " + quote_name(model_.value_names[static_cast<size_t>(node_.inputs[k])]) +
         " has no value (an output this importer does not compute)");
  }
  return v;
}

const HostTensor* NodeContext::host(size_t k) const {
  const Value& v = value(k);
  return v.host ? &v.host->tensor : nullptr;
}

const HostTensor& read_back(Value& v) {
  if (!v.host) {
    auto slot = std::make_shared<HostSlot>();
    slot->tensor.type = v.type;
    slot->tensor.shape = v.shape;
    if (is_float_type(v.type) || v.type == kBool) {
      slot->tensor.type = v.type == kBool ? kBool : kFloat;
      if (v.type == kBool) {
        for (const float x : v.device.to_host_float()) slot->tensor.i.push_back(x != 0.0F ? 1 : 0);
      } else {
        slot->tensor.f = v.device.to_host_float();
      }
    } else {
      slot->tensor.i = v.device.to_host_int64();
    }
    slot->uploaded = v.device;
    v.host = std::move(slot);
    v.cacheable = false;  // read from the device: depends on the input values
  }
  return v.host->tensor;
}

Tensor upload(const HostTensor& t, const std::shared_ptr<Device>& device) {
  const Shape shape(t.shape);
  if (t.is_float()) return Tensor::from_host(t.f, shape, device);
  if (t.type == kBool) {
    std::vector<float> values(t.i.size());
    for (size_t i = 0; i < t.i.size(); ++i) values[i] = t.i[i] != 0 ? 1.0F : 0.0F;
    return Tensor::from_host(values, shape, device);
  }
  return Tensor::from_host(t.i, shape, device);
}

const HostTensor& NodeContext::host_values(size_t k) {
  if (value(k).is_sequence()) fail("input " + std::to_string(k) + " is a sequence, not a tensor");
  return read_back(values_[static_cast<size_t>(node_.inputs[k])]);
}

const HostTensor& NodeContext::one_value(size_t k, const std::string& what) {
  if (value(k).is_sequence()) fail(what + " must be a tensor, not a sequence");
  const HostTensor& t = host_values(k);
  if (t.numel() != 1) fail(what + " must hold one value, got shape " + shape_text(t.shape));
  return t;
}

std::vector<int64_t> NodeContext::ints(size_t k) {
  const HostTensor& t = host_values(k);
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.is_float()) {
      const double x = t.at(i);
      if (!std::isfinite(x) || std::floor(x) != x || std::fabs(x) > 9.0e18) {
        fail("input " + std::to_string(k) + " must hold whole numbers");
      }
    }
    out[static_cast<size_t>(i)] = t.int_at(i);
  }
  return out;
}

Tensor NodeContext::dev(size_t k) {
  const Value& v = value(k);
  if (v.is_sequence()) fail("input " + std::to_string(k) + " is a sequence, not a tensor");
  if (v.device.defined()) return v.device;
  HostSlot& slot = *v.host;
  if (!slot.uploaded.defined()) slot.uploaded = upload(slot.tensor, model_.device);
  return slot.uploaded;
}

bool NodeContext::host_scalar(size_t k, double& out) const {
  if (!has(k)) return false;
  const HostTensor* t = host(k);
  if (t == nullptr || t->numel() != 1) return false;
  out = t->at(0);
  return true;
}

bool NodeContext::inputs_cacheable() const {
  for (const int id : node_.inputs) {
    if (id >= 0 && !values_[static_cast<size_t>(id)].cacheable) return false;
  }
  return true;
}

bool NodeContext::outputs_shape_fixed() const {
  for (const int id : node_.inputs) {
    if (id < 0) continue;
    const Value& v = values_[static_cast<size_t>(id)];
    if (!v.fixed_shape || (v.host && !v.cacheable)) return false;
  }
  return true;
}

void NodeContext::set_host(size_t k, HostTensor tensor, bool shape_only) {
  if (!output_used(k)) return;
  Value& v = values_[static_cast<size_t>(node_.outputs[k])];
  v.type = tensor.type;
  v.shape = tensor.shape;
  v.host = std::make_shared<HostSlot>();
  v.host->tensor = std::move(tensor);
  v.fixed_shape = outputs_shape_fixed();
  // A shape is kept per input shape only when the input signature decides it: NonZero's output
  // has the same signature whatever its count.
  v.cacheable = shape_only ? v.fixed_shape : inputs_cacheable();
  v.device = Tensor();
}

void NodeContext::set_device(size_t k, Tensor tensor, int32_t type) {
  if (!output_used(k)) return;
  Value& v = values_[static_cast<size_t>(node_.outputs[k])];
  // An integer value computed in f32 (MaxPool of uint8, ReduceSum of int64) is kept as i64, as
  // every integer value on the device is.
  if (!is_float_type(type) && type != kBool && is_floating(tensor.dtype()))
    tensor = tensor.to(DType::kI64);
  v.type = type;
  v.shape = tensor.shape().to_vector();
  v.host.reset();
  v.cacheable = false;
  v.fixed_shape = outputs_shape_fixed();
  v.device = std::move(tensor);
}

const std::vector<Value>& NodeContext::sequence(size_t k) const {
  const Value& v = value(k);
  if (!v.is_sequence()) fail("input " + std::to_string(k) + " must be a sequence");
  return *v.sequence;
}

void NodeContext::set_sequence(size_t k, std::vector<Value> items, int32_t type) {
  if (!output_used(k)) return;
  Value& v = values_[static_cast<size_t>(node_.outputs[k])];
  v = Value{};
  v.type = type;
  v.sequence = std::make_shared<const std::vector<Value>>(std::move(items));
}

void NodeContext::set_value(size_t k, const Value& from) {
  if (!output_used(k)) return;
  Value copy = from;  // `from` may be the output's own slot
  copy.cacheable = false;
  copy.fixed_shape = false;
  values_[static_cast<size_t>(node_.outputs[k])] = std::move(copy);
}

const onnx::AttributeProto* NodeContext::attr(const char* name) const {
  for (const auto& attribute : node_.proto->attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t NodeContext::attr_int(const char* name, int64_t fallback) const {
  const auto* a = attr(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::INT)
    fail(std::string("attribute ") + name + " must be an int");
  return a->i();
}

float NodeContext::attr_float(const char* name, float fallback) const {
  const auto* a = attr(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT)
    fail(std::string("attribute ") + name + " must be a float");
  return a->f();
}

std::string NodeContext::attr_string(const char* name, const std::string& fallback) const {
  const auto* a = attr(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::STRING)
    fail(std::string("attribute ") + name + " must be a string");
  return a->s();
}

std::vector<int64_t> NodeContext::attr_ints(const char* name) const {
  const auto* a = attr(name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::INTS)
    fail(std::string("attribute ") + name + " must be ints");
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> NodeContext::attr_floats(const char* name) const {
  const auto* a = attr(name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::FLOATS)
    fail(std::string("attribute ") + name + " must be floats");
  return {a->floats().begin(), a->floats().end()};
}

std::vector<std::string> NodeContext::attr_strings(const char* name) const {
  const auto* a = attr(name);
  if (a == nullptr) return {};
  if (a->type() != onnx::AttributeProto::STRINGS)
    fail(std::string("attribute ") + name + " must be strings");
  return {a->strings().begin(), a->strings().end()};
}

void NodeContext::fail(const std::string& message) const {
  throw_error(invalid_argument(node_label(node_) + ": " + message));
}

int normalize(const NodeContext& context, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (r == 0 || axis < -r || axis >= r) {
    context.fail("axis " + std::to_string(axis) + " is out of range for rank " +
                 std::to_string(rank));
  }
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

}  // namespace switchyard::onnx_detail
