// Names of the ABI's ops as the conformance report and the CLI print them.
#pragma once

#include <string>

#include "switchyard/plugin_abi.h"

namespace switchyard::conformance {

// "matmul", "relu_backward", "reduce_sum", ... (the enum name in lower case without SY_OP_);
// "op<number>" for a value outside the enum.
std::string op_label(sy_op op);

}  // namespace switchyard::conformance
