// Comparison of a target's results with the reference's, as docs/ops.md section 1 defines it.
#pragma once

#include <string>
#include <vector>

#include "conformance/host_tensor.h"

namespace switchyard::conformance {

struct Comparison {
  double nmse = 0.0;
  bool within_tolerance = true;
  std::string problem;  // empty when within tolerance; otherwise names the first bad element
};

// NMSE = sum((t - r)^2) / sum(r^2) (or the plain sum when sum(r^2) == 0), over the elements that
// are finite in both; NaN and ±inf must sit at the same positions in both. Integer tensors must be
// identical (NMSE reported as 1.0 when not).
Comparison compare_tensors(const HostTensor& target, const HostTensor& reference, double tolerance);

// RANDOM_NORMAL's per-element bound: |t - r| <= 1e-6 * (|a| + |b| * max(1, |z|)), z = (r - a) / b.
Comparison check_normal_element_bound(const HostTensor& target, const HostTensor& reference,
                                      double mean, double stddev);

// Elements of `after` outside its view must equal those of `before`: an op writes only its view.
Comparison check_outside_view_unchanged(const HostTensor& before, const HostTensor& after);

}  // namespace switchyard::conformance
