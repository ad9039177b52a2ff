#include "ops/eltwise_dnnl.h"

#include "dnnl_util.h"
#include "ops/ops.h"

namespace sy_onednn {
namespace {

// Below this many elements the libm loop is fast enough that creating memory objects and entering
// oneDNN costs more than it saves.
constexpr int64_t kMinElements = 2048;

struct EltwiseEntry : CachedPrimitive {
  dnnl::primitive primitive;
  dnnl::memory::desc data_desc;  // x (forward) or saved (backward)
  dnnl::memory::desc diff_desc;  // out (forward) or grad_out/grad_in (backward)
  dnnl::memory::desc scratchpad_desc;
};

bool algorithm_for(uint32_t op, dnnl::algorithm* algorithm, bool* backward) {
  using A = dnnl::algorithm;
  *backward = false;
  switch (op) {
    case SY_OP_GELU:
      *algorithm = A::eltwise_gelu_erf;
      return true;
    case SY_OP_SIGMOID:
      *algorithm = A::eltwise_logistic;
      return true;
    case SY_OP_TANH:
      *algorithm = A::eltwise_tanh;
      return true;
    case SY_OP_EXP:
      *algorithm = A::eltwise_exp;
      return true;
    case SY_OP_LOG:
      *algorithm = A::eltwise_log;
      return true;
    case SY_OP_SQRT:
      *algorithm = A::eltwise_sqrt;
      return true;
    default:
      break;
  }
  *backward = true;
  switch (op) {
    case SY_OP_GELU_BACKWARD:
      *algorithm = A::eltwise_gelu_erf;
      return true;
    case SY_OP_SIGMOID_BACKWARD:
      *algorithm = A::eltwise_logistic_use_dst_for_bwd;
      return true;
    case SY_OP_TANH_BACKWARD:
      *algorithm = A::eltwise_tanh_use_dst_for_bwd;
      return true;
    default:
      return false;
  }
}

std::shared_ptr<const EltwiseEntry> make_entry(const OpContext& ctx, dnnl::algorithm algorithm,
                                               bool backward, const dnnl::memory::desc& data,
                                               const dnnl::memory::desc& diff) {
  auto entry = std::make_shared<EltwiseEntry>();
  const dnnl::engine& engine = ctx.device.engine;
  dnnl::primitive_attr attr = primitive_attr(ctx);
  entry->data_desc = data;
  entry->diff_desc = diff;
  if (!backward) {
    dnnl::eltwise_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, algorithm, data},
                                             attr, engine);
    entry->primitive = dnnl::eltwise_forward(pd);
    entry->scratchpad_desc = pd.scratchpad_desc();
    return entry;
  }
  dnnl::eltwise_forward::primitive_desc hint({dnnl::prop_kind::forward_training, algorithm, data},
                                             engine);
  dnnl::eltwise_backward::primitive_desc pd({algorithm, diff, data}, attr, engine, hint);
  entry->primitive = dnnl::eltwise_backward(pd);
  entry->scratchpad_desc = pd.scratchpad_desc();
  return entry;
}

}  // namespace

bool try_eltwise_dnnl(OpContext& ctx) {
  dnnl::algorithm algorithm;
  bool backward = false;
  if (!algorithm_for(ctx.op, &algorithm, &backward)) return false;
  const TensorView& out = ctx.out[0];
  const TensorView& first = ctx.in[0];  // x (forward) or grad_out (backward)
  const int64_t count = out.numel();
  if (count < kMinElements) return false;
  if (out.dtype != SY_DTYPE_F32 && out.dtype != SY_DTYPE_BF16) return false;
  for (int i = 0; i < ctx.num_inputs; ++i) {
    if (!dnnl_describable(ctx.in[i])) return false;
  }
  // oneDNN's eltwise gives the output (diff_src) the layout of its input (x or diff_dst). A
  // forward op on a strided input (an LSTM gate, a narrow of [B, 4H]) copies the input into the
  // output and runs in place there: the copy costs far less than the libm loop (std::tanh is
  // about 20 ns an element, oneDNN's AVX2 logistic 1).
  dnnl::memory::desc out_desc = dnnl_desc(out);
  const bool in_place = dnnl_desc(first) != out_desc;
  if (in_place && (backward || !out.is_contiguous())) return false;
  dnnl::memory::desc data_desc = backward ? dnnl_desc(ctx.in[1]) : out_desc;

  // bf16 without oneDNN kernels (CPUs without AVX-512): the plain loops, decided once per op.
  std::atomic<bool>& no_bf16 = ctx.device.bf16_through_f32[ctx.op];
  if (out.dtype == SY_DTYPE_BF16 && no_bf16.load(std::memory_order_relaxed)) return false;
  const int threads = ctx.threads_for(count, kMinRowElements);
  ctx.use_threads(threads);
  CacheKeyBuilder key(ctx.op);
  key.add(threads).add_view(out).add_view(backward ? ctx.in[1] : out);
  std::shared_ptr<const EltwiseEntry> entry;
  try {
    entry = ctx.device.primitives.get_or_create<EltwiseEntry>(
        key.finish(), [&] { return make_entry(ctx, algorithm, backward, data_desc, out_desc); });
  } catch (const dnnl::error& e) {
    if (e.status != dnnl_unimplemented || out.dtype != SY_DTYPE_BF16) throw;
    no_bf16.store(true, std::memory_order_relaxed);
    return false;
  }
  if (!backward) {
    if (in_place) copy_view(first, out, threads);
    execute_primitive(ctx, entry->primitive, entry->scratchpad_desc,
                      {{DNNL_ARG_SRC, &entry->data_desc, in_place ? out.data : first.data},
                       {DNNL_ARG_DST, &entry->diff_desc, out.data}});
    return true;
  }
  const int saved_arg = ctx.op == SY_OP_GELU_BACKWARD ? DNNL_ARG_SRC : DNNL_ARG_DST;
  execute_primitive(ctx, entry->primitive, entry->scratchpad_desc,
                    {{saved_arg, &entry->data_desc, ctx.in[1].data},
                     {DNNL_ARG_DIFF_DST, &entry->diff_desc, first.data},
                     {DNNL_ARG_DIFF_SRC, &entry->diff_desc, out.data}});
  return true;
}

}  // namespace sy_onednn
