"""tools/lib/gpu_check.py, the judges behind tools/gpu-check's verdicts: each must refuse the
evidence of a run that did not show what its step exists to show (here, without a GPU, on
hand-written evidence)."""

import importlib.util
import json
import os

import pytest

from conftest import SOURCE_DIR

_spec = importlib.util.spec_from_file_location(
    "gpu_check", os.path.join(SOURCE_DIR, "tools", "lib", "gpu_check.py"))
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)


def verdict(*argv):
    """0 when the judge accepts, 1 when it refuses."""
    try:
        gpu_check.main([str(a) for a in argv])
    except SystemExit as stop:
        return stop.code
    return 0


def write(path, document):
    path.write_text(json.dumps(document))
    return path


def metrics(**changes):
    m = {"backend": "cuda", "device": "cuda:0", "device_name": "NVIDIA H200",
         "test_accuracy": 0.986, "fallback_ops": 0, "deterministic": True,
         "weights_fnv1a64": "aa996b543bd1a3e7",
         "history": [{"epoch": 1, "train_loss": 0.5, "test_loss": 0.4},
                     {"epoch": 2, "train_loss": 0.2, "test_loss": 0.1}]}
    m.update(changes)
    return m


def test_train_accepts_a_good_run_and_refuses_each_fault(tmp_path):
    def judge(**changes):
        file = write(tmp_path / "m.json", metrics(**changes))
        return verdict("train", file, "--backend", "cuda", "--min-accuracy", 0.96)

    assert judge() == 0
    assert judge(test_accuracy=0.959) == 1
    assert judge(backend="onednn") == 1
    assert judge(fallback_ops=3) == 1
    assert judge(history=[]) == 1
    # NaN is written as null in the metrics file.
    assert judge(history=[{"epoch": 1, "train_loss": None, "test_loss": 0.4}]) == 1


def test_same_run_needs_identical_weights_and_losses(tmp_path):
    first = write(tmp_path / "a.json", metrics())
    assert verdict("same-run", first, write(tmp_path / "b.json", metrics())) == 0
    assert verdict("same-run", first,
                   write(tmp_path / "b.json", metrics(weights_fnv1a64="0000000000000001"))) == 1
    moved = metrics()
    moved["history"][1]["train_loss"] = 0.2000001
    assert verdict("same-run", first, write(tmp_path / "b.json", moved)) == 1
    assert verdict("same-run", first,
                   write(tmp_path / "b.json", metrics(deterministic=False))) == 1


def test_conformance_refuses_failures_an_empty_run_and_a_missing_setting(tmp_path):
    def report(passed, failed, settings="cublaslt=loaded matmuls_kernel=0"):
        cases = [{"name": "add/f32/a", "op": "add", "dtype": "f32", "outcome": "passed"}] * passed
        cases += [{"name": "add/f32/b", "op": "add", "dtype": "f32", "outcome": "failed",
                   "nmse": 1.0, "tolerance": 0.0, "reason": "differs"}] * failed
        return write(tmp_path / "c.json", {"device": "cuda:0", "passed": passed, "failed": failed,
                                           "skipped": 0, "device_settings": settings,
                                           "cases": cases})

    assert verdict("conformance", report(5, 0)) == 0
    assert verdict("conformance", report(5, 1)) == 1
    assert verdict("conformance", report(0, 0)) == 1
    assert verdict("conformance", report(5, 0), "--expect", "cublaslt=loaded") == 0
    assert verdict("conformance", report(5, 0, "cublaslt=none"), "--expect",
                   "cublaslt=loaded") == 1


def test_vulkan_device_must_be_the_nvidia_gpu(tmp_path):
    log = tmp_path / "devices.txt"
    log.write_text("* cuda:0  NVIDIA H200  [gpu]  usable\n  vulkan:0  NVIDIA H200  [gpu]  usable\n")
    assert verdict("vulkan-device", log) == 0
    log.write_text("  vulkan:0  llvmpipe (LLVM 15.0.6, 256 bits)  [emulated]  usable\n")
    assert verdict("vulkan-device", log) == 1
    log.write_text("* cuda:0  NVIDIA H200  [gpu]  usable\n")
    assert verdict("vulkan-device", log) == 1


