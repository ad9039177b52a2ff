"""import switchyard: devices, doctor, run, Predictor, DLPack, errors and `python3 -m switchyard`."""

import json
import os
import subprocess
import sys
import threading
import time

import numpy
import pytest

import switchyard
from conftest import SOURCE_DIR, train_config


def test_devices_and_doctor_return_data():
    listing = switchyard.devices()
    assert isinstance(listing, list)
    reference = [d for d in listing if d["id"] == "reference:0"]
    assert reference and reference[0]["usable"] is True and reference[0]["type"] == "cpu"
    assert sum(1 for d in listing if d["selected"]) == 1
    only_reference = switchyard.devices({"backends": ["reference"]})
    assert [d["id"] for d in only_reference if d["selected"]] == ["reference:0"]
    report = switchyard.doctor({"backends": ["reference"]})
    assert report["selected"] == "reference:0" and report["exit_code"] == 0
    assert {"search_path", "plugins", "devices"} <= set(report)


def test_run_returns_the_metrics_and_progress_sees_every_epoch(trained):
    _, metrics = trained
    assert metrics["task"] == "train" and metrics["epochs"] == 3
    assert metrics["test_accuracy"] > 0.85
    assert len(metrics["history"]) == 3
    assert metrics["stopped_by_callback"] is False


def test_progress_returning_false_stops_the_run(tmp_path):
    seen = []

    def progress(epoch):
        seen.append(epoch["epoch"])
        assert "test_accuracy" in epoch and "train_loss" in epoch
        return epoch["epoch"] < 2

    metrics = switchyard.run(train_config(tmp_path / "m.ckpt", epochs=5), progress=progress)
    assert seen == [1, 2]
    assert metrics["stopped_by_callback"] is True and metrics["epochs"] == 2
    assert os.path.exists(tmp_path / "m.ckpt")


def test_an_exception_in_progress_propagates(tmp_path):
    def progress(epoch):
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        switchyard.run(train_config(tmp_path / "m.ckpt", epochs=2), progress=progress)


def test_overrides_and_a_yaml_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(train_config(tmp_path / "f.ckpt", epochs=4)))
    metrics = switchyard.run(str(path), overrides={"train.epochs": 1, "backends": ["reference"]})
    assert metrics["epochs"] == 1 and metrics["backend"] == "reference"


def test_errors_are_exceptions_with_the_message_and_code(tmp_path):
    with pytest.raises(switchyard.Error) as caught:
        switchyard.run("train: [1, 2\n")
    assert "<yaml text>:2:1" in str(caught.value) and caught.value.code == "INVALID_ARGUMENT"
    with pytest.raises(switchyard.Error, match="train.epochz"):
        switchyard.run({"train": {"epochz": 3}})
    with pytest.raises(switchyard.Error, match="nosuchbackend"):
        switchyard.Predictor(tmp_path / "x.ckpt", device="nosuchbackend")
    broken = tmp_path / "broken.ckpt"
    broken.write_bytes(b"not a checkpoint at all")
    with pytest.raises(switchyard.Error) as caught:
        switchyard.Predictor(broken)
    assert "broken.ckpt" in str(caught.value)
    assert caught.value.code in ("DATA_LOSS", "INVALID_ARGUMENT")


def test_predictor_matches_the_cli_predictions(trained, digits_data, tmp_path):
    checkpoint, _ = trained
    x, _ = digits_data
    model = switchyard.Predictor(checkpoint)
    assert (model.input_width, model.output_width) == (64, 10)
    assert model.class_names == [str(c) for c in range(10)]
    probabilities = model.predict(x[:100])
    assert probabilities.shape == (100, 10) and probabilities.dtype == numpy.float32
    numpy.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    # The CLI's predict on the same rows, the same device.
    rows = tmp_path / "rows.csv"
    numpy.savetxt(rows, x[:100], delimiter=",", fmt="%g")
    cli = os.environ.get("SWITCHYARD_CLI", os.path.join(SOURCE_DIR, "build", "bin", "switchyard"))
    done = subprocess.run([cli, "predict", str(checkpoint), str(rows)], capture_output=True,
                          text=True, check=True,
                          env=dict(os.environ, SWITCHYARD_DEVICE=model.device))
    lines = done.stdout.strip().splitlines()
    header = lines[0].split(",")
    columns = [header.index(f"p_{c}") for c in range(10)]
    expected = numpy.array([[float(line.split(",")[i]) for i in columns] for line in lines[1:]])
    numpy.testing.assert_allclose(probabilities, expected, atol=2e-5)


