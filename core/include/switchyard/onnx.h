// ONNX models (https://onnx.ai): run a graph exported by PyTorch (torch.onnx.export) or another
// framework on any switchyard device, and write switchyard's own models as ONNX.
//
// Export (export_onnx, and `train.export: model.onnx` in a config) writes a trained model as one
// self-contained ONNX file, opset 17: the input "features" [batch, width] takes raw rows as
// `switchyard predict` reads them and the graph scales them as training did; a classifier's outputs
// are "probabilities" (softmax) and "logits" [batch, classes], a regression's "values" [batch,
// targets] in the targets' units. The metadata (metadata_props) keeps "switchyard.architecture",
// "switchyard.data" and "switchyard.class_names" or "switchyard.target_names" (JSON arrays).
// Every layer type of model.layers exports, as the ops that compute its eval-mode forward in the
// same order (dropout left out, batch normalisation by its running statistics, a VAE latent layer
// as its mean), so that this importer gives the same numbers as the model. The graph computes in
// f32 whatever train.precision was.
//
// Import parses the file with Debian's protobuf and the onnx.proto classes of libonnx-dev (no
// parser of our own), checks the whole graph before anything runs (opset, every op and attribute,
// every tensor's size against the bytes that hold it, dangling inputs, cycles, external data that
// would leave the model's folder), then runs it on switchyard's ops, so every backend runs it with
// the usual per-op fallback. Shape computations (Shape, Gather on shapes, Concat, Unsqueeze,
// Slice, Reshape, ConstantOfShape, Range, Where, ...) and anything else that depends only on
// constants and input shapes run on the host once per input shape and are cached; a dynamic batch
// axis works. Supported: the default domain, opsets 7 to 27, each op at the version its opset gives
// it; onnx_supported_ops() lists the ops.
//
// Errors are switchyard::Error with a message naming the file: DATA_LOSS for a file that is not a
// readable ONNX model (truncated, damaged, sizes that do not match their bytes), INVALID_ARGUMENT
// for a well-formed model this importer refuses (an unsupported op names the node, its op type,
// the opset and the supported ops), NOT_FOUND for a missing file, RESOURCE_EXHAUSTED for sizes the
// file declares (one sample of an input or output, an initializer) beyond the memory budget: the
// host's physical memory, or the device's memory or memory limit where smaller; checked before
// anything of that size is allocated.
#pragma once
#pragma GCC visibility push(default)  // the public API: exported (core/switchyard.map)

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/capture.h"
#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace switchyard {

class Device;
class Module;
class Predictor;

// An input or output of the graph: its name, ONNX element type ("float", "int64", "bool", ...)
// and shape, where a dynamic extent is -1 and keeps its symbolic name ("batch") in dim_names.
struct OnnxValueInfo {
  std::string name;
  std::string element_type;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;

  // A float type (float, double, float16, bfloat16): given as f32. Otherwise integers or bool.
  bool is_float() const {
    return element_type == "float" || element_type == "double" || element_type == "float16" ||
           element_type == "bfloat16";
  }
};

// True for a path ending in ".onnx": what train.export writes as ONNX (safetensors elsewhere) and
// what predict.model and bench model read as an ONNX model.
bool is_onnx_path(const std::filesystem::path& path);

// Threads: an OnnxModel may be shared. run() calls run one at a time (each holds the model's
// lock), so each gives the bits a single thread would; the accessors may be called at any time.
class OnnxModel {
 public:
  // Reads, checks and prepares `path` for `device` (weights are uploaded on first use). Throws
  // Error as the file comment says.
  static std::unique_ptr<OnnxModel> load(const std::filesystem::path& path,
                                         std::shared_ptr<Device> device);
  // The same from bytes already in memory; `source` names them in messages, `base_dir` is where
  // external data files are looked for (empty: external data is refused).
  static std::unique_ptr<OnnxModel> load_bytes(const std::vector<uint8_t>& bytes,
                                               const std::string& source,
                                               const std::filesystem::path& base_dir,
                                               std::shared_ptr<Device> device);
  ~OnnxModel();
  OnnxModel(const OnnxModel&) = delete;
  OnnxModel& operator=(const OnnxModel&) = delete;

