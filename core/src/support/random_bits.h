// The host's one generator of random bits: SplitMix64 (Steele, Lea, Flood, OOPSLA 2014), the same
// numbers on every machine and standard library. Counter-based uses (training's splits, epoch
// order and dropout seeds: data/seeded_random.h) call its finaliser, mix64; sequences (the
// conformance suite's seeding, the gradient cases' values) step a state with splitmix64_next.
#pragma once

#include <cstdint>

namespace switchyard::detail {

inline constexpr uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;

// SplitMix64's output for state `x`: the gamma added, then a bijective mix with full avalanche.
inline uint64_t mix64(uint64_t x) {
  x += kSplitMix64Gamma;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The next number of the sequence that `state` is at; advances `state`.
inline uint64_t splitmix64_next(uint64_t& state) {
  const uint64_t out = mix64(state);
  state += kSplitMix64Gamma;
  return out;
}

// A double in [0, 1) from the top 53 bits of a number.
inline double unit_double(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace switchyard::detail
