// Counter-based random numbers for the host side of training (splits, epoch order, dropout seeds).
//
// Every draw is a pure function of (seed, stream, counter), so nothing has hidden state to save in
// a checkpoint: a resumed run derives exactly the numbers an uninterrupted run would have used.
// The standard library's distributions are not used because their output differs between
// implementations; these functions give the same numbers everywhere.
#pragma once

#include <cstdint>

#include "support/random_bits.h"  // mix64

namespace switchyard::detail {

__extension__ typedef unsigned __int128 uint128;  // __extension__: GCC/Clang type under -Wpedantic

// A seed for one purpose (`stream`) and one position (`index`, e.g. the epoch or the step).
inline uint64_t derive_seed(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(mix64(seed) ^ stream) ^ index);
}

// A sequence of 64-bit numbers from one derived seed.
class CounterRandom {
 public:
  explicit CounterRandom(uint64_t seed) : seed_(seed) {}

  uint64_t next() { return mix64(seed_ ^ mix64(counter_++)); }

  // Uniform in [0, bound) without modulo bias (Lemire's method with rejection); bound > 0.
  uint64_t below(uint64_t bound) {
    const uint64_t threshold = (0 - bound) % bound;
    while (true) {
      const uint128 product = static_cast<uint128>(next()) * bound;
      if (static_cast<uint64_t>(product) >= threshold) return static_cast<uint64_t>(product >> 64);
    }
  }

 private:
  uint64_t seed_;
  uint64_t counter_ = 0;
};

// Stream identifiers, so that the split, the epoch order and dropout never share numbers.
inline constexpr uint64_t kSplitStream = 0x73706c6974ULL;       // "split"
inline constexpr uint64_t kEpochStream = 0x65706f6368ULL;       // "epoch"
inline constexpr uint64_t kDropoutStream = 0x64726f70ULL;       // "drop"
inline constexpr uint64_t kInitStream = 0x696e6974ULL;          // "init"
inline constexpr uint64_t kValidationStream = 0x76616c6964ULL;  // "valid"
inline constexpr uint64_t kLatentStream = 0x766165ULL;          // "vae"

}  // namespace switchyard::detail
