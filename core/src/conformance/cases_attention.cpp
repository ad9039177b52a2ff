// SCALED_DOT_PRODUCT_ATTENTION and its backward: from one query and key up to a BERT-base head
// (128 x 128, D 64, 12 heads); Tq != Tk and D != Dv; causal (also with Tq < Tk, top-left);
// additive masks stored whole, as key padding ([B, 1, 1, Tk] broadcast, -inf on padded keys) and as
// one [Tq, Tk] matrix for every batch and head; dropout; q, k and v stored [B, T, H, D] (the
// permuted view a [B, T, E] projection split into heads is) and out written into a padded view.
// The backward's out and lse are the forward's, computed here in double.
#include <cmath>
#include <limits>

#include "conformance/cases.h"
#include "switchyard/plugin_support/philox.h"

namespace switchyard::conformance {
namespace {

enum class MaskKind { kNone, kFull, kPadding, kMatrix };

// How q, k and v are stored: dense [B, H, T, D]; kStrided as [B, T, H, D] (the heads split from a
// projection's output); kPacked as slots 0, 1 and 2 of [B, T, 3, H, D] (q, k and v split from
// one fused in-projection's output, rows 3 H D apart, as an exported BERT's attention reads them).
enum class Layout { kDense, kStrided, kPacked };

struct AttentionSpec {
  const char* name;
  int64_t b, h, tq, tk, d, dv;
  bool causal;
  MaskKind mask;
  double dropout;
  Layout layout;
};

const AttentionSpec kSpecs[] = {
    {"1x1x1x1x1", 1, 1, 1, 1, 1, 1, false, MaskKind::kNone, 0.0, Layout::kDense},
    {"2x3x5x7x4x6", 2, 3, 5, 7, 4, 6, false, MaskKind::kNone, 0.0, Layout::kDense},
    {"2x2x9x9x8/causal", 2, 2, 9, 9, 8, 8, true, MaskKind::kNone, 0.0, Layout::kDense},
    {"2x2x6x11x8/mask", 2, 2, 6, 11, 8, 8, false, MaskKind::kFull, 0.0, Layout::kDense},
    {"3x2x7x10x16/padding", 3, 2, 7, 10, 16, 16, false, MaskKind::kPadding, 0.0, Layout::kDense},
    {"2x4x16x16x8/causal/padding", 2, 4, 16, 16, 8, 8, true, MaskKind::kPadding, 0.0,
     Layout::kDense},
    {"2x2x12x12x8/causal/matrix", 2, 2, 12, 12, 8, 8, true, MaskKind::kMatrix, 0.0, Layout::kDense},
    {"2x2x24x40x32/causal/short-queries", 2, 2, 24, 40, 32, 32, true, MaskKind::kNone, 0.0,
     Layout::kDense},
    {"1x2x33x70x64/strided", 1, 2, 33, 70, 64, 64, false, MaskKind::kPadding, 0.0,
     Layout::kStrided},
    {"2x2x8x12x8/dropout", 2, 2, 8, 12, 8, 8, false, MaskKind::kNone, 0.3, Layout::kDense},
    {"2x2x16x16x16/causal/dropout", 2, 2, 16, 16, 16, 16, true, MaskKind::kNone, 0.1,
     Layout::kDense},
    {"1x12x128x128x64", 1, 12, 128, 128, 64, 64, false, MaskKind::kNone, 0.0, Layout::kDense},
    {"1x3x100x100x64/causal/strided", 1, 3, 100, 100, 64, 64, true, MaskKind::kNone, 0.0,
     Layout::kStrided},
    // Over 8 MB of scores per batch entry: onednn's tiled path instead of its batched one.
    {"1x2x1100x1000x8/padding", 1, 2, 1100, 1000, 8, 8, false, MaskKind::kPadding, 0.0,
     Layout::kDense},
    {"1x2x1030x1030x8/causal/dropout/strided", 1, 2, 1030, 1030, 8, 8, true, MaskKind::kNone, 0.2,
     Layout::kStrided},
    {"2x2x9x9x8/causal/packed", 2, 2, 9, 9, 8, 8, true, MaskKind::kNone, 0.0, Layout::kPacked},
    {"2x3x20x20x16/padding/packed", 2, 3, 20, 20, 16, 16, false, MaskKind::kPadding, 0.0,
     Layout::kPacked},
    {"1x12x128x128x64/packed", 1, 12, 128, 128, 64, 64, false, MaskKind::kNone, 0.0,
     Layout::kPacked},
};

constexpr uint64_t kSeed = 0x5eed5eed1234ull;
constexpr uint64_t kOffset = 4096;

// [B, H, T, D] logical, stored as spec.layout says (q in slot 0 of a packed row, k 1, v 2). The
// packed storage's other slots hold junk that a correct op never reads.
HostTensor heads_tensor(Generator& gen, sy_dtype dtype, const AttentionSpec& spec, int64_t t,
                        int64_t d, double range, int64_t slot) {
  HostTensor dense = random_tensor(gen, dtype, {spec.b, spec.h, t, d}, -range, range);
  switch (spec.layout) {
    case Layout::kDense:
      return dense;
    case Layout::kStrided:
      return permuted_layout(dense, {0, 2, 1, 3});
    case Layout::kPacked:
      break;
  }
  const int64_t row = 3 * spec.h * d;
  return strided_layout(dense, {t * row, d, row, 1}, slot * spec.h * d, spec.b * t * row, gen);
}

HostTensor mask_tensor(Generator& gen, sy_dtype dtype, const AttentionSpec& spec) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<int64_t> scores{spec.b, spec.h, spec.tq, spec.tk};
  switch (spec.mask) {
    case MaskKind::kFull:
      return random_tensor(gen, dtype, scores, -2.0, 2.0);
    case MaskKind::kPadding: {
      // Batch entry n keeps its first tk - n * tk / (2 b) keys (at least one), as padded
      // sequences of different lengths would.
      std::vector<double> values(static_cast<size_t>(spec.b * spec.tk), 0.0);
      for (int64_t n = 0; n < spec.b; ++n) {
        const int64_t kept = std::max<int64_t>(1, spec.tk - n * spec.tk / (2 * spec.b));
        for (int64_t j = kept; j < spec.tk; ++j) {
          values[static_cast<size_t>(n * spec.tk + j)] = -inf;
        }
      }
      return broadcast_layout(tensor_from_values(dtype, {spec.b, 1, 1, spec.tk}, values), scores);
    }
    case MaskKind::kMatrix:
      return broadcast_layout(random_tensor(gen, dtype, {spec.tq, spec.tk}, -1.0, 1.0), scores);
    case MaskKind::kNone:
      break;
  }
  return HostTensor{};
}

sy_attention_params attention_params(const AttentionSpec& spec, double scale) {
  sy_attention_params p{};
  p.scale = scale;
  p.dropout_p = spec.dropout;
  p.seed = kSeed;
  p.offset = kOffset;
  p.causal = spec.causal ? 1 : 0;
  p.has_mask = spec.mask == MaskKind::kNone ? 0 : 1;
  return p;
}

// The forward in double from the stored values: out [B, H, Tq, Dv] and lse [B, H, Tq].
void host_forward(const AttentionSpec& spec, const sy_attention_params& p, const HostTensor& q,
                  const HostTensor& k, const HostTensor& v, const HostTensor* mask,
                  std::vector<double>& out, std::vector<double>& lse) {
  const std::vector<double> qv = q.logical_values(), kv = k.logical_values();
  const std::vector<double> vv = v.logical_values();
  const std::vector<double> mv = mask != nullptr ? mask->logical_values() : std::vector<double>();
  out.assign(static_cast<size_t>(spec.b * spec.h * spec.tq * spec.dv), 0.0);
  lse.assign(static_cast<size_t>(spec.b * spec.h * spec.tq), 0.0);
  std::vector<double> s(static_cast<size_t>(spec.tk));
  for (int64_t bh = 0; bh < spec.b * spec.h; ++bh) {
    for (int64_t i = 0; i < spec.tq; ++i) {
      const int64_t row = bh * spec.tq + i;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < spec.tk; ++j) {
        double dot = 0.0;
        for (int64_t x = 0; x < spec.d; ++x) {
          dot += qv[static_cast<size_t>(row * spec.d + x)] *
                 kv[static_cast<size_t>((bh * spec.tk + j) * spec.d + x)];
        }
        double value = dot * p.scale;
        if (!mv.empty()) value += mv[static_cast<size_t>(row * spec.tk + j)];
        if (spec.causal && j > i) value = -std::numeric_limits<double>::infinity();
        s[static_cast<size_t>(j)] = value;
        m = std::max(m, value);
      }
      double sum = 0.0;
      for (double& value : s) sum += (value = std::exp(value - m));
      lse[static_cast<size_t>(row)] = m + std::log(sum);
      for (int64_t j = 0; j < spec.tk; ++j) {
        double weight = s[static_cast<size_t>(j)] / sum;
        if (p.dropout_p > 0.0) {
          const auto counter = static_cast<uint64_t>(row * spec.tk + j);
          const float u = sy_unit_float(sy_philox_for_element(p.seed, p.offset, counter).w[0]);
          weight *= u > static_cast<float>(p.dropout_p) ? 1.0 / (1.0 - p.dropout_p) : 0.0;
        }
        for (int64_t x = 0; x < spec.dv; ++x) {
          out[static_cast<size_t>(row * spec.dv + x)] +=
              weight * vv[static_cast<size_t>((bh * spec.tk + j) * spec.dv + x)];
        }
      }
    }
  }
}

