"""switchyard from Python: devices, training runs and prediction on whatever hardware is there.

    import switchyard
    switchyard.devices()                       # what `switchyard devices --json` lists
    metrics = switchyard.run("configs/digits-mlp.yaml", overrides={"train.epochs": 2})
    model = switchyard.Predictor("runs/digits-mlp/model.ckpt")
    probabilities = model.predict(x)           # x: float32 array, samples x model.input_width

    clf = switchyard.Classifier().fit(X, y)    # scikit-learn estimators (switchyard.estimators)

Configurations are YAML files (a path), YAML text, or a dict (written as YAML). Errors raise
switchyard.Error with the message the CLI prints and the status name in `.code`.
"""

import json
import os
import warnings

import numpy

from . import _native
from ._native import Error

__version__ = _native.__version__
__all__ = ["Error", "OnnxModel", "Predictor", "Tensor", "TrainingWarning", "devices", "doctor",
           "from_dlpack", "run", "tensor"]


def _runtime(config=None, overrides=None, base_dir="."):
    """A native Runtime for a path, YAML text, a dict or None (the defaults)."""
    if config is None:
        return _native.Runtime.from_yaml("", base_dir, overrides)
    if isinstance(config, dict):
        # JSON is YAML: a dict becomes a configuration without a YAML writer.
        return _native.Runtime.from_yaml(json.dumps(config), base_dir, overrides)
    if isinstance(config, os.PathLike) or (isinstance(config, str) and "\n" not in config
                                           and os.path.exists(config)):
        return _native.Runtime.from_file(os.fspath(config), overrides)
    if isinstance(config, str) and ("\n" in config or ":" in config):
        return _native.Runtime.from_yaml(config, base_dir, overrides)
    raise Error(f"configuration file '{config}' does not exist")


def _device_runtime(config, device, overrides):
    """A Runtime for `config` with `device` ("auto", a backend or a device id) and overrides."""
    settings = _override_list(overrides)
    if device not in (None, "auto"):
        settings.append(f"device={device}")
    return _runtime(config, settings)


def devices(config=None):
    """Every device of every plugin, probed in this process: a list of dicts with backend, id,
    name, type, memory_total_bytes, memory_free_bytes, usable, reason, settings and selected (the
    one `config` selects), and one entry per plugin or folder that has no device to show."""
    return json.loads(_runtime(config).devices_json())


def doctor(config=None):
    """What `switchyard doctor --json` reports, as a dict: search_path, plugins, devices (each
    unusable one with a hint), selected and exit_code (0: the first backend of the priority list
    is usable, 1: only a lower one is, 2: nothing is)."""
    return json.loads(_runtime(config).doctor_json())


class TrainingWarning(UserWarning):
    """A training run finished, but its model is probably not worth keeping: the loss grew by
    orders of magnitude, every test prediction is one class, or features differ in scale by more
    than 100x without scaling. The message says what to change."""


def run(config, overrides=None, progress=None):
    """Trains `config` (path, YAML text or dict) as `switchyard run` does and returns the metrics
    `switchyard run --metrics` writes, as a dict. `overrides` is a dict or a list of "key=value"
    strings, like --set. `progress(epoch)` gets each epoch's figures as a dict; returning False
    stops the run after that epoch (metrics then say stopped_by_callback)."""
    runtime = _runtime(config, overrides)
    metrics = json.loads(runtime.train(progress))
    for message in metrics.get("warnings", []):
        warnings.warn(message, TrainingWarning, stacklevel=2)
    return metrics


