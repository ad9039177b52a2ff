// switchyard._native: the Python binding (pybind11) over the C++ embedding API (runtime.h).
// The package around it (python/switchyard/__init__.py) gives the Pythonic surface: devices(),
// doctor(), run(), Predictor, Tensor and from_dlpack.
#include <dlpack/dlpack.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/buffer.h"
#include "switchyard/data.h"
#include "switchyard/onnx.h"
#include "switchyard/predict.h"
#include "switchyard/queue.h"
#include "switchyard/runtime.h"
#include "switchyard/tensor.h"

namespace py = pybind11;

namespace switchyard::python {

// switchyard.Error: the message of the C++ Error, with its code name in `code`.
PyObject* error_type = nullptr;

namespace {

// ---- DLPack -------------------------------------------------------------------------------------

DLDataType dl_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return {kDLFloat, 32, 1};
    case DType::kF16:
      return {kDLFloat, 16, 1};
    case DType::kBF16:
      return {kDLBfloat, 16, 1};
    case DType::kI32:
      return {kDLInt, 32, 1};
    case DType::kI64:
      return {kDLInt, 64, 1};
  }
  throw_error(internal_error("a dtype without a DLPack code"));
}

DType from_dl_dtype(const DLDataType& type) {
  if (type.lanes == 1) {
    if (type.code == kDLFloat && type.bits == 32) return DType::kF32;
    if (type.code == kDLFloat && type.bits == 16) return DType::kF16;
    if (type.code == kDLBfloat && type.bits == 16) return DType::kBF16;
    if (type.code == kDLInt && type.bits == 32) return DType::kI32;
    if (type.code == kDLInt && type.bits == 64) return DType::kI64;
  }
  throw_error(invalid_argument("from_dlpack: DLPack dtype (code " + std::to_string(type.code) +
                               ", bits " + std::to_string(type.bits) + ", lanes " +
                               std::to_string(type.lanes) +
                               ") has no switchyard dtype; f32, f16, bf16, i32 and i64 do"));
}

// What an exported DLManagedTensor keeps alive: the tensor (whose storage the consumer reads when
// the device memory is host memory) or a host copy of it, and the shape and strides arrays.
struct Export {
  Tensor tensor;
  std::vector<unsigned char> host_copy;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* managed) {
  delete static_cast<Export*>(managed->manager_ctx);
}

// A capsule named "dltensor" holding `tensor` as DLPack: the device's own memory without a copy
// where it is host-addressable (reference, onednn), a host copy otherwise (vulkan, cuda).
py::capsule to_dlpack(const Tensor& tensor) {
  auto exported = std::make_unique<Export>();
  exported->tensor = tensor;
  const auto& storage = tensor.storage();
  const size_t element = dtype_size_bytes(tensor.dtype());
  void* data = nullptr;
  int64_t byte_offset = 0;
  if (storage != nullptr && storage->host_address() != nullptr) {
    throw_if_error(tensor.device()->default_queue().finish());  // the values must be written
    data = storage->host_address();
    byte_offset = tensor.storage_offset() * static_cast<int64_t>(element);
    exported->strides.assign(tensor.strides().begin(), tensor.strides().end());
  } else {
    const Tensor contiguous = tensor.contiguous();
    exported->host_copy.resize(static_cast<size_t>(contiguous.numel()) * element);
    throw_if_error(contiguous.device()->default_queue().read(
        *contiguous.storage(), static_cast<uint64_t>(contiguous.storage_offset()) * element,
        exported->host_copy.data(), exported->host_copy.size()));
    data = exported->host_copy.data();
    exported->tensor = Tensor();
    exported->strides.resize(static_cast<size_t>(tensor.rank()));
    int64_t stride = 1;
    for (int axis = tensor.rank() - 1; axis >= 0; --axis) {
      exported->strides[static_cast<size_t>(axis)] = stride;
      stride *= tensor.shape()[axis];
    }
  }
  exported->shape.assign(tensor.shape().begin(), tensor.shape().end());
  DLTensor& dl = exported->managed.dl_tensor;
  dl.data = data;
  dl.device = {kDLCPU, 0};
  dl.ndim = tensor.rank();
  dl.dtype = dl_dtype(tensor.dtype());
  dl.shape = exported->shape.data();
  dl.strides = exported->strides.data();
  dl.byte_offset = static_cast<uint64_t>(byte_offset);
  exported->managed.manager_ctx = exported.get();
  exported->managed.deleter = delete_export;
  DLManagedTensor* managed = &exported.release()->managed;
  // A capsule that no consumer took (still named "dltensor") frees the tensor when collected.
  return py::capsule(managed, "dltensor", [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, "dltensor") == 0) return;  // consumed: "used_dltensor"
    auto* owned = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (owned != nullptr && owned->deleter != nullptr) owned->deleter(owned);
  });
}

