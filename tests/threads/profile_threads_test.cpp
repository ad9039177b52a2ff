// A Profiler shared by threads (profile.h, "Threads"): installed once, it records every op and
// span of every thread, each on the thread's own track, while another thread reads its summary.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "switchyard/ops.h"
#include "switchyard/profile.h"
#include "tensor/tensor_test_support.h"
#include "threads/thread_calls.h"

namespace switchyard {
namespace {

using testing::test_device;

TEST_CASE("one profiler records the ops and spans of many threads", "[threads][profile]") {
  const int rounds = testing::thread_calls(20, 3);
  constexpr int kThreads = 4;
  const Tensor x = full({4, 4}, 1.5, test_device());
  Profiler profiler;
  std::vector<std::string> problems(kThreads);
  {
    const ProfileScope scope(profiler);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < rounds; ++r) {
          ProfileSpan span = profiler.span("worker " + std::to_string(t));
          const Tensor y = mul(add(x, x), x);  // two ops
          if (y.to_host_float() != std::vector<float>(16, 4.5f)) {
            problems[static_cast<size_t>(t)] = "wrong values";
          }
        }
      });
    }
    // A reader while they run: summaries are taken under the profiler's lock.
    for (int r = 0; r < rounds; ++r)
      CHECK(profiler.summary().total_count <= 2u * kThreads * rounds);
    for (std::thread& thread : threads) thread.join();
  }
  for (const std::string& problem : problems) CHECK(problem == "");
  const std::vector<OpRecord> ops = profiler.op_records();
  std::map<std::string, int> by_name;
  std::set<uint32_t> op_threads;
  for (const OpRecord& op : ops) {
    ++by_name[op.name];
    op_threads.insert(op.thread);
  }
  CHECK(by_name["add"] == kThreads * rounds);
  CHECK(by_name["mul"] == kThreads * rounds);
  CHECK(by_name.size() == 2);  // nothing else ran inside the scope
  // Each worker's spans are on one track, no two workers share one, and the ops ran on exactly
  // the workers' tracks.
  std::map<std::string, std::set<uint32_t>> tracks;
  for (const SpanRecord& span : profiler.span_records()) tracks[span.name].insert(span.thread);
  CHECK(tracks.size() == static_cast<size_t>(kThreads));
  std::set<uint32_t> span_threads;
  for (const auto& [name, threads] : tracks) {
    INFO(name);
    CHECK(threads.size() == 1);
    span_threads.insert(threads.begin(), threads.end());
  }
  CHECK(span_threads.size() == static_cast<size_t>(kThreads));
  CHECK(op_threads == span_threads);
}

}  // namespace
}  // namespace switchyard
