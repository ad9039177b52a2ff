// The .npy format: the magic "\x93NUMPY", a major and minor version byte, the header's length
// (2 bytes little-endian in version 1, 4 bytes in versions 2 and 3), then the header: a Python
// dict literal with 'descr', 'fortran_order' and 'shape', padded with spaces and a newline; the
// data follows.
#include "npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "runtime/input_file.h"

namespace switchyard::cli {
namespace {

// The text after `'key':` in the header, with leading spaces skipped; npos when the key is absent.
size_t value_after(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return at;
  size_t pos = header.find(':', at);
  if (pos == std::string::npos) return pos;
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  return pos;
}

Status parse_header(const std::string& header, const std::string& file, NpyArray& array) {
  const auto bad = [&](const std::string& what) {
    // The header comes from the file: printable and cut (a damaged one may be megabytes of
    // bytes for the terminal).
    return invalid_argument(file + ": not a readable .npy file: " + what +
                            " (header: " + detail::printable_input(header) + ")");
  };
  size_t pos = value_after(header, "descr");
  if (pos == std::string::npos || pos >= header.size() || header[pos] != '\'') {
    return bad("no 'descr'");
  }
  const size_t end = header.find('\'', pos + 1);
  if (end == std::string::npos) return bad("an unterminated 'descr'");
  array.descr = header.substr(pos + 1, end - pos - 1);
  if (array.descr == "|i1" || array.descr == "|u1" || array.descr == "|b1") {
    return bad("dtype " + detail::quote_name(array.descr) +
               " is not supported (f4, f8, i4 or i8, little-endian)");
  }
  if (array.descr != "<f4" && array.descr != "<f8" && array.descr != "<i4" &&
      array.descr != "<i8") {
    return bad("dtype " + detail::quote_name(array.descr) +
               " is not supported (<f4, <f8, <i4 or <i8)");
  }
  pos = value_after(header, "fortran_order");
  if (pos == std::string::npos) return bad("no 'fortran_order'");
  if (header.compare(pos, 4, "True") == 0) return bad("Fortran order is not supported");
  if (header.compare(pos, 5, "False") != 0) return bad("'fortran_order' is neither True nor False");
  pos = value_after(header, "shape");
  if (pos == std::string::npos || pos >= header.size() || header[pos] != '(') {
    return bad("no 'shape' tuple");
  }
  const size_t close = header.find(')', pos);
  if (close == std::string::npos) return bad("an unterminated 'shape'");
  array.shape.clear();
  size_t i = pos + 1;
  while (i < close) {
    while (i < close && (header[i] == ' ' || header[i] == ',')) ++i;
    if (i >= close) break;
    int64_t extent = 0;
    size_t digits = 0;
    while (i < close && header[i] >= '0' && header[i] <= '9') {
      if (extent > (std::numeric_limits<int64_t>::max() - 9) / 10)
        return bad("an extent overflows");
      extent = extent * 10 + (header[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) return bad("'shape' holds something other than integers");
    array.shape.push_back(extent);
  }
  return ok_status();
}

}  // namespace

Result<NpyArray> read_npy(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(file + ": cannot be opened");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    return invalid_argument(file + ": not a .npy file (no \\x93NUMPY magic)");
  }
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  const int major = byte(6);
  size_t header_length = 0, header_start = 0;
  if (major == 1) {
    header_length = byte(8) | (size_t{byte(9)} << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return invalid_argument(file + ": truncated .npy header");
    header_length =
        byte(8) | (size_t{byte(9)} << 8) | (size_t{byte(10)} << 16) | (size_t{byte(11)} << 24);
    header_start = 12;
  } else {
    return invalid_argument(file + ": .npy format version " + std::to_string(major) +
                            " is not supported (1, 2 or 3)");
  }
  if (header_length > bytes.size() - header_start) {
    return invalid_argument(file + ": the .npy header says " + std::to_string(header_length) +
                            " bytes, the file has " + std::to_string(bytes.size() - header_start));
  }
  NpyArray array;
  const std::string header(bytes.data() + header_start, header_length);
  SY_RETURN_IF_ERROR(parse_header(header, file, array));
  const size_t element = array.descr[2] == '4' ? 4 : 8;
  uint64_t count = 1;
  for (const int64_t extent : array.shape) {
    if (extent != 0 && count > std::numeric_limits<uint64_t>::max() / element / extent) {
      return invalid_argument(file + ": the .npy shape's element count overflows");
    }
    count *= static_cast<uint64_t>(extent);
  }
  const size_t data_start = header_start + header_length;
  const uint64_t available = bytes.size() - data_start;
  if (count * element != available) {
    return invalid_argument(file + ": the .npy shape needs " + std::to_string(count * element) +
                            " bytes of " + array.descr + " data, the file has " +
                            std::to_string(available));
  }
  array.values.resize(count);
  const char* data = bytes.data() + data_start;
  for (uint64_t i = 0; i < count; ++i) {
    const char* at = data + i * element;
    if (array.descr == "<f4") {
      float v;
      std::memcpy(&v, at, 4);
      array.values[i] = v;
    } else if (array.descr == "<f8") {
      std::memcpy(&array.values[i], at, 8);
    } else if (array.descr == "<i4") {
      int32_t v;
      std::memcpy(&v, at, 4);
      array.values[i] = v;
    } else {
      int64_t v;
      std::memcpy(&v, at, 8);
      if (v > (int64_t{1} << 53) || v < -(int64_t{1} << 53)) {
        return invalid_argument(file + ": element " + std::to_string(i) + " (" + std::to_string(v) +
                                ") is beyond 2^53");
      }
      array.values[i] = static_cast<double>(v);
    }
  }
  return array;
}

}  // namespace switchyard::cli
