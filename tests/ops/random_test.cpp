// RANDOM_UNIFORM / RANDOM_NORMAL against an independent Philox4x32-10 written here from Salmon et
// al., "Parallel random numbers: as easy as 1, 2, 3" (SC 2011), checked first against Random123's
// known-answer vectors.
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "ops/op_harness.h"

namespace switchyard::op_test {
namespace {

using Counter = std::array<uint32_t, 4>;
using Key = std::array<uint32_t, 2>;

// One Philox round: two 32x32 -> 64-bit products mixed with the other words and the key.
Counter philox_round(const Counter& c, const Key& k) {
  const uint64_t product0 = uint64_t{0xD2511F53u} * c[0];
  const uint64_t product1 = uint64_t{0xCD9E8D57u} * c[2];
  const auto hi0 = static_cast<uint32_t>(product0 >> 32);
  const auto lo0 = static_cast<uint32_t>(product0);
  const auto hi1 = static_cast<uint32_t>(product1 >> 32);
  const auto lo1 = static_cast<uint32_t>(product1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

Counter philox4x32_10(Counter counter, Key key) {
  for (int round = 0; round < 10; ++round) {
    counter = philox_round(counter, key);
    key = {key[0] + 0x9E3779B9u, key[1] + 0xBB67AE85u};  // the Weyl sequence bump
  }
  return counter;
}

TEST_CASE("the test's Philox4x32-10 reproduces Random123's known answers", "[ops][random]") {
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
        Counter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        Counter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        Counter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

Counter words_for(uint64_t seed, uint64_t element) {
  return philox4x32_10({static_cast<uint32_t>(element), static_cast<uint32_t>(element >> 32), 0, 0},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

std::vector<double> random_op(sy_op op, uint64_t seed, uint64_t offset, double a, double b,
                              int64_t n) {
  DeviceTensor out = make_zeros(SY_DTYPE_F32, {n});
  sy_op_params params = zero_params();
  params.random.seed = seed;
  params.random.offset = offset;
  params.random.a = a;
  params.random.b = b;
  REQUIRE(run_op(op, {}, {&out}, params).ok());
  return read_values(out);
}

TEST_CASE("random_uniform seed 0 offset 0 starts with the Philox words of counters 0, 1, 2, ...",
          "[ops][random]") {
  const std::vector<double> out = random_op(SY_OP_RANDOM_UNIFORM, 0, 0, 0.0, 1.0, 16);
  // Element 0: word0 = 0x6627e8d5, so u = 0x6627e8 * 2^-24 = 6694888 / 16777216.
  CHECK(out[0] == 6694888.0 / 16777216.0);
  for (uint64_t i = 0; i < out.size(); ++i) {
    INFO("element " << i);
    CHECK(out[i] == static_cast<double>(static_cast<float>(words_for(0, i)[0] >> 8) * 0x1p-24f));
  }
}

TEST_CASE("random_uniform maps to [a, b) in f32 and honours seed and offset", "[ops][random]") {
  const uint64_t seed = 0x0123456789abcdefull;
  const uint64_t offset = 0x00000001fffffffeull;  // crosses into the counter's high word
  const std::vector<double> out = random_op(SY_OP_RANDOM_UNIFORM, seed, offset, -2.0, 3.0, 8);
  for (uint64_t i = 0; i < out.size(); ++i) {
    const float u = static_cast<float>(words_for(seed, offset + i)[0] >> 8) * 0x1p-24f;
    const float span = 3.0f - -2.0f;
    const float scaled = span * u;
    INFO("element " << i);
    CHECK(out[i] == static_cast<double>(-2.0f + scaled));
  }
  // The same seed and offset give the same numbers; a piece starting at offset + 4 matches.
  const std::vector<double> tail = random_op(SY_OP_RANDOM_UNIFORM, seed, offset + 4, -2.0, 3.0, 4);
  require_values(tail, {out[4], out[5], out[6], out[7]}, 0);
}

TEST_CASE("random_normal is the Box-Muller cosine branch of the Philox words", "[ops][random]") {
  const std::vector<double> out = random_op(SY_OP_RANDOM_NORMAL, 0, 0, 1.0, 2.0, 32);
  double sum = 0.0;
  for (uint64_t i = 0; i < out.size(); ++i) {
    const Counter words = words_for(0, i);
    const double u1 = static_cast<double>((words[0] >> 8) + 1) * 0x1p-24;
    const double u2 = static_cast<double>(words[1] >> 8) * 0x1p-24;
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    INFO("element " << i);
    CHECK(std::fabs(out[i] - (1.0 + 2.0 * z)) <= 1e-5 * (1.0 + 2.0 * std::max(1.0, std::fabs(z))));
    sum += out[i];
  }
  // Element 0: u1 = (0x6627e8 + 1) / 2^24 = 0.3990465, u2 = 0xe169c5 / 2^24 = 0.8805202:
  // z = sqrt(-2 ln 0.3990465) * cos(2 pi 0.8805202) = 1.355491 * 0.731202 = 0.991137,
  // so out = 1 + 2z = 2.982275.
  CHECK(out[0] == Approx(2.982275).epsilon(1e-5));
  CHECK(sum / 32.0 == Approx(1.0).margin(1.2));  // loose: 32 samples of N(1, 2^2)
}

}  // namespace
}  // namespace switchyard::op_test
