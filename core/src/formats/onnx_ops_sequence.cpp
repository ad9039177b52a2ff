// ONNX's sequence ops (formats/onnx_ops_internal.h): what torch.jit.script writes for a list of
// tensors (SequenceEmpty, SequenceInsert in a Loop, ConcatFromSequence for torch.stack and
// torch.cat, SplitToSequence for torch.split), and the rest of opset 11's set. A sequence is a
// Value holding its tensors (Value::sequence); concatenation runs on the device.
#include <algorithm>

#include "formats/onnx_ops_internal.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {
namespace {

// Input k, which must be a tensor.
const Value& tensor_input(NodeContext& c, size_t k) {
  const Value& v = c.value(k);
  if (v.is_sequence()) c.fail("input " + std::to_string(k) + " must be a tensor, not a sequence");
  return v;
}

// The position input k into a sequence of `size` (negative: from the end), within [-size, size]
// for an insertion and [-size, size - 1] otherwise; `fallback` where the input is absent.
int64_t position(NodeContext& c, size_t k, int64_t size, bool insertion, int64_t fallback) {
  if (!c.has(k)) return fallback;
  const Ints given = c.ints(k);
  if (given.size() != 1) c.fail("position must be one value");
  const int64_t high = insertion ? size : size - 1;
  if (given[0] < -size || given[0] > high) {
    c.fail("position " + std::to_string(given[0]) + " is outside [" + std::to_string(-size) + ", " +
           std::to_string(high) + "] for a sequence of " + std::to_string(size));
  }
  return given[0] < 0 ? given[0] + size : given[0];
}

// A sequence's element on the device, uploaded where it is a host value.
Tensor on_device(NodeContext& c, const Value& v) {
  return v.device.defined() ? v.device : upload(v.host->tensor, c.model().device);
}

void check_type(NodeContext& c, int32_t sequence_type, int32_t tensor_type) {
  if (sequence_type != tensor_type) {
    c.fail("a tensor of " + elem_type_name(tensor_type) + " in a sequence of " +
           elem_type_name(sequence_type));
  }
}

}  // namespace

Value slice_along(const Value& v, int axis, int64_t start, int64_t length, bool drop_axis) {
  Value out;
  out.type = v.type;
  out.shape = v.shape;
  out.shape[static_cast<size_t>(axis)] = length;
  if (drop_axis) out.shape.erase(out.shape.begin() + axis);
  if (v.host) {
    Ints picks(static_cast<size_t>(length));
    for (int64_t i = 0; i < length; ++i) picks[static_cast<size_t>(i)] = start + i;
    out.host = std::make_shared<HostSlot>();
    out.host->tensor = host_take(v.host->tensor, axis, picks, out.shape);
  } else {
    Tensor part = v.device.narrow(axis, start, length);
    if (drop_axis) part = part.squeeze(axis);
    out.device = part.contiguous();
  }
  return out;
}

void sequence_empty(NodeContext& c) {
  const auto type = static_cast<int32_t>(c.attr_int("dtype", kFloat));
  if (!is_supported_type(type)) c.fail("dtype " + elem_type_name(type) + " is not supported");
  c.set_sequence(0, {}, type);
}

void sequence_construct(NodeContext& c) {
  std::vector<Value> items;
  for (size_t k = 0; k < c.input_count(); ++k) {
    items.push_back(tensor_input(c, k));
    check_type(c, items.front().type, items.back().type);
  }
  if (items.empty()) c.fail("needs at least one tensor");
  c.set_sequence(0, std::move(items), c.type(0));
}

void sequence_insert(NodeContext& c) {
  std::vector<Value> items = c.sequence(0);
  const Value& v = tensor_input(c, 1);
  check_type(c, c.type(0), v.type);
  const auto size = static_cast<int64_t>(items.size());
  const int64_t at = position(c, 2, size, true, size);
  items.insert(items.begin() + at, v);
  c.set_sequence(0, std::move(items), c.type(0));
}

void sequence_at(NodeContext& c) {
  const std::vector<Value>& items = c.sequence(0);
  const auto size = static_cast<int64_t>(items.size());
  if (size == 0) c.fail("the sequence is empty");
  c.set_value(0, items[static_cast<size_t>(position(c, 1, size, false, 0))]);
}

void sequence_length(NodeContext& c) {
  c.set_host(0, HostTensor::scalar_int(static_cast<int64_t>(c.sequence(0).size())));
}

void sequence_erase(NodeContext& c) {
  std::vector<Value> items = c.sequence(0);
  const auto size = static_cast<int64_t>(items.size());
  if (size == 0) c.fail("the sequence is empty");
  items.erase(items.begin() + position(c, 1, size, false, size - 1));
  c.set_sequence(0, std::move(items), c.type(0));
}

// ConcatFromSequence: the tensors joined along `axis`, or stacked on a new one (new_axis 1).
void concat_from_sequence(NodeContext& c) {
  const std::vector<Value>& items = c.sequence(0);
  if (items.empty()) c.fail("the sequence is empty");
  const bool stacked = c.attr_int("new_axis", 0) != 0;
  const size_t rank = items.front().shape.size();
  const int axis = normalize(c, c.attr_int("axis", 0), stacked ? rank + 1 : rank);
  std::vector<Tensor> parts;
  for (const Value& v : items) {
    Ints expected = items.front().shape, got = v.shape;
    if (!stacked && expected.size() == got.size() && !expected.empty()) {
      expected[static_cast<size_t>(axis)] = got[static_cast<size_t>(axis)];
    }
    if (expected != got) {
      c.fail("element " + std::to_string(parts.size()) + " " + shape_text(v.shape) +
             " does not fit element 0 " + shape_text(items.front().shape));
    }
    parts.push_back(on_device(c, v));
  }
  c.set_device(0, stacked ? stack(parts, axis) : concat(parts, axis), c.type(0));
}

// SplitToSequence: parts of `split` lengths (a scalar: chunks of that length, the last shorter),
// or without it each position along the axis, which keepdims 0 removes.
void split_to_sequence(NodeContext& c) {
  const Value& x = tensor_input(c, 0);
  const int axis = normalize(c, c.attr_int("axis", 0), x.shape.size());
  const int64_t extent = x.shape[static_cast<size_t>(axis)];
  Ints lengths;
  bool squeeze = false;
  if (!c.has(1)) {
    lengths.assign(static_cast<size_t>(extent), 1);
    squeeze = c.attr_int("keepdims", 1) == 0;
  } else {
    const HostTensor& split = c.host_values(1);
    const Ints given = c.ints(1);
    if (split.shape.empty()) {
      if (given.at(0) < 1) c.fail("split must be positive");
      for (int64_t at = 0; at < extent; at += given[0])
        lengths.push_back(std::min(given[0], extent - at));
    } else {
      lengths = given;
      int64_t total = 0;
      for (const int64_t n : lengths) {
        if (n < 0) c.fail("split lengths must be >= 0");
        total += n;
      }
      if (total != extent) {
        c.fail("split lengths " + shape_text(lengths) + " do not add up to the axis extent " +
               std::to_string(extent));
      }
    }
  }
  std::vector<Value> items;
  int64_t start = 0;
  for (const int64_t n : lengths) {
    items.push_back(slice_along(x, axis, start, n, squeeze));
    start += n;
  }
  c.set_sequence(0, std::move(items), x.type);
}

}  // namespace switchyard::onnx_detail
