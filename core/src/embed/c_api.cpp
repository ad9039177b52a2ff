// The C API (switchyard.h) over Runtime and Predictor: every exception becomes a code and a
// thread-local message at this boundary, so nothing C++ crosses it.
//
// Handles: every live handle is in a registry (a pointer set under one lock). Each call looks its
// handle up and holds a reference for the call's length, so a handle destroyed by another thread
// mid-call is freed when that call returns, and a destroyed (or never made) handle is refused
// with INVALID_ARGUMENT instead of being used. Destroying one twice is a no-op that leaves the
// message in switchyard_last_error().
#include "switchyard/switchyard.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "switchyard/runtime.h"

struct switchyard_runtime {
  std::unique_ptr<switchyard::Runtime> runtime;
};

struct switchyard_predictor {
  std::unique_ptr<switchyard::Predictor> predictor;
};

namespace {

using switchyard::StatusCode;

thread_local std::string last_error;

// The live handles of one kind: the address the caller holds, and the object behind it.
template <typename Handle>
class HandleRegistry {
 public:
  Handle* add(std::shared_ptr<Handle> handle) {
    Handle* raw = handle.get();
    const std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace(raw, std::move(handle));
    return raw;
  }
  // The handle, kept alive for as long as the caller holds the result; null when not live.
  std::shared_ptr<Handle> find(const Handle* raw) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto found = live_.find(raw);
    return found == live_.end() ? nullptr : found->second;
  }
  // False when `raw` is not live (destroyed already, or never made here).
  bool remove(const Handle* raw) {
    std::shared_ptr<Handle> last;  // destroyed after the lock is released
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto found = live_.find(raw);
    if (found == live_.end()) return false;
    last = std::move(found->second);
    live_.erase(found);
    return true;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const Handle*, std::shared_ptr<Handle>> live_;
};

// Function-local statics: the registries outlive every caller, whatever the order of exit.
HandleRegistry<switchyard_runtime>& runtimes() {
  static auto* registry = new HandleRegistry<switchyard_runtime>();
  return *registry;
}
HandleRegistry<switchyard_predictor>& predictors() {
  static auto* registry = new HandleRegistry<switchyard_predictor>();
  return *registry;
}

switchyard_code fail(switchyard_code code, std::string message) {
  last_error = std::move(message);
  return code;
}

switchyard_code null_argument(const char* function, const char* argument) {
  return fail(SWITCHYARD_INVALID_ARGUMENT, std::string(function) + ": " + argument + " is null");
}

switchyard_code dead_handle(const char* function, const char* argument) {
  return fail(SWITCHYARD_INVALID_ARGUMENT, std::string(function) + ": " + argument +
                                               " is not a live handle (destroyed already, or not "
                                               "made by this library)");
}

// Runs `body`, turning what it throws into a code and the thread's message.
template <typename Body>
switchyard_code guarded(const char* function, Body&& body) {
  try {
    body();
    last_error.clear();
    return SWITCHYARD_OK;
  } catch (const switchyard::Error& error) {
    return fail(static_cast<switchyard_code>(error.status().code()), error.status().message());
  } catch (const std::bad_alloc&) {
    return fail(SWITCHYARD_RESOURCE_EXHAUSTED, std::string(function) + ": out of host memory");
  } catch (const std::exception& error) {
    return fail(SWITCHYARD_INTERNAL, std::string(function) + ": " + error.what());
  } catch (...) {
    return fail(SWITCHYARD_INTERNAL, std::string(function) + ": an unknown exception");
  }
}

char* copy_string(const std::string& text) {
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) throw std::bad_alloc();
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

std::vector<std::string> override_list(const char* const* overrides, size_t count) {
  std::vector<std::string> list;
  for (size_t i = 0; i < count; ++i) {
    if (overrides[i] == nullptr) {
      switchyard::throw_error(
          switchyard::invalid_argument("override " + std::to_string(i) + " is null"));
    }
    list.emplace_back(overrides[i]);
  }
  return list;
}

switchyard_epoch epoch_figures(const switchyard::EpochMetrics& m, int64_t epochs) {
  switchyard_epoch e{};
  e.epoch = m.epoch;
  e.epochs = epochs;
  e.train_loss = m.train_loss;
  e.train_accuracy = m.train_accuracy;
  e.test_loss = m.test_loss;
  e.test_accuracy = m.test_accuracy;
  e.is_regression = m.regression ? 1 : 0;
  e.test_rmse = m.test_values.rmse;
  e.test_mae = m.test_values.mae;
  e.test_r2 = m.test_values.r2;
  e.learning_rate = m.learning_rate;
  e.epoch_seconds = m.epoch_seconds;
  return e;
}

}  // namespace

