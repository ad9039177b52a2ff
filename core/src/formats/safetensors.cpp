// The safetensors format (switchyard/safetensors.h): a JSON header written and read with
// nlohmann::json (strictly: one object, no repeated names, valid UTF-8, only space padding after
// it), and a byte area checked range by range before anything is decoded.
#include "switchyard/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include "runtime/file_bytes.h"
#include "runtime/input_file.h"
#include "runtime/memory_budget.h"
#include "support/byte_codec.h"
#include "support/dtype_codec.h"  // f16 / bf16 bit conversions, shared with the conformance suite
#include "support/json_io.h"
#include "switchyard/shape.h"

namespace switchyard {
namespace {

using detail::Json;

constexpr const char* kMetadataKey = "__metadata__";
// A header larger than this is not a weight file (the format's own readers refuse 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

template <typename T>
T load(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes,
              sizeof(T));  // the file is little-endian, as is every host we build for
  return value;
}

// How a stored dtype is decoded: its element size, and one element as a float (float dtypes) or
// as an integer (the others); exactly one of the two is set.
struct StoredType {
  const char* name;
  size_t bytes;
  float (*to_float)(const uint8_t*);
  int64_t (*to_integer)(const uint8_t*);
};

constexpr StoredType kStoredTypes[] = {
    {"F64", 8, [](const uint8_t* b) { return static_cast<float>(load<double>(b)); }, nullptr},
    {"F32", 4, [](const uint8_t* b) { return load<float>(b); }, nullptr},
    {"F16", 2, [](const uint8_t* b) { return sy_support::f16_bits_to_f32(load<uint16_t>(b)); },
     nullptr},
    {"BF16", 2, [](const uint8_t* b) { return sy_support::bf16_bits_to_f32(load<uint16_t>(b)); },
     nullptr},
    {"I64", 8, nullptr, [](const uint8_t* b) { return load<int64_t>(b); }},
    {"I32", 4, nullptr, [](const uint8_t* b) { return int64_t{load<int32_t>(b)}; }},
    {"I16", 2, nullptr, [](const uint8_t* b) { return int64_t{load<int16_t>(b)}; }},
    {"I8", 1, nullptr, [](const uint8_t* b) { return int64_t{load<int8_t>(b)}; }},
    {"U8", 1, nullptr, [](const uint8_t* b) { return int64_t{load<uint8_t>(b)}; }},
    {"BOOL", 1, nullptr, [](const uint8_t* b) { return int64_t{load<uint8_t>(b)}; }},
};

const StoredType* stored_type(const std::string& name) {
  for (const StoredType& type : kStoredTypes) {
    if (name == type.name) return &type;
  }
  return nullptr;
}

uint64_t element_count(const std::vector<int64_t>& shape) {
  uint64_t count = 1;
  for (int64_t d : shape) count *= static_cast<uint64_t>(d);
  return count;
}

// One tensor's header entry, checked against the data area of `data_bytes`.
struct Entry {
  std::string name;
  const StoredType* type = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// A number of the header as T, when it is an integer that fits: get<T>() alone would truncate a
// float or wrap a number out of T's range without a word.
template <typename T>
std::optional<T> header_integer(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto number = value.get<uint64_t>();
    if (number > static_cast<uint64_t>(std::numeric_limits<T>::max())) return std::nullopt;
    return static_cast<T>(number);
  }
  if (value.is_number_integer()) {  // negative: nlohmann keeps the others unsigned
    const auto number = value.get<int64_t>();
    if (number < static_cast<int64_t>(std::numeric_limits<T>::min())) return std::nullopt;
    return static_cast<T>(number);
  }
  return std::nullopt;
}

Result<Entry> read_entry(const std::string& name, const Json& node, uint64_t data_bytes,
                         const std::string& source) {
  // Names and values come from the file: quoted printable and cut (runtime/input_file.h).
  auto bad = [&](const std::string& what) {
    return data_loss("safetensors " + source + ": tensor " + detail::quote_input(name) + ": " +
                     what);
  };
  if (!node.is_object() || !node.contains("dtype") || !node.contains("shape") ||
      !node.contains("data_offsets")) {
    return bad("expected an object with dtype, shape and data_offsets");
  }
  Entry entry;
  entry.name = name;
  if (!node.at("dtype").is_string()) return bad("dtype must be a string");
  const std::string type_name = node.at("dtype").get<std::string>();
  if (!node.at("shape").is_array()) return bad("shape must be a list of integers");
  uint64_t count = 1;
  for (const Json& d : node.at("shape")) {
    const std::optional<int64_t> size = header_integer<int64_t>(d);
    if (!size) {
      return bad("shape must be a list of integers, not " +
                 detail::printable_input(detail::json_text(d)));
    }
    if (*size < 0) return bad("negative dimension " + std::to_string(*size));
    // Every element takes at least a byte, so a shape with more elements than the data area
    // has bytes is wrong; checking before multiplying also keeps the product from overflowing.
    if (count != 0 && static_cast<uint64_t>(*size) > data_bytes / count)
      return bad("the shape holds more elements than the file");
    count *= static_cast<uint64_t>(*size);
    entry.shape.push_back(*size);
  }
  const Json& offsets = node.at("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2) return bad("data_offsets must be [begin, end]");
  const std::optional<uint64_t> begin = header_integer<uint64_t>(offsets[0]);
  const std::optional<uint64_t> end = header_integer<uint64_t>(offsets[1]);
  if (!begin || !end)
    return bad("data_offsets must be two byte offsets, not " +
               detail::printable_input(detail::json_text(offsets)));
  entry.begin = *begin;
  entry.end = *end;
  entry.type = stored_type(type_name);
  if (entry.type == nullptr) {
    return bad("dtype " + detail::printable_input(type_name) +
               " is not supported (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL are)");
  }
  if (entry.begin > entry.end || entry.end > data_bytes) {
    return bad("data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
               "] outside the " + std::to_string(data_bytes) + " data bytes");
  }
  const uint64_t expected = element_count(entry.shape) * entry.type->bytes;
  if (entry.end - entry.begin != expected) {
    return bad(std::to_string(entry.end - entry.begin) + " bytes for " + type_name + " " +
               Shape(entry.shape).to_string() + ", which needs " + std::to_string(expected));
  }
  // Decoded, each value takes 4 bytes (float dtypes) or 8 (the others): within the budget.
  SY_RETURN_IF_ERROR(detail::check_memory_budget(
      element_count(entry.shape) * (entry.type->to_float != nullptr ? 4 : 8),
      "tensor " + detail::quote_input(name) + " (" + type_name + " " +
          Shape(entry.shape).to_string() + ")",
      "safetensors " + source));
  return entry;
}

// The format's rule: the tensors, in offset order, tile the data area exactly: the first starts at
// 0, each starts where the one before ends, the last ends at the end of the file. A header length
// one byte off leaves a byte over (or missing) and every tensor shifted; this catches it.
Status check_coverage(std::vector<Entry>& entries, uint64_t data_bytes, const std::string& source) {
  auto bad = [&](const std::string& what) {
    return data_loss("safetensors " + source + ": " + what);
  };
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;  // the data area [0, covered) belongs to the tensors before entries[i]
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = entries[i];
    if (entry.begin < covered) {
      return bad("tensors " + detail::quote_input(entries[i - 1].name) + " and " +
                 detail::quote_input(entry.name) + " overlap (data_offsets [" +
                 std::to_string(entries[i - 1].begin) + ", " + std::to_string(covered) + "] and [" +
                 std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "])");
    }
    if (entry.begin > covered) {
      return bad("data bytes [" + std::to_string(covered) + ", " + std::to_string(entry.begin) +
                 ") belong to no tensor (a hole before " + detail::quote_input(entry.name) + ")");
    }
    covered = entry.end;
  }
  if (covered != data_bytes) {
    return bad("data bytes [" + std::to_string(covered) + ", " + std::to_string(data_bytes) +
               ") after the last tensor belong to no tensor (the tensors must cover the data "
               "area exactly; is the header length wrong?)");
  }
  return ok_status();
}

TensorRecord decode(const Entry& entry, const uint8_t* data) {
  TensorRecord record;
  record.shape = entry.shape;
  const uint64_t count = element_count(entry.shape);
  const uint8_t* at = data + entry.begin;
  if (entry.type->to_float != nullptr) {
    record.dtype = DType::kF32;
    record.floats.resize(count);
    for (uint64_t i = 0; i < count; ++i, at += entry.type->bytes) {
      record.floats[i] = entry.type->to_float(at);
    }
  } else {
    record.dtype = DType::kI64;
    record.integers.resize(count);
    for (uint64_t i = 0; i < count; ++i, at += entry.type->bytes) {
      record.integers[i] = entry.type->to_integer(at);
    }
  }
  return record;
}

// The header's JSON object, read as the format describes it: it starts with '{', may be padded
// with spaces (0x20) after the object and with nothing else, and holds strict JSON.
Result<Json> read_header(const std::string& header, const std::string& source) {
  auto bad = [&](const std::string& what) {
    return data_loss("safetensors " + source + ": " + what);
  };
  const size_t last = header.find_last_not_of(' ');
  const std::string_view object(header.data(), last == std::string::npos ? 0 : last + 1);
  Json root;
  try {
    root = detail::parse_strict_json(object);
  } catch (const std::exception& error) {  // Json::parse_error or detail::DuplicateJsonKey
    // The parser quotes what it last read: the file's bytes, made printable and cut.
    return bad("the header is not valid JSON: " + detail::printable_input(error.what(), 400));
  }
  if (!root.is_object() || object.front() != '{' || object.back() != '}') {
    return bad("the header is not a JSON object padded with spaces only");
  }
  return root;
}

}  // namespace

