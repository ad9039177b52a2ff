// What the profiler records: one entry per op with its name, shapes, dtypes and device; spans
// around them; the per-op summary; the record cap; clear(); fallbacks; and device events.
#include <catch2/catch.hpp>

#include "profile/profile_test_support.h"
#include "switchyard/config.h"
#include "switchyard/dispatch.h"
#include "switchyard/ops.h"
#include "switchyard/profile.h"
#include "switchyard/tensor.h"

using namespace switchyard;
using switchyard::testing::profile_device;

namespace {

using Shapes = std::vector<std::vector<int64_t>>;

Shapes shapes_of(const std::vector<ProfiledTensor>& tensors) {
  Shapes shapes;
  for (const auto& t : tensors) shapes.push_back(t.shape);
  return shapes;
}

std::vector<std::string> dtypes_of(const std::vector<ProfiledTensor>& tensors) {
  std::vector<std::string> dtypes;
  for (const auto& t : tensors) dtypes.push_back(t.dtype);
  return dtypes;
}

const OpStats* find_stats(const ProfileSummary& summary, const std::string& name) {
  for (const auto& op : summary.ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the profiler records each op with its name, shapes, dtypes and device", "[profile]") {
  const auto& device = profile_device();
  const Tensor a = Tensor::from_host({1, -2, 3, -4, 5, -6}, {2, 3}, device);
  const Tensor b = Tensor::from_host({1, 1, 1, 1, 1, 1}, {2, 3}, device);
  const Tensor w = Tensor::from_host(std::vector<float>(12, 0.5f), {3, 4}, device);
  OpObserver* const before = op_observer();
  Profiler profiler;
  {
    ProfileScope scope(profiler);
    CHECK(op_observer() == &profiler);
    CHECK(active_profiler() == &profiler);
    const Tensor c = add(a, b);
    const Tensor r = relu(c);
    const Tensor m = matmul(r, w);
  }
  CHECK(op_observer() == before);
  CHECK(active_profiler() == nullptr);
  const Tensor after_scope = add(a, b);  // not recorded

  const std::vector<OpRecord> records = profiler.op_records();
  REQUIRE(records.size() == 3);
  CHECK(profiler.op_count() == 3);
  CHECK(records[0].name == "add");
  CHECK(records[0].op == SY_OP_ADD);
  CHECK(shapes_of(records[0].inputs) == Shapes{{2, 3}, {2, 3}});
  CHECK(shapes_of(records[0].outputs) == Shapes{{2, 3}});
  CHECK(records[1].name == "relu");
  CHECK(shapes_of(records[1].inputs) == Shapes{{2, 3}});
  CHECK(shapes_of(records[1].outputs) == Shapes{{2, 3}});
  CHECK(records[2].name == "matmul");
  CHECK(shapes_of(records[2].inputs) == Shapes{{2, 3}, {3, 4}});
  CHECK(shapes_of(records[2].outputs) == Shapes{{2, 4}});
  for (const OpRecord& r : records) {
    INFO(r.name);
    CHECK(dtypes_of(r.inputs) == std::vector<std::string>(r.inputs.size(), "f32"));
    CHECK(dtypes_of(r.outputs) == std::vector<std::string>{"f32"});
    CHECK(r.device == "reference:0");
    CHECK(r.backend == "reference");
    CHECK_FALSE(r.fallback);
    CHECK(r.thread == 0);
    CHECK(r.host_begin_us >= 0);
    CHECK(r.host_end_us >= r.host_begin_us);
    // The reference plugin is host-synchronous and claims no device timing.
    CHECK_FALSE(r.device_time_measured);
    CHECK(r.device_time_us == Approx(r.host_time_us()).margin(1e-3));
  }
  CHECK(records[1].host_begin_us >= records[0].host_end_us);
  CHECK(records[2].host_begin_us >= records[1].host_end_us);
}

TEST_CASE("spans enclose the ops run inside them", "[profile]") {
  const auto& device = profile_device();
  const Tensor x = Tensor::from_host({1, 2, 3, 4}, {4}, device);
  Profiler profiler;
  {
    ProfileScope scope(profiler);
    auto outer = profile_span("epoch 1");
    {
      auto inner = profiler.span("train_step");
      const Tensor y = exp(x);
      const Tensor z = neg(y);
    }
    const Tensor s = sum(x);
  }
  const auto spans = profiler.span_records();
  const auto ops = profiler.op_records();
  REQUIRE(spans.size() == 2);
  REQUIRE(ops.size() == 3);
  CHECK(spans[0].name == "epoch 1");
  CHECK(spans[1].name == "train_step");
  CHECK_FALSE(spans[0].open);
  CHECK_FALSE(spans[1].open);
  CHECK(spans[0].begin_us <= spans[1].begin_us);
  CHECK(spans[1].end_us <= spans[0].end_us);
  CHECK(ops[0].host_begin_us >= spans[1].begin_us);
  CHECK(ops[1].host_end_us <= spans[1].end_us);
  CHECK(ops[2].host_begin_us >= spans[1].end_us);
  CHECK(ops[2].host_end_us <= spans[0].end_us);
  CHECK(ops[2].name == "reduce_sum");
}

TEST_CASE("profile_span without an active profiler does nothing", "[profile]") {
  REQUIRE(active_profiler() == nullptr);
  ProfileSpan span = profile_span("nobody listens");
  CHECK_FALSE(span.active());
}

TEST_CASE("the summary counts every op per name and sorts by total time", "[profile]") {
  const auto& device = profile_device();
  const Tensor a = Tensor::from_host(std::vector<float>(64 * 64, 0.25f), {64, 64}, device);
  Profiler profiler;
  {
    ProfileScope scope(profiler);
    for (int i = 0; i < 5; ++i) (void)add(a, a);
    for (int i = 0; i < 2; ++i) (void)relu(a);
    (void)matmul(a, a);
  }
  const ProfileSummary summary = profiler.summary();
  CHECK(summary.total_count == 8);
  REQUIRE(summary.ops.size() == 3);
  const OpStats* add_stats = find_stats(summary, "add");
  const OpStats* relu_stats = find_stats(summary, "relu");
  const OpStats* matmul_stats = find_stats(summary, "matmul");
  REQUIRE(add_stats != nullptr);
  REQUIRE(relu_stats != nullptr);
  REQUIRE(matmul_stats != nullptr);
  CHECK(add_stats->count == 5);
  CHECK(relu_stats->count == 2);
  CHECK(matmul_stats->count == 1);
  double percent = 0;
  double host_ms = 0;
  for (size_t i = 0; i < summary.ops.size(); ++i) {
    if (i > 0) CHECK(summary.ops[i - 1].device_total_ms >= summary.ops[i].device_total_ms);
    percent += summary.ops[i].percent_of_device_total;
    host_ms += summary.ops[i].host_total_ms;
    CHECK(summary.ops[i].mean_device_us ==
          Approx(summary.ops[i].device_total_ms * 1e3 / static_cast<double>(summary.ops[i].count)));
  }
  CHECK(percent == Approx(100.0));
  CHECK(host_ms == Approx(summary.host_total_ms));
  CHECK(summary.wall_ms >= summary.host_total_ms);
  CHECK(summary.unrecorded_ops == 0);
  REQUIRE(summary.device_timing.size() == 1);
  CHECK(summary.device_timing[0] == "reference:0: host time");

  const std::string table = profiler.summary_table();
  CHECK(table.find("matmul") != std::string::npos);
  CHECK(table.find("total") != std::string::npos);
  CHECK(table.find("        8 ") != std::string::npos);  // the total's call count
}

TEST_CASE("ops past max_recorded_ops are counted but not recorded", "[profile]") {
  const Tensor x = Tensor::from_host({1, 2}, {2}, profile_device());
  ProfilerOptions options;
  options.max_recorded_ops = 2;
  Profiler profiler(options);
  {
    ProfileScope scope(profiler);
    for (int i = 0; i < 5; ++i) (void)neg(x);
  }
  CHECK(profiler.op_records().size() == 2);
  const ProfileSummary summary = profiler.summary();
  CHECK(summary.total_count == 5);
  CHECK(summary.unrecorded_ops == 3);
  REQUIRE(summary.ops.size() == 1);
  CHECK(summary.ops[0].count == 5);
}

TEST_CASE("clear forgets every record", "[profile]") {
  const Tensor x = Tensor::from_host({1, 2}, {2}, profile_device());
  Profiler profiler;
  ProfileScope scope(profiler);
  (void)neg(x);
  auto span = profiler.span("before clear");
  profiler.clear();
  span.end();  // begun before clear(): dropped, not resurrected
  (void)abs(x);
  const auto ops = profiler.op_records();
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].name == "abs");
  CHECK(profiler.span_records().empty());
  CHECK(profiler.summary().total_count == 1);
}

