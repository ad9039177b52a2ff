// The safetensors format (switchyard/safetensors.h): a JSON header written here, read with
// yaml-cpp (JSON is YAML), and a byte area checked range by range before anything is decoded.
#include "switchyard/safetensors.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "conformance/dtype_codec.h"  // f16 / bf16 bit conversions, shared with the conformance suite
#include "profile/json_text.h"
#include "runtime/input_file.h"
#include "switchyard/shape.h"
#include "train/byte_codec.h"
#include "train/file_bytes.h"

namespace switchyard {
namespace {

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
    {"F16", 2, [](const uint8_t* b) { return conformance::f16_bits_to_float(load<uint16_t>(b)); },
     nullptr},
    {"BF16", 2, [](const uint8_t* b) { return conformance::bf16_bits_to_float(load<uint16_t>(b)); },
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

Result<Entry> read_entry(const std::string& name, const YAML::Node& node, uint64_t data_bytes,
                         const std::string& source) {
  auto bad = [&](const std::string& what) {
    return data_loss("safetensors " + source + ": tensor '" + name + "': " + what);
  };
  if (!node.IsMap() || !node["dtype"] || !node["shape"] || !node["data_offsets"]) {
    return bad("expected an object with dtype, shape and data_offsets");
  }
  Entry entry;
  entry.name = name;
  std::string type_name;
  try {
    type_name = node["dtype"].as<std::string>();
    uint64_t count = 1;
    for (const YAML::Node& d : node["shape"]) {
      const int64_t size = d.as<int64_t>();
      if (size < 0) return bad("negative dimension " + std::to_string(size));
      // Every element takes at least a byte, so a shape with more elements than the data area
      // has bytes is wrong; checking as we go also keeps the product from overflowing.
      count *= static_cast<uint64_t>(size);
      if (count > data_bytes && count != 0)
        return bad("the shape holds more elements than the file");
      entry.shape.push_back(size);
    }
    const YAML::Node offsets = node["data_offsets"];
    if (!offsets.IsSequence() || offsets.size() != 2)
      return bad("data_offsets must be [begin, end]");
    entry.begin = offsets[0].as<uint64_t>();
    entry.end = offsets[1].as<uint64_t>();
  } catch (const YAML::Exception& error) {
    return bad(std::string("malformed entry: ") + error.what());
  }
  entry.type = stored_type(type_name);
  if (entry.type == nullptr) {
    return bad("dtype " + type_name + " is not supported (F64, F32, F16, BF16, I64, I32, I16, " +
               "I8, U8, BOOL are)");
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

}  // namespace

Result<std::vector<uint8_t>> serialize_safetensors(const SafetensorsFile& file) {
  std::string header = "{";
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
    if (header.size() > 1) header += ",";
    profile_detail::append_json_string(header, name);
    header += std::string(":{\"dtype\":\"") + (floating ? "F32" : "I64") + "\",\"shape\":[";
    for (size_t i = 0; i < record.shape.size(); ++i) {
      header += (i ? "," : "") + std::to_string(record.shape[i]);
    }
    header +=
        "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
  }
  if (!file.metadata.empty()) {
    header += std::string(header.size() > 1 ? "," : "") + "\"" + kMetadataKey + "\":{";
    bool first = true;
    for (const auto& [key, value] : file.metadata) {
      if (!first) header += ",";
      profile_detail::append_json_string(header, key);
      header += ":";
      profile_detail::append_json_string(header, value);
      first = false;
    }
    header += "}";
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the data area starts 8-byte aligned
  std::vector<uint8_t> bytes;
  detail::append_u64(bytes, header.size());
  detail::append_bytes(bytes, header.data(), header.size());
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
  YAML::Node root;
  try {
    root = YAML::Load(header);
  } catch (const YAML::Exception& error) {
    return bad(std::string("the header is not valid JSON: ") + error.what());
  }
  if (!root.IsMap()) return bad("the header is not a JSON object");
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& item : root) {
    const std::string name = item.first.as<std::string>();
    if (name == kMetadataKey) {
      if (!item.second.IsMap()) return bad("__metadata__ is not an object of strings");
      for (const auto& meta : item.second) {
        file.metadata[meta.first.as<std::string>()] = meta.second.as<std::string>();
      }
      continue;
    }
    SY_ASSIGN_OR_RETURN(Entry entry, read_entry(name, item.second, data_bytes, source));
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
    return data_loss("safetensors " + source + ": malformed header: " + error.what());
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
