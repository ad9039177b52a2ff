// The onednn plugin's LSTM_SEQUENCE and GRU_SEQUENCE with weights the caller promises constant
// (SY_CALL_CONSTANT_WEIGHTS on w_ih and w_hh, as the ONNX importer sets it): the kept conversions
// give the values of the unmarked call, every time, for new weights where the pool put the old
// ones, and are pool memory given back with the weights.
#include <catch2/catch.hpp>

#include <vector>

#include "nn/recurrent_sequence.h"
#include "onednn/onednn_test_support.h"
#include "switchyard/ops.h"
#include "switchyard/tensor.h"

using namespace switchyard;
using onednn_test::allocated_bytes;
using onednn_test::close_values;

namespace {

detail::RecurrentWeights weights(const std::shared_ptr<Device>& device, int64_t gates,
                                 int64_t input, int64_t hidden, uint64_t seed) {
  detail::RecurrentWeights w;
  w.w_ih = rand_uniform(Shape({gates * hidden, input}), -0.3, 0.3, seed, 0, device);
  w.w_hh = rand_uniform(Shape({gates * hidden, hidden}), -0.3, 0.3, seed + 1, 0, device);
  w.b_ih = rand_uniform(Shape({gates * hidden}), -0.3, 0.3, seed + 2, 0, device);
  w.b_hh = rand_uniform(Shape({gates * hidden}), -0.3, 0.3, seed + 3, 0, device);
  return w;
}

// The sequence with w as given and with w marked constant, twice (the second reads what the
// first kept).
void check_marked_against_unmarked(const std::shared_ptr<Device>& device, bool lstm, int64_t batch,
                                   uint64_t seed) {
  const int64_t steps = 7, input = 40, hidden = 24;
  const Tensor x = rand_uniform(Shape({steps, batch, input}), -1.0, 1.0, seed + 10, 0, device);
  const Tensor h0 = rand_uniform(Shape({batch, hidden}), -1.0, 1.0, seed + 11, 0, device);
  const Tensor c0 = rand_uniform(Shape({batch, hidden}), -1.0, 1.0, seed + 12, 0, device);
  detail::RecurrentWeights w = weights(device, lstm ? 4 : 3, input, hidden, seed);
  const auto run = [&](const detail::RecurrentWeights& ws) {
    return lstm ? detail::lstm_sequence(x, h0, c0, ws, false)
                : detail::gru_sequence(x, h0, ws, true);
  };
  const Tensor expected = run(w);
  w.constant = true;
  CHECK(close_values(run(w), expected));  // converted and kept
  CHECK(close_values(run(w), expected));  // the kept conversions
}

}  // namespace

TEST_CASE("onednn keeps constant LSTM and GRU weights converted until their buffers are released",
          "[onednn][rnn]") {
  const std::shared_ptr<Device> device =
      value_or_throw(onednn_test::make_onednn({{"threads", "2"}}));
  for (const bool lstm : {true, false}) {
    // Batch 1: the LSTM's projected path (W_ih packed for the input projection, W_hh in panels);
    // batch 8: oneDNN's RNN primitive with its own weight layouts.
    for (const int64_t batch : {int64_t{1}, int64_t{8}}) {
      INFO((lstm ? "LSTM" : "GRU") << ", batch " << batch);
      // New weights each round, often where the pool put the last ones: buffer ids key them.
      for (uint64_t round = 0; round < 3; ++round) {
        check_marked_against_unmarked(device, lstm, batch, 100 * round + (lstm ? 1 : 2));
      }
    }
  }
  // What is kept is pool memory, counted while the weights live and given back with them.
  const uint64_t base = allocated_bytes(*device);
  {
    detail::RecurrentWeights w = weights(device, 4, 40, 24, 7);
    w.constant = true;
    const Tensor x = rand_uniform(Shape({5, 1, 40}), -1.0, 1.0, 8, 0, device);
    const Tensor h0 = zeros(Shape({1, 24}), device);
    const uint64_t with_weights = allocated_bytes(*device);
    (void)detail::lstm_sequence(x, h0, h0, w, false);
    CHECK(allocated_bytes(*device) > with_weights);
  }
  CHECK(allocated_bytes(*device) == base);
}
