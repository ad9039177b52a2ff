// SGD_UPDATE and ADAM_UPDATE (docs/ops.md section 15): fused in-place updates, one strided loop
// over all tensors, f32 arithmetic per element, each updated tensor rounded once.
#include <cmath>

#include "ops/ops.h"
#include "ops/strided_loop.h"
#include "ops/vector_clones.h"

namespace sy_onednn {
namespace {

// Lower than other row-wise ops: an update runs right after the gradient's matmul, which may have
// been split across threads, and a second thread then updates the half its own cache holds
// (measured on digits-mlp: 20 -> 5 us per update, 2 threads, quiet machine).
constexpr int64_t kMinElementsPerThread = 8192;

template <typename T>
T& at(char* base, int64_t i, int64_t stride) {
  return *reinterpret_cast<T*>(base + i * stride);
}

void check_tensors(const OpContext& ctx, std::initializer_list<const char*> roles) {
  const TensorView& param = ctx.in[0];
  ctx.require_float(param, "param");
  int i = 0;
  for (const char* role : roles) {
    if (i > 0) {
      ctx.require_same_dtype(param, "param", ctx.in[i], role);
      ctx.require_same_shape(param, "param", ctx.in[i], role);
    }
    // Updated in place: no axis of size > 1 may repeat memory (grad, read only, may).
    if (i != 1) {
      for (int d = 0; d < ctx.in[i].rank; ++d) {
        if (ctx.in[i].shape[d] > 1 && ctx.in[i].strides[d] == 0) {
          ctx.fail_shape(cat(role, " ", describe(ctx.in[i]), " has stride 0 on axis ", d));
        }
      }
    }
    ++i;
  }
}

struct SgdStep {
  float lr, momentum, dampening, weight_decay;
  bool nesterov;
  bool has_buffer;
};

// One element of SGD_UPDATE in f32; `buffer` is ignored without momentum.
inline void sgd_element(const SgdStep& step, float& param, float grad, float& buffer) {
  float g = grad + step.weight_decay * param;
  if (step.has_buffer && step.momentum != 0.0f) {
    buffer = step.momentum * buffer + (1.0f - step.dampening) * g;
    g = step.nesterov ? g + step.momentum * buffer : buffer;
  }
  param = param - step.lr * g;
}

// The dense path: the step's constants are copied into locals, because a store through `param`
// (a float) could otherwise change the float fields of `step` as far as the compiler knows, which
// makes it reload them every element and refuse to vectorise; and each variant (no momentum,
// momentum, Nesterov) gets a loop without branches. The arithmetic is sgd_element's, operation for
// operation, so the result is bit-identical to the strided path.
template <typename T>
SY_VECTOR_CLONES void sgd_dense(const SgdStep& step, T* __restrict param, const T* __restrict grad,
                                T* __restrict buffer, int64_t count) {
  const float lr = step.lr, momentum = step.momentum, weight_decay = step.weight_decay;
  const float kept = 1.0f - step.dampening;
  if (!step.has_buffer || momentum == 0.0f) {
    for (int64_t i = 0; i < count; ++i) {
      const float value = load_f32(param[i]);
      const float g = load_f32(grad[i]) + weight_decay * value;
      param[i] = store_f32<T>(value - lr * g);
    }
  } else if (step.nesterov) {
    for (int64_t i = 0; i < count; ++i) {
      const float value = load_f32(param[i]);
      const float g = load_f32(grad[i]) + weight_decay * value;
      const float b = momentum * load_f32(buffer[i]) + kept * g;
      buffer[i] = store_f32<T>(b);
      param[i] = store_f32<T>(value - lr * (g + momentum * b));
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      const float value = load_f32(param[i]);
      const float g = load_f32(grad[i]) + weight_decay * value;
      const float b = momentum * load_f32(buffer[i]) + kept * g;
      buffer[i] = store_f32<T>(b);
      param[i] = store_f32<T>(value - lr * b);
    }
  }
}

template <typename T>
void sgd_span(const SgdStep& step, char* const* p, const int64_t* s, int64_t count) {
  constexpr int64_t kSize = sizeof(T);
  // Without a momentum buffer, p[2] is the param itself (never read or written then).
  if (s[0] == kSize && s[1] == kSize && s[2] == kSize && (!step.has_buffer || p[2] != p[0])) {
    sgd_dense<T>(step, reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]),
                 step.has_buffer ? reinterpret_cast<T*>(p[2]) : nullptr, count);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    T& param = at<T>(p[0], i, s[0]);
    T& buffer = at<T>(p[2], i, s[2]);
    float value = load_f32(param);
    float b = step.has_buffer ? load_f32(buffer) : 0.0f;
    sgd_element(step, value, load_f32(at<T>(p[1], i, s[1])), b);
    param = store_f32<T>(value);
    if (step.has_buffer) buffer = store_f32<T>(b);
  }
}

template <typename T>
void sgd_typed(OpContext& ctx, const SgdStep& step) {
  // Without a momentum buffer the param stands in for it (never read or written then).
  const TensorView& buffer = step.has_buffer ? ctx.in[2] : ctx.in[0];
  StridedLoop<3> loop = plan_loop<3>({&ctx.in[0], &ctx.in[1], &buffer});
  run_loop(
      loop, ctx.threads_for(loop.numel, kMinElementsPerThread),
      [&step](char* const* p, const int64_t* s, int64_t count) { sgd_span<T>(step, p, s, count); });
}