TEST_CASE("an op moved to the fallback device is recorded as a fallback there", "[profile]") {
  const std::shared_ptr<Device> twin = switchyard::testing::twin_device();
  if (twin == nullptr) {
    FAIL(
        "the twin fixture plugin is not built (target switchyard_fixtures), which every test "
        "build makes: the build is broken");
  }
  REQUIRE_FALSE(twin->supports(SY_OP_RELU, SY_DTYPE_F32));
  twin->set_fallback(FallbackPolicy::kSilent, profile_device());
  const Tensor x = Tensor::from_host({-1, 2, -3, 4}, {4}, twin);
  Profiler profiler;
  {
    ProfileScope scope(profiler);
    (void)relu(x);
  }
  std::vector<OpRecord> relus;
  for (const auto& r : profiler.op_records()) {
    if (r.name == "relu") relus.push_back(r);
  }
  REQUIRE(relus.size() == 1);
  CHECK(relus[0].fallback);
  CHECK(relus[0].device == "reference:0");
  const ProfileSummary summary = profiler.summary();
  REQUIRE(find_stats(summary, "relu (fallback)") != nullptr);
  CHECK(find_stats(summary, "relu (fallback)")->count == 1);
  CHECK(find_stats(summary, "relu") == nullptr);
}

TEST_CASE("device events time each op, reusing a small pool", "[profile]") {
  const auto& device = profile_device();
  const Tensor x = Tensor::from_host({1, 2, 3, 4}, {4}, device);
  // The reference plugin has working events but claims no device timing, so kAuto keeps host
  // time and kAnyEvents uses its events (they read the host clock when recorded).
  ProfilerOptions options;
  options.device_timing = DeviceTiming::kAnyEvents;
  Profiler profiler(options);
  constexpr int kOps = 3000;
  {
    ProfileScope scope(profiler);
    for (int i = 0; i < kOps; ++i) (void)neg(x);
  }
  const auto records = profiler.op_records();
  REQUIRE(records.size() == static_cast<size_t>(kOps));
  size_t measured = 0;
  for (const OpRecord& r : records) {
    if (!r.device_time_measured) continue;
    ++measured;
    // Start events are recorded before the host clock is read and end events after it.
    CHECK(r.device_time_us >= r.host_time_us() - 1.0);
    CHECK(r.device_begin_us <= r.host_begin_us + 1.0);
    CHECK(r.device_begin_us >= 0);
  }
  CHECK(measured == records.size());
  const ProfileSummary summary = profiler.summary();
  REQUIRE(summary.device_timing.size() == 1);
  CHECK(summary.device_timing[0] == "reference:0: device events");
  CHECK(summary.warnings.empty());
  CHECK(summary.device_events_created > 0);
  // 3000 ops need 6000 events without reuse; the pool keeps at most about 2 per outstanding pair.
  CHECK(summary.device_events_created <= 2 * 1024 + 3);
}

