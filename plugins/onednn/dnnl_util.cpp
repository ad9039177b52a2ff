#include "dnnl_util.h"

#include <array>
#include <cstring>
#include <stdexcept>

#include "device.h"

namespace sy_onednn {

dnnl::memory::data_type dnnl_type(uint32_t dtype) {
  switch (dtype) {
    case SY_DTYPE_F32:
      return dnnl::memory::data_type::f32;
    case SY_DTYPE_BF16:
      return dnnl::memory::data_type::bf16;
    case SY_DTYPE_F16:
      return dnnl::memory::data_type::f16;
    case SY_DTYPE_I32:
      return dnnl::memory::data_type::s32;
    default:
      return dnnl::memory::data_type::undef;
  }
}

bool dnnl_describable(const TensorView& view) {
  for (int d = 0; d < view.rank; ++d) {
    if (view.shape[d] > 1 && view.strides[d] == 0) return false;
  }
  return true;
}

dnnl::memory::desc dnnl_desc(const TensorView& view, int rank) {
  int padded_rank = std::max({rank, view.rank, 1});
  int shift = padded_rank - view.rank;
  dnnl::memory::dims dims(padded_rank, 1);
  dnnl::memory::dims strides(padded_rank, 1);
  for (int d = 0; d < view.rank; ++d) {
    dims[d + shift] = view.shape[d];
    strides[d + shift] = view.strides[d];
  }
  int64_t dense = 1;
  for (int d = padded_rank - 1; d >= 0; --d) {
    if (dims[d] == 1) strides[d] = dense;
    dense = std::max<int64_t>(dense, strides[d] * std::max<int64_t>(dims[d], 1));
  }
  return dnnl::memory::desc(dims, dnnl_type(view.dtype), strides);
}

dnnl::memory::desc dnnl_dense_desc(const dnnl::memory::dims& dims, uint32_t dtype) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * std::max<int64_t>(dims[d + 1], 1);
  }
  return dnnl::memory::desc(dims, dnnl_type(dtype), strides);
}

dnnl::primitive_attr primitive_attr(const OpContext& ctx) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // Always set, so that ONEDNN_DEFAULT_FPMATH_MODE in the environment cannot change the maths
  // behind the device's back: the device's `fpmath` option is the one switch.
  attr.set_fpmath_mode(ctx.device.fpmath);
  return attr;
}

void execute_primitive(OpContext& ctx, const dnnl::primitive& primitive,
                       const dnnl::memory::desc& scratchpad, std::initializer_list<DnnlArg> args,
                       bool zero_scratchpad) {
  const dnnl::engine& engine = ctx.device.engine;
  MemoryObjects& memories = ctx.queue.memories;
  memories.trim();
  constexpr size_t kMaxArgs = 16;
  if (args.size() + 1 > kMaxArgs) throw std::logic_error("execute_primitive: too many arguments");
  std::array<dnnl_exec_arg_t, kMaxArgs> exec{};
  int count = 0;
  for (const DnnlArg& a : args) {
    if (a.data != nullptr) exec[count++] = {a.arg, memories.get(*a.desc, a.arg, engine, a.data)};
  }
  const size_t scratch_bytes = scratchpad.get_size();
  if (scratch_bytes > 0) {
    void* scratch = ctx.scratch(scratch_bytes);
    if (zero_scratchpad) std::memset(scratch, 0, scratch_bytes);
    exec[count++] = {DNNL_ARG_SCRATCHPAD,
                     memories.get(scratchpad, DNNL_ARG_SCRATCHPAD, engine, scratch)};
  }
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive.get(), ctx.queue.stream.get(), count, exec.data()),
      "could not execute a primitive");
  ctx.queue.stream.wait();
}

// A reorder from `from` at `source` to `to` at `target` on the queue's stream.
void execute_reorder(OpContext& ctx, const dnnl::primitive& reorder, const dnnl::memory::desc& from,
                     void* source, const dnnl::memory::desc& to, void* target) {
  const dnnl::engine& engine = ctx.device.engine;
  MemoryObjects& memories = ctx.queue.memories;
  memories.trim();
  const dnnl_exec_arg_t exec[2] = {
      {DNNL_ARG_FROM, memories.get(from, DNNL_ARG_FROM, engine, source)},
      {DNNL_ARG_TO, memories.get(to, DNNL_ARG_TO, engine, target)}};
  dnnl::error::wrap_c_api(dnnl_primitive_execute(reorder.get(), ctx.queue.stream.get(), 2, exec),
                          "could not execute a reorder");
}

namespace {

// The user's layout and the primitive's; when they differ, the reorder that converts between them
// in the direction the data flows (user -> internal for inputs, internal -> user for outputs).
ArgLayout make_layout(const dnnl::engine& engine, const dnnl::memory::desc& user,
                      const dnnl::memory::desc& internal, bool is_input) {
  ArgLayout layout;
  layout.user = user;
  layout.internal = internal;
  layout.same = user == internal;
  if (!layout.same) {
    const dnnl::memory::desc& from = is_input ? user : internal;
    const dnnl::memory::desc& to = is_input ? internal : user;
    layout.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
  }
  return layout;
}

}  // namespace

ArgLayout make_input_layout(const dnnl::engine& engine, const dnnl::memory::desc& user,
                            const dnnl::memory::desc& internal) {
  return make_layout(engine, user, internal, /*is_input=*/true);
}

ArgLayout make_output_layout(const dnnl::engine& engine, const dnnl::memory::desc& user,
                             const dnnl::memory::desc& internal) {
  return make_layout(engine, user, internal, /*is_input=*/false);
}

void* prepare_input(OpContext& ctx, const ArgLayout& layout, void* user_data) {
  if (layout.same) return user_data;
  void* internal = ctx.scratch(layout.internal.get_size());
  execute_reorder(ctx, layout.reorder, layout.user, user_data, layout.internal, internal);
  return internal;
}

void* output_target(OpContext& ctx, const ArgLayout& layout, void* user_data) {
  return layout.same ? user_data : ctx.scratch(layout.internal.get_size());
}

void finish_output(OpContext& ctx, const ArgLayout& layout, void* target, void* user_data) {
  if (layout.same) return;
  execute_reorder(ctx, layout.reorder, layout.internal, target, layout.user, user_data);
  ctx.queue.stream.wait();
}

void* kept_conversion(OpContext& ctx, int input, const TensorView& w,
                      const dnnl::memory::desc& user, const dnnl::memory::desc& internal,
                      std::shared_ptr<const void>& kept, const std::function<void*()>& convert) {
  const uint64_t buffer = ctx.constant_buffer[input];
  // Only the caller's own bytes are keyed: a describable() or staged copy lives in scratch
  // memory, whose addresses the next call reuses for other data.
  if (buffer == 0 || w.data != ctx.in[input].data) return convert();
  kept = ctx.device.weights.find(buffer, w.data, user, internal);
  if (kept) return const_cast<void*>(kept.get());
  void* converted = convert();
  ctx.queue.stream.wait();
  kept = ctx.device.weights.put(buffer, w.data, user, internal, converted);
  return converted;
}

void* constant_weights(OpContext& ctx, const ArgLayout& layout, const TensorView& w,
                       std::shared_ptr<const void>& kept, int input) {
  const auto convert = [&] { return prepare_input(ctx, layout, w.data); };
  if (layout.same) return convert();
  return kept_conversion(ctx, input, w, layout.user, layout.internal, kept, convert);
}

}  // namespace sy_onednn