// Copies a DLPack capsule's CPU tensor (any strides) into a new contiguous tensor on `device`,
// and marks the capsule used, as the protocol asks of a consumer.
Tensor from_dlpack_capsule(py::capsule capsule, const std::shared_ptr<Device>& device) {
  if (PyCapsule_IsValid(capsule.ptr(), "dltensor") == 0) {
    throw_error(invalid_argument("from_dlpack: not an unused DLPack capsule ('dltensor')"));
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  const DLTensor& dl = managed->dl_tensor;
  struct Release {
    DLManagedTensor* managed;
    ~Release() {
      if (managed->deleter != nullptr) managed->deleter(managed);
    }
  } release{managed};
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  if (dl.device.device_type != kDLCPU) {
    throw_error(invalid_argument("from_dlpack: the tensor is on DLPack device type " +
                                 std::to_string(dl.device.device_type) +
                                 "; switchyard imports host (CPU) tensors"));
  }
  const DType dtype = from_dl_dtype(dl.dtype);
  const size_t element = dtype_size_bytes(dtype);
  std::vector<int64_t> shape(dl.shape, dl.shape + dl.ndim);
  int64_t count = 1;
  for (const int64_t extent : shape) count *= extent;
  std::vector<unsigned char> bytes(static_cast<size_t>(count) * element);
  const auto* base = static_cast<const unsigned char*>(dl.data) + dl.byte_offset;
  if (dl.strides == nullptr) {
    std::memcpy(bytes.data(), base, bytes.size());
  } else {
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      for (size_t axis = 0; axis < shape.size(); ++axis) offset += index[axis] * dl.strides[axis];
      std::memcpy(bytes.data() + static_cast<size_t>(i) * element,
                  base + offset * static_cast<int64_t>(element), element);
      for (size_t axis = shape.size(); axis-- > 0;) {
        if (++index[axis] < shape[axis]) break;
        index[axis] = 0;
      }
    }
  }
  return Tensor::from_host_bytes(bytes.data(), Shape(shape), dtype, device);
}

// ---- NumPy ------------------------------------------------------------------------------------

using FloatArray = py::array_t<float, py::array::c_style>;

// Predicts a 2-D float32 C-contiguous array (samples x input_width) without copying it: the
// predictor reads the array's memory a batch at a time, with the GIL released.
FloatArray predict(Predictor& predictor, const py::array& input, int64_t batch_size,
                   bool propagate_non_finite) {
  if (!py::isinstance<FloatArray>(input) || input.ndim() != 2 ||
      (input.flags() & py::array::c_style) == 0) {
    throw_error(invalid_argument("predict: x must be a 2-D C-contiguous float32 array (samples x " +
                                 std::to_string(predictor.input_width()) +
                                 "); convert it with "
                                 "numpy.ascontiguousarray(x, dtype=numpy.float32)"));
  }
  const auto samples = static_cast<int64_t>(input.shape(0));
  if (input.shape(1) != predictor.input_width()) {
    throw_error(invalid_argument("predict: rows of " + std::to_string(input.shape(1)) +
                                 " values, but the model takes " +
                                 std::to_string(predictor.input_width()) + " per sample"));
  }
  FloatArray output({samples, predictor.output_width()});
  const auto* in = static_cast<const float*>(input.data());
  float* out = output.mutable_data();
  {
    py::gil_scoped_release release;
    predictor.predict_into(
        in, samples, out, batch_size,
        propagate_non_finite ? Predictor::NonFinite::kPropagate : Predictor::NonFinite::kRefuse);
  }
  return output;
}

