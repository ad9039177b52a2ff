// Tensor: creation, metadata, host transfers and the autograd accessors.
#include "switchyard/tensor.h"

#include <cstring>

#include "autograd/engine.h"
#include "switchyard/buffer.h"
#include "switchyard/device.h"
#include "switchyard/queue.h"
#include "switchyard/status.h"
#include "tensor/capture_internal.h"
#include "tensor/dispatch_internal.h"
#include "tensor/tensor_impl.h"

namespace switchyard {

const TensorImpl& checked_impl(const Tensor& tensor, const char* what) {
  if (!tensor.defined()) {
    throw_error(invalid_argument(std::string(what) + ": the tensor is undefined"));
  }
  return *tensor.impl();
}

std::shared_ptr<TensorImpl> make_view_impl(const TensorImpl& base, const Shape& shape,
                                           const Shape& strides, int64_t offset_elements) {
  auto impl = std::make_shared<TensorImpl>();
  impl->device = base.device;
  impl->storage = base.storage;
  impl->offset_elements = offset_elements;
  impl->shape = shape;
  impl->strides = strides;
  impl->dtype = base.dtype;
  return impl;
}

StorageSpan storage_span(const TensorImpl& impl) {
  StorageSpan span{impl.offset_elements, 1};
  for (int i = 0; i < impl.shape.rank(); ++i) {
    if (impl.shape[i] == 0) return {impl.offset_elements, 0};
    span.count += (impl.shape[i] - 1) * impl.strides[i];
  }
  return span;
}

void read_storage(const TensorImpl& impl, int64_t first_element, int64_t count, void* destination) {
  const uint64_t element_bytes = dtype_size_bytes(impl.dtype);
  const uint64_t offset_bytes = static_cast<uint64_t>(first_element) * element_bytes;
  const uint64_t size_bytes = static_cast<uint64_t>(count) * element_bytes;
  Queue& queue = impl.device->default_queue();
  detail::capture_note_host_read(*impl.device);
  if (void* host = impl.storage->host_address(); host != nullptr) {
    throw_if_error(queue.finish());
    std::memcpy(destination, static_cast<const unsigned char*>(host) + offset_bytes, size_bytes);
    return;
  }
  throw_if_error(queue.read(*impl.storage, offset_bytes, destination, size_bytes));
}

void write_storage(const TensorImpl& impl, int64_t first_element, int64_t count,
                   const void* source) {
  const uint64_t element_bytes = dtype_size_bytes(impl.dtype);
  detail::capture_note_host_write(*impl.device, impl.storage->handle());
  throw_if_error(impl.device->default_queue().write(
      *impl.storage, static_cast<uint64_t>(first_element) * element_bytes, source,
      static_cast<uint64_t>(count) * element_bytes));
}

Tensor::Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::shared_ptr<Device>& device) {
  if (device == nullptr) throw_error(invalid_argument("Tensor::empty: no device given"));
  for (int64_t extent : shape) {
    if (extent < 0) {
      throw_error(invalid_argument("Tensor::empty: negative extent in shape " + shape.to_string()));
    }
  }
  // The size is computed without wrapping: a shape of 2^62 elements must not become a 0-byte
  // buffer that the first write runs off.
  uint64_t size_bytes = dtype_size_bytes(dtype);
  int64_t span = 1;  // the strides' product: an empty axis leaves the others' extents in it
  for (int64_t extent : shape) {
    if (__builtin_mul_overflow(size_bytes, static_cast<uint64_t>(extent), &size_bytes)) {
      throw_error(resource_exhausted("Tensor::empty: shape " + shape.to_string() + " of " +
                                     dtype_name(dtype) + " needs more than 2^64 bytes"));
    }
    if (__builtin_mul_overflow(span, std::max<int64_t>(extent, 1), &span)) {
      throw_error(resource_exhausted("Tensor::empty: shape " + shape.to_string() +
                                     " has extents whose product passes 2^63 (its strides would "
                                     "overflow, empty axes aside)"));
    }
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->device = device;
  impl->storage = value_or_throw(device->allocate(std::max<uint64_t>(size_bytes, 1)));
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::from_host_bytes(const void* data, const Shape& shape, DType dtype,
                               const std::shared_ptr<Device>& device) {
  Tensor tensor = empty(shape, dtype, device);
  if (shape.numel() > 0) write_storage(*tensor.impl(), 0, shape.numel(), data);
  return tensor;
}

namespace {

template <typename T>
void check_host_count(const std::vector<T>& values, const Shape& shape) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw_error(invalid_argument("Tensor::from_host: " + std::to_string(values.size()) +
                                 " values for shape " + shape.to_string() + " (" +
                                 std::to_string(shape.numel()) + " elements)"));
  }
}

// A contiguous copy of `tensor` in `dtype` (one COPY op), for reading back.
Tensor contiguous_as(const Tensor& tensor, DType dtype) {
  if (tensor.dtype() == dtype && tensor.is_contiguous()) return tensor;
  Tensor out = Tensor::empty(tensor.shape(), dtype, tensor.device());
  run_op(SY_OP_COPY, {tensor}, {out});
  return out;
}

}  // namespace

