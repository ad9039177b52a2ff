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
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/checkpoint.h"
#include "switchyard/config.h"
#include "switchyard/data.h"
#include "switchyard/device.h"
#include "switchyard/onnx.h"
#include "switchyard/ops.h"
#include "switchyard/predict.h"
#include "switchyard/safetensors.h"
#include "switchyard/status.h"
#include "switchyard/train.h"
#include "train/train_state.h"

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
