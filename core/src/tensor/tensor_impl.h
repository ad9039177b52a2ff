// TensorImpl: what a Tensor handle points at. Private to the core.
#pragma once

#include <cstdint>
#include <memory>

#include "switchyard/tensor.h"

namespace switchyard {

class Node;

struct TensorImpl {
  std::shared_ptr<Device> device;
  std::shared_ptr<Buffer> storage;
  int64_t offset_elements = 0;
  Shape shape;
  Shape strides;
  DType dtype = DType::kF32;

  // Autograd state. A leaf has no grad_fn; an op's output has one when any input needed a
  // gradient (and then requires_grad is true as well).
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;
  Tensor grad;  // leaves only
};

// A new impl viewing `base`'s storage with another shape, strides and offset (no autograd).
std::shared_ptr<TensorImpl> make_view_impl(const TensorImpl& base, const Shape& shape,
                                           const Shape& strides, int64_t offset_elements);

// Throws an Error when the tensor is undefined, naming what needed it.
const TensorImpl& checked_impl(const Tensor& tensor, const char* what);

}  // namespace switchyard

namespace switchyard {

// Host transfers of raw elements [first, first + count) of a tensor's storage, ordered with the
// device's default queue. Reads take the host-memory fast path when the buffer has a host address.
void read_storage(const TensorImpl& impl, int64_t first_element, int64_t count, void* destination);
void write_storage(const TensorImpl& impl, int64_t first_element, int64_t count,
                   const void* source);

// The smallest run of storage elements that holds every element of the view: strides are
// non-negative, so it starts at the offset. count is 0 for an empty tensor.
struct StorageSpan {
  int64_t first = 0;
  int64_t count = 0;
};
StorageSpan storage_span(const TensorImpl& impl);

}  // namespace switchyard