Tensor Tensor::from_host(const std::vector<float>& values, const Shape& shape,
                         const std::shared_ptr<Device>& device, DType dtype) {
  check_host_count(values, shape);
  if (!is_floating(dtype)) {
    throw_error(invalid_argument(std::string("Tensor::from_host: float values need a float dtype, "
                                             "not ") +
                                 dtype_name(dtype)));
  }
  Tensor f32 = from_host_bytes(values.data(), shape, DType::kF32, device);
  return dtype == DType::kF32 ? f32 : f32.to(dtype);
}

Tensor Tensor::from_host(std::initializer_list<float> values, const Shape& shape,
                         const std::shared_ptr<Device>& device, DType dtype) {
  return from_host(std::vector<float>(values), shape, device, dtype);
}

Tensor Tensor::from_host(const std::vector<int32_t>& values, const Shape& shape,
                         const std::shared_ptr<Device>& device) {
  check_host_count(values, shape);
  return from_host_bytes(values.data(), shape, DType::kI32, device);
}

Tensor Tensor::from_host(const std::vector<int64_t>& values, const Shape& shape,
                         const std::shared_ptr<Device>& device) {
  check_host_count(values, shape);
  return from_host_bytes(values.data(), shape, DType::kI64, device);
}

const Shape& Tensor::shape() const {
  return checked_impl(*this, "Tensor::shape").shape;
}
int Tensor::rank() const {
  return shape().rank();
}
int64_t Tensor::numel() const {
  return shape().numel();
}
int64_t Tensor::dim(int axis) const {
  return shape()[normalize_axis(axis, rank())];
}
const Shape& Tensor::strides() const {
  return checked_impl(*this, "Tensor::strides").strides;
}
DType Tensor::dtype() const {
  return checked_impl(*this, "Tensor::dtype").dtype;
}
const std::shared_ptr<Device>& Tensor::device() const {
  return checked_impl(*this, "Tensor::device").device;
}
const std::shared_ptr<Buffer>& Tensor::storage() const {
  return checked_impl(*this, "Tensor::storage").storage;
}
int64_t Tensor::storage_offset() const {
  return checked_impl(*this, "Tensor::storage_offset").offset_elements;
}

bool Tensor::is_contiguous() const {
  const TensorImpl& impl = checked_impl(*this, "Tensor::is_contiguous");
  if (impl.shape.numel() == 0) return true;  // no elements: any strides describe them
  int64_t expected = 1;
  for (int i = impl.shape.rank() - 1; i >= 0; --i) {
    if (impl.shape[i] == 1) continue;
    if (impl.strides[i] != expected) return false;
    expected *= impl.shape[i];
  }
  return true;
}

bool Tensor::shares_storage_with(const Tensor& other) const {
  return defined() && other.defined() && impl_->storage == other.impl_->storage;
}

sy_tensor_desc Tensor::desc() const {
  const TensorImpl& impl = checked_impl(*this, "Tensor::desc");
  sy_tensor_desc desc{};
  desc.buffer = impl.storage->handle();
  desc.offset_bytes = static_cast<uint64_t>(impl.offset_elements) * dtype_size_bytes(impl.dtype);
  desc.dtype = static_cast<uint32_t>(impl.dtype);
  desc.rank = static_cast<uint32_t>(impl.shape.rank());
  for (int i = 0; i < impl.shape.rank(); ++i) {
    desc.shape[i] = impl.shape[i];
    desc.strides[i] = impl.strides[i];
  }
  return desc;
}

