// COPY between every pair of dtypes (casts), strided copies (permute, transpose, slice, broadcast,
// strided outputs), and FILL of every dtype including rounding, overflow and truncation.
#include <cmath>
#include <iomanip>
#include <sstream>

#include "conformance/cases.h"
#include "support/dtype_codec.h"

namespace switchyard::conformance {
namespace {

// Float sources: ordinary values, values below f16's normal range, and values beyond f16's
// range (which become ±inf in an f16 tensor, as docs/ops.md requires).
std::vector<double> float_source_values(Generator& gen, int64_t count) {
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i) {
    switch (i % 5) {
      case 0:
        values.push_back(gen.uniform(-1e-5, 1e-5));
        break;
      case 1:
        values.push_back(gen.uniform(-1e5, 1e5));
        break;
      default:
        values.push_back(gen.uniform(-100.0, 100.0));
        break;
    }
  }
  return values;
}

// Values whose conversion from `from` to `to` docs/ops.md defines (no NaN or out-of-range ints).
HostTensor copy_source(Generator& gen, sy_dtype from, sy_dtype to, const Shape& shape) {
  const int64_t count = shape_element_count(shape);
  if (is_floating(from)) {
    if (!is_floating(to)) return random_tensor(gen, from, shape, -1000.0, 1000.0);
    return tensor_from_values(from, shape, float_source_values(gen, count));
  }
  if (to == SY_DTYPE_F16) return random_integers(gen, from, shape, -60000, 60000);
  if (from == SY_DTYPE_I32) return random_integers(gen, from, shape, -2147483647, 2147483647);
  return random_integers(gen, from, shape, -(int64_t{1} << 50), int64_t{1} << 50);
}

OpCase build_cast(Generator& gen, sy_dtype from, sy_dtype to) {
  const Shape shape = {6, 7};
  return make_op_case(SY_OP_COPY, {copy_source(gen, from, to, shape)}, {zeros(to, shape)});
}

enum class CopyLayout {
  kPermuted,
  kTranspose,
  kSliced,
  kBroadcast,
  kPermutedOutput,
  kSlicedOutput
};

OpCase build_strided_copy(Generator& gen, sy_dtype from, sy_dtype to, CopyLayout layout) {
  const Shape shape = {3, 4, 5};
  HostTensor x = copy_source(gen, from, to, shape);
  HostTensor out = zeros(to, shape);
  switch (layout) {
    case CopyLayout::kPermuted:
      x = permuted_layout(x, {2, 0, 1});
      break;
    case CopyLayout::kTranspose:
      x = permuted_layout(x, {0, 2, 1});
      break;
    case CopyLayout::kSliced:
      x = sliced_layout(x, 1, gen);
      break;
    case CopyLayout::kBroadcast:
      x = broadcast_layout(copy_source(gen, from, to, {1, 5}), shape);
      break;
    case CopyLayout::kPermutedOutput:
      out = permuted_layout(out, {1, 2, 0});
      break;
    case CopyLayout::kSlicedOutput:
      out = sliced_layout(out, 1, gen);
      break;
  }
  return make_op_case(SY_OP_COPY, {x}, {out});
}

struct CopyLayoutVariant {
  CopyLayout layout;
  const char* name;
};

constexpr CopyLayoutVariant kCopyLayouts[] = {
    {CopyLayout::kPermuted, "permuted_input"},
    {CopyLayout::kTranspose, "transpose_last_two"},
    {CopyLayout::kSliced, "sliced_input"},
    {CopyLayout::kBroadcast, "broadcast_input"},
    {CopyLayout::kPermutedOutput, "permuted_output"},
    {CopyLayout::kSlicedOutput, "sliced_output"},
};

void add_copy_cases(CaseTable& table) {
  // The key dtype of COPY is the output's (docs/ops.md section 1).
  for (sy_dtype to : kAllDtypes) {
    for (sy_dtype from : kAllDtypes) {
      add_case(table, SY_OP_COPY, to, "cast_from_" + dtype_label(from),
               [from, to](Generator& gen) { return build_cast(gen, from, to); });
    }
    for (const CopyLayoutVariant& variant : kCopyLayouts) {
      const CopyLayout layout = variant.layout;
      add_case(table, SY_OP_COPY, to, std::string("strided/") + variant.name,
               [to, layout](Generator& gen) { return build_strided_copy(gen, to, to, layout); });
    }
  }
  add_case(table, SY_OP_COPY, SY_DTYPE_BF16, "strided/permuted_input/cast_from_f32",
           [](Generator& gen) {
             return build_strided_copy(gen, SY_DTYPE_F32, SY_DTYPE_BF16, CopyLayout::kPermuted);
           });
}

OpCase build_fill(Generator& gen, sy_dtype dtype, double value, bool sliced, Shape shape) {
  HostTensor out = zeros(dtype, std::move(shape));
  if (sliced) out = sliced_layout(out, 1, gen);
  OpCase op_case = make_op_case(SY_OP_FILL, {}, {out});
  op_case.params.fill.value = value;
  return op_case;
}

struct FillVariant {
  const char* name;
  double value;
  bool sliced;
  Shape shape;
};

const FillVariant kFillVariants[] = {
    {"value_0.1", 0.1, false, {5, 7}},
    {"value_-3.7", -3.7, false, {5, 7}},
    {"value_7.9/sliced_output", 7.9, true, {3, 4}},
    {"value_1e5/rank0", 1e5, false, {}},           // ±inf in f16
    {"value_1.00390625", 1.00390625, false, {9}},  // a bf16 tie: rounds to even (1.0)
};

void add_fill_cases(CaseTable& table) {
  for (sy_dtype dtype : kAllDtypes) {
    for (const FillVariant& variant : kFillVariants) {
      add_case(table, SY_OP_FILL, dtype, variant.name, [dtype, variant](Generator& gen) {
        return build_fill(gen, dtype, variant.value, variant.sliced, variant.shape);
      });
    }
  }
}

// A drawn COPY: rank 0 to 5 (the last axis up to 40, the others up to 6; one in six 40,000 to
// 300,000 elements), any source and destination dtype, the source dense, stored in another axis
// order, inside a padded buffer or broadcast with stride 0 (OperandLayout), the destination dense,
// in another axis order or inside a padded buffer.
struct DrawnCopySpec {
  sy_dtype from = SY_DTYPE_F32;
  Shape shape;
  OperandLayout in, out;  // out never broadcast
};

DrawnCopySpec draw_copy_spec(Generator& g, std::string& text) {
  DrawnCopySpec spec;
  spec.from = draw_any_dtype(g);
  if (chance(g, 0.17)) {
    spec.shape = draw_large_shape(g, static_cast<size_t>(g.integer(1, 4)));
  } else {
    spec.shape = draw_shape(g, static_cast<size_t>(g.integer(0, 5)), 40, 6);
  }
  text = "from_" + dtype_label(spec.from) + "/" + join_extents(spec.shape);
  spec.in = draw_operand_layout(g, spec.shape, "in", text);
  spec.out = draw_operand_layout(g, spec.shape, "out", text, false);
  return spec;
}

OpCase build_drawn_copy(Generator& gen, sy_dtype to, const DrawnCopySpec& spec) {
  const Shape& source = spec.in.source.empty() ? spec.shape : spec.in.source;
  HostTensor x = lay_out_operand(gen, copy_source(gen, spec.from, to, source), spec.in, spec.shape);
  HostTensor out = lay_out_operand(gen, zeros(to, spec.shape), spec.out, spec.shape);
  return make_op_case(SY_OP_COPY, {x}, {out});
}

// A drawn FILL: any dtype, a shape as COPY's, the output dense, in another axis order or inside a
// padded buffer. Float values span 1e-8 to 1e6 in magnitude (f16's subnormals and overflow to inf
// included), zero one time in ten; integer values are non-integral where truncation shows, within
// I32's range, and for I64 up to 2^53 (exact in the double the parameter is).
struct DrawnFillSpec {
  Shape shape;
  OperandLayout out;
  double value = 0.0;
};

double draw_fill_value(Generator& g, sy_dtype dtype) {
  const double sign = chance(g, 0.5) ? -1.0 : 1.0;
  if (dtype == SY_DTYPE_I32 || dtype == SY_DTYPE_I64) {
    if (chance(g, 0.5)) return sign * g.uniform(0.0, 1000.0);
    const double high = dtype == SY_DTYPE_I32 ? 2147483647.0 : 9007199254740992.0;
    return std::floor(sign * g.uniform(0.0, high)) + (chance(g, 0.5) ? 0.5 : 0.0);
  }
  if (chance(g, 0.1)) return 0.0;
  return sign * std::pow(10.0, g.uniform(-8.0, 6.0));
}

DrawnFillSpec draw_fill_spec(Generator& g, sy_dtype dtype, std::string& text) {
  DrawnFillSpec spec;
  if (chance(g, 0.17)) {
    spec.shape = draw_large_shape(g, static_cast<size_t>(g.integer(1, 4)));
  } else {
    spec.shape = draw_shape(g, static_cast<size_t>(g.integer(0, 5)), 40, 6);
  }
  spec.value = draw_fill_value(g, dtype);
  std::ostringstream value;
  value << std::setprecision(17) << spec.value;
  text = join_extents(spec.shape) + "/value_" + value.str();
  spec.out = draw_operand_layout(g, spec.shape, "out", text, false);
  return spec;
}

OpCase build_drawn_fill(Generator& gen, sy_dtype dtype, const DrawnFillSpec& spec) {
  HostTensor out = lay_out_operand(gen, zeros(dtype, spec.shape), spec.out, spec.shape);
  OpCase op_case = make_op_case(SY_OP_FILL, {}, {out});
  op_case.params.fill.value = spec.value;
  return op_case;
}

}  // namespace

void add_drawn_data_cases(CaseTable& table, uint64_t seed, int count) {
  // COPY's key dtype is the destination's.
  add_drawn_op(
      table, seed, count, SY_OP_COPY,
      [](Generator& g, sy_dtype to, std::string& text) {
        const DrawnCopySpec spec = draw_copy_spec(g, text);
        return [to, spec](Generator& gen) { return build_drawn_copy(gen, to, spec); };
      },
      draw_any_dtype);
  add_drawn_op(
      table, seed, count, SY_OP_FILL,
      [](Generator& g, sy_dtype dtype, std::string& text) {
        const DrawnFillSpec spec = draw_fill_spec(g, dtype, text);
        return [dtype, spec](Generator& gen) { return build_drawn_fill(gen, dtype, spec); };
      },
      draw_any_dtype);
}

void add_data_cases(CaseTable& table) {
  add_copy_cases(table);
  add_fill_cases(table);
}

}  // namespace switchyard::conformance
