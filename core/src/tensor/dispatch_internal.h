// How the tensor layer runs one op: the private side of dispatch.h.
#pragma once

#include <initializer_list>

#include "switchyard/plugin_abi.h"
#include "switchyard/tensor.h"

namespace switchyard {

// Dispatches `op` on the device of its tensors (all must share one device), through the fallback
// policy when that device lacks the op for the call's key dtype. Outputs must already exist.
// `flags` are the call's SY_CALL_* hints (the fallback path drops them: its copies are
// temporaries). Throws switchyard::Error on any failure.
void run_op(sy_op op, std::initializer_list<Tensor> inputs, std::initializer_list<Tensor> outputs,
            const sy_op_params& params = {}, uint32_t flags = 0);

// The dtype supports_op is asked with (docs/ops.md section 1): the first floating input's, else
// output 0's, else input 0's; COPY uses the output's.
sy_dtype key_dtype(const sy_op_call& call);

}  // namespace switchyard
