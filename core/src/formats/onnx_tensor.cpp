#include "formats/onnx_tensor.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>

#include "formats/onnx_proto.h"
#include "runtime/memory_budget.h"
#include "support/dtype_codec.h"  // f16 / bf16 bit conversions

namespace switchyard::onnx_detail {
namespace {

size_t element_bytes(int32_t type) {
  switch (type) {
    case kFloat:
    case kInt32:
    case kUint32:
      return 4;
    case kDouble:
    case kInt64:
    case kUint64:
      return 8;
    case kFloat16:
    case kBfloat16:
    case kInt16:
    case kUint16:
      return 2;
    case kInt8:
    case kUint8:
    case kBool:
      return 1;
    default:
      return 0;
  }
}

template <typename T>
T load_le(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));  // ONNX's raw data is little-endian, as our hosts are
  return value;
}

// One element of raw little-endian bytes into the tensor's storage.
void decode_raw(const uint8_t* bytes, int64_t count, HostTensor& out) {
  const size_t size = element_bytes(out.type);
  for (int64_t k = 0; k < count; ++k) {
    const uint8_t* p = bytes + static_cast<size_t>(k) * size;
    const auto u = static_cast<size_t>(k);
    switch (out.type) {
      case kFloat:
        out.f[u] = load_le<float>(p);
        break;
      case kDouble:
        out.f[u] = static_cast<float>(load_le<double>(p));
        break;
      case kFloat16:
        out.f[u] = sy_support::f16_bits_to_f32(load_le<uint16_t>(p));
        break;
      case kBfloat16:
        out.f[u] = sy_support::bf16_bits_to_f32(load_le<uint16_t>(p));
        break;
      case kInt64:
        out.i[u] = load_le<int64_t>(p);
        break;
      case kInt32:
        out.i[u] = load_le<int32_t>(p);
        break;
      case kInt16:
        out.i[u] = load_le<int16_t>(p);
        break;
      case kInt8:
        out.i[u] = load_le<int8_t>(p);
        break;
      case kUint8:
        out.i[u] = load_le<uint8_t>(p);
        break;
      case kUint16:
        out.i[u] = load_le<uint16_t>(p);
        break;
      case kUint32:
        out.i[u] = load_le<uint32_t>(p);
        break;
      case kUint64:
        out.i[u] = static_cast<int64_t>(std::min<uint64_t>(
            load_le<uint64_t>(p), uint64_t{std::numeric_limits<int64_t>::max()}));
        break;
      case kBool:
        out.i[u] = p[0] != 0 ? 1 : 0;
        break;
      default:
        break;
    }
  }
}

// The bytes of an external tensor: `location` under `base_dir`, never outside it. Exactly
// `expected` bytes (the tensor's size), checked before anything is read.
Result<std::vector<uint8_t>> read_external(const onnx::TensorProto& proto, const std::string& what,
                                           const std::filesystem::path& base_dir,
                                           uintmax_t expected) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : proto.external_data()) {
    try {
      if (entry.key() == "location")
        location = entry.value();
      else if (entry.key() == "offset")
        offset = std::stoll(entry.value());
      else if (entry.key() == "length")
        length = std::stoll(entry.value());
    } catch (const std::exception&) {
      return data_loss(what + ": external data " + entry.key() + " '" +
                       entry.value().substr(0, 40) + "' is not a number");
    }
  }
  if (location.empty()) return data_loss(what + ": external data without a location");
  if (base_dir.empty()) {
    return invalid_argument(what + ": external data '" + location.substr(0, 200) +
                            "' cannot be read for a model given as bytes");
  }
  const std::filesystem::path relative(location);
  if (relative.is_absolute() || location.find('\0') != std::string::npos) {
    return invalid_argument(what + ": external data path '" + location.substr(0, 200) +
                            "' is absolute; it must be relative to the model's folder");
  }
  std::error_code error;
  const std::filesystem::path root = std::filesystem::weakly_canonical(base_dir, error);
  const std::filesystem::path target =
      std::filesystem::weakly_canonical(base_dir / relative, error);
  const auto [root_end, target_it] =
      std::mismatch(root.begin(), root.end(), target.begin(), target.end());
  if (error || root_end != root.end() || target == root) {
    return invalid_argument(what + ": external data path '" + location.substr(0, 200) +
                            "' leaves the model's folder " + base_dir.string());
  }
  const uintmax_t file_size = std::filesystem::file_size(target, error);
  if (error || !std::filesystem::is_regular_file(target)) {
    return data_loss(what + ": external data file " + target.string() + " cannot be read");
  }
  if (offset < 0 || static_cast<uintmax_t>(offset) > file_size) {
    return data_loss(what + ": external data offset " + std::to_string(offset) + " is outside " +
                     target.string() + " (" + std::to_string(file_size) + " bytes)");
  }
  const uintmax_t available = file_size - static_cast<uintmax_t>(offset);
  const uintmax_t wanted = length < 0 ? available : static_cast<uintmax_t>(length);
  if (wanted > available) {
    return data_loss(what + ": external data wants " + std::to_string(wanted) +
                     " bytes at offset " + std::to_string(offset) + " of " + target.string() +
                     ", which has " + std::to_string(file_size));
  }
  if (wanted != expected) {
    return data_loss(what + " needs " + std::to_string(expected) + " bytes but its external data " +
                     "in " + target.string() + " holds " + std::to_string(wanted));
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(wanted));
  std::ifstream in(target, std::ios::binary);
  in.seekg(offset);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    return data_loss(what + ": reading external data from " + target.string() + " failed");
  }
  return bytes;
}

}  // namespace

