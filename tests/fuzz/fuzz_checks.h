// What each fuzz target does with a loaded result, shared by the Catch2 mutation tests (tests/fuzz,
// tests/onnx/onnx_fuzz_test.cpp) and the libFuzzer targets (tests/fuzz/libfuzzer), so that both
// fuzz the same steps and check the same promises. No Catch2 here: the libFuzzer targets link
// only the core.
//
// Each check returns OK, the loader's own refusal, or INTERNAL for a loaded result that breaks an
// invariant the loader promises (both kinds of fuzzing fail on INTERNAL).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/train_state.h"
#include "switchyard/checkpoint.h"
#include "switchyard/config.h"
#include "switchyard/data.h"
#include "switchyard/device.h"
#include "switchyard/dispatch.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/predict.h"
#include "switchyard/safetensors.h"
#include "switchyard/status.h"
#include "switchyard/train.h"

namespace switchyard::testing {

using Bytes = std::vector<uint8_t>;

// --- YAML config ---------------------------------------------------------------------------------

// What `switchyard run` reads from a configuration before it touches data or devices.
inline Status settings_like_a_run(const Config& config) {
  const Result<std::string> task = config.root().string_or("task", "train");
  if (task.ok() && *task == "predict") return PredictSettings::from_config(config).status();
  return TrainConfig::from_config(config).status();
}

// --- CSV
// -------------------------------------------------------------------------------------------

// The two ways a table is read: with `drop`, rows with non-finite values are dropped and labels
// numbered as first seen; without, such rows are an error and labels are sorted.
inline TableOptions table_options(bool drop) {
  TableOptions options;
  options.non_finite = drop ? NonFinitePolicy::kDropRows : NonFinitePolicy::kError;
  options.label_order = drop ? LabelOrder::kFirstSeen : LabelOrder::kSorted;
  return options;
}

// What a loaded data set promises: consistent counts, finite features, labels within the classes.
inline Status check_loaded_table(const Dataset& data) {
  const auto samples = static_cast<size_t>(data.sample_count);
  bool ok = data.sample_count >= 1 && data.labels.size() == samples &&
            data.source_lines.size() == samples && data.class_count() >= 1 &&
            data.features.size() == samples * static_cast<size_t>(data.feature_count());
  for (const float value : data.features) ok = ok && std::isfinite(value);
  for (const int32_t label : data.labels) ok = ok && label >= 0 && label < data.class_count();
  return ok ? ok_status() : Status(StatusCode::kInternal, "inconsistent data set " + data.name);
}

// --- Checkpoint
// ------------------------------------------------------------------------------------

inline Bytes small_checkpoint() {
  Checkpoint checkpoint;
  checkpoint.put_string("k", "v");
  checkpoint.put_floats("f", {1.5f, -2});
  return serialize_checkpoint(checkpoint);
}

// Keeps magic and version, and makes the payload size and checksum match the payload, so that
// the records themselves are parsed.
inline void fix_checkpoint_framing(Bytes& bytes) {
  static const Bytes seed = small_checkpoint();
  if (bytes.size() < 32) return;
  std::memcpy(bytes.data(), seed.data(), 12);
  const uint64_t payload = bytes.size() - 32;
  const uint64_t checksum = fnv1a64(bytes.data() + 32, payload);
  std::memcpy(bytes.data() + 16, &payload, 8);
  std::memcpy(bytes.data() + 24, &checksum, 8);
}

// Everything a resume or a prediction decodes, where present: each must succeed or name the file.
inline Status decode_checkpoint(const Checkpoint& checkpoint) {
  for (const std::string& key : checkpoint.keys()) {
    const bool tensor = key.rfind("param/", 0) == 0 || key.rfind("optim/state/", 0) == 0;
    if (tensor) SY_RETURN_IF_ERROR(checkpoint.get_tensor(key).status());
  }
  if (checkpoint.contains("data/sample_shape")) {
    SY_RETURN_IF_ERROR(detail::get_data_layout(checkpoint).status());
  }
  if (checkpoint.contains("model/layers")) {
    SY_RETURN_IF_ERROR(detail::get_model_spec(checkpoint).status());
    SY_RETURN_IF_ERROR(detail::get_loss(checkpoint).status());
  }
  if (checkpoint.contains("progress/history")) {
    SY_RETURN_IF_ERROR(detail::get_history(checkpoint).status());
  }
  if (checkpoint.contains("f")) SY_RETURN_IF_ERROR(checkpoint.get_floats("f").status());
  if (checkpoint.contains("optim/lr")) SY_RETURN_IF_ERROR(checkpoint.get_f64("optim/lr").status());
  return ok_status();
}

// --- Safetensors
// -----------------------------------------------------------------------------------

// Sets the header length to where the header's JSON ends (its last '}'), so that mutations of
// the header text reach the JSON and offset checks instead of the length check.
inline void fix_safetensors_header_length(Bytes& bytes) {
  if (bytes.size() < 8) return;
  size_t end = 8;
  int depth = 0;
  for (size_t i = 8; i < bytes.size(); ++i) {
    depth += bytes[i] == '{' ? 1 : bytes[i] == '}' ? -1 : 0;
    if (bytes[i] == '}' && depth == 0) {
      end = i + 1;
      break;
    }
  }
  const uint64_t length = end - 8;
  std::memcpy(bytes.data(), &length, 8);
}

// Every tensor holds as many values as its shape says.
inline Status check_loaded_safetensors(const SafetensorsFile& file) {
  for (const auto& [name, record] : file.tensors) {
    uint64_t count = 1;
    for (const int64_t extent : record.shape) count *= static_cast<uint64_t>(extent);
    const size_t values = is_floating(record.dtype) ? record.floats.size() : record.integers.size();
    if (values != count) return Status(StatusCode::kInternal, "tensor " + name + " miscounted");
  }
  return ok_status();
}

// --- ONNX
// ------------------------------------------------------------------------------------------

// The work one op call asks of a device, in multiply-adds (element visits for the ops that are
// one pass over their tensors), from the call's shapes and params alone.
inline double op_work(const sy_op_call& call) {
  const auto count = [](const sy_tensor_desc& d) {
    double n = 1;
    for (uint32_t a = 0; a < d.rank && a < SY_MAX_RANK; ++a)
      n *= static_cast<double>(std::max<int64_t>(d.shape[a], 0));
    return n;
  };
  const auto extent = [](const sy_tensor_desc& d, uint32_t from_end) {
    return d.rank > from_end
               ? static_cast<double>(std::max<int64_t>(d.shape[d.rank - 1 - from_end], 1))
               : 1.0;
  };
  const auto per_output_channel = [&](const sy_tensor_desc& w) {
    return w.rank > 0 && w.shape[0] > 0 ? count(w) / static_cast<double>(w.shape[0]) : count(w);
  };
  double elements = 0;
  for (uint32_t i = 0; i < call.num_inputs && i < SY_MAX_OP_INPUTS; ++i)
    elements += count(call.inputs[i]);
  for (uint32_t i = 0; i < call.num_outputs && i < SY_MAX_OP_OUTPUTS; ++i)
    elements += count(call.outputs[i]);
  const sy_tensor_desc* in = call.inputs;
  const sy_tensor_desc* out = call.outputs;
  const double window = static_cast<double>(std::max(call.params.pool2d.kernel_h, 1)) *
                        static_cast<double>(std::max(call.params.pool2d.kernel_w, 1));
  switch (call.op) {
    case SY_OP_MATMUL:  // [.., M, K] x [.., K, N]: each output element is a K-long dot product
      return elements + count(out[0]) * extent(in[0], call.params.matmul.transpose_a != 0 ? 1 : 0);
    case SY_OP_CONV2D:  // (x, w) -> y: each output element reads one filter of w
    case SY_OP_CONV2D_GROUPED:
      return elements + count(out[0]) * per_output_channel(in[1]);
    case SY_OP_CONV2D_BACKWARD_DATA:  // (grad_y, w) -> grad_x
    case SY_OP_CONV2D_GROUPED_BACKWARD_DATA:
      return elements + count(in[0]) * per_output_channel(in[1]);
    case SY_OP_CONV2D_BACKWARD_WEIGHT:  // (grad_y, x) -> grad_w
    case SY_OP_CONV2D_GROUPED_BACKWARD_WEIGHT:
      return elements + count(in[0]) * per_output_channel(out[0]);
    case SY_OP_MAX_POOL2D:
    case SY_OP_AVG_POOL2D:
      return elements + count(out[0]) * window;
    case SY_OP_MAX_POOL2D_BACKWARD:
    case SY_OP_AVG_POOL2D_BACKWARD:
      return elements + count(in[0]) * window;
    case SY_OP_LSTM_SEQUENCE:  // (x, h0, c0, w_ih, w_hh ...): every step of every row reads both
      return elements + count(in[0]) / extent(in[0], 0) * (count(in[3]) + count(in[4]));
    case SY_OP_GRU_SEQUENCE:  // (x, h0, w_ih, w_hh ...)
      return elements + count(in[0]) / extent(in[0], 0) * (count(in[2]) + count(in[3]));
    default:
      return elements;
  }
}

// Bounds the work of one fuzz run, as the device's memory cap bounds its tensors. A model may
// describe any amount of work (a 512x512 average pool over a 1024x1024 image is 7e10 additions,
// minutes on the reference), and running it is not a hang of the importer: past `limit`
// multiply-adds (op_work) the next op is refused with RESOURCE_EXHAUSTED, which the importer
// reports naming its file and node. Installed as the op observer while it lives; the fuzz runs
// are single-threaded, and the previous observer is put back.
class WorkLimit final : public OpObserver {
 public:
  explicit WorkLimit(double limit) : limit_(limit), previous_(op_observer()) {
    set_op_observer(this);
  }
  WorkLimit(const WorkLimit&) = delete;
  WorkLimit& operator=(const WorkLimit&) = delete;
  ~WorkLimit() override { set_op_observer(previous_); }

