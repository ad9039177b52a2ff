// Host-side tensors of the ONNX importer: decoding a TensorProto (inline or external data, every
// size checked against the bytes that hold it before anything is allocated), and the small
// host kernels that shape subgraphs (Shape, Gather, Concat, Slice, ...) run on. Private to the
// core.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/status.h"

namespace onnx {
class TensorProto;
}
namespace switchyard {
class Device;
}

namespace switchyard::onnx_detail {

// ONNX's TensorProto.DataType values that matter here.
enum ElemType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
};

// "float", "int64", ... ("type 42" for an unknown value).
std::string elem_type_name(int32_t type);
bool is_float_type(int32_t type);
// Every type this importer holds: the float types (as float) and the integer types and bool (as
// int64).
bool is_supported_type(int32_t type);

// The largest tensor the importer makes or reads: 2^31 elements.
constexpr int64_t kMaxElements = int64_t{1} << 31;

// Product of `shape`, or an error when an extent is negative or the product passes kMaxElements.
Result<int64_t> checked_numel(const std::vector<int64_t>& shape, const std::string& what);

// A tensor on the host. Float types keep their values in `f`, integer types and bool in `i`.
// A double computed for an integer output, as an int64: truncated toward zero where it fits, and 0
// for NaN, an infinity or a magnitude beyond 9e18 (converting those is undefined behaviour in C++;
// the fuzzer's UBSan found a NaN from a hostile file's mixed-type Add). Cast does the same.
inline int64_t whole_or_zero(double v) {
  return v == v && v > -9.0e18 && v < 9.0e18 ? static_cast<int64_t>(v) : 0;
}

struct HostTensor {
  int32_t type = kFloat;
  std::vector<int64_t> shape;
  std::vector<float> f;
  std::vector<int64_t> i;

  bool is_float() const { return is_float_type(type); }
  int64_t numel() const;
  // Element k as a double / as an integer, whichever storage holds it.
  double at(int64_t k) const {
    return is_float() ? static_cast<double>(f[static_cast<size_t>(k)])
                      : static_cast<double>(i[static_cast<size_t>(k)]);
  }
  int64_t int_at(int64_t k) const {
    return is_float() ? static_cast<int64_t>(f[static_cast<size_t>(k)]) : i[static_cast<size_t>(k)];
  }
  // A tensor of `type` and `shape` with zeroed storage of the right kind.
  static HostTensor zeros(int32_t type, std::vector<int64_t> shape);
  static HostTensor ints(std::vector<int64_t> values, std::vector<int64_t> shape);
  static HostTensor scalar_int(int64_t value);
};
using HostPtr = std::shared_ptr<const HostTensor>;

// Decodes `proto` (named `what` in messages, e.g. "initializer 'fc.weight'"). External data is
// read from below `base_dir` only; DATA_LOSS for sizes that do not match the bytes,
// INVALID_ARGUMENT for an unsupported type or an external path that leaves base_dir,
// RESOURCE_EXHAUSTED when the decoded values would not fit the memory budget
// (runtime/memory_budget.h) of `device` (null: the host's), checked before anything is read.
Result<HostTensor> decode_tensor(const onnx::TensorProto& proto, const std::string& what,
                                 const std::filesystem::path& base_dir,
                                 const Device* device = nullptr);
// The tensor as a TensorProto (float as FLOAT, integers as INT64, bool as BOOL), raw_data form.
void encode_tensor(const HostTensor& tensor, const std::string& name, onnx::TensorProto& proto);

// Numpy broadcasting of two shapes; an error naming `what` when they do not broadcast.
Result<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                       const std::string& what);
// Row-major index of the broadcast source element for output position `k`.
class BroadcastIndex {
 public:
  BroadcastIndex(const std::vector<int64_t>& source, const std::vector<int64_t>& out);
  int64_t operator()(int64_t k) const;

 private:
  std::vector<int64_t> out_strides_, source_strides_;
};

std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace switchyard::onnx_detail
