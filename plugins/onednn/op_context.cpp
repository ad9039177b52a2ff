#include "op_context.h"

#include <omp.h>

#include <algorithm>

namespace sy_onednn {

const char* op_name(uint32_t op) {
  return sy_op_name(op);
}

int OpContext::threads_for(int64_t work, int64_t min_work_per_thread) const {
  int64_t useful = work / std::max<int64_t>(min_work_per_thread, 1);
  const int threads = static_cast<int>(std::clamp<int64_t>(useful, 1, device.threads));
  if (threads > 1 && device.adaptive_threads && device.contention.oversubscribed(threads)) return 1;
  return threads;
}

void OpContext::use_threads(int threads) const {
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

TensorView OpContext::scratch_view(uint32_t dtype, int rank, const int64_t* shape) {
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) count *= shape[d];
  return make_dense_view(scratch(static_cast<size_t>(count) * dtype_size(dtype)), dtype, rank,
                         shape);
}

void OpContext::require_counts(int inputs, int outputs) const {
  if (num_inputs != inputs || num_outputs != outputs) {
    fail_invalid(cat(name(), ": expects ", inputs, " input(s) and ", outputs, " output(s), got ",
                     num_inputs, " and ", num_outputs));
  }
}

void OpContext::require_dtype_in(const TensorView& view, const char* role,
                                 std::initializer_list<uint32_t> allowed) const {
  if (std::find(allowed.begin(), allowed.end(), view.dtype) != allowed.end()) return;
  std::string names;
  for (uint32_t dtype : allowed) names += std::string(names.empty() ? "" : "/") + dtype_name(dtype);
  fail_invalid(
      cat(name(), ": ", role, " has dtype ", dtype_name(view.dtype), ", expected ", names));
}

void OpContext::require_float(const TensorView& view, const char* role) const {
  require_dtype_in(view, role, {SY_DTYPE_F32, SY_DTYPE_F16, SY_DTYPE_BF16});
}

void OpContext::require_same_dtype(const TensorView& a, const char* role_a, const TensorView& b,
                                   const char* role_b) const {
  if (a.dtype != b.dtype) {
    fail_invalid(cat(name(), ": dtype mismatch: ", role_a, " is ", dtype_name(a.dtype), " but ",
                     role_b, " is ", dtype_name(b.dtype)));
  }
}

void OpContext::require_shape(const TensorView& view, const char* role, const int64_t* shape,
                              int rank) const {
  bool same = view.rank == rank && std::equal(shape, shape + rank, view.shape);
  if (!same) {
    fail_invalid(cat(name(), ": ", role, " has shape ", shape_string(view), ", expected ",
                     shape_string(shape, rank)));
  }
}

void OpContext::require_same_shape(const TensorView& a, const char* role_a, const TensorView& b,
                                   const char* role_b) const {
  bool same = a.rank == b.rank && std::equal(a.shape, a.shape + a.rank, b.shape);
  if (!same) {
    fail_invalid(cat(name(), ": shape mismatch: ", role_a, " ", shape_string(a), " vs ", role_b,
                     " ", shape_string(b)));
  }
}

void OpContext::fail_shape(const std::string& what) const {
  fail_invalid(cat(name(), ": ", what));
}

}  // namespace sy_onednn