  void on_op_begin(const OpEvent& event) override {
    const double work = op_work(*event.call);
    if (used_ + work > limit_) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "%s needs %.3g multiply-adds, past this run's work limit of %.3g (%.3g used)",
                    event.name, work, limit_, used_);
      throw_error(resource_exhausted(text));
    }
    used_ += work;
  }
  void on_op_end(const OpEvent&) override {}
  double used() const { return used_; }

 private:
  double limit_;
  double used_ = 0;
  OpObserver* previous_;
};

// The longest refusal of a configuration: up to 20 errors of a line each, a line being the place,
// the key path and the key (each cut at 80 bytes, kKeyLimit) and the keys the section expects
// (data's 30 keys, 370 characters). A fuzzed key of 1,800 bytes, shown whole twice per line, made
// 8,330 characters before keys were cut.
constexpr size_t kConfigMessageChars = 20 * 640;

// What one fuzz run of an ONNX model may compute: about a second on the fuzz build's reference
// plugin, a fifth of libFuzzer's timeout (a 3x3 max pool over 900x900, 8.9e6, took 0.78 s there;
// a [1024, 1024] x [1024, 8] MatMul 0.59 s), and 4 times the largest run of the Catch2 test's
// mutants (2.6e6; test_onnx prints it).
constexpr double kOnnxFuzzWorkLimit = 1e7;

