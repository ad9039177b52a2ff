#include "conformance/shape_util.h"

#include <algorithm>

namespace switchyard::conformance {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw std::logic_error("shapes do not broadcast: " + shape_text(a) + " and " + shape_text(b));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape reduced_shape(const Shape& shape, uint32_t axes_mask, bool keep_dims) {
  Shape out;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool reduced = (axes_mask >> i) & 1u;
    if (!reduced) {
      out.push_back(shape[i]);
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  return out;
}

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace switchyard::conformance
