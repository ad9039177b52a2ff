// The path is opened with O_NONBLOCK and checked with fstat before anything is read: open() of a
// fifo without a writer then returns at once instead of waiting for one, and the checks apply to
// the file actually opened.
#include "runtime/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/memory_budget.h"

namespace switchyard::detail {
namespace {

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

Status open_error(const std::filesystem::path& path, const std::string& what, int code) {
  const std::string name = what + " " + path.string();
  if (code == ENOENT || code == ENOTDIR) return not_found(name + " does not exist");
  if (code == EACCES || code == EPERM) {
    return {StatusCode::kPermissionDenied, name + " is not readable: " + std::strerror(code)};
  }
  return unavailable("cannot open " + name + ": " + std::strerror(code));
}

// An open descriptor of a regular file, closed with the object.
class InputFile {
 public:
  InputFile() = default;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  Status open(const std::filesystem::path& path, const std::string& what) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return open_error(path, what, errno);
    struct stat info {};
    if (::fstat(fd_, &info) != 0) return open_error(path, what, errno);
    if (!S_ISREG(info.st_mode)) {
      const std::string type = file_type_name(info.st_mode);
      return invalid_argument(what + " " + path.string() + " is " + type + ", expected a file");
    }
    size_hint_ = static_cast<size_t>(info.st_size);
    return ok_status();
  }

  // The whole file must fit the memory budget (runtime/memory_budget.h): a file larger than the
  // host's memory (a sparse one costs nothing to make) is refused by its size before reading.
  template <typename Buffer>
  Status read_all(const std::filesystem::path& path, const std::string& what, Buffer& out) {
    const std::string name = what + " " + path.string();
    SY_RETURN_IF_ERROR(check_memory_budget(size_hint_, "its contents", name));
    out.clear();
    out.reserve(size_hint_);
    char chunk[1 << 16];
    while (true) {
      const ssize_t count = ::read(fd_, chunk, sizeof(chunk));
      if (count < 0 && errno == EINTR) continue;
      if (count < 0) {
        return data_loss("error reading " + what + " " + path.string() + ": " +
                         std::strerror(errno));
      }
      if (count == 0) return ok_status();
      if (out.size() + static_cast<size_t>(count) > size_hint_) {  // it grew while read
        SY_RETURN_IF_ERROR(
            check_memory_budget(out.size() + static_cast<size_t>(count), "its contents", name));
      }
      out.insert(out.end(), chunk, chunk + count);
    }
  }

 private:
  int fd_ = -1;
  size_t size_hint_ = 0;
};

template <typename Buffer>
Result<Buffer> read_input(const std::filesystem::path& path, const std::string& what) {
  InputFile file;
  SY_RETURN_IF_ERROR(file.open(path, what));
  Buffer bytes;
  SY_RETURN_IF_ERROR(file.read_all(path, what, bytes));
  return bytes;
}

}  // namespace

Status check_input_file(const std::filesystem::path& path, const std::string& what) {
  InputFile file;
  return file.open(path, what);
}

Status check_output_file(const std::filesystem::path& path, const std::string& what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return ok_status();  // to be created
  if (S_ISREG(info.st_mode)) return ok_status();
  return invalid_argument(what + " " + path.string() + " is " + file_type_name(info.st_mode) +
                          ", expected a file");
}

Result<std::string> read_input_text(const std::filesystem::path& path, const std::string& what) {
  return read_input<std::string>(path, what);
}

Result<std::vector<uint8_t>> read_input_bytes(const std::filesystem::path& path,
                                              const std::string& what) {
  return read_input<std::vector<uint8_t>>(path, what);
}

std::string quote_input(std::string_view text, size_t limit) {
  if (text.size() <= limit) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, limit)) + "...' (cut to " + std::to_string(limit) +
         " of " + std::to_string(text.size()) + " characters)";
}

}  // namespace switchyard::detail