extern "C" {

const char* switchyard_version(void) {
  return SWITCHYARD_VERSION;
}

int switchyard_api_version(void) {
  return SWITCHYARD_API_VERSION;
}

const char* switchyard_last_error(void) {
  return last_error.c_str();
}

const char* switchyard_code_name(switchyard_code code) {
  if (code < SWITCHYARD_OK || code > SWITCHYARD_DATA_LOSS) return "UNKNOWN_CODE";
  return switchyard::status_code_name(static_cast<StatusCode>(code));
}

void switchyard_free_string(char* text) {
  std::free(text);
}

switchyard_code switchyard_runtime_from_file(const char* path, const char* const* overrides,
                                             size_t override_count, switchyard_runtime** out) {
  constexpr const char* kName = "switchyard_runtime_from_file";
  if (path == nullptr) return null_argument(kName, "path");
  if (out == nullptr) return null_argument(kName, "out");
  if (overrides == nullptr && override_count > 0) return null_argument(kName, "overrides");
  return guarded(kName, [&] {
    auto handle = std::make_shared<switchyard_runtime>();
    handle->runtime =
        switchyard::Runtime::from_file(path, override_list(overrides, override_count));
    *out = runtimes().add(std::move(handle));
  });
}

switchyard_code switchyard_runtime_from_yaml(const char* yaml_text, const char* base_dir,
                                             const char* const* overrides, size_t override_count,
                                             switchyard_runtime** out) {
  constexpr const char* kName = "switchyard_runtime_from_yaml";
  if (yaml_text == nullptr) return null_argument(kName, "yaml_text");
  if (out == nullptr) return null_argument(kName, "out");
  if (overrides == nullptr && override_count > 0) return null_argument(kName, "overrides");
  return guarded(kName, [&] {
    auto handle = std::make_shared<switchyard_runtime>();
    handle->runtime = switchyard::Runtime::from_yaml(
        yaml_text, base_dir != nullptr ? base_dir : ".", override_list(overrides, override_count));
    *out = runtimes().add(std::move(handle));
  });
}

void switchyard_runtime_destroy(switchyard_runtime* runtime) {
  if (runtime == nullptr) return;
  if (!runtimes().remove(runtime)) dead_handle("switchyard_runtime_destroy", "runtime");
}

switchyard_code switchyard_devices_json(switchyard_runtime* runtime, char** json) {
  constexpr const char* kName = "switchyard_devices_json";
  if (runtime == nullptr) return null_argument(kName, "runtime");
  const auto live = runtimes().find(runtime);
  if (live == nullptr) return dead_handle(kName, "runtime");
  if (json == nullptr) return null_argument(kName, "json");
  return guarded(kName, [&] { *json = copy_string(live->runtime->devices_json()); });
}

switchyard_code switchyard_doctor_json(switchyard_runtime* runtime, char** json) {
  constexpr const char* kName = "switchyard_doctor_json";
  if (runtime == nullptr) return null_argument(kName, "runtime");
  const auto live = runtimes().find(runtime);
  if (live == nullptr) return dead_handle(kName, "runtime");
  if (json == nullptr) return null_argument(kName, "json");
  return guarded(kName, [&] { *json = copy_string(live->runtime->doctor_json()); });
}

switchyard_code switchyard_selected_device(switchyard_runtime* runtime, char* id, size_t capacity) {
  constexpr const char* kName = "switchyard_selected_device";
  if (runtime == nullptr) return null_argument(kName, "runtime");
  const auto live = runtimes().find(runtime);
  if (live == nullptr) return dead_handle(kName, "runtime");
  if (id == nullptr) return null_argument(kName, "id");
  std::string selected;
  const switchyard_code code =
      guarded(kName, [&] { selected = live->runtime->device().device->id(); });
  if (code != SWITCHYARD_OK) return code;
  if (selected.size() + 1 > capacity) {
    return fail(SWITCHYARD_OUT_OF_RANGE, std::string(kName) + ": the id '" + selected + "' needs " +
                                             std::to_string(selected.size() + 1) +
                                             " bytes, the buffer has " + std::to_string(capacity));
  }
  std::memcpy(id, selected.c_str(), selected.size() + 1);
  return SWITCHYARD_OK;
}

switchyard_code switchyard_memory_stats(switchyard_runtime* runtime, switchyard_memory* out) {
  constexpr const char* kName = "switchyard_memory_stats";
  if (runtime == nullptr) return null_argument(kName, "runtime");
  const auto live = runtimes().find(runtime);
  if (live == nullptr) return dead_handle(kName, "runtime");
  if (out == nullptr) return null_argument(kName, "out");
  return guarded(kName, [&] {
    const switchyard::MemoryStats stats = live->runtime->memory_stats();
    *out = switchyard_memory{stats.allocated_bytes, stats.reserved_bytes,
                             stats.peak_allocated_bytes, stats.limit_bytes, stats.allocation_count};
  });
}

switchyard_code switchyard_train(switchyard_runtime* runtime, switchyard_progress progress,
                                 void* user_data, char** metrics_json) {
  constexpr const char* kName = "switchyard_train";
  if (runtime == nullptr) return null_argument(kName, "runtime");
  const auto live = runtimes().find(runtime);
  if (live == nullptr) return dead_handle(kName, "runtime");
  return guarded(kName, [&] {
    std::function<bool(const switchyard::EpochMetrics&)> on_epoch;
    if (progress != nullptr) {
      const int64_t epochs = switchyard::value_or_throw(switchyard::TrainConfig::for_task(
                                                            live->runtime->config(), "train"))
                                 .train.epochs;
      on_epoch = [progress, user_data, epochs](const switchyard::EpochMetrics& m) {
        const switchyard_epoch figures = epoch_figures(m, epochs);
        return progress(&figures, user_data) == 0;
      };
    }
    const std::string metrics = live->runtime->train(on_epoch);
    if (metrics_json != nullptr) *metrics_json = copy_string(metrics);
  });
}

switchyard_code switchyard_predictor_create(switchyard_runtime* runtime, const char* model_path,
                                            switchyard_predictor** out) {
  constexpr const char* kName = "switchyard_predictor_create";
  if (runtime == nullptr) return null_argument(kName, "runtime");
  const auto live = runtimes().find(runtime);
  if (live == nullptr) return dead_handle(kName, "runtime");
  if (model_path == nullptr) return null_argument(kName, "model_path");
  if (out == nullptr) return null_argument(kName, "out");
  return guarded(kName, [&] {
    auto handle = std::make_shared<switchyard_predictor>();
    handle->predictor = live->runtime->load_model(model_path);
    *out = predictors().add(std::move(handle));
  });
}

switchyard_code switchyard_predictor_widths(const switchyard_predictor* predictor,
                                            size_t* input_width, size_t* output_width) {
  constexpr const char* kName = "switchyard_predictor_widths";
  if (predictor == nullptr) return null_argument(kName, "predictor");
  const auto live = predictors().find(predictor);
  if (live == nullptr) return dead_handle(kName, "predictor");
  if (input_width == nullptr) return null_argument(kName, "input_width");
  if (output_width == nullptr) return null_argument(kName, "output_width");
  return guarded(kName, [&] {
    *input_width = static_cast<size_t>(live->predictor->input_width());
    *output_width = static_cast<size_t>(live->predictor->output_width());
  });
}

switchyard_code switchyard_predictor_predict(switchyard_predictor* predictor, const float* input,
                                             size_t rows, size_t input_width, float* output,
                                             size_t output_length, size_t batch_size) {
  constexpr const char* kName = "switchyard_predictor_predict";
  if (predictor == nullptr) return null_argument(kName, "predictor");
  const auto live = predictors().find(predictor);
  if (live == nullptr) return dead_handle(kName, "predictor");
  if (input == nullptr && rows > 0) return null_argument(kName, "input");
  if (output == nullptr && rows > 0) return null_argument(kName, "output");
  return guarded(kName, [&] {
    switchyard::Predictor& p = *live->predictor;
    const auto expected_in = static_cast<size_t>(p.input_width());
    const auto expected_out = static_cast<size_t>(p.output_width());
    if (input_width != expected_in) {
      switchyard::throw_error(switchyard::invalid_argument(
          std::string(kName) + ": rows of " + std::to_string(input_width) +
          " floats, but the model takes " + std::to_string(expected_in) + " per sample"));
    }
    if (rows > 0 && output_length / rows < expected_out) {
      switchyard::throw_error(switchyard::invalid_argument(
          std::string(kName) + ": the output holds " + std::to_string(output_length) +
          " floats, and " + std::to_string(rows) + " samples of " + std::to_string(expected_out) +
          " outputs need " + std::to_string(rows * expected_out)));
    }
    p.predict_into(input, static_cast<int64_t>(rows), output,
                   batch_size == 0 ? 256 : static_cast<int64_t>(batch_size));
  });
}

void switchyard_predictor_destroy(switchyard_predictor* predictor) {
  if (predictor == nullptr) return;
  if (!predictors().remove(predictor)) dead_handle("switchyard_predictor_destroy", "predictor");
}

}  // extern "C"