std::string elem_type_name(int32_t type) {
  switch (type) {
    case kFloat:
      return "float";
    case kUint8:
      return "uint8";
    case kInt8:
      return "int8";
    case kUint16:
      return "uint16";
    case kInt16:
      return "int16";
    case kInt32:
      return "int32";
    case kInt64:
      return "int64";
    case kString:
      return "string";
    case kBool:
      return "bool";
    case kFloat16:
      return "float16";
    case kDouble:
      return "double";
    case kUint32:
      return "uint32";
    case kUint64:
      return "uint64";
    case kBfloat16:
      return "bfloat16";
    default:
      return "type " + std::to_string(type);
  }
}

bool is_float_type(int32_t type) {
  return type == kFloat || type == kDouble || type == kFloat16 || type == kBfloat16;
}

bool is_supported_type(int32_t type) {
  return element_bytes(type) != 0;
}

Result<int64_t> checked_numel(const std::vector<int64_t>& shape, const std::string& what) {
  // The product of the extents, and of the non-empty ones: a [0, 2^60] tensor holds nothing but its
  // strides would overflow.
  int64_t numel = 1, span = 1;
  for (const int64_t extent : shape) {
    if (extent < 0) return data_loss(what + " has a negative extent in " + shape_text(shape));
    if (extent != 0 && span > kMaxElements / extent) {
      return invalid_argument(what + " of shape " + shape_text(shape) +
                              " has more than 2^31 elements" +
                              (numel == 0 ? " (empty axes aside)" : ""));
    }
    span *= std::max<int64_t>(extent, 1);
    numel *= extent;
  }
  return numel;
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (const int64_t extent : shape) n *= extent;
  return n;
}

HostTensor HostTensor::zeros(int32_t type, std::vector<int64_t> shape) {
  HostTensor out;
  out.type = type;
  out.shape = std::move(shape);
  if (out.is_float())
    out.f.assign(static_cast<size_t>(out.numel()), 0.0F);
  else
    out.i.assign(static_cast<size_t>(out.numel()), 0);
  return out;
}

HostTensor HostTensor::ints(std::vector<int64_t> values, std::vector<int64_t> shape) {
  HostTensor out;
  out.type = kInt64;
  out.shape = std::move(shape);
  out.i = std::move(values);
  return out;
}

HostTensor HostTensor::scalar_int(int64_t value) {
  return ints({value}, {});
}