Result<std::vector<uint8_t>> serialize_safetensors(const SafetensorsFile& file) {
  Json header = Json::object();
  std::vector<uint8_t> data;
  std::set<std::string> names;
  for (const auto& [name, record] : file.tensors) {
    if (name.empty() || name == kMetadataKey || !names.insert(name).second) {
      return invalid_argument("safetensors: tensor name '" + name +
                              "' is empty, reserved or "
                              "repeated");
    }
    const bool floating = is_floating(record.dtype);
    const uint64_t count = element_count(record.shape);
    if ((floating ? record.floats.size() : record.integers.size()) != count) {
      return invalid_argument(
          "safetensors: tensor '" + name + "' has " +
          std::to_string(floating ? record.floats.size() : record.integers.size()) +
          " values for shape " + Shape(record.shape).to_string());
    }
    const uint64_t begin = data.size();
    if (floating) {
      detail::append_bytes(data, record.floats.data(), record.floats.size() * sizeof(float));
    } else {
      detail::append_bytes(data, record.integers.data(), record.integers.size() * sizeof(int64_t));
    }
    header[name] = Json{{"dtype", floating ? "F32" : "I64"},
                        {"shape", record.shape},
                        {"data_offsets", {begin, data.size()}}};
  }
  if (!file.metadata.empty()) header[kMetadataKey] = file.metadata;
  std::string text = detail::json_text(header);
  text.append((8 - text.size() % 8) % 8, ' ');  // the data area starts 8-byte aligned
  std::vector<uint8_t> bytes;
  detail::append_u64(bytes, text.size());
  detail::append_bytes(bytes, text.data(), text.size());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

static Result<SafetensorsFile> parse_unguarded(const std::vector<uint8_t>& bytes,
                                               const std::string& source) {
  auto bad = [&](const std::string& what) {
    return data_loss("safetensors " + source + ": " + what);
  };
  detail::ByteReader reader(bytes.data(), bytes.size());
  const uint64_t header_bytes = reader.u64();
  if (reader.failed()) return bad("shorter than the 8-byte header length");
  if (header_bytes > kMaxHeaderBytes || header_bytes > reader.remaining()) {
    return bad("header length " + std::to_string(header_bytes) + " exceeds the " +
               std::to_string(reader.remaining()) + " bytes after it");
  }
  const std::string header(reinterpret_cast<const char*>(bytes.data() + 8), header_bytes);
  const uint64_t data_bytes = reader.remaining() - header_bytes;
  const uint8_t* data = bytes.data() + 8 + header_bytes;
  SY_ASSIGN_OR_RETURN(const Json root, read_header(header, source));
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, value] : root.items()) {
    if (name == kMetadataKey) {
      if (!value.is_object()) return bad("__metadata__ is not an object of strings");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) return bad("__metadata__ is not an object of strings");
        file.metadata[key] = text.get<std::string>();
      }
      continue;
    }
    SY_ASSIGN_OR_RETURN(Entry entry, read_entry(name, value, data_bytes, source));
    entries.push_back(std::move(entry));
  }
  SY_RETURN_IF_ERROR(check_coverage(entries, data_bytes, source));
  for (const Entry& entry : entries) file.tensors.emplace_back(entry.name, decode(entry, data));
  return file;
}

// A header whose JSON is well formed but of unexpected types can make the JSON reader throw (a
// key or a metadata value that is not a string): that is a malformed file, not a crash.
Result<SafetensorsFile> parse_safetensors(const std::vector<uint8_t>& bytes,
                                          const std::string& source) {
  try {
    return parse_unguarded(bytes, source);
  } catch (const std::exception& error) {
    return data_loss("safetensors " + source +
                     ": malformed header: " + detail::printable_input(error.what(), 400));
  }
}

Status write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file) {
  SY_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, serialize_safetensors(file));
  return detail::write_file_atomically(path, bytes, "weights");
}

Result<SafetensorsFile> read_safetensors(const std::filesystem::path& path) {
  SY_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, detail::read_file_bytes(path, "weights"));
  return parse_safetensors(bytes, path.string());
}

}  // namespace switchyard
