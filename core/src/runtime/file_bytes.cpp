// Whole-file reads and atomic writes (runtime/file_bytes.h).
#include "runtime/file_bytes.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/input_file.h"
#include "support/temp_path.h"

namespace switchyard {
namespace {

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

}  // namespace

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
  const std::filesystem::path temp = temporary_path_for(path);
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

Result<std::vector<uint8_t>> detail::read_file_bytes(const std::filesystem::path& path,
                                                     const std::string& what) {
  return read_input_bytes(path, what);
}

}  // namespace switchyard
