// The profiler accounts for the time of a loop that does nothing but ops: a small MLP's forward
// and backward passes on the reference device, many iterations. The per-op totals must add up to
// most of the loop's wall time (what is left is the tensor layer's own work between ops: output
// allocation, autograd bookkeeping) and can never exceed it.
#include <catch2/catch.hpp>
#include <chrono>

#include "profile/profile_test_support.h"
#include "switchyard/init.h"
#include "switchyard/nn.h"
#include "switchyard/ops.h"
#include "switchyard/profile.h"

using namespace switchyard;
using switchyard::testing::profile_device;

TEST_CASE("per-op totals add up to the wall time of a loop of ops", "[profile]") {
  const auto& device = profile_device();
  InitContext init{device, InitScheme::kKaimingUniform, 7};
  Sequential model;
  model.emplace<Linear>(init, 128, 256);
  model.emplace<ReLU>();
  model.emplace<Linear>(init, 256, 10);
  const Tensor x = rand_uniform({128, 128}, -1.0, 1.0, 3, 0, device);
  std::vector<int32_t> label_values(128);
  for (size_t i = 0; i < label_values.size(); ++i) label_values[i] = static_cast<int32_t>(i % 10);
  const Tensor labels = Tensor::from_host(label_values, {128}, device);
  auto step = [&] {
    model.zero_grad();
    const Tensor loss = cross_entropy(model(x), labels);
    loss.backward();
  };
  step();  // warm the memory pool outside the measurement

  Profiler profiler;
  double wall_ms = 0;
  {
    ProfileScope scope(profiler);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) step();
    wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  const ProfileSummary summary = profiler.summary();
  INFO(profiler.summary_table());
  INFO("loop wall time " << wall_ms << " ms");
  REQUIRE(summary.total_count > 20 * 8);  // forward, loss and backward ops of every step
  CHECK(summary.total_count % 20 == 0);   // every step dispatches the same ops
  CHECK(summary.host_total_ms <= wall_ms);
  CHECK(summary.host_total_ms >= 0.9 * wall_ms);
  // Host-synchronous: device time is the host time.
  CHECK(summary.device_total_ms == Approx(summary.host_total_ms).epsilon(1e-6));
}