def test_vulkan_device_prints_its_settings_and_cooperative_matrix_shapes(tmp_path, capsys):
    log = tmp_path / "devices.txt"
    log.write_text(
        "* cuda:0  NVIDIA H200  [gpu]  usable\n      settings: tf32=off\n"
        "  vulkan:0  NVIDIA H200  [gpu]  usable\n"
        "      settings: validation=off matmul_tile=128 cooperative_matrix=16x16x16\n"
        "      details: subgroup 32, cooperative matrix f16->f32: 16x8x16 16x16x16*\n")
    assert verdict("vulkan-device", log) == 0
    printed = capsys.readouterr().out
    assert "cooperative_matrix=16x16x16" in printed and "16x16x16*" in printed
    assert "tf32=off" not in printed  # cuda's lines are not vulkan's


def speed_evidence(folder, changes):
    """Our bench files (a passing set, with `changes`: None removes a file) and the peer's, in
    `folder`; returns the peer file's path."""
    ours = {"matmul-bf16-cuda.json": {"gflops": 800000}, "matmul-f32-cuda.json": {"gflops": 50000},
            "step-cuda.json": {"median_ms": 1.0}, "transformer-cuda.json": {"median_ms": 5.0},
            "lstm-cuda.json": {"median_ms": 7.0}, "add-cuda.json": {"median_microseconds": 12.0}}
    ours.update(changes)
    for name, document in ours.items():
        if document is not None:
            write(folder / name, document)
    return write(folder / "peer.json", {
        "matmul_bf16": {"gflops": 900000}, "matmul_f32": {"gflops": 50000},
        "step": {"median_ms": 1.0}, "transformer": {"median_ms": 5.0},
        "lstm": {"median_ms": 10.0}, "add": {"median_us": 14.0}})


def test_speed_reports_the_vulkan_matmuls_and_their_kernel_without_judging(tmp_path):
    peer = speed_evidence(tmp_path, {
        "matmul-f32-vulkan.json": {"gflops": 9000.0, "dtype": "f32", "device_name": "H200",
                                   "matmul_path": "shader",
                                   "settings": "matmul_tile=128 cooperative_matrix=16x16x16"},
        "matmul-f32-tile64-vulkan.json": {"gflops": 4700.0, "dtype": "f32", "device_name": "H200",
                                          "matmul_path": "shader", "settings": "matmul_tile=64"},
        "matmul-f16-vulkan.json": {"gflops": 310000.0, "dtype": "f16", "device_name": "H200",
                                   "matmul_path": "coopmat"}})
    out = tmp_path / "speed.json"
    assert verdict("speed", tmp_path, peer, "--out", out) == 0  # below 25 TFLOP/s: reported
    rows = {row["what"]: row for row in json.loads(out.read_text())["rows"]}
    assert rows["vulkan matmul 8192^3 f32 (shader, tile 128), GFLOP/s on H200"]["verdict"] == \
        "below 25000 (issue 30)"
    assert rows["vulkan matmul 8192^3 f32 (shader, tile 64), GFLOP/s on H200"]["ours"] == 4700.0
    assert rows["vulkan matmul 8192^3 f16 (coopmat), GFLOP/s on H200"]["verdict"] == \
        "meets 300000 (issue 30)"


@pytest.mark.parametrize("change, accepted", [
    ({}, True),
    ({"matmul-bf16-cuda.json": {"gflops": 700000}}, False),  # 0.78x PyTorch's 900000
    ({"lstm-cuda.json": {"median_ms": 10.5}}, False),       # 1.05x PyTorch's 10 ms
    ({"step-cuda.json": None}, False),                       # a bounded figure is missing
    ({"add-cuda.json": {"median_microseconds": 99.0}}, True),  # reported, not bounded
])
def test_speed_holds_each_bounded_ratio(tmp_path, change, accepted):
    peer = speed_evidence(tmp_path, change)
    out = tmp_path / "speed.json"
    assert verdict("speed", tmp_path, peer, "--out", out) == (0 if accepted else 1)
    rows = {row["what"]: row for row in json.loads(out.read_text())["rows"]}
    assert rows["LSTM training step, ms"]["bound"] == 1.0
    assert rows["784-2048-2048-10 b256 training step, ms"]["bound"] == 1.25
