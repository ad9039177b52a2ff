// The built-in gradient-check cases. Private to the core.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"

namespace switchyard {

struct GradientCase {
  std::string name;
  std::string op;
  std::vector<sy_op> required_ops;  // forward and backward ops the case needs in f32
  double epsilon = 0.0;             // 0: the options' epsilon
  std::function<std::vector<Tensor>(const std::shared_ptr<Device>&)> make_inputs;
  TensorFunction function;
};

const std::vector<GradientCase>& gradient_cases();

}  // namespace switchyard