def test_predict_validates_its_input(trained):
    model = switchyard.Predictor(trained[0])
    with pytest.raises(switchyard.Error, match="the model takes 64") as caught:
        model.predict(numpy.zeros((3, 63), dtype=numpy.float32))
    assert caught.value.code == "INVALID_ARGUMENT"
    # Other dtypes and layouts are converted; a single sample may be 1-D.
    x = numpy.arange(2 * 64, dtype=numpy.float64).reshape(2, 64) % 17
    numpy.testing.assert_allclose(model.predict(x), model.predict(numpy.asfortranarray(x)),
                                  rtol=1e-6)
    assert model.predict(x[0]).shape == (1, 10)
    assert model.predict(numpy.zeros((0, 64), dtype=numpy.float32)).shape == (0, 10)


def _peak_rss_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def _rss_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def test_predict_does_not_copy_its_input_on_a_cpu_device(trained):
    """100,000 x 64 float32 (25.6 MB): the predictor reads the caller's array a batch at a time,
    so the process's peak memory grows by the output (4 MB) and a batch, never by a copy."""
    model = switchyard.Predictor(trained[0], device="cpu")
    x = numpy.random.default_rng(0).integers(0, 17, size=(100_000, 64)).astype(numpy.float32)
    model.predict(x[:1000])  # warm the pools
    before = x.copy()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM to the current RSS
    baseline = _rss_bytes()
    out = model.predict(x, batch_size=1024)
    growth = _peak_rss_bytes() - baseline
    assert out.shape == (100_000, 10)
    assert growth < x.nbytes // 2, f"peak memory grew by {growth} bytes for a {x.nbytes}-byte input"
    numpy.testing.assert_array_equal(x, before)  # and the input is left as it was
    # Batches of another size may round differently (oneDNN blocks by batch).
    numpy.testing.assert_allclose(out[:1000], model.predict(x[:1000]), rtol=1e-5, atol=1e-6)


def test_predict_releases_the_gil(trained):
    model = switchyard.Predictor(trained[0])
    x = numpy.ones((200_000, 64), dtype=numpy.float32)
    ticks = 0
    running = threading.Event()
    finished = threading.Event()

    def count():
        nonlocal ticks
        running.set()
        while not finished.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    running.wait()
    start = time.perf_counter()
    ticks_before = ticks
    model.predict(x, batch_size=512)
    elapsed = time.perf_counter() - start
    during = ticks - ticks_before
    finished.set()
    counter.join()
    # With the GIL held, the counting thread would not run at all during the call.
    assert elapsed < 0.05 or during >= 5, f"{during} ticks in {elapsed:.3f} s"


def test_tensors_travel_through_dlpack():
    values = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)
    t = switchyard.tensor(values, config={"backends": ["reference"]})
    assert t.shape == (3, 4) and t.dtype == "f32" and t.device == "reference:0"
    back = numpy.from_dlpack(t)
    numpy.testing.assert_array_equal(back, values)
    # On a CPU device NumPy reads the device memory itself: two imports share it.
    assert numpy.shares_memory(back, numpy.from_dlpack(t))
    # Strided sources are copied element by element; integer dtypes keep their type.
    strided = numpy.arange(20, dtype=numpy.int64).reshape(4, 5)[:, ::2]
    numpy.testing.assert_array_equal(switchyard.from_dlpack(strided).numpy(), strided)
    with pytest.raises(switchyard.Error, match="no switchyard dtype"):
        switchyard.tensor(numpy.zeros(3, dtype=numpy.uint8))


