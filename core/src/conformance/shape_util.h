// Shape arithmetic shared by the case files (numpy broadcasting, reduced shapes).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace switchyard::conformance {

using Shape = std::vector<int64_t>;

// The numpy broadcast of two shapes; throws std::logic_error if they are incompatible (a bug in
// the case table, reported as a failed case).
Shape broadcast_shapes(const Shape& a, const Shape& b);

// The shape left after reducing the axes in `axes_mask`.
Shape reduced_shape(const Shape& shape, uint32_t axes_mask, bool keep_dims);

std::string shape_text(const Shape& shape);  // "[4, 1, 5]"

}  // namespace switchyard::conformance