Result<HostTensor> decode_tensor(const onnx::TensorProto& proto, const std::string& what,
                                 const std::filesystem::path& base_dir, const Device* device) {
  HostTensor out;
  out.type = proto.data_type();
  if (!is_supported_type(out.type)) {
    return invalid_argument(
        what + " has element type " + elem_type_name(out.type) +
        ", which is not supported (float, double, float16, bfloat16, integers, bool)");
  }
  if (proto.has_segment()) return invalid_argument(what + " is segmented, which is not supported");
  out.shape.assign(proto.dims().begin(), proto.dims().end());
  SY_ASSIGN_OR_RETURN(const int64_t numel, checked_numel(out.shape, what));
  const size_t size = element_bytes(out.type);
  const auto count = static_cast<size_t>(numel);
  // Decoded, the values take 4 bytes each (float types) or 8 (integers and bool).
  SY_RETURN_IF_ERROR(detail::check_memory_budget(
      static_cast<uint64_t>(count) * (out.is_float() ? sizeof(float) : sizeof(int64_t)),
      what + " (" + elem_type_name(out.type) + " " + shape_text(out.shape) + ")", "", device));

  const bool external = proto.data_location() == onnx::TensorProto::EXTERNAL;
  const auto check_count = [&](size_t have, const char* field) -> Status {
    if (have == count) return ok_status();
    return data_loss(what + " of shape " + shape_text(out.shape) + " needs " +
                     std::to_string(count) + " values but " + field + " holds " +
                     std::to_string(have));
  };
  if (external || proto.has_raw_data()) {
    std::vector<uint8_t> external_bytes;
    const uint8_t* bytes = nullptr;
    size_t have = 0;
    if (external) {
      SY_ASSIGN_OR_RETURN(external_bytes, read_external(proto, what, base_dir, count * size));
      bytes = external_bytes.data();
      have = external_bytes.size();
    } else {
      bytes = reinterpret_cast<const uint8_t*>(proto.raw_data().data());
      have = proto.raw_data().size();
    }
    if (have != count * size) {
      return data_loss(what + " of shape " + shape_text(out.shape) + " and type " +
                       elem_type_name(out.type) + " needs " + std::to_string(count * size) +
                       " bytes but has " + std::to_string(have));
    }
    if (out.is_float())
      out.f.resize(count);
    else
      out.i.resize(count);
    decode_raw(bytes, numel, out);
    return out;
  }
  switch (out.type) {
    case kFloat:
      SY_RETURN_IF_ERROR(check_count(static_cast<size_t>(proto.float_data_size()), "float_data"));
      out.f.assign(proto.float_data().begin(), proto.float_data().end());
      break;
    case kDouble:
      SY_RETURN_IF_ERROR(check_count(static_cast<size_t>(proto.double_data_size()), "double_data"));
      for (const double v : proto.double_data()) out.f.push_back(static_cast<float>(v));
      break;
    case kFloat16:
    case kBfloat16:
      SY_RETURN_IF_ERROR(check_count(static_cast<size_t>(proto.int32_data_size()), "int32_data"));
      for (const int32_t bits : proto.int32_data()) {
        const auto b = static_cast<uint16_t>(bits);
        out.f.push_back(out.type == kFloat16 ? sy_support::f16_bits_to_f32(b)
                                             : sy_support::bf16_bits_to_f32(b));
      }
      break;
    case kInt64:
      SY_RETURN_IF_ERROR(check_count(static_cast<size_t>(proto.int64_data_size()), "int64_data"));
      out.i.assign(proto.int64_data().begin(), proto.int64_data().end());
      break;
    case kUint32:
    case kUint64:
      SY_RETURN_IF_ERROR(check_count(static_cast<size_t>(proto.uint64_data_size()), "uint64_data"));
      for (const uint64_t v : proto.uint64_data()) {
        out.i.push_back(static_cast<int64_t>(
            std::min<uint64_t>(v, uint64_t{std::numeric_limits<int64_t>::max()})));
      }
      break;
    default:  // int32, int16, int8, uint16, uint8, bool
      SY_RETURN_IF_ERROR(check_count(static_cast<size_t>(proto.int32_data_size()), "int32_data"));
      for (const int32_t v : proto.int32_data())
        out.i.push_back(out.type == kBool ? (v != 0 ? 1 : 0) : v);
      break;
  }
  return out;
}

void encode_tensor(const HostTensor& tensor, const std::string& name, onnx::TensorProto& proto) {
  proto.set_name(name);
  for (const int64_t extent : tensor.shape) proto.add_dims(extent);
  std::string raw;
  if (tensor.is_float()) {
    proto.set_data_type(kFloat);
    raw.resize(tensor.f.size() * sizeof(float));
    if (!tensor.f.empty()) std::memcpy(raw.data(), tensor.f.data(), raw.size());
  } else if (tensor.type == kBool) {
    proto.set_data_type(kBool);
    for (const int64_t v : tensor.i) raw.push_back(v != 0 ? '\1' : '\0');
  } else {
    proto.set_data_type(kInt64);
    raw.resize(tensor.i.size() * sizeof(int64_t));
    if (!tensor.i.empty()) std::memcpy(raw.data(), tensor.i.data(), raw.size());
  }
  proto.set_raw_data(std::move(raw));
}

Result<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                       const std::string& what) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t x = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const int64_t y = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (x != y && x != 1 && y != 1) {
      return invalid_argument(what + ": shapes " + shape_text(a) + " and " + shape_text(b) +
                              " do not broadcast");
    }
    out[k] = x == 1 ? y : x;
  }
  return out;
}

BroadcastIndex::BroadcastIndex(const std::vector<int64_t>& source, const std::vector<int64_t>& out)
    : out_strides_(out.size()), source_strides_(out.size()) {
  int64_t out_stride = 1, source_stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    out_strides_[k] = out_stride;
    out_stride *= out[k];
    const size_t offset = out.size() - source.size();
    if (k >= offset) {
      const int64_t extent = source[k - offset];
      source_strides_[k] = extent == 1 ? 0 : source_stride;
      source_stride *= extent;
    } else {
      source_strides_[k] = 0;
    }
  }
}

int64_t BroadcastIndex::operator()(int64_t k) const {
  int64_t index = 0;
  for (size_t axis = 0; axis < out_strides_.size(); ++axis) {
    const int64_t coordinate = out_strides_[axis] == 0 ? 0 : k / out_strides_[axis];
    k -= coordinate * out_strides_[axis];
    index += coordinate * source_strides_[axis];
  }
  return index;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  // A damaged file can declare hundreds of axes: the message names the first few and the count
  // (libFuzzer found a 3,343-character refusal, 2026-11-29).
  constexpr size_t kShown = 12;
  std::string text = "[";
  for (size_t k = 0; k < shape.size() && k < kShown; ++k) {
    text += (k ? ", " : "") + std::to_string(shape[k]);
  }
  if (shape.size() > kShown) text += ", ... (" + std::to_string(shape.size()) + " axes)";
  return text + "]";
}

}  // namespace switchyard::onnx_detail