// Predicts the rows of a 2-D array (samples x features) with an ONNX model, as `switchyard
// predict model.onnx rows.csv` does (predict_onnx, docs/onnx.md): each row reshaped to the input's
// shape, an output [batch, C >= 2] read as class scores (their softmax unless every row already
// sums to 1), any other output as regression values. Returns the probabilities or values
// (samples x outputs) and whether they are regression values.
py::tuple predict_onnx_rows(OnnxModel& model, const py::array& input, int64_t batch_size) {
  const auto rows = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(input);
  if (!rows || rows.ndim() != 2) {
    throw_error(invalid_argument("predict: x must be a 2-D array (samples x features) for " +
                                 model.path().string()));
  }
  Dataset data;
  data.name = "x";
  data.labeled = false;
  data.sample_count = static_cast<int64_t>(rows.shape(0));
  data.sample_shape = {static_cast<int64_t>(rows.shape(1))};
  data.features.assign(rows.data(), rows.data() + rows.size());
  Predictions predictions;
  {
    py::gil_scoped_release release;
    predictions = predict_onnx(model, data, batch_size);
  }
  const std::vector<float>& values =
      predictions.regression ? predictions.values : predictions.probabilities;
  const int64_t width =
      predictions.samples > 0 ? static_cast<int64_t>(values.size()) / predictions.samples : 0;
  FloatArray output({predictions.samples, width});
  std::copy(values.begin(), values.end(), output.mutable_data());
  return py::make_tuple(output, predictions.regression);
}

// Runs an ONNX model on NumPy arrays: float arrays as f32, integer and bool arrays as i64; the
// outputs come back as float32 (bool outputs 0/1) or int64 arrays. The GIL is released while the
// graph runs.
py::list run_onnx(OnnxModel& model, const py::list& arrays) {
  std::vector<Tensor> inputs;
  for (const py::handle& item : arrays) {
    const py::array array = py::array::ensure(item);
    if (!array) throw_error(invalid_argument("OnnxModel.run: every input must be an array"));
    const std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    const char kind = array.dtype().kind();
    if (kind == 'f') {
      const auto values =
          py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
      inputs.push_back(
          Tensor::from_host_bytes(values.data(), Shape(shape), DType::kF32, model.device()));
    } else if (kind == 'i' || kind == 'u' || kind == 'b') {
      const auto values =
          py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(array);
      inputs.push_back(
          Tensor::from_host_bytes(values.data(), Shape(shape), DType::kI64, model.device()));
    } else {
      throw_error(invalid_argument("OnnxModel.run: arrays of dtype " +
                                   std::string(py::str(array.dtype())) + " are not supported"));
    }
  }
  // The graph runs and its outputs are read back without the GIL; only the arrays need it.
  struct HostOutput {
    std::vector<int64_t> shape;
    bool floating = true;
    std::vector<float> floats;
    std::vector<int64_t> integers;
  };
  std::vector<HostOutput> host;
  {
    py::gil_scoped_release release;
    std::vector<Tensor> outputs = model.run(inputs);
    inputs.clear();
    for (const Tensor& t : outputs) {
      HostOutput& h = host.emplace_back();
      h.shape.assign(t.shape().begin(), t.shape().end());
      h.floating = is_floating(t.dtype());
      if (h.floating) {
        h.floats = t.to_host_float();
      } else {
        h.integers = t.to_host_int64();
      }
    }
  }
  py::list result;
  for (const HostOutput& h : host) {
    if (h.floating) {
      py::array_t<float> array(h.shape);
      std::copy(h.floats.begin(), h.floats.end(), array.mutable_data());
      result.append(array);
    } else {
      py::array_t<int64_t> array(h.shape);
      std::copy(h.integers.begin(), h.integers.end(), array.mutable_data());
      result.append(array);
    }
  }
  return result;
}

