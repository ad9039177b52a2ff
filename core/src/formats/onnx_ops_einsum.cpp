// ONNX Einsum (opset 12), composed of switchyard's op set (formats/onnx_ops_internal.h): a
// subscript repeated within an operand takes its diagonal, then the operands are combined pairwise,
// left to right, each pair as one batched MATMUL between permuted and reshaped views; a subscript
// that no later operand or the output needs is summed away first.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "formats/onnx_ops_internal.h"
#include "switchyard/device.h"
#include "switchyard/ops.h"

namespace switchyard::onnx_detail {

namespace {

// One operand (or partial result): its tensor and one subscript per axis.
struct Labeled {
  Tensor t;
  std::string labels;
};

// The equation with "..." expanded into the digits '0' to '9' (right-aligned, as numpy broadcasts
// them) and the output made explicit where the equation leaves it out (the ellipsis, then the
// subscripts that appear once, in alphabetical order).
struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

std::string without_spaces(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch != ' ') out.push_back(ch);
  }
  return out;
}

std::vector<std::string> split_terms(const std::string& text) {
  std::vector<std::string> terms(1);
  for (const char ch : text) {
    if (ch == ',')
      terms.emplace_back();
    else
      terms.back().push_back(ch);
  }
  return terms;
}

bool is_subscript(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

// `term` with its "..." replaced by the last `count` of the `width` ellipsis digits.
std::string expand_ellipsis(const NodeContext& c, const std::string& term, size_t count,
                            size_t width) {
  const size_t at = term.find("...");
  if (at == std::string::npos) return term;
  if (term.find("...", at + 3) != std::string::npos) c.fail("a term has two ellipses");
  std::string digits;
  for (size_t k = width - count; k < width; ++k) digits.push_back(static_cast<char>('0' + k));
  return term.substr(0, at) + digits + term.substr(at + 3);
}

Equation parse(const NodeContext& c, const std::string& text, const std::vector<int>& ranks) {
  const std::string eq = without_spaces(text);
  const size_t arrow = eq.find("->");
  std::vector<std::string> inputs = split_terms(eq.substr(0, arrow));
  if (inputs.size() != ranks.size())
    c.fail("the equation has " + std::to_string(inputs.size()) + " operands, the node " +
           std::to_string(ranks.size()));
  // The ellipsis' width: the most axes any operand gives it.
  std::vector<size_t> ellipsis(inputs.size(), 0);
  size_t width = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string& term = inputs[k];
    size_t letters = 0;
    for (const char ch : term) {
      if (is_subscript(ch))
        ++letters;
      else if (ch != '.')
        c.fail(std::string("subscript '") + ch + "' is not a letter");
    }
    const bool has = term.find("...") != std::string::npos;
    const auto rank = static_cast<size_t>(ranks[k]);
    if (has ? letters > rank : letters != rank)
      c.fail("term " + std::to_string(k) + " '" + term + "' does not fit rank " +
             std::to_string(rank));
    ellipsis[k] = has ? rank - letters : 0;
    width = std::max(width, ellipsis[k]);
  }
  if (width > 10) c.fail("an ellipsis of more than 10 axes");
  Equation out;
  for (size_t k = 0; k < inputs.size(); ++k)
    out.inputs.push_back(expand_ellipsis(c, inputs[k], ellipsis[k], width));
  if (arrow != std::string::npos) {
    const std::string term = eq.substr(arrow + 2);
    out.output = expand_ellipsis(c, term, width, width);
    for (const char ch : out.output) {
      if (std::count(out.output.begin(), out.output.end(), ch) > 1)
        c.fail("the output repeats a subscript");
      bool found = false;
      for (const std::string& in : out.inputs) found = found || in.find(ch) != std::string::npos;
      if (!found) c.fail(std::string("output subscript '") + ch + "' is in no operand");
    }
    return out;
  }
  std::map<char, int> counts;
  for (const std::string& in : out.inputs) {
    for (const char ch : in) ++counts[ch];
  }
  for (size_t k = 0; k < width; ++k) out.output.push_back(static_cast<char>('0' + k));
  for (const auto& [ch, n] : counts) {  // letters sort after digits: the map's order
    if (is_subscript(ch) && n == 1) out.output.push_back(ch);
  }
  return out;
}

// x with a subscript that it repeats ("ii", a diagonal) taken once: the two axes moved last,
// folded into one of n * n and the positions k (n + 1) picked by INDEX_SELECT; again while a
// subscript repeats.
Labeled diagonals(const NodeContext& c, Labeled x) {
  for (size_t p = 0; p < x.labels.size(); ++p) {
    const size_t q = x.labels.find(x.labels[p], p + 1);
    if (q == std::string::npos) continue;
    const int64_t n = x.t.dim(static_cast<int>(p));
    if (x.t.dim(static_cast<int>(q)) != n)
      c.fail(std::string("repeated subscript '") + x.labels[p] + "' has extents " +
             std::to_string(n) + " and " + std::to_string(x.t.dim(static_cast<int>(q))));
    std::string rest;
    std::vector<int> perm;
    Ints shape;
    for (size_t a = 0; a < x.labels.size(); ++a) {
      if (a != p && a != q) {
        rest.push_back(x.labels[a]);
        perm.push_back(static_cast<int>(a));
        shape.push_back(x.t.dim(static_cast<int>(a)));
      }
    }
    perm.push_back(static_cast<int>(p));
    perm.push_back(static_cast<int>(q));
    shape.push_back(n * n);
    std::vector<int64_t> picks(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) picks[static_cast<size_t>(k)] = k * (n + 1);
    const Tensor positions = Tensor::from_host(picks, Shape{n}, x.t.device());
    const Tensor folded = reshaped(c, x.t.permute(perm).contiguous(), shape);
    return diagonals(c, {index_select(folded, static_cast<int>(shape.size()) - 1, positions),
                         rest + x.labels[p]});
  }
  return x;
}

