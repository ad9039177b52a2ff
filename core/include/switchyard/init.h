// Parameter initialisation from the counter-based generator.
//
// Every draw is SY_OP_RANDOM_UNIFORM on the parameter's device with (seed, offset), so the same
// seed gives bit-identical initial weights on every backend. InitContext hands each new parameter
// the next offset, so a model built in the same order from the same seed is the same model.
//
// Threads: an InitContext is used by one thread at a time (each draw advances next_offset); build
// a model on one thread, then share it (nn.h).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <memory>
#include <string>

#include "switchyard/tensor.h"

namespace switchyard {

enum class InitScheme {
  kKaimingUniform,  // PyTorch's default for Linear and Conv2d (a = sqrt(5))
  kXavierUniform,   // Glorot: U(-b, b), b = sqrt(6 / (fan_in + fan_out))
};

// What layers need to create their parameters: where, in which dtype, and from which stream of
// random numbers. Layers take it as a mutable argument and advance next_offset.
struct InitContext {
  std::shared_ptr<Device> device;
  InitScheme scheme = InitScheme::kKaimingUniform;
  uint64_t seed = 0;
  uint64_t next_offset = 0;  // Philox counter for the next parameter
  DType dtype = DType::kF32;
  // What the model comes from, for messages ("runs/x/model.ckpt"; "" when it is the YAML's).
  std::string source{};
  // Bytes of the parameters drawn so far: each draw first checks that the model's parameters so
  // far fit the memory budget (a layer size taken from a damaged checkpoint or a typo in a YAML
  // file is refused, naming `source`, instead of allocating terabytes).
  uint64_t drawn_bytes = 0;

  // Returns next_offset and advances it by `count` (rounded up to a multiple of 4 so that no two
  // parameters share a Philox block).
  uint64_t take_offset(int64_t count);
};

struct FanInOut {
  int64_t fan_in = 0;
  int64_t fan_out = 0;
};
// For [out, in] or [out, in, k...]: fan_in = in * prod(k), fan_out = out * prod(k).
FanInOut compute_fans(const Shape& weight_shape);

// U(low, high) drawn from the context's stream.
Tensor init_uniform(InitContext& context, const Shape& shape, double low, double high);
// N(mean, stddev) drawn from the context's stream (Embedding, learned positions).
Tensor init_normal(InitContext& context, const Shape& shape, double mean, double stddev);
// Kaiming-uniform: U(-b, b), b = sqrt(6 / ((1 + a^2) fan_in)).
Tensor kaiming_uniform(InitContext& context, const Shape& shape, double a);
// Xavier-uniform: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform(InitContext& context, const Shape& shape, double gain = 1.0);
// A weight by the context's scheme (Kaiming with a = sqrt(5), or Xavier).
Tensor init_weight(InitContext& context, const Shape& shape);
// A bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) under Kaiming, zeros under Xavier.
Tensor init_bias(InitContext& context, const Shape& shape, int64_t fan_in);

}  // namespace switchyard

#pragma GCC visibility pop
