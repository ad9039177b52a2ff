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

OpCase build_sgd(Generator& gen, sy_dtype dtype, const SgdSpec& spec, const Shape& shape = kShape) {
  std::vector<HostTensor> inputs = {random_tensor(gen, dtype, shape, -2.0, 2.0),
                                    random_tensor(gen, dtype, shape, -1.0, 1.0)};
  // A non-zero buffer stands for a later step.
  if (spec.momentum != 0.0) inputs.push_back(random_tensor(gen, dtype, shape, -0.5, 0.5));
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

OpCase build_adam(Generator& gen, sy_dtype dtype, const AdamSpec& spec,
                  const Shape& shape = kShape) {
  HostTensor param = random_tensor(gen, dtype, shape, -2.0, 2.0);
  HostTensor grad = random_tensor(gen, dtype, shape, -1.0, 1.0);
  // The caller zeroes m and v before step 1; later steps start from earlier moments.
  const bool first = spec.step == 1;
  HostTensor m = first ? zeros(dtype, shape) : random_tensor(gen, dtype, shape, -0.1, 0.1);
  HostTensor v = first ? zeros(dtype, shape) : random_tensor(gen, dtype, shape, 1e-3, 1e-2);
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

// A drawn parameter tensor: rank 1 to 3 (the last axis up to 300, the others up to 8), or one in
// four 40,000 to 300,000 elements (split between threads).
Shape draw_parameter_shape(Generator& g) {
  const auto rank = static_cast<size_t>(g.integer(1, 3));
  return chance(g, 0.25) ? draw_large_shape(g, rank) : draw_shape(g, rank, 300, 8);
}

std::string number_text(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  return text.back() == '.' ? text + "0" : text;
}

// A drawn SGD_UPDATE: learning rate, momentum (none a quarter of the time), dampening, weight
// decay and nesterov (with momentum and no dampening, as PyTorch allows it) all drawn.
SgdSpec draw_sgd_spec(Generator& g, std::string& text) {
  SgdSpec spec{};
  spec.name = "";
  spec.lr = g.uniform(1e-3, 0.5);
  spec.momentum = chance(g, 0.25) ? 0.0 : g.uniform(0.1, 0.99);
  spec.dampening = chance(g, 0.5) ? 0.0 : g.uniform(0.0, 0.5);
  spec.weight_decay = chance(g, 0.5) ? 0.0 : g.uniform(0.0, 0.1);
  spec.nesterov = spec.momentum != 0.0 && spec.dampening == 0.0 && chance(g, 0.5);
  text += "lr" + number_text(spec.lr) + "/momentum" + number_text(spec.momentum) + "/dampening" +
          number_text(spec.dampening) + "/weight_decay" + number_text(spec.weight_decay) +
          (spec.nesterov ? "/nesterov" : "");
  return spec;
}

// A drawn ADAM_UPDATE: Adam or AdamW, step 1 to 10,000, betas, epsilon and weight decay drawn.
AdamSpec draw_adam_spec(Generator& g, std::string& text) {
  AdamSpec spec{};
  spec.name = "";
  spec.lr = g.uniform(1e-4, 1e-1);
  spec.beta1 = g.uniform(0.5, 0.95);
  spec.beta2 = g.uniform(0.9, 0.9999);
  spec.epsilon = chance(g, 0.5) ? 1e-8 : 1e-6;
  spec.weight_decay = chance(g, 0.5) ? 0.0 : g.uniform(0.0, 0.1);
  spec.decoupled = chance(g, 0.5);
  spec.step = chance(g, 0.25) ? 1 : g.integer(2, 10000);
  text += std::string(spec.decoupled ? "adamw" : "adam") + "/step" + std::to_string(spec.step) +
          "/lr" + number_text(spec.lr) + "/betas" + number_text(spec.beta1) + "_" +
          number_text(spec.beta2) + "/weight_decay" + number_text(spec.weight_decay);
  return spec;
}

}  // namespace

void add_drawn_optimizer_cases(CaseTable& table, uint64_t seed, int count) {
  // Both ops: a parameter shape, then the optimizer's own hyperparameters.
  const auto add = [&](sy_op op, auto draw_spec, auto build) {
    add_drawn_op(table, seed, count, op,
                 [draw_spec, build](Generator& g, sy_dtype dtype, std::string& text) {
                   const Shape shape = draw_parameter_shape(g);
                   text = join_extents(shape) + "/";
                   const auto spec = draw_spec(g, text);
                   return [dtype, spec, shape, build](Generator& gen) {
                     return build(gen, dtype, spec, shape);
                   };
                 });
  };
  add(SY_OP_SGD_UPDATE, draw_sgd_spec, build_sgd);
  add(SY_OP_ADAM_UPDATE, draw_adam_spec, build_adam);
}

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