class Predictor:
    """A trained model on a device, predicting NumPy arrays.

    `model` is a checkpoint written by a training run, a .safetensors file whose model and data
    layout `config` describes, or an .onnx model, read as `switchyard predict model.onnx` reads
    it (docs/onnx.md): a row of x holds the input's values per sample (reshaped to its shape), an
    output [batch, C >= 2] gives class probabilities (the softmax of the scores unless their rows
    already sum to 1), any other output regression values; class_names are then "0", "1", ... `device` is "auto" (the configuration's choice: the first usable
    backend of its priority list), a backend ("onednn", "cpu" for the CPU backends) or a device
    id ("vulkan:0"). The model is loaded once; predict() may be called any number of times.
    """

    def __init__(self, model, config=None, device="auto", overrides=None):
        self._runtime = _device_runtime(config, device, overrides)
        path = os.fspath(model)
        if _native.is_onnx_path(path):
            # The CLI's dispatch (PredictSettings::is_onnx): an .onnx file is a whole model, run
            # by the core's predict_onnx; a checkpoint has magic bytes and a config to check.
            self._native = None
            self._onnx = _OnnxRows(_native.NativeOnnxModel.load(path, self._runtime))
        else:
            self._native = self._runtime.load_model(path)
            self._onnx = None
        self.device = self._runtime.device_id()
        self.messages = self._runtime.device_messages()

    @property
    def input_width(self):
        """Values per sample the model takes."""
        return self._onnx.input_width if self._onnx else self._native.input_width

    @property
    def output_width(self):
        """Values per sample it returns: one per class (probabilities) or per regression target."""
        return self._onnx.output_width() if self._onnx else self._native.output_width

    @property
    def class_names(self):
        return self._onnx.class_names() if self._onnx else list(self._native.class_names)

    @property
    def target_names(self):
        return self._onnx.target_names() if self._onnx else list(self._native.target_names)

    def predict(self, x, batch_size=256, nan_policy="raise"):
        """Predictions for `x` (samples x input_width, raw values: the model scales them as its
        training did): class probabilities or regression values, float32, samples x
        output_width. A C-contiguous float32 array is read in place, without a copy; the GIL is
        released while the device computes.

        A NaN or infinite value raises switchyard.Error naming its row and column, as reading a
        CSV file does (nan_policy="raise"); nan_policy="propagate" hands such values to the model,
        whose outputs for those rows are then NaN. A model trained with data.missing: mean,
        median or most_frequent fills a NaN first, with the training split's value kept in its
        checkpoint (under either policy; `x` itself is not written).

        Threads: one Predictor may be shared by any number of threads; their calls run one at a
        time and each returns what a single thread would get."""
        if nan_policy not in ("raise", "propagate"):
            raise ValueError("nan_policy must be 'raise' or 'propagate', not %r" % (nan_policy,))
        array = numpy.asarray(x)
        if array.ndim == 1 and array.size == self.input_width:
            array = array.reshape(1, -1)
        if array.dtype != numpy.float32 or not array.flags.c_contiguous:
            array = numpy.ascontiguousarray(array, dtype=numpy.float32)
        if self._onnx:
            if nan_policy == "raise" and not numpy.isfinite(array).all():
                row, column = numpy.argwhere(~numpy.isfinite(array))[0]
                raise Error(f"predict: row {row}, column {column} is {array[row, column]}; "
                            "pass nan_policy='propagate' to give it to the model")
            return self._onnx.predict(array, int(batch_size))
        return self._native.predict(array, int(batch_size), nan_policy == "propagate")

    def memory_stats(self):
        """The device's memory statistics in bytes (allocated, reserved, peak, limit, count)."""
        return self._runtime.memory_stats()


class _OnnxRows:
    """An ONNX model behind Predictor: rows in, probabilities or regression values out, through
    the core's predict_onnx (what `switchyard predict model.onnx rows.csv` runs)."""

    def __init__(self, native):
        self.native = native
        if len(native.inputs) != 1:
            raise Error(f"the model takes {len(native.inputs)} inputs; Predictor needs a model "
                        "with one (OnnxModel.run takes several)")
        # Every extent but the batch axis (the dynamic one) is part of a row.
        fixed = [extent for extent in native.inputs[0]["shape"] if isinstance(extent, int)]
        self.input_width = int(numpy.prod(fixed))
        self._width = None
        self._regression = None

    def predict(self, array, batch_size):
        values, regression = self.native.predict_rows(array, batch_size)
        self._width, self._regression = values.shape[1], regression
        return values

    def _shape(self):
        if self._width is None:  # the output's width shows once the graph has run
            self.predict(numpy.zeros((1, self.input_width), numpy.float32), 1)
        return self._width, self._regression

    def output_width(self):
        return self._shape()[0]

    def class_names(self):
        width, regression = self._shape()
        return [] if regression else [str(c) for c in range(width)]

    def target_names(self):
        width, regression = self._shape()
        if not regression:
            return []
        name = self.native.outputs[0]["name"]
        return [name] if width == 1 else [f"{name}_{k}" for k in range(width)]


