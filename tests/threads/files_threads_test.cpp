// Files written by many threads at once (checkpoint.h, "Threads"): threads saving checkpoints to
// one path at the same moment each leave a whole checkpoint, the last rename wins, readers in
// between always read a whole one (the first or one of the new ones), and no temporary file is
// left behind. Each save used to go through one temporary file per process, so two threads
// truncated and wrote it at once and could rename a mixture over the checkpoint.
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "switchyard/checkpoint.h"
#include "threads/thread_calls.h"
#include "train/train_test_support.h"

namespace switchyard {
namespace {

// A checkpoint that says who wrote it, with enough payload (about 1 MB) that writes of it take
// several system calls and overlap between threads.
Checkpoint checkpoint_of(int writer, int save) {
  Checkpoint checkpoint;
  checkpoint.put_u64("writer", static_cast<uint64_t>(writer));
  checkpoint.put_u64("save", static_cast<uint64_t>(save));
  checkpoint.put_floats("values",
                        std::vector<float>(1 << 18, static_cast<float>(writer * 1000 + save)));
  return checkpoint;
}

// "" when `checkpoint` is whole and consistent with its own writer and save numbers.
std::string problem_with(const Result<Checkpoint>& read) {
  if (!read.ok()) return read.status().message();
  const Checkpoint& checkpoint = read.value();
  const Result<uint64_t> writer = checkpoint.get_u64("writer");
  const Result<uint64_t> save = checkpoint.get_u64("save");
  const Result<std::vector<float>> values = checkpoint.get_floats("values");
  if (!writer.ok() || !save.ok() || !values.ok()) return "a record is missing";
  const float expected = static_cast<float>(writer.value() * 1000 + save.value());
  for (float v : values.value()) {
    if (v != expected) return "values of another save";
  }
  return "";
}

TEST_CASE("checkpoints saved to one path by many threads at once stay whole", "[threads][files]") {
  const testing::TempDir dir;
  const std::filesystem::path path = dir.path() / "model.ckpt";
  REQUIRE(write_checkpoint(path, checkpoint_of(99, 0)).ok());
  constexpr int kWriters = 4, kReaders = 2;
  const int saves = testing::thread_calls(20, 3);
  std::vector<std::string> problems(kWriters + kReaders);
  std::atomic<int> writers_left{kWriters};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int s = 0; s < saves && problems[static_cast<size_t>(w)].empty(); ++s) {
        const Status status = write_checkpoint(path, checkpoint_of(w, s));
        if (!status.ok()) problems[static_cast<size_t>(w)] = "save: " + status.message();
      }
      --writers_left;
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      std::string& problem = problems[static_cast<size_t>(kWriters + r)];
      while (writers_left > 0 && problem.empty()) problem = problem_with(read_checkpoint(path));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < problems.size(); ++t) {
    INFO("thread " << t);
    CHECK(problems[t] == "");
  }
  CHECK(problem_with(read_checkpoint(path)) == "");
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename().string());
  }
  CHECK(names == std::vector<std::string>{"model.ckpt"});
}

}  // namespace
}  // namespace switchyard
