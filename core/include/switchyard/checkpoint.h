// Checkpoints: a training run's complete state in one file, written so that a crash at any moment
// leaves either the previous checkpoint or the new one, never a mixture.
//
// File layout (all integers little-endian), format version 1:
//   bytes 0..7    magic "\x89SYCKPT\n" (the high byte and newline catch text-mode mangling)
//   bytes 8..11   u32 format version
//   bytes 12..15  u32 record count
//   bytes 16..23  u64 payload size in bytes
//   bytes 24..31  u64 FNV-1a 64 checksum of the payload
//   payload       records: u32 key length, key bytes, u64 value length, value bytes
// The trainer stores, among others, "meta/fingerprint" (the model architecture), "meta/epoch",
// "param/<name>" and "optim/<name>" records; see core/src/model/train_state.cpp. What the records
// hold is versioned apart from the file layout: "meta/content_version" (absent: 1); version 2
// adds "model/layers", "model/init", "model/loss" (JSON and text) and "data/table" (JSON: the
// training file's columns, target, id, delimiter and table keys), so that a checkpoint predicts
// without a YAML file (core/src/train/checkpoint_metadata.cpp). Both versions load; a record that
// is present but malformed is DATA_LOSS naming the file and the record.
//
// Threads: a Checkpoint is a plain value (any number of readers, one writer). The functions keep no
// state: threads may read and write checkpoints at once, and threads that write the same path at
// the same moment each write their own temporary file, so the file is always one of theirs whole,
// and readers meanwhile see the previous file or a new one, never a mixture (tests/threads).
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "switchyard/dtype.h"
#include "switchyard/status.h"

namespace switchyard {

inline constexpr uint32_t kCheckpointFormatVersion = 1;

// A tensor's values with its dtype and shape, as held in a checkpoint record. Float dtypes are
// stored widened to f32 (exact for f16 and bf16), integer dtypes widened to i64.
struct TensorRecord {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<float> floats;      // when is_floating(dtype)
  std::vector<int64_t> integers;  // otherwise
};

// An ordered set of named records. Ownership: a plain value. Getters fail with DATA_LOSS naming
// the source file and the record when a record is missing or malformed, because a checkpoint that
// passed its checksum but lacks a record was written by something else.
class Checkpoint {
 public:
  void put_bytes(const std::string& key, std::vector<uint8_t> value);
  void put_string(const std::string& key, const std::string& value);
  void put_u64(const std::string& key, uint64_t value);
  void put_f64(const std::string& key, double value);
  void put_floats(const std::string& key, const std::vector<float>& values);
  void put_tensor(const std::string& key, const TensorRecord& tensor);

  bool contains(const std::string& key) const { return records_.count(key) != 0; }
  Result<std::vector<uint8_t>> get_bytes(const std::string& key) const;
  Result<std::string> get_string(const std::string& key) const;
  Result<uint64_t> get_u64(const std::string& key) const;
  Result<double> get_f64(const std::string& key) const;
  Result<std::vector<float>> get_floats(const std::string& key) const;
  Result<TensorRecord> get_tensor(const std::string& key) const;

  // Keys in insertion (= file) order.
  const std::vector<std::string>& keys() const { return order_; }
  // The keys that start with `prefix`, in file order.
  std::vector<std::string> keys_with_prefix(const std::string& prefix) const;

  // Where it was read from ("" for one built in memory); used in error messages.
  const std::string& source() const { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }

  // The DATA_LOSS status "checkpoint <source>: <what>".
  Status corrupt(const std::string& what) const;

 private:
  std::map<std::string, std::vector<uint8_t>> records_;
  std::vector<std::string> order_;
  std::string source_;
};

// The 64-bit FNV-1a hash, used for the payload checksum and the architecture fingerprint.
uint64_t fnv1a64(const void* data, size_t size_bytes, uint64_t hash = 0xcbf29ce484222325ULL);

// The file's bytes (header and payload) for `checkpoint`.
std::vector<uint8_t> serialize_checkpoint(const Checkpoint& checkpoint);
// Checks magic, version, size and checksum; DATA_LOSS naming `source` and what is wrong.
Result<Checkpoint> parse_checkpoint(const std::vector<uint8_t>& bytes, const std::string& source);

// Writes atomically: a temporary file in the same folder, fsync, rename over `path`, fsync of the
// folder. On any failure the temporary file is removed and an existing `path` is left untouched.
// Creates missing parent folders.
Status write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint);
Result<Checkpoint> read_checkpoint(const std::filesystem::path& path);

}  // namespace switchyard

#pragma GCC visibility pop