OpCase build_forward(Generator& gen, sy_dtype dtype, const AttentionSpec& spec, bool with_lse) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(spec.d));
  std::vector<HostTensor> inputs{heads_tensor(gen, dtype, spec, spec.tq, spec.d, 2.0, 0),
                                 heads_tensor(gen, dtype, spec, spec.tk, spec.d, 2.0, 1),
                                 heads_tensor(gen, dtype, spec, spec.tk, spec.dv, 1.0, 2)};
  if (spec.mask != MaskKind::kNone) inputs.push_back(mask_tensor(gen, dtype, spec));
  HostTensor out = zeros(dtype, {spec.b, spec.h, spec.tq, spec.dv});
  if (spec.layout != Layout::kDense) out = sliced_layout(out, 2, gen);
  std::vector<HostTensor> outputs{out};
  if (with_lse) outputs.push_back(zeros(SY_DTYPE_F32, {spec.b, spec.h, spec.tq}));
  OpCase op_case =
      make_op_case(SY_OP_SCALED_DOT_PRODUCT_ATTENTION, std::move(inputs), std::move(outputs));
  op_case.params.attention = attention_params(spec, scale);
  return op_case;
}

OpCase build_backward(Generator& gen, sy_dtype dtype, const AttentionSpec& spec) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(spec.d));
  const sy_attention_params p = attention_params(spec, scale);
  const HostTensor q = heads_tensor(gen, dtype, spec, spec.tq, spec.d, 2.0, 0);
  const HostTensor k = heads_tensor(gen, dtype, spec, spec.tk, spec.d, 2.0, 1);
  const HostTensor v = heads_tensor(gen, dtype, spec, spec.tk, spec.dv, 1.0, 2);
  const HostTensor mask = mask_tensor(gen, dtype, spec);
  const bool has_mask = spec.mask != MaskKind::kNone;
  std::vector<double> out, lse;
  host_forward(spec, p, q, k, v, has_mask ? &mask : nullptr, out, lse);
  const std::vector<int64_t> out_shape{spec.b, spec.h, spec.tq, spec.dv};
  std::vector<HostTensor> inputs{random_tensor(gen, dtype, out_shape, -1.0, 1.0),
                                 q,
                                 k,
                                 v,
                                 tensor_from_values(dtype, out_shape, out),
                                 tensor_from_values(SY_DTYPE_F32, {spec.b, spec.h, spec.tq}, lse)};
  if (has_mask) inputs.push_back(mask);
  std::vector<HostTensor> outputs{zeros(dtype, {spec.b, spec.h, spec.tq, spec.d}),
                                  zeros(dtype, {spec.b, spec.h, spec.tk, spec.d}),
                                  zeros(dtype, {spec.b, spec.h, spec.tk, spec.dv})};
  if (spec.layout != Layout::kDense) outputs[1] = sliced_layout(outputs[1], 1, gen);
  OpCase op_case = make_op_case(SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD, std::move(inputs),
                                std::move(outputs));
  op_case.params.attention = p;
  return op_case;
}