TEST_CASE("host-only timing records no device events", "[profile]") {
  const Tensor x = Tensor::from_host({1, 2}, {2}, profile_device());
  ProfilerOptions options;
  options.device_timing = DeviceTiming::kHostOnly;
  Profiler profiler(options);
  {
    ProfileScope scope(profiler);
    (void)neg(x);
  }
  const auto records = profiler.op_records();
  REQUIRE(records.size() == 1);
  CHECK_FALSE(records[0].device_time_measured);
  CHECK(profiler.summary().device_events_created == 0);
}

TEST_CASE("nested profile scopes record to the innermost and restore the outer", "[profile]") {
  const Tensor x = Tensor::from_host({1, 2}, {2}, profile_device());
  Profiler outer;
  Profiler inner;
  {
    ProfileScope outer_scope(outer);
    (void)neg(x);
    {
      ProfileScope inner_scope(inner);
      CHECK(active_profiler() == &inner);
      (void)abs(x);
      (void)exp(x);
    }
    CHECK(active_profiler() == &outer);
    CHECK(op_observer() == &outer);
    (void)sqrt(x);
  }
  CHECK(op_observer() == nullptr);
  const auto outer_ops = outer.op_records();
  const auto inner_ops = inner.op_records();
  REQUIRE(outer_ops.size() == 2);
  CHECK(outer_ops[0].name == "neg");
  CHECK(outer_ops[1].name == "sqrt");
  REQUIRE(inner_ops.size() == 2);
  CHECK(inner_ops[0].name == "abs");
  CHECK(inner_ops[1].name == "exp");
}