struct AdamStep {
  float lr, beta1, beta2, epsilon, weight_decay, correction1, correction2;
  bool decoupled;
};

inline void adam_element(const AdamStep& step, float& param, float grad, float& m, float& v) {
  float g = grad;
  if (step.decoupled) {
    param = param * (1.0f - step.lr * step.weight_decay);
  } else {
    g = g + step.weight_decay * param;
  }
  m = step.beta1 * m + (1.0f - step.beta1) * g;
  v = step.beta2 * v + (1.0f - step.beta2) * g * g;
  const float m_hat = m / step.correction1;
  const float v_hat = v / step.correction2;
  param = param - step.lr * m_hat / (std::sqrt(v_hat) + step.epsilon);
}

// Dense path with the constants in locals, for the reason sgd_dense gives; adam_element's
// arithmetic, operation for operation.
template <typename T>
SY_VECTOR_CLONES void adam_dense(const AdamStep& step, T* __restrict param,
                                 const T* __restrict grad, T* __restrict m, T* __restrict v,
                                 int64_t count) {
  const AdamStep local = step;
  for (int64_t i = 0; i < count; ++i) {
    float value = load_f32(param[i]), mv = load_f32(m[i]), vv = load_f32(v[i]);
    adam_element(local, value, load_f32(grad[i]), mv, vv);
    param[i] = store_f32<T>(value);
    m[i] = store_f32<T>(mv);
    v[i] = store_f32<T>(vv);
  }
}

template <typename T>
void adam_span(const AdamStep& step, char* const* p, const int64_t* s, int64_t count) {
  constexpr int64_t kSize = sizeof(T);
  if (s[0] == kSize && s[1] == kSize && s[2] == kSize && s[3] == kSize) {
    adam_dense<T>(step, reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]),
                  reinterpret_cast<T*>(p[2]), reinterpret_cast<T*>(p[3]), count);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    T& param = at<T>(p[0], i, s[0]);
    T& m = at<T>(p[2], i, s[2]);
    T& v = at<T>(p[3], i, s[3]);
    float value = load_f32(param), mv = load_f32(m), vv = load_f32(v);
    adam_element(step, value, load_f32(at<T>(p[1], i, s[1])), mv, vv);
    param = store_f32<T>(value);
    m = store_f32<T>(mv);
    v = store_f32<T>(vv);
  }
}

template <typename T>
void adam_typed(OpContext& ctx, const AdamStep& step) {
  StridedLoop<4> loop = plan_loop<4>({&ctx.in[0], &ctx.in[1], &ctx.in[2], &ctx.in[3]});
  run_loop(loop, ctx.threads_for(loop.numel, kMinElementsPerThread),
           [&step](char* const* p, const int64_t* s, int64_t count) {
             adam_span<T>(step, p, s, count);
           });
}

}  // namespace

void run_sgd_update(OpContext& ctx) {
  const auto& p = ctx.params.sgd;
  if (ctx.num_outputs != 0 || (ctx.num_inputs != 3 && ctx.num_inputs != 2) ||
      (ctx.num_inputs == 2 && p.momentum != 0.0)) {
    ctx.fail_shape(
        cat("expects inputs (param, grad, momentum_buf) - or (param, grad) when momentum "
            "is 0 - and no outputs, got ",
            ctx.num_inputs, " input(s) and ", ctx.num_outputs, " output(s) with momentum ",
            p.momentum));
  }
  if (p.nesterov && (p.momentum <= 0.0 || p.dampening != 0.0)) {
    ctx.fail_shape(cat("nesterov needs momentum > 0 and dampening 0, got momentum ", p.momentum,
                       " and dampening ", p.dampening));
  }
  if (ctx.num_inputs == 3) {
    check_tensors(ctx, {"param", "grad", "momentum_buf"});
  } else {
    check_tensors(ctx, {"param", "grad"});
  }
  const SgdStep step{static_cast<float>(p.lr),
                     static_cast<float>(p.momentum),
                     static_cast<float>(p.dampening),
                     static_cast<float>(p.weight_decay),
                     p.nesterov != 0,
                     ctx.num_inputs == 3};
  visit_float_dtype(ctx.in[0].dtype,
                    [&](auto type_tag) { sgd_typed<decltype(type_tag)>(ctx, step); });
}

void run_adam_update(OpContext& ctx) {
  const auto& p = ctx.params.adam;
  ctx.require_counts(4, 0);
  if (p.step < 1) ctx.fail_shape(cat("step must be >= 1, got ", p.step));
  check_tensors(ctx, {"param", "grad", "m", "v"});
  const double correction1 = 1.0 - std::pow(p.beta1, static_cast<double>(p.step));
  const double correction2 = 1.0 - std::pow(p.beta2, static_cast<double>(p.step));
  const AdamStep step{static_cast<float>(p.lr),           static_cast<float>(p.beta1),
                      static_cast<float>(p.beta2),        static_cast<float>(p.epsilon),
                      static_cast<float>(p.weight_decay), static_cast<float>(correction1),
                      static_cast<float>(correction2),    p.decoupled_weight_decay != 0};
  visit_float_dtype(ctx.in[0].dtype,
                    [&](auto type_tag) { adam_typed<decltype(type_tag)>(ctx, step); });
}

}  // namespace sy_onednn
