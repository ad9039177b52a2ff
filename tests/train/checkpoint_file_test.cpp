// The checkpoint file format: round trip, and rejection of damaged files with a clear message.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstring>
#include <limits>

#include "model/train_state.h"
#include "switchyard/checkpoint.h"
#include "train/train_test_support.h"

using namespace switchyard;
using switchyard::testing::TempDir;

namespace {

Checkpoint sample_checkpoint(size_t value_count) {
  Checkpoint checkpoint;
  checkpoint.put_string("meta/name", "sample");
  checkpoint.put_u64("meta/epoch", 12345678901234ULL);
  checkpoint.put_f64("optim/lr", 0.05);
  std::vector<float> values(value_count);
  for (size_t i = 0; i < values.size(); ++i) {
    // Awkward bit patterns: subnormals, negative zero, and values with all mantissa bits used.
    const uint32_t bits = static_cast<uint32_t>(i * 2654435761u) ^ 0x80000001u;
    std::memcpy(&values[i], &bits, sizeof(bits));
  }
  checkpoint.put_floats("param/0.weight", values);
  TensorRecord tensor{DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6.5f}, {}};
  checkpoint.put_tensor("param/0.bias", tensor);
  TensorRecord step{DType::kI64, {}, {}, {7}};
  checkpoint.put_tensor("optim/state/step", step);
  return checkpoint;
}

Status expect_rejected(const std::filesystem::path& path) {
  auto result = read_checkpoint(path);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kDataLoss);
  CHECK(result.status().message().find(path.string()) != std::string::npos);
  return result.status();
}

}  // namespace

TEST_CASE("a checkpoint file round-trips every record bit for bit", "[checkpoint]") {
  TempDir dir;
  const auto path = dir / "run.ckpt";
  const Checkpoint written = sample_checkpoint(1000);
  REQUIRE(write_checkpoint(path, written).ok());
  const Checkpoint read = value_or_throw(read_checkpoint(path));
  CHECK(read.keys() == written.keys());
  for (const auto& key : written.keys()) {
    CHECK(read.get_bytes(key).value() == written.get_bytes(key).value());
  }
  CHECK(read.get_u64("meta/epoch").value() == 12345678901234ULL);
  CHECK(read.get_f64("optim/lr").value() == 0.05);
  const TensorRecord bias = read.get_tensor("param/0.bias").value();
  CHECK(bias.shape == std::vector<int64_t>{2, 3});
  CHECK(bias.floats[5] == 6.5f);
  CHECK(read.get_tensor("optim/state/step").value().integers == std::vector<int64_t>{7});
  CHECK(read.source() == path.string());
  // No temporary file is left beside it.
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                      std::filesystem::directory_iterator()) == 1);
}

TEST_CASE("a truncated checkpoint is rejected as DATA_LOSS naming the file", "[checkpoint]") {
  TempDir dir;
  const auto path = dir / "run.ckpt";
  REQUIRE(write_checkpoint(path, sample_checkpoint(100)).ok());
  auto bytes = switchyard::testing::read_bytes(path);
  for (const size_t keep : {bytes.size() - 1, bytes.size() / 2, size_t{20}, size_t{0}}) {
    switchyard::testing::write_bytes(path, {bytes.begin(), bytes.begin() + keep});
    const Status status = expect_rejected(path);
    CHECK(status.message().find("truncated") != std::string::npos);
  }
}

TEST_CASE("a flipped byte anywhere in a checkpoint is detected", "[checkpoint]") {
  TempDir dir;
  const auto path = dir / "run.ckpt";
  REQUIRE(write_checkpoint(path, sample_checkpoint(100)).ok());
  const auto original = switchyard::testing::read_bytes(path);
  SECTION("in the payload") {
    auto bytes = original;
    bytes[bytes.size() - 37] ^= 0x10;
    switchyard::testing::write_bytes(path, bytes);
    CHECK(expect_rejected(path).message().find("checksum mismatch") != std::string::npos);
  }
  SECTION("in the stored checksum") {
    auto bytes = original;
    bytes[26] ^= 0x01;
    switchyard::testing::write_bytes(path, bytes);
    CHECK(expect_rejected(path).message().find("checksum mismatch") != std::string::npos);
  }
  SECTION("in the magic") {
    auto bytes = original;
    bytes[1] ^= 0x20;
    switchyard::testing::write_bytes(path, bytes);
    CHECK(expect_rejected(path).message().find("not a switchyard checkpoint") != std::string::npos);
  }
  SECTION("in the format version") {
    auto bytes = original;
    bytes[8] = 9;
    switchyard::testing::write_bytes(path, bytes);
    CHECK(expect_rejected(path).message().find("format version 9") != std::string::npos);
  }
}