py::list value_infos(const std::vector<OnnxValueInfo>& infos) {
  py::list list;
  for (const OnnxValueInfo& info : infos) {
    py::dict d;
    d["name"] = info.name;
    d["type"] = info.element_type;
    py::list shape;
    for (size_t k = 0; k < info.shape.size(); ++k) {
      if (info.shape[k] >= 0)
        shape.append(info.shape[k]);
      else
        shape.append(info.dim_names[k].empty() ? py::object(py::none())
                                               : py::str(info.dim_names[k]));
    }
    d["shape"] = shape;
    list.append(d);
  }
  return list;
}

std::vector<std::string> override_list(const py::object& overrides) {
  std::vector<std::string> list;
  if (overrides.is_none()) return list;
  if (py::isinstance<py::dict>(overrides)) {
    for (const auto& item : overrides.cast<py::dict>()) {
      std::string value = py::str(item.second);
      if (py::isinstance<py::bool_>(item.second))
        value = item.second.cast<bool>() ? "true" : "false";
      list.push_back(std::string(py::str(item.first)) + "=" + value);
    }
    return list;
  }
  for (const auto& item : overrides) list.push_back(py::str(item));
  return list;
}

py::dict epoch_dict(const EpochMetrics& m) {
  py::dict d;
  d["epoch"] = m.epoch;
  d["train_loss"] = m.train_loss;
  d["test_loss"] = m.test_loss;
  if (m.regression) {
    d["test_rmse"] = m.test_values.rmse;
    d["test_mae"] = m.test_values.mae;
    d["test_r2"] = m.test_values.r2;
  } else {
    d["train_accuracy"] = m.train_accuracy;
    d["test_accuracy"] = m.test_accuracy;
  }
  if (m.has_validation) {
    d["val_loss"] = m.validation_loss;
    if (m.regression) {
      d["val_rmse"] = m.validation_values.rmse;
      d["val_mae"] = m.validation_values.mae;
      d["val_r2"] = m.validation_values.r2;
    } else {
      d["val_accuracy"] = m.validation_accuracy;
      d["val_f1_macro"] = m.validation_f1_macro;
    }
  }
  d["learning_rate"] = m.learning_rate;
  d["epoch_seconds"] = m.epoch_seconds;
  return d;
}

}  // namespace
}  // namespace switchyard::python

