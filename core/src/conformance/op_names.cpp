#include "conformance/op_names.h"

#include "switchyard/dispatch.h"

namespace switchyard::conformance {

// One table of op names serves the whole project (switchyard::op_name); conformance only adds a
// stable label for values outside the table.
std::string op_label(sy_op op) {
  const auto index = static_cast<uint32_t>(op);
  if (index < SY_OP_COUNT) return op_name(op);
  return "op" + std::to_string(index);
}

}  // namespace switchyard::conformance
