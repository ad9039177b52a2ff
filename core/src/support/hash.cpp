// FNV-1a, 64-bit (switchyard/checkpoint.h): the one hash of checkpoints' payloads, model
// fingerprints, the weights checksum of a run's metrics and the conformance suite's case seeds.
#include <cstddef>
#include <cstdint>

#include "switchyard/checkpoint.h"

namespace switchyard {

uint64_t fnv1a64(const void* data, size_t size_bytes, uint64_t hash) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size_bytes; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace switchyard