TEST_CASE("a missing record is DATA_LOSS naming the record", "[checkpoint]") {
  Checkpoint checkpoint = sample_checkpoint(4);
  checkpoint.set_source("x.ckpt");
  const auto missing = checkpoint.get_tensor("param/1.weight");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kDataLoss);
  CHECK(missing.status().message() == "checkpoint x.ckpt: record 'param/1.weight' is missing");
}

TEST_CASE("a failed checkpoint write leaves the previous checkpoint intact", "[checkpoint]") {
  TempDir dir;
  const auto path = dir / "run.ckpt";
  REQUIRE(write_checkpoint(path, sample_checkpoint(10)).ok());
  const auto before = switchyard::testing::read_bytes(path);

  SECTION("the disk fills up mid-write") {
    // A file size limit makes write() fail with EFBIG part way through (even for root, unlike a
    // read-only folder); SIGXFSZ is ignored so the failure is an error return, not a signal.
    rlimit saved{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    auto* previous_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = saved;
    limited.rlim_cur = 4096;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
    const Status status = write_checkpoint(path, sample_checkpoint(100000));
    REQUIRE(setrlimit(RLIMIT_FSIZE, &saved) == 0);
    std::signal(SIGXFSZ, previous_handler);
    CHECK(status.code() == StatusCode::kResourceExhausted);
    CHECK(status.message().find("cannot write checkpoint") != std::string::npos);
    // The partial temporary file is gone.
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                        std::filesystem::directory_iterator()) == 1);
  }
  SECTION("the temporary file cannot be created") {
    // No file descriptor left makes open() fail with EMFILE (even for root, unlike a read-only
    // folder): the limit is set to the lowest free descriptor, so no new one is below it. The
    // temporary file's name is unique per call (support/temp_path.h), so nothing can be put in
    // its place beforehand.
    const int lowest_free = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(lowest_free >= 0);
    ::close(lowest_free);
    rlimit saved{};
    REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
    rlimit limited = saved;
    limited.rlim_cur = static_cast<rlim_t>(lowest_free);
    REQUIRE(setrlimit(RLIMIT_NOFILE, &limited) == 0);
    const Status status = write_checkpoint(path, sample_checkpoint(100));
    REQUIRE(setrlimit(RLIMIT_NOFILE, &saved) == 0);
    CHECK_FALSE(status.ok());
    CHECK(status.message().find("cannot create checkpoint") != std::string::npos);
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                        std::filesystem::directory_iterator()) == 1);
  }
  CHECK(switchyard::testing::read_bytes(path) == before);
  CHECK(value_or_throw(read_checkpoint(path)).get_string("meta/name").value() == "sample");
}

TEST_CASE("records whose sizes would overflow or convert badly are DATA_LOSS", "[checkpoint]") {
  Checkpoint checkpoint;
  checkpoint.set_source("c.ckpt");
  // dtype f32, rank 1, extent 2^62 + 1: times 4 bytes wraps to 4, which the 4 value bytes match.
  std::vector<uint8_t> tensor = {0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x40};
  tensor.insert(tensor.end(), {0, 0, 0x80, 0x3f});
  checkpoint.put_bytes("param/w", tensor);
  CHECK(checkpoint.get_tensor("param/w").status().message() ==
        "checkpoint c.ckpt: tensor record 'param/w' is malformed (dtype 0, rank 1, 4 value bytes)");
  std::vector<uint8_t> history(9 * sizeof(double), 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::memcpy(history.data(), &nan, sizeof(nan));  // the epoch
  checkpoint.put_bytes("progress/history", history);
  CHECK(switchyard::detail::get_history(checkpoint).status().message() ==
        "checkpoint c.ckpt: record 'progress/history' holds an impossible epoch or size");
}

TEST_CASE("a tensor record declaring more than the memory budget is refused before it is copied",
          "[checkpoint][limits]") {
  Checkpoint checkpoint;
  checkpoint.set_source("c.ckpt");
  // dtype f32, rank 1, extent 2^40: 4 TiB declared, 4 bytes held.
  std::vector<uint8_t> tensor = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
  tensor.insert(tensor.end(), {0, 0, 0x80, 0x3f});
  checkpoint.put_bytes("param/w", tensor);
  const Status status = checkpoint.get_tensor("param/w").status();
  CHECK(status.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(status.message(),
             Catch::StartsWith("checkpoint c.ckpt: 4.0 TiB (4398046511104 bytes) for tensor record "
                               "'param/w' (f32 [1099511627776]) exceed the memory budget of ") &&
                 Catch::EndsWith(", the host's physical memory"));
}