// The most elements one host value (a shape computation, a folded constant) may hold in a fuzz
// run (onnx_detail::set_max_host_elements; the importer's own limit is 2^26): a chain of host ops
// over 2^24 elements each is about a second in a release build, and past libFuzzer's timeout
// under the sanitizers.
constexpr int64_t kOnnxFuzzHostElements = int64_t{1} << 20;

// The most iterations a Loop may run in a fuzz run (onnx_detail::set_max_loop_iterations; the
// importer's own limit is 2^20): a trip count of 2^40 over a body of host ops is otherwise past
// libFuzzer's timeout under the sanitizers.
constexpr int64_t kOnnxFuzzLoopIterations = int64_t{1} << 10;

// Inputs of the declared shapes (dynamic extents 2), or false when the declared shapes are beyond
// what a fuzz run should allocate (the model is then only loaded). Throws Error for shapes that
// cannot be made at all (rank 9, ...): also load only.
inline bool make_onnx_inputs(const OnnxModel& model, const std::shared_ptr<Device>& device,
                             std::vector<Tensor>& out) {
  for (const OnnxValueInfo& info : model.inputs()) {
    std::vector<int64_t> shape;
    int64_t numel = 1;
    for (const int64_t extent : info.shape) {
      const int64_t e = extent < 0 ? 2 : extent;
      if (e > 4096 || numel * std::max<int64_t>(e, 1) > (1 << 20)) return false;
      numel *= std::max<int64_t>(e, 1);
      shape.push_back(e);
    }
    if (shape.size() > 8) return false;
    if (info.element_type == "float")
      out.push_back(full(Shape(shape), 0.5, device));
    else if (info.element_type == "bool")
      out.push_back(zeros(Shape(shape), device));
    else
      out.push_back(Tensor::from_host(std::vector<int64_t>(static_cast<size_t>(numel), 1),
                                      Shape(shape), device));
  }
  return true;
}

}  // namespace switchyard::testing
