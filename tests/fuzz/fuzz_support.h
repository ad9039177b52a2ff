// Our own fuzzing (issue 17): a deterministic mutation loop over seed inputs the tests write
// themselves, feeding each mutant to a loader through a file, as a user's file would arrive.
//
// Each mutant must be loaded or refused: no crash, no exception, no hang (each load is timed),
// and every refusal names the file. A failure prints the target, the iteration and the mutant's
// size; the loop is seeded, so the same iteration reproduces it.
//
// The same loaders are fuzzed by libFuzzer (tests/fuzz/libfuzzer, tools/fuzz) from the seed corpora
// in tests/fuzz/corpus/<corpus>/; SWITCHYARD_FUZZ_WRITE_CORPUS=DIR writes each target's seeds to
// DIR/<corpus>/seed-<n>.<extension> (how the committed corpora were made).
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "switchyard/status.h"
#include "train/train_test_support.h"

namespace switchyard::testing {

using Bytes = std::vector<uint8_t>;

// Mutants per target: a few thousand, under a second per target in the plain build and in the
// ASan/UBSan build alike (measured: about 0.2 s and 0.4 s per target).
constexpr int kMutantsPerTarget = 4000;
// A load slower than this counts as a hang (the seeds load in microseconds).
constexpr double kMaxSecondsPerLoad = 2.0;

inline Bytes to_bytes(const std::string& text) {
  return Bytes(text.begin(), text.end());
}

// splitmix64: tiny, fast and the same on every platform.
class Mutator {
 public:
  Mutator(uint64_t seed, std::vector<std::string> dictionary)
      : state_(seed), dictionary_(std::move(dictionary)) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }

  // One to four edits of a randomly chosen seed.
  Bytes mutate(const std::vector<Bytes>& seeds) {
    Bytes out = seeds[below(seeds.size())];
    const size_t edits = 1 + below(4);
    for (size_t i = 0; i < edits; ++i) edit(out, seeds[below(seeds.size())]);
    return out;
  }

 private:
  Bytes token() {
    if (below(2) == 0) {
      Bytes random(1 + below(8));
      for (uint8_t& byte : random) byte = static_cast<uint8_t>(next());
      return random;
    }
    return to_bytes(dictionary_[below(dictionary_.size())]);
  }

  void edit(Bytes& out, const Bytes& other) {
    const size_t at = below(out.size() + 1);
    switch (below(6)) {
      case 0:  // bit flip
        if (!out.empty()) out[below(out.size())] ^= static_cast<uint8_t>(1u << below(8));
        break;
      case 1:  // truncation
        out.resize(at);
        break;
      case 2: {  // insertion
        const Bytes piece = token();
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), piece.begin(), piece.end());
        break;
      }
      case 3: {  // splice: this one's start, another seed's end
        const size_t from = below(other.size() + 1);
        out.resize(at);
        out.insert(out.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      case 4: {  // a range repeated
        const size_t length =
            below(std::min<size_t>(out.size() - std::min(at, out.size()), 64) + 1);
        const Bytes range(out.begin() + static_cast<std::ptrdiff_t>(at),
                          out.begin() + static_cast<std::ptrdiff_t>(at + length));
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), range.begin(), range.end());
        break;
      }
      default: {  // a range deleted
        const size_t length =
            below(std::min<size_t>(out.size() - std::min(at, out.size()), 16) + 1);
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(at),
                  out.begin() + static_cast<std::ptrdiff_t>(at + length));
        break;
      }
    }
  }

  uint64_t state_;
  std::vector<std::string> dictionary_;
};

struct FuzzTarget {
  std::string name;    // the file name mutants are written to, e.g. "mutant.csv"
  std::string corpus;  // the libFuzzer target's name: tests/fuzz/corpus/<corpus>/, e.g. "csv"
  std::vector<Bytes> seeds;
  std::vector<std::string> dictionary;  // tokens worth inserting: separators, keywords, numbers
  // Optional: repairs a mutant's framing (lengths, checksums) so that the parser goes deeper.
  // Called on every other mutant.
  std::function<void(Bytes&)> fix_up;
  // Loads the file. OK, or the refusal; a problem with a loaded result (an invariant the loader
  // promises) is reported as an INTERNAL status.
  std::function<Status(const std::filesystem::path&)> load;
  // The longest refusal allowed: one message quoting at most a few hundred characters of the file
  // (the config loader lists up to 20 errors, one line each, so it sets more).
  std::size_t max_message_chars = 2000;
};

