// Tensor: an n-dimensional array on one device, the value that every op and layer works on.
//
// A Tensor is a handle: copying it is cheap and the copies share one TensorImpl (data, shape and
// autograd state), the way parameters are shared between a model and its optimizer. The data lives
// in a Buffer of the tensor's Device; a view (reshape of a contiguous tensor, permute, transpose,
// narrow, slice) shares that Buffer with a different shape, strides and offset, without a copy.
// Every computation is an op of the op set dispatched to the device's queue (see ops.h); nothing
// here knows which backend runs it. Errors are thrown as switchyard::Error.
//
// Threads: any number of threads may read one tensor (use it as an op's input, copy it to the
// host, copy the handle) at once: each op's call into the device runs under the device's lock
// (device.h). Writing is one thread's at a time, with no reader at the same time: an in-place op,
// an optimizer step, backward() through a graph, or assigning to the handle itself. Autograd's
// state (grad_enabled, autocast) is per thread.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/dtype.h"
#include "switchyard/plugin_abi.h"
#include "switchyard/shape.h"

namespace switchyard {

class Buffer;
class Device;
struct TensorImpl;

class Tensor {
 public:
  // An undefined tensor: defined() is false; most calls on it throw.
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl);

  // Uninitialised contiguous storage (the pool may hand back old bytes).
  static Tensor empty(const Shape& shape, DType dtype, const std::shared_ptr<Device>& device);
  // Copies host values to a new contiguous tensor. `values.size()` must equal shape.numel().
  // Float values are cast to `dtype` on the device (f32, f16 or bf16).
  static Tensor from_host(const std::vector<float>& values, const Shape& shape,
                          const std::shared_ptr<Device>& device, DType dtype = DType::kF32);
  // A braced list of numbers is float data: from_host({1, 2}, {2}, device) is an f32 tensor.
  // Integer data is passed as an explicit std::vector<int32_t> or std::vector<int64_t>.
  static Tensor from_host(std::initializer_list<float> values, const Shape& shape,
                          const std::shared_ptr<Device>& device, DType dtype = DType::kF32);
  static Tensor from_host(const std::vector<int32_t>& values, const Shape& shape,
                          const std::shared_ptr<Device>& device);
  static Tensor from_host(const std::vector<int64_t>& values, const Shape& shape,
                          const std::shared_ptr<Device>& device);
  // Raw bytes already in `dtype`'s layout, row-major.
  static Tensor from_host_bytes(const void* data, const Shape& shape, DType dtype,
                                const std::shared_ptr<Device>& device);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  // Extent of one axis; a negative axis counts from the end.
  int64_t dim(int axis) const;
  int rank() const;
  int64_t numel() const;
  // In elements, like the ABI's sy_tensor_desc.
  const Shape& strides() const;
  DType dtype() const;
  const std::shared_ptr<Device>& device() const;
  const std::shared_ptr<Buffer>& storage() const;
  // Position of element [0, ..., 0] in the storage, in elements.
  int64_t storage_offset() const;
  bool is_contiguous() const;
  // True when both tensors are views of the same Buffer.
  bool shares_storage_with(const Tensor& other) const;
  // The descriptor a plugin reads for this tensor.
  sy_tensor_desc desc() const;
  // "Tensor[f32 [64, 256] on <backend>:0]".
  std::string to_string() const;

  // Values, read back to the host. Any float dtype reads as float; i32/i64 as int64.
  // These wait for every op already queued on the device, so keep them out of hot loops.
  std::vector<float> to_host_float() const;
  std::vector<int64_t> to_host_int64() const;
  // The single value of a one-element tensor, as double.
  double item() const;

  // Views: share storage, no copy. reshape copies (via contiguous()) only when the strides do not
  // allow a view (PyTorch's rule, as its view(): axes may be split or merged only within runs of
  // axes that are contiguous among themselves). One extent of -1 is inferred.
  Tensor reshape(const Shape& shape) const;
  Tensor flatten(int start_axis = 0, int end_axis = -1) const;
  Tensor permute(const std::vector<int>& axes) const;
  Tensor transpose(int axis0, int axis1) const;
  // Transpose of the last two axes.
  Tensor t() const;
  Tensor narrow(int axis, int64_t start, int64_t length) const;
  // Rows [begin, end) of axis 0, as used for batching.
  Tensor slice(int64_t begin, int64_t end) const;
  Tensor unsqueeze(int axis) const;
  Tensor squeeze(int axis) const;
  // A view with stride 0 on the broadcast axes (read-only use only).
  Tensor expand(const Shape& shape) const;

  // A contiguous tensor with the same values (this tensor itself when already contiguous).
  Tensor contiguous() const;
  // A contiguous copy that owns its storage.
  Tensor clone() const;
  // The same values on another device (a host round trip when the devices differ).
  Tensor to(const std::shared_ptr<Device>& device) const;
  // The values cast to another dtype (this tensor itself when the dtype matches).
  Tensor to(DType dtype) const;

  // In-place data updates; they are not recorded by autograd and bump nothing in the graph.
  // Copies (and casts) `source`, broadcast to this shape, into this tensor's storage.
  void copy_(const Tensor& source);
  void fill_(double value);

  // Autograd. Only leaves (tensors made by the user, not by an op) may change requires_grad.
  bool requires_grad() const;
  Tensor& set_requires_grad(bool requires_grad = true);
  bool is_leaf() const;
  // Accumulated gradient of a leaf, undefined before the first backward() or after zero_grad().
  Tensor grad() const;
  void set_grad(const Tensor& grad);
  void zero_grad();
  // The same data with no autograd history.
  Tensor detach() const;
  // Backpropagates from this one-element tensor (gradient 1), accumulating into leaves' grad().
  void backward() const;
  // Backpropagates with an explicit gradient of this tensor's shape.
  void backward(const Tensor& gradient) const;
  // Name of the op that made this tensor ("matmul"), or "" for a leaf.
  std::string grad_fn_name() const;

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace switchyard

#pragma GCC visibility pop