std::string Tensor::to_string() const {
  if (!defined()) return "Tensor[undefined]";
  return std::string("Tensor[") + dtype_name(impl_->dtype) + " " + impl_->shape.to_string() +
         " on " + impl_->device->id() + "]";
}

std::vector<float> Tensor::to_host_float() const {
  const TensorImpl& impl = checked_impl(*this, "Tensor::to_host_float");
  if (!is_floating(impl.dtype)) {
    throw_error(invalid_argument(std::string("Tensor::to_host_float on a tensor of dtype ") +
                                 dtype_name(impl.dtype)));
  }
  const Tensor source = contiguous_as(*this, DType::kF32);
  std::vector<float> values(static_cast<size_t>(numel()));
  if (!values.empty()) {
    read_storage(*source.impl(), source.storage_offset(), numel(), values.data());
  }
  return values;
}

std::vector<int64_t> Tensor::to_host_int64() const {
  const TensorImpl& impl = checked_impl(*this, "Tensor::to_host_int64");
  if (is_floating(impl.dtype)) {
    throw_error(invalid_argument(std::string("Tensor::to_host_int64 on a tensor of dtype ") +
                                 dtype_name(impl.dtype)));
  }
  const Tensor source = contiguous_as(*this, DType::kI64);
  std::vector<int64_t> values(static_cast<size_t>(numel()));
  if (!values.empty()) {
    read_storage(*source.impl(), source.storage_offset(), numel(), values.data());
  }
  return values;
}

double Tensor::item() const {
  if (numel() != 1) {
    throw_error(invalid_argument("Tensor::item needs exactly one element, not shape " +
                                 shape().to_string()));
  }
  if (is_floating(dtype())) return static_cast<double>(to_host_float()[0]);
  return static_cast<double>(to_host_int64()[0]);
}

void Tensor::copy_(const Tensor& source) {
  checked_impl(*this, "Tensor::copy_");
  Tensor expanded = source.shape() == shape() ? source : source.detach().expand(shape());
  run_op(SY_OP_COPY, {expanded}, {*this});
}

void Tensor::fill_(double value) {
  sy_op_params params{};
  params.fill.value = value;
  run_op(SY_OP_FILL, {}, {*this}, params);
}

bool Tensor::requires_grad() const {
  return defined() && impl_->requires_grad;
}

Tensor& Tensor::set_requires_grad(bool requires_grad) {
  checked_impl(*this, "Tensor::set_requires_grad");
  TensorImpl& impl = *impl_;
  if (impl.grad_fn != nullptr) {
    throw_error(invalid_argument("set_requires_grad on a tensor made by '" + grad_fn_name() +
                                 "': only leaves can change it (use detach())"));
  }
  if (requires_grad && !is_floating(impl.dtype)) {
    throw_error(invalid_argument(std::string("only float tensors can require gradients, not ") +
                                 dtype_name(impl.dtype)));
  }
  impl.requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const {
  return defined() && impl_->grad_fn == nullptr;
}
Tensor Tensor::grad() const {
  return checked_impl(*this, "Tensor::grad").grad;
}

void Tensor::set_grad(const Tensor& grad) {
  checked_impl(*this, "Tensor::set_grad");
  if (grad.defined() && grad.shape() != shape()) {
    throw_error(invalid_argument("set_grad: gradient shape " + grad.shape().to_string() +
                                 " differs from the tensor's " + shape().to_string()));
  }
  impl_->grad = grad;
}

void Tensor::zero_grad() {
  if (defined()) impl_->grad = Tensor();
}

Tensor Tensor::detach() const {
  const TensorImpl& impl = checked_impl(*this, "Tensor::detach");
  return Tensor(make_view_impl(impl, impl.shape, impl.strides, impl.offset_elements));
}

void Tensor::backward() const {
  if (numel() != 1) {
    throw_error(invalid_argument("backward() without a gradient needs a one-element tensor, not " +
                                 shape().to_string()));
  }
  Tensor one = Tensor::empty(shape(), dtype(), device());
  one.fill_(1.0);
  run_backward(*this, one);
}

void Tensor::backward(const Tensor& gradient) const {
  run_backward(*this, gradient);
}

}  // namespace switchyard
