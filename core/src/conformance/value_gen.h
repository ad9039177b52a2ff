// Deterministic input generation for conformance cases.
//
// Every case draws its inputs from its own Generator, seeded from the suite seed and the case name,
// so a case makes the same inputs whether it runs alone (a filter) or with the whole table.
// Floating-point values are rounded to the dtype under test before they are stored, so the target
// and the reference start from identical, exactly representable inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "conformance/host_tensor.h"

namespace switchyard::conformance {

class Generator {
 public:
  explicit Generator(uint64_t seed);
  // A seed for one case: the suite seed mixed with a hash of the case name.
  static uint64_t seed_for_case(uint64_t suite_seed, const std::string& case_name);

  uint64_t next_u64();
  // Uniform in [low, high).
  double uniform(double low, double high);
  // Uniform integer in [low, high].
  int64_t integer(int64_t low, int64_t high);

 private:
  uint64_t state_[4];
};

// A contiguous tensor of values uniform in [low, high), rounded to dtype.
HostTensor random_tensor(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape, double low,
                         double high);
// Like random_tensor, but every |value| is at least `min_magnitude` (keeps inputs off kinks such as
// relu's 0 and away from the poles of div and log).
HostTensor random_tensor_away_from_zero(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape,
                                        double min_magnitude, double max_magnitude);
// Integers uniform in [low, high] stored as `dtype` (which may be floating point).
HostTensor random_integers(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape, int64_t low,
                           int64_t high);
// Pairwise distinct values (a shuffled ramp scaled by `step`), so max-type ops have no ties.
HostTensor distinct_tensor(Generator& gen, sy_dtype dtype, std::vector<int64_t> shape, double step);

// The same logical values as `dense`, stored permuted: storage is contiguous in the order
// `storage_order` (a permutation of the dims), so the view has non-contiguous strides.
HostTensor permuted_layout(const HostTensor& dense, const std::vector<int>& storage_order);
// The same logical values as `dense`, stored as a slice of a larger padded tensor: each dim has
// `pad` extra elements around it and the view starts at offset [pad, pad, ...].
HostTensor sliced_layout(const HostTensor& dense, int64_t pad, Generator& gen);
// The same logical values as `dense`, at `strides` from `offset_elements` in a storage of
// `storage_elements` whose other elements hold junk a correct op never reads (the same on every
// device): any layout a view of a larger tensor can have.
HostTensor strided_layout(const HostTensor& dense, std::vector<int64_t> strides,
                          int64_t offset_elements, int64_t storage_elements, Generator& gen);
// A view of shape `shape` over `source` (numpy alignment); source dims of size 1 get stride 0,
// which the ABI allows on inputs.
HostTensor broadcast_layout(const HostTensor& source, const std::vector<int64_t>& shape);

}  // namespace switchyard::conformance
