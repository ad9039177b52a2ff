// The checkpoint file: header, checksum, and the atomic write (temp file, fsync, rename, fsync
// of the folder) that makes a crash leave either the old file or the new one.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "runtime/input_file.h"
#include "switchyard/checkpoint.h"
#include "train/byte_codec.h"
#include "train/file_bytes.h"

namespace switchyard {
namespace {

constexpr uint8_t kMagic[8] = {0x89, 'S', 'Y', 'C', 'K', 'P', 'T', '\n'};
constexpr size_t kHeaderBytes = 32;

std::string hex64(uint64_t value) {
  std::ostringstream text;
  text << "0x" << std::hex << std::setw(16) << std::setfill('0') << value;
  return text.str();
}

Status errno_status(const std::string& what, const std::filesystem::path& path) {
  const int code = errno;
  const std::string text = what + " " + path.string() + ": " + std::strerror(code);
  if (code == EACCES || code == EPERM || code == EROFS) {
    return {StatusCode::kPermissionDenied, text};
  }
  if (code == ENOSPC || code == EDQUOT || code == EFBIG) return resource_exhausted(text);
  return unavailable(text);
}

Status write_all(int fd, const std::vector<uint8_t>& bytes, const std::filesystem::path& path,
                 const std::string& what) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t count = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return errno_status("cannot write " + what, path);
    written += static_cast<size_t>(count);
  }
  return ok_status();
}

// Makes the rename durable: without this a power cut may forget the new directory entry.
Status sync_directory(const std::filesystem::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_status("cannot open folder", folder);
  const int result = ::fsync(fd);
  ::close(fd);
  if (result != 0 && errno != EINVAL) return errno_status("cannot fsync folder", folder);
  return ok_status();
}

Status write_temp_file(const std::filesystem::path& temp, const std::vector<uint8_t>& bytes,
                       const std::string& what) {
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("cannot create " + what, temp);
  Status status = write_all(fd, bytes, temp, what);
  if (status.ok() && ::fsync(fd) != 0) status = errno_status("cannot fsync " + what, temp);
  if (::close(fd) != 0 && status.ok()) status = errno_status("cannot close " + what, temp);
  return status;
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

Status detail::write_file_atomically(const std::filesystem::path& path,
                                     const std::vector<uint8_t>& bytes, const std::string& what) {
  const std::filesystem::path folder =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    return unavailable("cannot create " + what + " folder " + folder.string() + ": " +
                       error.message());
  }
  const std::filesystem::path temp =
      folder / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
  Status status = write_temp_file(temp, bytes, what);
  if (status.ok() && std::rename(temp.c_str(), path.c_str()) != 0) {
    status = errno_status("cannot rename the temporary " + what + " onto", path);
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());  // the previous file at `path` is untouched
    return status;
  }
  return sync_directory(folder);
}

Status write_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint) {
  return detail::write_file_atomically(path, serialize_checkpoint(checkpoint), "checkpoint");
}

Result<std::vector<uint8_t>> detail::read_file_bytes(const std::filesystem::path& path,
                                                     const std::string& what) {
  return read_input_bytes(path, what);
}

Result<Checkpoint> read_checkpoint(const std::filesystem::path& path) {
  SY_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes,
                      detail::read_file_bytes(path, "checkpoint"));
  return parse_checkpoint(bytes, path.string());
}

}  // namespace switchyard
