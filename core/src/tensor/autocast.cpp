// The autocast mode and the casts the ops apply under it (see switchyard/autocast.h).
#include "switchyard/autocast.h"

#include <string>

#include "switchyard/status.h"
#include "tensor/op_helpers.h"

namespace switchyard {
namespace {

thread_local DType t_autocast = DType::kF32;

}  // namespace

DType autocast_dtype() {
  return t_autocast;
}

AutocastGuard::AutocastGuard(DType low_dtype) : previous_(t_autocast) {
  if (!is_floating(low_dtype)) {
    throw_error(invalid_argument(std::string("autocast: needs f32, bf16 or f16, got ") +
                                 dtype_name(low_dtype)));
  }
  t_autocast = low_dtype;
}

AutocastGuard::~AutocastGuard() {
  t_autocast = previous_;
}

Tensor autocast_low(const Tensor& x) {
  const DType low = t_autocast;
  if (low == DType::kF32 || !x.defined() || !is_floating(x.dtype())) return x;
  return x.to(low);
}

Tensor autocast_f32(const Tensor& x) {
  if (t_autocast == DType::kF32 || !x.defined() || !is_floating(x.dtype())) return x;
  return x.to(DType::kF32);
}

std::pair<Tensor, Tensor> autocast_promote(const Tensor& a, const Tensor& b) {
  if (t_autocast == DType::kF32 || !a.defined() || !b.defined() || a.dtype() == b.dtype() ||
      !is_floating(a.dtype()) || !is_floating(b.dtype())) {
    return {a, b};
  }
  // Two different floating dtypes always meet in f32: f32 is wider than bf16 and f16, and
  // neither of those holds the other.
  return {a.to(DType::kF32), b.to(DType::kF32)};
}

}  // namespace switchyard
