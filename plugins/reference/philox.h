// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC 2011), the counter-based generator behind
// RANDOM_UNIFORM and RANDOM_NORMAL. docs/ops.md fixes the counter and key layout so that every
// backend produces the same numbers.
#pragma once

#include <array>
#include <cstdint>

namespace sy_reference {

using PhiloxWords = std::array<uint32_t, 4>;

inline PhiloxWords philox4x32_10(PhiloxWords counter, std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u;
  constexpr uint32_t kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u;
  constexpr uint32_t kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t product0 = static_cast<uint64_t>(kM0) * counter[0];
    const uint64_t product1 = static_cast<uint64_t>(kM1) * counter[2];
    const auto hi0 = static_cast<uint32_t>(product0 >> 32);
    const auto lo0 = static_cast<uint32_t>(product0);
    const auto hi1 = static_cast<uint32_t>(product1 >> 32);
    const auto lo1 = static_cast<uint32_t>(product1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
    key = {key[0] + kW0, key[1] + kW1};
  }
  return counter;
}

// The words for logical element `index` of a RANDOM_* op with this seed and offset.
inline PhiloxWords philox_for_element(uint64_t seed, uint64_t offset, uint64_t index) {
  const uint64_t c = offset + index;
  return philox4x32_10({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0u, 0u},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

}  // namespace sy_reference