// Sums away the axes of `x` whose subscripts `keep` does not hold.
Labeled sum_unneeded(Labeled x, const std::string& keep) {
  std::vector<int> axes;
  std::string labels;
  for (size_t a = 0; a < x.labels.size(); ++a) {
    if (keep.find(x.labels[a]) == std::string::npos)
      axes.push_back(static_cast<int>(a));
    else
      labels.push_back(x.labels[a]);
  }
  if (axes.empty()) return x;
  return {sum(x.t, axes, false), labels};
}

// x's axes in the order of `labels` (each of which x has).
Tensor permuted(const Labeled& x, const std::string& labels) {
  std::vector<int> perm;
  for (const char ch : labels) perm.push_back(static_cast<int>(x.labels.find(ch)));
  return x.t.permute(perm);
}

int64_t extent(const Labeled& x, char label) {
  return x.t.dim(static_cast<int>(x.labels.find(label)));
}

// a and b combined into one operand with the subscripts `keep` needs: the shared subscripts that
// are kept are the batch, the shared ones that are not are contracted, as one batched product
// [batch, M, K] x [batch, K, N]. A batch extent of 1 broadcasts against the other operand's.
Labeled combine(const NodeContext& c, const Labeled& a, const Labeled& b, const std::string& keep) {
  std::string batch, contract, a_free, b_free;
  for (const char ch : a.labels) {
    if (b.labels.find(ch) == std::string::npos)
      a_free.push_back(ch);
    else if (keep.find(ch) != std::string::npos)
      batch.push_back(ch);
    else
      contract.push_back(ch);
  }
  for (const char ch : b.labels) {
    if (a.labels.find(ch) == std::string::npos) b_free.push_back(ch);
  }
  Ints batch_shape, a_shape, b_shape;
  int64_t m = 1, n = 1, k = 1;
  for (const char ch : batch) {
    const int64_t ea = extent(a, ch), eb = extent(b, ch);
    if (ea != eb && ea != 1 && eb != 1)
      c.fail(std::string("subscript '") + ch + "' has extents " + std::to_string(ea) + " and " +
             std::to_string(eb));
    batch_shape.push_back(std::max(ea, eb));
  }
  for (const char ch : contract) {
    if (extent(a, ch) != extent(b, ch))
      c.fail(std::string("contracted subscript '") + ch + "' has extents " +
             std::to_string(extent(a, ch)) + " and " + std::to_string(extent(b, ch)));
    k *= extent(a, ch);
  }
  Ints out_shape = batch_shape;
  for (const char ch : a_free) {
    m *= extent(a, ch);
    out_shape.push_back(extent(a, ch));
  }
  for (const char ch : b_free) {
    n *= extent(b, ch);
    out_shape.push_back(extent(b, ch));
  }
  check_size(c, out_shape);
  // Each operand permuted to [batch, free, contract] / [batch, contract, free], its batch axes
  // expanded to the common extents, and folded to rank 3.
  const auto folded = [&](const Labeled& x, const std::string& order, int64_t rows, int64_t cols) {
    Tensor t = permuted(x, order);
    Ints full = batch_shape;
    for (size_t i = batch.size(); i < order.size(); ++i) full.push_back(t.dim(static_cast<int>(i)));
    t = t.expand(to_shape(c, full));
    return t.contiguous().reshape(Shape{numel_of(batch_shape), rows, cols});
  };
  const Tensor left = folded(a, batch + a_free + contract, m, k);
  const Tensor right = folded(b, batch + contract + b_free, k, n);
  return {reshaped(c, matmul(left, right), out_shape), batch + a_free + b_free};
}

}  // namespace

void device_einsum(NodeContext& c) {
  std::vector<int> ranks;
  for (size_t k = 0; k < c.input_count(); ++k) ranks.push_back(static_cast<int>(c.shape(k).size()));
  if (ranks.empty()) c.fail("needs at least one operand");
  const Equation eq = parse(c, c.attr_string("equation", ""), ranks);
  std::vector<Labeled> operands;
  for (size_t k = 0; k < eq.inputs.size(); ++k) {
    operands.push_back(diagonals(c, {dev_float(c, k), eq.inputs[k]}));
  }
  // What the operands after `k`, and the output, still need.
  const auto needed_after = [&](size_t k) {
    std::string keep = eq.output;
    for (size_t j = k + 1; j < operands.size(); ++j) keep += operands[j].labels;
    return keep;
  };
  Labeled result = sum_unneeded(operands[0], needed_after(0));
  for (size_t k = 1; k < operands.size(); ++k) {
    const std::string keep = needed_after(k);
    const Labeled next = sum_unneeded(operands[k], keep + result.labels);
    result = combine(c, sum_unneeded(result, keep + next.labels), next, keep);
  }
  result = sum_unneeded(result, eq.output);
  c.set_device(0, permuted(result, eq.output).contiguous(), c.type(0));
}

}  // namespace switchyard::onnx_detail