struct FuzzCounts {
  int loaded = 0;
  int refused = 0;
};

inline void write_seeds(const FuzzTarget& target, const std::filesystem::path& dir) {
  const std::filesystem::path folder = dir / target.corpus;
  std::filesystem::create_directories(folder);
  const std::string extension = std::filesystem::path(target.name).extension().string();
  for (size_t i = 0; i < target.seeds.size(); ++i) {
    write_bytes(folder / ("seed-" + std::to_string(i) + extension), target.seeds[i]);
  }
}

// The committed corpus of the target's libFuzzer twin: tests/fuzz/corpus/<corpus>/, its seeds and
// every input fuzzing found a problem with (regression-*), sorted by name.
inline std::vector<std::filesystem::path> corpus_files(const FuzzTarget& target) {
  std::vector<std::filesystem::path> files;
  const auto folder =
      std::filesystem::path(SWITCHYARD_SOURCE_DIR) / "tests/fuzz/corpus" / target.corpus;
  if (target.corpus.empty() || !std::filesystem::is_directory(folder)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Writes `bytes` to `path`, loads it and checks the outcome (loaded, or refused naming the file in
// a message of bounded length; never an exception, INTERNAL or a load over kMaxSecondsPerLoad).
// `label` names the input in a failure; `counts`, where given, counts the outcome.
inline void load_one(const FuzzTarget& target, const std::filesystem::path& path,
                     const Bytes& bytes, const std::string& label, FuzzCounts* counts) {
  // A new file each time: rewriting one in place makes ext4 flush it on close (auto_da_alloc),
  // which costs milliseconds per mutant.
  std::filesystem::remove(path);
  write_bytes(path, bytes);
  const auto start = std::chrono::steady_clock::now();
  Status status;
  try {
    status = target.load(path);
  } catch (const std::exception& error) {
    status = Status(StatusCode::kInternal, std::string("exception: ") + error.what());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(target.name << " " << label << " (" << bytes.size()
                   << " bytes): " << status.to_string().substr(0, 400));
  if (seconds > kMaxSecondsPerLoad) FAIL_CHECK("took " << seconds << " s");
  if (status.code() == StatusCode::kInternal) {
    FAIL_CHECK("threw or broke an invariant");
    return;
  }
  if (status.ok()) {
    if (counts != nullptr) ++counts->loaded;
    return;
  }
  if (counts != nullptr) ++counts->refused;
  if (status.message().find(path.string()) == std::string::npos) FAIL_CHECK("no file named");
  if (status.message().size() > target.max_message_chars) {
    FAIL_CHECK("a message of " << status.message().size());
  }
}

// The committed corpus first (so that each input a fuzzer found stays a regression case), then
// kMutantsPerTarget mutants of the seeds; the counts are the mutants'.
inline FuzzCounts run_fuzz(const FuzzTarget& target, uint64_t seed) {
  if (const char* dir = std::getenv("SWITCHYARD_FUZZ_WRITE_CORPUS"); dir != nullptr && *dir != 0) {
    REQUIRE_FALSE(target.corpus.empty());
    write_seeds(target, dir);
  }
  TempDir dir;
  const std::filesystem::path path = dir / target.name;
  const std::vector<std::filesystem::path> committed = corpus_files(target);
  CHECK_FALSE(committed.empty());
  for (const auto& file : committed) {
    load_one(target, path, read_bytes(file), "corpus file " + file.filename().string(), nullptr);
  }
  Mutator mutator(seed, target.dictionary);
  FuzzCounts counts;
  for (int i = 0; i < kMutantsPerTarget; ++i) {
    Bytes mutant = mutator.mutate(target.seeds);
    if (target.fix_up && i % 2 == 1) target.fix_up(mutant);
    load_one(target, path, mutant, "mutant " + std::to_string(i), &counts);
  }
  return counts;
}

}  // namespace switchyard::testing
