// Elementwise unary, unary-backward and binary ops (sections 3-5 of docs/ops.md): one kernel,
// the op chosen once per launch outside the element loop.
#include <math.h>

#include "common.cuh"

namespace sy {
namespace {

// GELU's CDF as erfc(-x / sqrt 2): 1 + erf(x / sqrt 2) cancels below x = -3 (docs/ops.md, GELU).
__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * erfcf(-x * 0.70710678118654752f);
}

__device__ __forceinline__ float gelu_derivative(float x) {
  const float cdf = 0.5f * erfcf(-x * 0.70710678118654752f);
  const float pdf = expf(-0.5f * x * x) * 0.39894228040143268f;
  return cdf + x * pdf;
}

struct Unary {
  int32_t op;
  __device__ float operator()(float x) const {
    switch (op) {
      case kRelu:
        return (x > 0.0f || x != x) ? x : 0.0f;
      case kGelu:
        return gelu(x);
      case kSigmoid:
        return 1.0f / (1.0f + expf(-x));
      case kTanh:
        return tanhf(x);
      case kExp:
        return expf(x);
      case kLog:
        return logf(x);
      case kSqrt:
        return sqrtf(x);
      case kNeg:
        return -x;
      case kAbs:
        return fabsf(x);
      default:  // kSign: both zeros and NaN give +0 (docs/ops.md, as PyTorch)
        return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    }
  }
};

struct Backward {
  int32_t op;
  __device__ float operator()(float g, float saved) const {
    switch (op) {
      case kReluBackward:
        return saved > 0.0f ? g : 0.0f;
      case kGeluBackward:
        return g * gelu_derivative(saved);
      case kSigmoidBackward:
        return g * saved * (1.0f - saved);
      default:
        return g * (1.0f - saved * saved);  // kTanhBackward
    }
  }
};

struct Binary {
  int32_t op;
  __device__ float operator()(float a, float b) const {
    switch (op) {
      case kAdd:
        return a + b;
      case kSub:
        return a - b;
      case kMul:
        return a * b;
      case kDiv:
        return a / b;
      case kMax:
        return (a > b || a != a) ? a : b;
      case kMin:
        return (a < b || a != a) ? a : b;
      case kPow:
        return powf(a, b);
      case kCmpGt:
        return a > b ? 1.0f : 0.0f;
      default:
        return a == b ? 1.0f : 0.0f;  // kCmpEq
    }
  }
};

template <typename F>
__device__ void run_unary(const SyElementwiseArgs& args, F f) {
  const SyOperand* ops[2] = {&args.out, &args.in0};
  for_each_position<2>(args.iter, ops, [&](int64_t, const int64_t* off) {
    store_float(args.out.data, args.out.dtype, off[0],
                f(load_float(args.in0.data, args.in0.dtype, off[1])));
  });
}

template <typename F>
__device__ void run_binary(const SyElementwiseArgs& args, F f) {
  const SyOperand* ops[3] = {&args.out, &args.in0, &args.in1};
  for_each_position<3>(args.iter, ops, [&](int64_t, const int64_t* off) {
    const float a = load_float(args.in0.data, args.in0.dtype, off[1]);
    const float b = load_float(args.in1.data, args.in1.dtype, off[2]);
    store_float(args.out.data, args.out.dtype, off[0], f(a, b));
  });
}

}  // namespace
}  // namespace sy

extern "C" __global__ void sy_elementwise(SyElementwiseArgs args) {
  using namespace sy;
  const int32_t op = args.op;
  if (op >= kRelu && op <= kSign) {
    run_unary(args, Unary{op});
  } else if (op >= kReluBackward && op <= kTanhBackward) {
    run_binary(args, Backward{op});
  } else if (args.use_scalar) {
    const Binary f{op};
    const float scalar = args.scalar;
    run_unary(args, [f, scalar](float a) { return f(a, scalar); });
  } else {
    run_binary(args, Binary{op});
  }
}
