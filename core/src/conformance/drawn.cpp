// Drawn conformance cases (cases.h): the shared helpers and the table of every family's draws.
#include <algorithm>
#include <numeric>

#include "conformance/cases.h"
#include "conformance/op_names.h"

namespace switchyard::conformance {

Generator drawn_spec_generator(uint64_t seed, sy_op op, int index) {
  return Generator(
      Generator::seed_for_case(seed, "drawn/" + op_label(op) + "/" + std::to_string(index)));
}

std::string drawn_variant(int index, const std::string& spec_text) {
  return "drawn" + std::to_string(index) + "/" + spec_text;
}

bool chance(Generator& gen, double probability) {
  return gen.uniform(0.0, 1.0) < probability;
}

sy_dtype draw_float_dtype(Generator& gen) {
  switch (gen.integer(0, 3)) {
    case 0:
      return SY_DTYPE_F16;
    case 1:
      return SY_DTYPE_BF16;
    default:
      return SY_DTYPE_F32;
  }
}

sy_dtype draw_any_dtype(Generator& gen) {
  return kAllDtypes[gen.integer(0, 4)];
}

int64_t draw_extent(Generator& gen, int64_t high) {
  high = std::max<int64_t>(high, 1);
  switch (gen.integer(0, 2)) {
    case 0:
      return gen.integer(1, std::min<int64_t>(8, high));
    case 1: {
      if (high < 15) break;
      const int64_t multiple = 16 * gen.integer(1, (high + 1) / 16);
      return std::clamp<int64_t>(multiple + gen.integer(-1, 1), 1, high);
    }
    default:
      break;
  }
  return gen.integer(1, high);
}

std::vector<int> draw_storage_order(Generator& gen, size_t rank) {
  if (rank < 2) return {};
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  while (std::is_sorted(order.begin(), order.end())) {
    for (size_t i = rank; i > 1; --i) {
      std::swap(order[i - 1],
                order[static_cast<size_t>(gen.integer(0, static_cast<int64_t>(i) - 1))]);
    }
  }
  return order;
}

Shape draw_large_shape(Generator& gen, size_t rank) {
  const int64_t total = gen.integer(40000, 300000);
  Shape shape(std::max<size_t>(rank, 1), 1);
  shape.back() = rank <= 1 ? total : draw_extent(gen, 1024);
  int64_t rest = std::max<int64_t>(1, total / shape.back());
  for (size_t i = 0; i + 1 < shape.size(); ++i) {
    shape[i] = i + 2 == shape.size() ? rest : gen.integer(1, std::min<int64_t>(rest, 8));
    rest = std::max<int64_t>(1, rest / shape[i]);
  }
  return shape;
}

std::string order_text(const std::string& label, const std::vector<int>& order) {
  if (order.empty()) return "";
  return "/" + label + join_extents(Shape(order.begin(), order.end()), '_');
}

Shape draw_shape(Generator& gen, size_t rank, int64_t last_high, int64_t other_high) {
  Shape shape;
  for (size_t i = 0; i < rank; ++i) {
    shape.push_back(draw_extent(gen, i + 1 == rank ? last_high : other_high));
  }
  return shape;
}

OperandLayout draw_operand_layout(Generator& gen, const Shape& shape, const std::string& role,
                                  std::string& text, bool may_broadcast) {
  OperandLayout layout;
  switch (gen.integer(0, 3)) {
    case 0:
      layout.order = draw_storage_order(gen, shape.size());
      text += order_text(role + "_stored", layout.order);
      break;
    case 1:
      layout.sliced = true;
      text += "/" + role + "_sliced";
      break;
    case 2:
      if (shape.empty() || !may_broadcast) break;
      layout.source = shape;
      for (int64_t& extent : layout.source) {
        if (chance(gen, 0.5)) extent = 1;
      }
      text += "/" + role + "_broadcast_from" + join_extents(layout.source);
      break;
    default:
      break;
  }
  return layout;
}

HostTensor lay_out_operand(Generator& gen, const HostTensor& dense, const OperandLayout& layout,
                           const Shape& shape) {
  if (!layout.source.empty()) return broadcast_layout(dense, shape);
  if (!layout.order.empty()) return permuted_layout(dense, layout.order);
  return layout.sliced ? sliced_layout(dense, 1, gen) : dense;
}

std::string join_extents(const Shape& shape, char separator) {
  if (shape.empty()) return "rank0";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += separator;
    text += std::to_string(shape[i]);
  }
  return text;
}

double drawn_tolerance(sy_op op, sy_dtype dtype) {
  const double limit = default_tolerance(op, dtype);
  // A few samples of a + b z can sum to near 0, which NMSE judges against themselves; the
  // per-element bound (relative to |a| + |b| max(1, |z|)) still holds every sample to 1e-6.
  if (op == SY_OP_RANDOM_NORMAL && dtype == SY_DTYPE_F32) return 1e-8;
  return dtype == SY_DTYPE_F32 && limit >= 1e-10 ? std::max(limit, 1e-8) : limit;
}

CaseTable drawn_cases(uint64_t seed, int count) {
  CaseTable table;
  if (count <= 0) return table;
  add_drawn_matmul_cases(table, seed, count);
  add_drawn_unary_cases(table, seed, count);
  add_drawn_binary_cases(table, seed, count);
  add_drawn_reduce_cases(table, seed, count);
  add_drawn_softmax_cases(table, seed, count);
  add_drawn_conv_cases(table, seed, count);
  add_drawn_pool_cases(table, seed, count);
  add_drawn_layer_norm_cases(table, seed, count);
  add_drawn_attention_cases(table, seed, count);
  add_drawn_rnn_sequence_cases(table, seed, count);
  add_drawn_data_cases(table, seed, count);
  add_drawn_index_cases(table, seed, count);
  add_drawn_cross_entropy_cases(table, seed, count);
  add_drawn_random_cases(table, seed, count);
  add_drawn_optimizer_cases(table, seed, count);
  add_drawn_lstm_cell_cases(table, seed, count);
  for (CaseDef& def : table) {
    def.build = [build = std::move(def.build), op = def.op, dtype = def.dtype](Generator& gen) {
      OpCase op_case = build(gen);
      if (op_case.tolerance < 0.0) op_case.tolerance = drawn_tolerance(op, dtype);
      return op_case;
    };
  }
  return table;
}

}  // namespace switchyard::conformance
