"""switchyard from many Python threads (issue 26): one Predictor shared by 4 threads, two
Predictors on one device, and an OnnxModel, each call bit-identical to a single thread's; and the
input checks that used to pass NaN through silently."""

import concurrent.futures
import os

import numpy
import pytest

import switchyard

CALLS = int(os.environ.get("SWITCHYARD_THREAD_CALLS", "1000"))
THREADS = 4
ROWS = 200  # per call: several batches of 32, so that calls of different threads could interleave
BATCH = 32
OFFSETS = 64


def _usable_or_skip(backend):
    """Skips a test of a backend that cannot run here ("skipped <backend>: <reason>"), or fails it
    where the backend is required (SWITCHYARD_REQUIRE_BACKENDS, or CI=true: reference, onednn and
    vulkan; tests/backend_support.h)."""
    listing = [d for d in switchyard.devices({"backends": [backend]}) if d.get("backend") == backend]
    if any(d.get("usable") for d in listing):
        return
    reason = "; ".join(d.get("reason", "") for d in listing) or "its plugin was not found"
    named = os.environ.get("SWITCHYARD_REQUIRE_BACKENDS")
    if named is None:
        named = "reference,onednn,vulkan" if os.environ.get("CI") == "true" else ""
    if backend in [n.strip() for n in named.split(",")]:
        pytest.fail(f"required backend {backend} cannot run: {reason}")
    pytest.skip(f"skipped {backend}: {reason}")


def _inputs():
    rng = numpy.random.default_rng(7)
    return rng.integers(0, 17, size=(OFFSETS * 27 + ROWS, 64)).astype(numpy.float32)


def _expected(model, x):
    """Per offset, what one thread gets for the ROWS rows starting there."""
    return [model.predict(x[o * 27:o * 27 + ROWS], batch_size=BATCH) for o in range(OFFSETS)]


def _hammer(models, x, expected, calls=CALLS):
    """Each model in `models` gets its own thread making `calls` calls; returns the calls whose
    result differs from `expected` in any bit."""

    def work(index):
        model = models[index]
        differ = 0
        for call in range(calls):
            offset = (index * 7919 + call * 131) % OFFSETS
            out = model.predict(x[offset * 27:offset * 27 + ROWS], batch_size=BATCH)
            if out.tobytes() != expected[offset].tobytes():
                differ += 1
        return differ

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(models)) as pool:
        return sum(pool.map(work, range(len(models))))


@pytest.mark.parametrize("device", ["reference", "onednn"])
def test_one_predictor_shared_by_four_threads_is_bit_identical(trained, device):
    _usable_or_skip(device)
    model = switchyard.Predictor(trained[0], device=device)
    x = _inputs()
    expected = _expected(model, x)
    assert _hammer([model] * THREADS, x, expected) == 0


@pytest.mark.parametrize("device", ["reference", "onednn"])
def test_two_predictors_on_one_device_are_bit_identical(trained, device):
    """Two predictors of one runtime share its device (the C API's case that returned wrong
    classes before the device serialised its plugin calls)."""
    _usable_or_skip(device)
    runtime = switchyard._device_runtime(None, device, None)
    first = runtime.load_model(str(trained[0]))
    second = runtime.load_model(str(trained[0]))
    x = _inputs()

    class Native:  # the package's Predictor.predict, over a native predictor
        def __init__(self, native):
            self.native = native

        def predict(self, rows, batch_size):
            return self.native.predict(numpy.ascontiguousarray(rows), batch_size)

    models = [Native(first), Native(second)]
    expected = _expected(models[0], x)
    assert _hammer(models, x, expected) == 0


def test_predict_refuses_nan_and_inf_naming_row_and_column(trained):
    model = switchyard.Predictor(trained[0], device="reference")
    x = numpy.full((4, 64), 3.0, dtype=numpy.float32)
    x[2, 17] = numpy.nan
    with pytest.raises(switchyard.Error, match=r"row 2, column 17 .* is NaN") as caught:
        model.predict(x)
    assert caught.value.code == "INVALID_ARGUMENT"
    x[2, 17] = -numpy.inf
    with pytest.raises(switchyard.Error, match=r"row 2, column 17 .* is -inf"):
        model.predict(x, batch_size=1)
    # On purpose: the values reach the model, and that row's outputs are NaN, the others not.
    out = model.predict(x, nan_policy="propagate")
    assert numpy.isnan(out[2]).all() and numpy.isfinite(numpy.delete(out, 2, axis=0)).all()
    with pytest.raises(ValueError, match="nan_policy"):
        model.predict(x, nan_policy="omit")


@pytest.mark.parametrize("device", ["reference", "onednn"])
def test_onnx_model_shared_by_threads(device):
    """A PyTorch-exported ONNX model (tests/onnx/models/mlp_gelu) run by 4 threads at once gives
    one thread's bits."""
    from conftest import SOURCE_DIR

    _usable_or_skip(device)
    model = switchyard.OnnxModel(os.path.join(SOURCE_DIR, "tests", "onnx", "models", "mlp_gelu",
                                              "model.onnx"), device=device)
    width = model.inputs[0]["shape"][1]
    x = numpy.random.default_rng(3).standard_normal((OFFSETS * 27 + ROWS, width)).astype(
        numpy.float32)
    expected = [model.run(x[o * 27:o * 27 + ROWS])[0] for o in range(OFFSETS)]

    def work(index):
        differ = 0
        for call in range(CALLS // 4):
            offset = (index * 7919 + call * 131) % OFFSETS
            out = model.run(x[offset * 27:offset * 27 + ROWS])[0]
            differ += out.tobytes() != expected[offset].tobytes()
        return differ

    with concurrent.futures.ThreadPoolExecutor(max_workers=THREADS) as pool:
        assert sum(pool.map(work, range(THREADS))) == 0
