// The Philox4x32-10 generator the cuda kernels use (switchyard/plugin_support/philox.h, shared with
// the host) against Random123's known answers and the RANDOM_UNIFORM formula of docs/ops.md.
#include <catch2/catch.hpp>

#include <cstring>

#include "switchyard/plugin_support/philox.h"

namespace {

SyPhiloxWords words(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  SyPhiloxWords w;
  w.w[0] = a;
  w.w[1] = b;
  w.w[2] = c;
  w.w[3] = d;
  return w;
}

void check_words(const SyPhiloxWords& got, const SyPhiloxWords& expected) {
  for (int i = 0; i < 4; ++i) {
    INFO("word " << i);
    CHECK(got.w[i] == expected.w[i]);
  }
}

TEST_CASE("philox4x32_10 matches Random123's known-answer vectors", "[cuda]") {
  check_words(sy_philox4x32_10(words(0, 0, 0, 0), 0, 0),
              words(0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
  check_words(sy_philox4x32_10(words(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu),
                               0xffffffffu, 0xffffffffu),
              words(0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
  check_words(sy_philox4x32_10(words(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u),
                               0xa4093822u, 0x299f31d0u),
              words(0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));
}

TEST_CASE("element i of a random tensor uses counter offset + i and the seed as key", "[cuda]") {
  const uint64_t seed = 0x299f31d0a4093822ull;
  const SyPhiloxWords direct =
      sy_philox4x32_10(words(0x243f6a88u, 0x85a308d3u, 0, 0), 0xa4093822u, 0x299f31d0u);
  const uint64_t counter = 0x85a308d3243f6a88ull;
  check_words(sy_philox_for_element(seed, counter - 5, 5), direct);
  // The 64-bit counter wraps.
  check_words(sy_philox_for_element(0, ~0ull, 1), sy_philox4x32_10(words(0, 0, 0, 0), 0, 0));
}

TEST_CASE("uniform values follow the two-rounding formula of docs/ops.md", "[cuda]") {
  CHECK(sy_unit_float(0u) == 0.0f);
  CHECK(sy_unit_float(0xffffffffu) == 1.0f - 5.9604644775390625e-08f);  // largest value below 1
  CHECK(sy_unit_float(0x80000000u) == 0.5f);
  CHECK(sy_uniform_from_unit(-1.0f, 1.0f, 0.5f) == 0.0f);
  CHECK(sy_uniform_from_unit(2.0f, 3.0f, 0.25f) == 2.25f);
  // fb - fa rounds before the product: 1e8 - 0.1 is 1e8 in f32, so u = 0.5 gives 0.1 + 5e7,
  // which rounds to 5e7 (f32 spacing there is 4).
  CHECK(sy_uniform_from_unit(0.1f, 1.0e8f, 0.5f) == 5.0e7f);
}

}  // namespace
