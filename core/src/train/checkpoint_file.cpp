// The checkpoint file: header and checksum. It is written by detail::write_file_atomically
// (runtime/file_bytes.h), so that a crash leaves either the old file or the new one.
#include <iomanip>
#include <sstream>

#include "runtime/file_bytes.h"
#include "support/byte_codec.h"
#include "switchyard/checkpoint.h"

namespace switchyard {
namespace {

constexpr uint8_t kMagic[8] = {0x89, 'S', 'Y', 'C', 'K', 'P', 'T', '\n'};
constexpr size_t kHeaderBytes = 32;

std::string hex64(uint64_t value) {
  std::ostringstream text;
  text << "0x" << std::hex << std::setw(16) << std::setfill('0') << value;
  return text.str();
}

Result<Checkpoint> parse_records(detail::ByteReader& reader, uint32_t record_count,
                                 Checkpoint checkpoint) {
  for (uint32_t i = 0; i < record_count; ++i) {
    const uint32_t key_size = reader.u32();
    const auto key = reader.bytes(key_size);
    const uint64_t value_size = reader.u64();
    auto value = reader.bytes(value_size);
    if (reader.failed()) {
      return checkpoint.corrupt("record " + std::to_string(i) + " of " +
                                std::to_string(record_count) + " runs past the end of the payload");
    }
    checkpoint.put_bytes(std::string(key.begin(), key.end()), std::move(value));
  }
  if (reader.remaining() != 0) {
    return checkpoint.corrupt(std::to_string(reader.remaining()) +
                              " unexpected bytes after the last record");
  }
  return checkpoint;
}

}  // namespace

std::vector<uint8_t> serialize_checkpoint(const Checkpoint& checkpoint) {
  std::vector<uint8_t> payload;
  for (const auto& key : checkpoint.keys()) {
    const auto value = checkpoint.get_bytes(key);
    detail::append_u32(payload, static_cast<uint32_t>(key.size()));
    detail::append_bytes(payload, key.data(), key.size());
    detail::append_u64(payload, value->size());
    detail::append_bytes(payload, value->data(), value->size());
  }
  std::vector<uint8_t> file(kMagic, kMagic + sizeof(kMagic));
  detail::append_u32(file, kCheckpointFormatVersion);
  detail::append_u32(file, static_cast<uint32_t>(checkpoint.keys().size()));
  detail::append_u64(file, payload.size());
  detail::append_u64(file, fnv1a64(payload.data(), payload.size()));
  file.insert(file.end(), payload.begin(), payload.end());
  return file;
}

Result<Checkpoint> parse_checkpoint(const std::vector<uint8_t>& bytes, const std::string& source) {
  Checkpoint checkpoint;
  checkpoint.set_source(source);
  if (bytes.size() < kHeaderBytes) {
    return checkpoint.corrupt("truncated: " + std::to_string(bytes.size()) +
                              " bytes, shorter than the " + std::to_string(kHeaderBytes) +
                              "-byte header");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return checkpoint.corrupt("not a switchyard checkpoint (wrong magic bytes)");
  }
  detail::ByteReader header(bytes.data() + sizeof(kMagic), kHeaderBytes - sizeof(kMagic));
  const uint32_t version = header.u32();
  const uint32_t record_count = header.u32();
  const uint64_t payload_size = header.u64();
  const uint64_t stored_checksum = header.u64();
  if (version != kCheckpointFormatVersion) {
    return checkpoint.corrupt("format version " + std::to_string(version) +
                              " is not supported (this build reads version " +
                              std::to_string(kCheckpointFormatVersion) + ")");
  }
  const uint64_t actual_payload = bytes.size() - kHeaderBytes;
  if (actual_payload != payload_size) {
    return checkpoint.corrupt(
        std::string(actual_payload < payload_size ? "truncated" : "too long") +
        ": the header announces a " + std::to_string(payload_size) +
        "-byte payload, the file holds " + std::to_string(actual_payload));
  }
  const uint64_t checksum = fnv1a64(bytes.data() + kHeaderBytes, actual_payload);
  if (checksum != stored_checksum) {
    return checkpoint.corrupt("checksum mismatch (stored " + hex64(stored_checksum) +
                              ", computed " + hex64(checksum) + "): the file is corrupted");
  }
  detail::ByteReader reader(bytes.data() + kHeaderBytes, actual_payload);
  return parse_records(reader, record_count, std::move(checkpoint));
}

Status write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint) {
  return detail::write_file_atomically(path, serialize_checkpoint(checkpoint), "checkpoint");
}

Result<Checkpoint> read_checkpoint(const std::filesystem::path& path) {
  SY_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes,
                      detail::read_file_bytes(path, "checkpoint"));
  return parse_checkpoint(bytes, path.string());
}

}  // namespace switchyard