def test_tensor_takes_lists_and_float64_as_float32_unless_told():
    reference = {"backends": ["reference"]}
    t = switchyard.tensor([[1.0, 2.0]], config=reference)
    assert t.shape == (1, 2) and t.dtype == "f32"
    numpy.testing.assert_array_equal(t.numpy(), numpy.array([[1.0, 2.0]], numpy.float32))
    wide = numpy.linspace(0, 1, 6).reshape(2, 3)  # float64
    t = switchyard.tensor(wide, config=reference)
    assert t.dtype == "f32" and t.numpy().dtype == numpy.float32
    numpy.testing.assert_array_equal(t.numpy(), wide.astype(numpy.float32))
    assert switchyard.tensor(wide, config=reference, dtype="float16").dtype == "f16"
    assert switchyard.tensor([[1, 2], [3, 4]], config=reference).dtype == "i64"
    t = switchyard.tensor([[1.0, 2.0]], config=reference, dtype=numpy.int32)
    assert t.dtype == "i32" and t.numpy().tolist() == [[1, 2]]
    with pytest.raises(switchyard.Error, match="float64 is not one of float32"):
        switchyard.tensor(wide, dtype=numpy.float64)


def test_dlpack_with_pytorch():
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    source = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = switchyard.from_dlpack(source)
    assert t.shape == (2, 3)
    back = torch.utils.dlpack.from_dlpack(t.__dlpack__())
    assert torch.equal(back, source)


def test_python_m_switchyard_mirrors_the_cli():
    done = subprocess.run([sys.executable, "-m", "switchyard", "devices", "--json"],
                          capture_output=True, text=True, check=True)
    listing = json.loads(done.stdout)
    assert any(d["id"] == "reference:0" for d in listing)
    text = subprocess.run([sys.executable, "-m", "switchyard", "devices"], capture_output=True,
                          text=True, check=True).stdout
    assert "reference:0" in text and "usable" in text
    doctor = subprocess.run([sys.executable, "-m", "switchyard", "doctor", "--json"],
                            capture_output=True, text=True)
    assert json.loads(doctor.stdout)["exit_code"] == doctor.returncode
    # It is the CLI binary itself: every command, with the CLI's exit codes.
    plugins = subprocess.run([sys.executable, "-m", "switchyard", "plugins"], capture_output=True,
                             text=True, check=True).stdout
    assert "reference" in plugins
    usage = subprocess.run([sys.executable, "-m", "switchyard", "predict"], capture_output=True,
                           text=True)
    assert usage.returncode == 2 and "usage: switchyard predict" in usage.stderr



def test_without_a_cli_binary_devices_and_doctor_run_in_process(capsys):
    from switchyard import __main__ as main
    assert main.cli_path() == os.path.realpath(os.environ["SWITCHYARD_CLI"])
    assert main.in_process(["devices", "--json"]) == 0
    assert any(d["id"] == "reference:0" for d in json.loads(capsys.readouterr().out))
    assert main.in_process(["version"]) == 0
    assert capsys.readouterr().out.strip() == switchyard.__version__


def test_a_safetensors_export_predicts_what_its_checkpoint_predicts(tmp_path, digits_data):
    config = train_config(tmp_path / "m.ckpt", epochs=1)
    config["train"]["export"] = str(tmp_path / "m.safetensors")
    switchyard.run(config)
    x, _ = digits_data
    from_checkpoint = switchyard.Predictor(tmp_path / "m.ckpt").predict(x[:50])
    # A weights file carries no data layout: the configuration's model and data sections give it.
    from_weights = switchyard.Predictor(tmp_path / "m.safetensors", config=config).predict(x[:50])
    numpy.testing.assert_array_equal(from_checkpoint, from_weights)