PYBIND11_MODULE(_native, m) {
  using namespace switchyard;          // NOLINT(google-build-using-namespace)
  using namespace switchyard::python;  // NOLINT(google-build-using-namespace)
  m.doc() = "switchyard's native core; use the switchyard package";
  m.attr("__version__") = SWITCHYARD_VERSION;

  error_type = PyErr_NewException("switchyard.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(error_type);
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const Error& error) {
      py::object exception =
          py::reinterpret_borrow<py::object>(error_type)(error.status().message());
      exception.attr("code") = status_code_name(error.status().code());
      PyErr_SetObject(error_type, exception.ptr());
    }
  });

  py::class_<Runtime>(m, "Runtime")
      .def_static(
          "from_file",
          [](const std::string& path, const py::object& overrides) {
            const std::vector<std::string> list = override_list(overrides);
            py::gil_scoped_release release;
            return Runtime::from_file(path, list);
          },
          py::arg("path"), py::arg("overrides") = py::none())
      .def_static(
          "from_yaml",
          [](const std::string& text, const std::string& base_dir, const py::object& overrides) {
            const std::vector<std::string> list = override_list(overrides);
            py::gil_scoped_release release;
            return Runtime::from_yaml(text, base_dir, list);
          },
          py::arg("text"), py::arg("base_dir") = ".", py::arg("overrides") = py::none())
      .def("devices_json", &Runtime::devices_json, py::call_guard<py::gil_scoped_release>())
      .def("doctor_json", &Runtime::doctor_json, py::call_guard<py::gil_scoped_release>())
      .def(
          "device_id", [](Runtime& r) { return r.device().device->id(); },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "device_messages",
          [](Runtime& r) {
            const RunDevice& d = r.device();
            std::vector<std::string> lines = d.warnings;
            if (!d.fallback_note.empty()) lines.insert(lines.begin(), d.fallback_note);
            return lines;
          },
          py::call_guard<py::gil_scoped_release>())
      .def(
          "train",
          [](Runtime& r, const py::object& progress) {
            std::function<bool(const EpochMetrics&)> on_epoch;
            if (!progress.is_none()) {
              on_epoch = [progress](const EpochMetrics& epoch) {
                py::gil_scoped_acquire acquire;
                const py::object answer = progress(epoch_dict(epoch));
                return answer.is_none() || answer.cast<bool>();
              };
            }
            py::gil_scoped_release release;
            return r.train(on_epoch);
          },
          py::arg("progress") = py::none())
      .def(
          "load_model", [](Runtime& r, const std::string& path) { return r.load_model(path); },
          py::call_guard<py::gil_scoped_release>())
      .def("memory_stats", [](Runtime& r) {
        MemoryStats s;
        {
          py::gil_scoped_release release;
          s = r.memory_stats();
        }
        py::dict d;
        d["allocated_bytes"] = s.allocated_bytes;
        d["reserved_bytes"] = s.reserved_bytes;
        d["peak_allocated_bytes"] = s.peak_allocated_bytes;
        d["limit_bytes"] = s.limit_bytes;
        d["allocation_count"] = s.allocation_count;
        return d;
      });

  py::class_<Predictor>(m, "NativePredictor")
      .def_property_readonly("input_width", &Predictor::input_width)
      .def_property_readonly("output_width", &Predictor::output_width)
      .def_property_readonly("class_names", &Predictor::class_names)
      .def_property_readonly("target_names", &Predictor::target_names)
      .def("predict", &predict, py::arg("x"), py::arg("batch_size"),
           py::arg("propagate_non_finite") = false);

  py::class_<OnnxModel>(m, "NativeOnnxModel")
      .def_static(
          "load",
          [](const std::string& path, Runtime& runtime) {
            return OnnxModel::load(path, runtime.device().device);
          },
          py::arg("path"), py::arg("runtime"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("inputs", [](const OnnxModel& m) { return value_infos(m.inputs()); })
      .def_property_readonly("outputs", [](const OnnxModel& m) { return value_infos(m.outputs()); })
      .def_property_readonly("opset", &OnnxModel::opset)
      .def("describe", &OnnxModel::describe)
      .def("execution_summary", &OnnxModel::execution_summary)
      .def("run", &run_onnx, py::arg("inputs"))
      .def("predict_rows", &predict_onnx_rows, py::arg("x"), py::arg("batch_size"))
      .def(
          "set_capture",
          [](OnnxModel& m, const std::string& mode) {
            m.set_capture(value_or_throw(parse_capture_mode(mode)));
          },
          py::arg("mode"))
      .def_property_readonly("capture",
                             [](const OnnxModel& m) { return capture_mode_name(m.capture()); })
      .def("capture_summary", &OnnxModel::capture_summary);

  py::class_<Tensor>(m, "NativeTensor")
      .def_property_readonly(
          "shape",
          [](const Tensor& t) { return std::vector<int64_t>(t.shape().begin(), t.shape().end()); })
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_name(t.dtype()); })
      .def_property_readonly("device", [](const Tensor& t) { return t.device()->id(); })
      .def("to_dlpack", &to_dlpack)
      .def("__repr__", &Tensor::to_string);

  m.def("is_onnx_path", [](const std::string& path) { return is_onnx_path(path); });

  m.def(
      "from_dlpack",
      [](py::capsule capsule, Runtime& runtime) {
        return from_dlpack_capsule(std::move(capsule), runtime.device().device);
      },
      py::arg("capsule"), py::arg("runtime"));
}