  // Runs the graph. `inputs` are the graph's inputs in order (those with an initializer of the
  // same name may be left out at the end); float inputs are f32, integer ones i32 or i64 (bool
  // inputs are given as integers or floats 0/1). Returns the outputs in order, on the model's
  // device: float outputs f32, integer ones i64, bool ones f32 0/1. Throws Error
  // (INVALID_ARGUMENT) for inputs whose count, dtype or static extents do not fit, naming them.
  // Runs without recording gradients. Thread-safe for one caller at a time.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);

  const std::vector<OnnxValueInfo>& inputs() const;
  const std::vector<OnnxValueInfo>& outputs() const;
  int64_t opset() const;
  const std::filesystem::path& path() const;
  const std::shared_ptr<Device>& device() const;
  // What the file says it is: producer name and version, graph name, node count.
  std::string describe() const;
  // The file's metadata_props by key (a key given twice keeps its last value). Our exports keep
  // switchyard.architecture, switchyard.data, switchyard.class_names or switchyard.target_names
  // and, for a model trained on a table, switchyard.table (how its columns were read).
  std::map<std::string, std::string> metadata() const;
  // Node counts by how they ran in the last run: "MatMul 12 device, Shape 4 host, ...", and which
  // patterns were fused (Erf-based GELU into one gelu op, MatMul + Add into linear).
  std::string execution_summary() const;

  // Capture and replay of run() (docs/capture.md). off (the default) runs every call eagerly. on
  // records the run the second time an input signature (shapes and dtypes) is seen and from the
  // third replays the recorded ops, without the graph's host-side work; the outputs are then
  // copies made for the caller. A signature whose run cannot be replayed (a host read of device
  // data, a fallback, a random op) stays eager and capture_summary() says why. auto is on: one
  // submission per run where the device's plugin replays natively (vulkan, cuda), the recorded
  // ops one by one elsewhere. At most kMaxRecordings signatures hold a recording at a time (the
  // least recently run one lets its recording go when another is recorded).
  static constexpr size_t kMaxRecordings = 4;
  void set_capture(CaptureMode mode);
  CaptureMode capture() const;
  // What the last run did: "eager", "eager (first run of these input shapes)", "recorded N ops
  // (holding M MiB; captured natively | replayed op by op: <why>)", "replayed N ops [as one
  // submission]", or "eager: <why not replayable>".
  std::string capture_summary() const;

  struct Impl;

 private:
  explicit OnnxModel(std::unique_ptr<Impl> impl);
  std::vector<Tensor> run_checked(const std::vector<Tensor>& inputs);
  std::unique_ptr<Impl> impl_;
};

// A serialized onnx.TensorProto file (the input_0.pb / output_0.pb of ONNX's test data sets) as
// a tensor on `device`: float types as f32, integers as i64, bool as f32 0/1. Throws Error
// (DATA_LOSS naming the file for a damaged one).
Tensor load_onnx_tensor(const std::filesystem::path& path, const std::shared_ptr<Device>& device);
// Writes `tensor` as a serialized onnx.TensorProto named `name` (f32 as FLOAT, integers as INT64).
void save_onnx_tensor(const std::filesystem::path& path, const Tensor& tensor,
                      const std::string& name);

// Writes `predictor`'s model with its scaling and outputs as an ONNX file (see above), atomically.
// INVALID_ARGUMENT naming the layer for one that cannot be written (batch normalisation without
// running statistics); errors naming `path` when it cannot be written.
Status export_onnx(const std::filesystem::path& path, const Predictor& predictor);

// The op types the importer runs (default domain), sorted.
const std::vector<std::string>& onnx_supported_ops();
// The opsets of the default domain the importer accepts, inclusive. Every version of every
// supported op in effect between them is implemented (docs/onnx.md, "Opsets"); 27 is the newest
// opset of a released ONNX (1.22), whose changelog the op versions were checked against.
constexpr int64_t kOnnxMinOpset = 7;
constexpr int64_t kOnnxMaxOpset = 27;

}  // namespace switchyard

#pragma GCC visibility pop