// A drawn attention: 1 to 3 batch entries of 1 to 4 heads, 1 to 48 queries and keys (one in ten
// up to 200), head widths up to 64 (D and Dv differ a third of the time), causal, each mask kind,
// dropout from 0.1 to 0.5, and each layout (packed only where D = Dv); no backward where every
// query sees a single key.
AttentionSpec draw_attention_spec(Generator& g, bool backward, std::string& text) {
  AttentionSpec spec{};
  spec.name = "";
  spec.b = g.integer(1, 3);
  spec.h = g.integer(1, 4);
  const int64_t longest = chance(g, 0.1) ? 200 : 48;
  spec.tq = draw_extent(g, longest);
  spec.tk = chance(g, 0.5) ? spec.tq : draw_extent(g, longest);
  spec.d = draw_extent(g, 64);
  spec.dv = chance(g, 0.33) ? draw_extent(g, 64) : spec.d;
  spec.causal = chance(g, 0.3);
  // Where every query sees one key (Tk = 1, or one causal query) the softmax is 1 and its
  // gradient, so grad_q and grad_k, is exactly 0 as a difference of equal terms: both sides give
  // rounding noise that no relative tolerance can judge. The backward gets a second key or query.
  if (backward && spec.tk == 1) spec.tk = 2;
  if (backward && spec.causal && spec.tq == 1) spec.tq = 2;
  spec.mask = static_cast<MaskKind>(g.integer(0, 3));
  spec.dropout = chance(g, 0.2) ? g.uniform(0.1, 0.5) : 0.0;
  spec.layout = static_cast<Layout>(g.integer(0, spec.d == spec.dv ? 2 : 1));
  const char* const masks[] = {"", "/mask", "/padding", "/matrix"};
  const char* const layouts[] = {"", "/strided", "/packed"};
  text = join_extents({spec.b, spec.h, spec.tq, spec.tk, spec.d, spec.dv});
  if (spec.causal) text += "/causal";
  text += masks[static_cast<int>(spec.mask)];
  if (spec.dropout > 0.0) text += "/dropout" + std::to_string(spec.dropout).substr(0, 5);
  text += layouts[static_cast<int>(spec.layout)];
  return spec;
}

}  // namespace

