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
// Every dtype: the data dtypes of COPY, FILL, GATHER and SCATTER_ADD.
inline constexpr sy_dtype kAllDtypes[] = {SY_DTYPE_F32, SY_DTYPE_F16, SY_DTYPE_BF16, SY_DTYPE_I32,
                                          SY_DTYPE_I64};

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

// Drawn cases (`switchyard conformance --drawn N`, drawn.cpp): for each op of the op set (the
// families below), N cases whose shapes, layouts, dtypes and parameters are drawn at random inside
// the op's domain (docs/ops.md), where the fixed table holds a few chosen points. Sizes lean
// towards the edges of vector widths (1 to 8, and next to multiples of 16), so that a backend's
// fast path and its tail both meet them. Case i of an op is drawn from its own generator, seeded
// from the suite seed and "drawn/<op>/<i>", and its name spells out what was drawn
// ("conv2d/f32/drawn7/n2c6..."); it is the same case whatever N is, and reruns alone with the same
// --seed and a --filter.
CaseTable drawn_cases(uint64_t seed, int count);

// Helpers for the families' draws (drawn.cpp).
Generator drawn_spec_generator(uint64_t seed, sy_op op, int index);
std::string drawn_variant(int index, const std::string& spec_text);  // "drawn<i>/<spec_text>"
bool chance(Generator& gen, double probability);
// F32 half of the time, F16 and BF16 a quarter each.
sy_dtype draw_float_dtype(Generator& gen);
// Any of kAllDtypes, each a fifth of the time (COPY, FILL, GATHER and SCATTER_ADD).
sy_dtype draw_any_dtype(Generator& gen);
// An extent in [1, high]: a third of draws in [1, 8], a third next to a multiple of 16 (16k - 1,
// 16k, 16k + 1), a third uniform.
int64_t draw_extent(Generator& gen, int64_t high);
// A random permutation of 0..rank-1 other than the identity when rank >= 2 (empty for rank < 2).
std::vector<int> draw_storage_order(Generator& gen, size_t rank);
std::string join_extents(const Shape& shape, char separator = 'x');  // "4x1x5"
// "/<label>2_0_1" for an axis order in a case name; "" for an empty order.
std::string order_text(const std::string& label, const std::vector<int>& order);
// `rank` extents from draw_extent: the last up to `last_high`, the others up to `other_high`.
Shape draw_shape(Generator& gen, size_t rank, int64_t last_high, int64_t other_high);

// How a drawn operand of some shape is stored: dense, in another axis order, inside a buffer
// padded by 1 on every axis, or broadcast with stride 0 from its own `source` shape (the shape
// with some axes 1).
struct OperandLayout {
  std::vector<int> order;  // empty: not permuted
  bool sliced = false;
  Shape source;  // empty: not broadcast
};
// One of the four, each a quarter of the time (dense where the one drawn does not apply, and
// instead of a broadcast for an output: `may_broadcast` false), its name appended to `text` after
// `role` ("/x_stored2_0_1", "/x_sliced", "/x_broadcast_from4x1").
OperandLayout draw_operand_layout(Generator& gen, const Shape& shape, const std::string& role,
                                  std::string& text, bool may_broadcast = true);
// `dense` (of layout.source's shape when broadcast, else of `shape`) laid out as `layout` says.
HostTensor lay_out_operand(Generator& gen, const HostTensor& dense, const OperandLayout& layout,
                           const Shape& shape);
// A shape of `rank` axes (>= 1) holding 40,000 to 300,000 elements, its last axis up to 1024 as
// draw_extent draws it: large enough that backends split the op between threads (onednn: from
// 32,768 elements a thread for plain loops, 16,384 for rows).
Shape draw_large_shape(Generator& gen, size_t rank);
// The NMSE limit a drawn case is judged at: docs/ops.md's, except that the ops that accumulate
// (limit 1e-10 in F32) get 1e-8 (1e-4 relative) in F32. A drawn shape can make an output one sum
// of many terms that nearly cancel (the single pixel of a 4x4 convolution over a 4x4 image, a
// weight gradient of one channel), whose F32 error against the reference's double is set by that
// condition rather than by the op (seen: NMSE 1.3e-10 and 1.1e-9 on onednn, 1.5e-10 on vulkan). A
// lost, repeated or misplaced term is still far above 1e-8; the fixed table keeps 1e-10 on shapes
// chosen to be well conditioned. Exact ops stay exact, and the ops one rounding from exact keep
// their limits, except RANDOM_NORMAL in F32 (1e-8): a few samples of a + b z can sum to near 0,
// and its per-element bound judges every sample anyway.
double drawn_tolerance(sy_op op, sy_dtype dtype);

// The loop of one op's drawn cases: case i's generator (drawn_spec_generator) and dtype
// (`draw_dtype`: draw_float_dtype, or draw_any_dtype for the ops that take integers too), then
// `draw(g, dtype, text)`, which draws the rest, appends what it drew to `text` and returns the
// case's builder.
template <typename Draw>
void add_drawn_op(CaseTable& table, uint64_t seed, int count, sy_op op, const Draw& draw,
                  sy_dtype (*draw_dtype)(Generator&) = draw_float_dtype) {
  for (int i = 0; i < count; ++i) {
    Generator g = drawn_spec_generator(seed, op, i);
    const sy_dtype dtype = draw_dtype(g);
    std::string text;
    std::function<OpCase(Generator&)> build = draw(g, dtype, text);
    add_case(table, op, dtype, drawn_variant(i, text), std::move(build));
  }
}

// Each family's drawn cases, beside its fixed ones.
void add_drawn_matmul_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_unary_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_binary_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_reduce_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_softmax_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_conv_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_pool_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_layer_norm_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_attention_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_rnn_sequence_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_data_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_index_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_cross_entropy_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_random_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_optimizer_cases(CaseTable& table, uint64_t seed, int count);
void add_drawn_lstm_cell_cases(CaseTable& table, uint64_t seed, int count);

}  // namespace switchyard::conformance
