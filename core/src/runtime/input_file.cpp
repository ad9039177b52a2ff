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

namespace {

// The length of the valid UTF-8 sequence at text[i] (a lead byte >= 0xc2), or 0.
size_t utf8_sequence(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  const size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
  if (length == 0 || lead > 0xf4 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  }
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
  const unsigned char second = byte(i + 1);
  if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second >= 0xa0) ||
      (lead == 0xf0 && second < 0x90) || (lead == 0xf4 && second >= 0x90)) {
    return 0;
  }
  // C1 control characters (U+0080..U+009F) act on terminals too.
  if (lead == 0xc2 && second < 0xa0) return 0;
  return length;
}

}  // namespace

std::string printable_text(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t length = c >= 0x80 ? utf8_sequence(text, i) : 0; length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
      ++i;
    }
  }
  return out;
}

std::string printable_input(std::string_view text, size_t limit) {
  if (text.size() <= limit) return printable_text(text);
  return printable_text(text.substr(0, limit)) + "... (cut to " + std::to_string(limit) + " of " +
         std::to_string(text.size()) + " bytes)";
}

std::string quote_input(std::string_view text, size_t limit) {
  if (text.size() <= limit) return "'" + printable_text(text) + "'";
  return "'" + printable_text(text.substr(0, limit)) + "...' (cut to " + std::to_string(limit) +
         " of " + std::to_string(text.size()) + " characters)";
}

std::string name_for_message(std::string_view name, size_t limit) {
  // Whole units only (a character, a UTF-8 sequence, an escaped byte), so that the cut never
  // leaves half an escape or half a character; `limit` counts the bytes shown.
  std::string out;
  for (size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    const size_t sequence = c >= 0x80 ? utf8_sequence(name, i) : 0;
    const size_t length = sequence > 0 ? sequence : 1;
    const std::string unit = printable_text(name.substr(i, length));
    if (out.size() + unit.size() > limit) return out + "...";
    out += unit;
    i += length;
  }
  return out;
}

std::string quote_name(std::string_view name, size_t limit) {
  return "'" + name_for_message(name, limit) + "'";
}

}  // namespace switchyard::detail
