// The conformance case table: what each case feeds an op and how its results are judged.
//
// Each op family registers its cases from its own file (cases_<family>.cpp). A case is a name, the
// op, the key dtype that Device::supports is asked about, and a builder that draws the inputs
// from a Generator. Building is deferred so a filtered run draws only the cases it runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "conformance/host_tensor.h"
#include "conformance/shape_util.h"
#include "conformance/value_gen.h"
#include "switchyard/plugin_abi.h"
#include "switchyard/status.h"

namespace switchyard::conformance {

// One op call, fully described on the host.
struct OpCase {
  sy_op op = SY_OP_COUNT;
  std::vector<HostTensor> inputs;
  // Initial contents matter: SCATTER_ADD accumulates into them, and elements outside an output's
  // view must be left as they were.
  std::vector<HostTensor> outputs;
  sy_op_params params{};
  // Inputs the op updates in place (optimizer ops); compared after the op like outputs.
  std::vector<size_t> updated_inputs;
  // NMSE limit for every compared tensor; negative = the op's value from docs/ops.md.
  double tolerance = -1.0;
  // RANDOM_NORMAL in f32 must also agree per element within 1e-6 * (|a| + |b| * max(1, |z|)).
  bool normal_element_bound = false;
  // Error cases: the op must fail with this code on both devices (kOk = a normal case).
  StatusCode expected_error = StatusCode::kOk;
  // The error depends on data (labels, indices), which asynchronous backends cannot check.
  bool error_needs_synchronous_backend = false;
};

struct CaseDef {
  std::string name;  // "<op>/<dtype>/<variant>", unique
  sy_op op = SY_OP_COUNT;
  sy_dtype dtype = SY_DTYPE_F32;  // the key dtype (docs/ops.md, section 1)
  std::function<OpCase(Generator&)> build;
};

using CaseTable = std::vector<CaseDef>;

// The three floating storage types every float op is tested in.
inline constexpr sy_dtype kFloatDtypes[] = {SY_DTYPE_F32, SY_DTYPE_F16, SY_DTYPE_BF16};

// Appends a case named "<op label>/<dtype label>/<variant>".
void add_case(CaseTable& table, sy_op op, sy_dtype dtype, const std::string& variant,
              std::function<OpCase(Generator&)> build);

// A case for `op` with zeroed params and the given tensors.
OpCase make_op_case(sy_op op, std::vector<HostTensor> inputs, std::vector<HostTensor> outputs);

// The NMSE limit docs/ops.md gives for `op` in `dtype` (0 = exact).
double default_tolerance(sy_op op, sy_dtype dtype);

void add_matmul_cases(CaseTable& table);
void add_unary_cases(CaseTable& table);
void add_binary_cases(CaseTable& table);
void add_reduce_cases(CaseTable& table);
void add_softmax_cases(CaseTable& table);
void add_cross_entropy_cases(CaseTable& table);
void add_conv_cases(CaseTable& table);
void add_pool_cases(CaseTable& table);
void add_layer_norm_cases(CaseTable& table);
void add_index_cases(CaseTable& table);
void add_data_cases(CaseTable& table);
void add_random_cases(CaseTable& table);
void add_optimizer_cases(CaseTable& table);
void add_lstm_cell_cases(CaseTable& table);
void add_rnn_sequence_cases(CaseTable& table);
void add_attention_cases(CaseTable& table);
// NaN, infinities and signed zeros where docs/ops.md defines the result (cases_special.cpp).
void add_special_value_cases(CaseTable& table);

// Every case, in a stable order.
CaseTable all_cases();

}  // namespace switchyard::conformance