class OnnxModel:
    """An ONNX model (torch.onnx.export's, opsets 7 to 27) on a device, run on NumPy arrays.

        model = switchyard.OnnxModel("model.onnx", device="onednn")
        (logits,) = model.run(x)               # x: float32 [batch, ...] as the model declares

    `device` and `config` choose the device as for Predictor. `inputs` and `outputs` list each
    value's name, element type and shape (a dynamic axis by its name, e.g. "batch"). run() takes
    the graph's inputs (float arrays as float32, integer and bool arrays as int64) and returns its
    outputs as float32 or int64 arrays; the GIL is released while the graph runs:

        model.run(x)                   # one array per input, in order -> a list of outputs
        model.run([x])                 # a list of them, in order      -> a list of outputs
        model.run({"input": x})        # by input name                 -> a dict by output name

    `capture` ("auto", "on" or "off"; docs/capture.md): with "on", the second run of each input
    shape is recorded and later runs replay its ops without the graph's host-side work, giving
    the same bits; capture_summary() says what the last run did ("replayed 67 ops", or why a
    shape stays eager). "auto" is "on" (one submission per run where the backend replays
    natively: vulkan, cuda); "off" runs every call eagerly.
    docs/onnx.md has what is supported.
    """

    def __init__(self, path, config=None, device="auto", overrides=None, capture="auto"):
        self._runtime = _device_runtime(config, device, overrides)
        self._native = _native.NativeOnnxModel.load(os.fspath(path), self._runtime)
        self._native.set_capture(capture)
        self.device = self._runtime.device_id()
        self.messages = self._runtime.device_messages()

    @property
    def inputs(self):
        return self._native.inputs

    @property
    def outputs(self):
        return self._native.outputs

    @property
    def opset(self):
        return self._native.opset

    @property
    def capture(self):
        return self._native.capture

    def capture_summary(self):
        """What the last run did: "eager", "recorded N ops (holding ...)", "replayed N ops", or
        "eager: <why this input shape cannot be replayed>"."""
        return self._native.capture_summary()

    def describe(self):
        """The file's producer, opset and size; after a run, which ops ran where."""
        return self._native.describe() + "\n" + self._native.execution_summary()

    def run(self, *inputs):
        """The outputs for `inputs`: arrays in the graph's order, given as arguments or as one
        list or tuple (a list of outputs comes back), or one dict of input name -> array (a dict
        of output name -> array comes back)."""
        if len(inputs) == 1 and isinstance(inputs[0], dict):
            names = [info["name"] for info in self.inputs]
            given = inputs[0]
            unknown = sorted(set(given) - set(names))
            missing = [name for name in names if name not in given]
            if unknown or missing:
                raise Error(f"OnnxModel.run: the model's inputs are {names}"
                            + (f"; unknown: {unknown}" if unknown else "")
                            + (f"; missing: {missing}" if missing else ""))
            outputs = self._native.run([numpy.asarray(given[name]) for name in names])
            return {info["name"]: value for info, value in zip(self.outputs, outputs)}
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
            inputs = inputs[0]
        return list(self._native.run([numpy.asarray(x) for x in inputs]))


class Tensor:
    """A switchyard tensor, exchanged with NumPy and PyTorch through DLPack:
    numpy.from_dlpack(t) and torch.utils.dlpack.from_dlpack(t) read it (without a copy on a CPU
    device), switchyard.from_dlpack(array) makes one."""

    def __init__(self, native, runtime):
        self._native = native
        self._runtime = runtime  # keeps the device open while the tensor lives

    shape = property(lambda self: tuple(self._native.shape))
    dtype = property(lambda self: self._native.dtype)
    device = property(lambda self: self._native.device)

    def __dlpack__(self, stream=None):
        if stream is not None:
            raise BufferError("switchyard tensors are exported as host memory: stream must be None")
        return self._native.to_dlpack()

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0: exported tensors are host memory

    def numpy(self):
        return numpy.from_dlpack(self)

    def __repr__(self):
        return repr(self._native)


def from_dlpack(source, config=None, device="auto"):
    """A switchyard Tensor with the values of `source` (anything with __dlpack__: a NumPy array,
    a PyTorch CPU tensor), copied onto the device `config` and `device` select."""
    settings = [] if device in (None, "auto") else [f"device={device}"]
    runtime = _runtime(config, settings)
    capsule = source.__dlpack__() if hasattr(source, "__dlpack__") else source
    return Tensor(_native.from_dlpack(capsule, runtime), runtime)


# The NumPy dtypes a switchyard tensor can hold (bfloat16 has none in NumPy).
_TENSOR_DTYPES = ("float32", "float16", "int32", "int64")


def tensor(values, config=None, device="auto", dtype=None):
    """A switchyard Tensor from anything NumPy can make an array of: an array, a number, a list
    or nested lists. `dtype` (float32, float16, int32 or int64) converts the values; without
    it, float64 values (Python floats, NumPy's default) become float32, as switchyard computes
    in float32 and has no float64, and other dtypes are kept."""
    if dtype is not None:
        if numpy.dtype(dtype).name not in _TENSOR_DTYPES:
            raise Error(f"tensor: dtype {numpy.dtype(dtype).name} is not one of "
                        f"{', '.join(_TENSOR_DTYPES)}")
        array = numpy.ascontiguousarray(values, dtype=dtype)
    else:
        array = numpy.ascontiguousarray(values)
        if array.dtype == numpy.float64:
            array = array.astype(numpy.float32)
    return from_dlpack(array, config, device)


def __getattr__(name):
    """Classifier and Regressor (switchyard.estimators), imported on first use: they need
    scikit-learn, which the rest of the package does not."""
    if name in ("Classifier", "Regressor"):
        from . import estimators
        return getattr(estimators, name)
    raise AttributeError(f"module 'switchyard' has no attribute '{name}'")


def _override_list(overrides):
    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return [f"{key}={_yaml_value(value)}" for key, value in overrides.items()]
    return list(overrides)


def _yaml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)
