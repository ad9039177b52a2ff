// SGD_UPDATE (plain, momentum, dampening, nesterov, weight decay) and ADAM_UPDATE (Adam and AdamW,
// first and later steps). The ops update their inputs in place; the updated inputs are compared.
#include <limits>
#include <string>

#include "conformance/cases.h"

namespace switchyard::conformance {
namespace {

const Shape kShape = {37};

struct SgdSpec {
  const char* name;
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
};

const SgdSpec kSgdSpecs[] = {
    {"plain/no_momentum_buffer", 0.1, 0.0, 0.0, 0.0, false},
    {"momentum0.9", 0.05, 0.9, 0.0, 0.0, false},
    {"nesterov/momentum0.9", 0.05, 0.9, 0.0, 0.0, true},
    {"momentum0.8/dampening0.1/weight_decay0.01", 0.02, 0.8, 0.1, 0.01, false},
    {"nesterov/weight_decay0.05", 0.1, 0.5, 0.0, 0.05, true},
};

OpCase build_sgd(Generator& gen, sy_dtype dtype, const SgdSpec& spec) {
  std::vector<HostTensor> inputs = {random_tensor(gen, dtype, kShape, -2.0, 2.0),
                                    random_tensor(gen, dtype, kShape, -1.0, 1.0)};
  // A non-zero buffer stands for a later step.
  if (spec.momentum != 0.0) inputs.push_back(random_tensor(gen, dtype, kShape, -0.5, 0.5));
  OpCase op_case = make_op_case(SY_OP_SGD_UPDATE, inputs, {});
  op_case.updated_inputs = {0};
  if (spec.momentum != 0.0) op_case.updated_inputs.push_back(2);
  sy_sgd_params& params = op_case.params.sgd;
  params.lr = spec.lr;
  params.momentum = spec.momentum;
  params.dampening = spec.dampening;
  params.weight_decay = spec.weight_decay;
  params.nesterov = spec.nesterov ? 1u : 0u;
  return op_case;
}

struct AdamSpec {
  const char* name;
  double lr, beta1, beta2, epsilon, weight_decay;
  bool decoupled;
  int64_t step;
};

const AdamSpec kAdamSpecs[] = {
    {"adam/step1", 1e-2, 0.9, 0.999, 1e-8, 0.0, false, 1},
    {"adam/step10/weight_decay0.01", 1e-3, 0.9, 0.999, 1e-8, 0.01, false, 10},
    {"adamw/step1/weight_decay0.1", 1e-2, 0.9, 0.999, 1e-8, 0.1, true, 1},
    {"adamw/step500/weight_decay0.01", 3e-3, 0.8, 0.99, 1e-6, 0.01, true, 500},
};

OpCase build_adam(Generator& gen, sy_dtype dtype, const AdamSpec& spec) {
  HostTensor param = random_tensor(gen, dtype, kShape, -2.0, 2.0);
  HostTensor grad = random_tensor(gen, dtype, kShape, -1.0, 1.0);
  // The caller zeroes m and v before step 1; later steps start from earlier moments.
  const bool first = spec.step == 1;
  HostTensor m = first ? zeros(dtype, kShape) : random_tensor(gen, dtype, kShape, -0.1, 0.1);
  HostTensor v = first ? zeros(dtype, kShape) : random_tensor(gen, dtype, kShape, 1e-3, 1e-2);
  OpCase op_case = make_op_case(SY_OP_ADAM_UPDATE, {param, grad, m, v}, {});
  op_case.updated_inputs = {0, 2, 3};
  sy_adam_params& params = op_case.params.adam;
  params.lr = spec.lr;
  params.beta1 = spec.beta1;
  params.beta2 = spec.beta2;
  params.epsilon = spec.epsilon;
  params.weight_decay = spec.weight_decay;
  params.decoupled_weight_decay = spec.decoupled ? 1u : 0u;
  params.step = spec.step;
  return op_case;
}

}  // namespace

void add_optimizer_cases(CaseTable& table) {
  for (sy_dtype dtype : kFloatDtypes) {
    for (const SgdSpec& spec : kSgdSpecs) {
      add_case(table, SY_OP_SGD_UPDATE, dtype, spec.name,
               [dtype, spec](Generator& gen) { return build_sgd(gen, dtype, spec); });
    }
    for (const AdamSpec& spec : kAdamSpecs) {
      add_case(table, SY_OP_ADAM_UPDATE, dtype, spec.name,
               [dtype, spec](Generator& gen) { return build_adam(gen, dtype, spec); });
    }
  }
  // Special values: a NaN, +inf and -inf in the gradient (in a vector's lanes and in the tail)
  // reach exactly the parameters and moments that IEEE arithmetic sends them to, and no other.
  const auto with_special_gradient = [](OpCase op_case) {
    HostTensor& grad = op_case.inputs[1];
    const double values[] = {
        std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
    const size_t positions[] = {3, 7, 11, 34};
    for (size_t i = 0; i < 4; ++i) grad.storage[positions[i]] = values[i];
    return op_case;
  };
  for (sy_dtype dtype : kFloatDtypes) {
    for (const SgdSpec& spec : kSgdSpecs) {
      add_case(table, SY_OP_SGD_UPDATE, dtype, std::string("special_values/") + spec.name,
               [dtype, spec, with_special_gradient](Generator& gen) {
                 return with_special_gradient(build_sgd(gen, dtype, spec));
               });
    }
    for (const AdamSpec& spec : kAdamSpecs) {
      add_case(table, SY_OP_ADAM_UPDATE, dtype, std::string("special_values/") + spec.name,
               [dtype, spec, with_special_gradient](Generator& gen) {
                 return with_special_gradient(build_adam(gen, dtype, spec));
               });
    }
  }
}

}  // namespace switchyard::conformance