void add_drawn_attention_cases(CaseTable& table, uint64_t seed, int count) {
  for (sy_op op :
       {SY_OP_SCALED_DOT_PRODUCT_ATTENTION, SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD}) {
    add_drawn_op(table, seed, count, op, [op](Generator& g, sy_dtype dtype, std::string& text) {
      const bool forward = op == SY_OP_SCALED_DOT_PRODUCT_ATTENTION;
      const AttentionSpec spec = draw_attention_spec(g, !forward, text);
      const bool with_lse = forward && chance(g, 0.5);
      if (with_lse) text += "/lse";
      return [forward, dtype, spec, with_lse](Generator& gen) {
        return forward ? build_forward(gen, dtype, spec, with_lse)
                       : build_backward(gen, dtype, spec);
      };
    });
  }
}

void add_attention_cases(CaseTable& table) {
  for (sy_dtype dtype : kFloatDtypes) {
    for (const AttentionSpec& spec : kSpecs) {
      add_case(table, SY_OP_SCALED_DOT_PRODUCT_ATTENTION, dtype, spec.name,
               [dtype, spec](Generator& gen) { return build_forward(gen, dtype, spec, false); });
      add_case(table, SY_OP_SCALED_DOT_PRODUCT_ATTENTION, dtype, std::string(spec.name) + "/lse",
               [dtype, spec](Generator& gen) { return build_forward(gen, dtype, spec, true); });
      add_case(table, SY_OP_SCALED_DOT_PRODUCT_ATTENTION_BACKWARD, dtype, spec.name,
               [dtype, spec](Generator& gen) { return build_backward(gen, dtype, spec); });
    }
  }
  // A mask that does not broadcast to the scores is refused by every backend.
  add_case(table, SY_OP_SCALED_DOT_PRODUCT_ATTENTION, SY_DTYPE_F32, "error/mask-shape",
           [](Generator& gen) {
             const AttentionSpec spec{
                 "", 1, 2, 3, 4, 8, 8, false, MaskKind::kNone, 0.0, Layout::kDense};
             OpCase op_case = build_forward(gen, SY_DTYPE_F32, spec, false);
             op_case.inputs.push_back(random_tensor(gen, SY_DTYPE_F32, {1, 2, 3, 5}, -1.0, 1.0));
             op_case.params.attention.has_mask = 1;
             op_case.expected_error = StatusCode::kInvalidArgument;
             return op_case;
           });
}

}  // namespace switchyard::conformance
