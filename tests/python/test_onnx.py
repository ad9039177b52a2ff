"""switchyard.OnnxModel: a PyTorch export (tests/onnx/models) run from Python gives PyTorch's
outputs; bad files and bad inputs raise switchyard.Error naming them."""

import os
import subprocess

import numpy
import pytest

import switchyard
from conftest import SOURCE_DIR

MODELS = os.path.join(SOURCE_DIR, "tests", "onnx", "models")
onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402  (after the importorskip)


def tensor(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


@pytest.mark.parametrize("name", ["mlp_gelu", "embedding_lstm", "transformer_mask"])
def test_a_pytorch_export_predicts_pytorchs_outputs(name):
    model = switchyard.OnnxModel(os.path.join(MODELS, name, "model.onnx"), device="reference")
    assert model.opset == 17
    assert model.inputs[0]["shape"][0] == "batch"
    folder = os.path.join(MODELS, name, "test_data_set_1")
    inputs = [tensor(os.path.join(folder, f"input_{k}.pb")) for k in range(len(model.inputs))]
    (output,) = model.run(*inputs)
    expected = tensor(os.path.join(folder, "output_0.pb"))
    assert output.dtype == numpy.float32 and output.shape == expected.shape
    numpy.testing.assert_allclose(output, expected, rtol=1e-4, atol=1e-4)
    assert "device" in model.describe()


def test_bad_inputs_and_files_raise_errors_naming_them(tmp_path):
    path = os.path.join(MODELS, "mlp_gelu", "model.onnx")
    model = switchyard.OnnxModel(path)
    with pytest.raises(switchyard.Error) as error:
        model.run(numpy.zeros((2, 21), numpy.float32))
    assert error.value.code == "INVALID_ARGUMENT" and path in str(error.value)
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(open(path, "rb").read()[:100])
    with pytest.raises(switchyard.Error) as error:
        switchyard.OnnxModel(broken)
    assert error.value.code == "DATA_LOSS" and str(broken) in str(error.value)


def test_run_takes_a_list_or_a_dict_of_inputs():
    path = os.path.join(MODELS, "transformer_mask", "model.onnx")
    model = switchyard.OnnxModel(path, device="reference")
    folder = os.path.join(MODELS, "transformer_mask", "test_data_set_1")
    x, mask = (tensor(os.path.join(folder, f"input_{k}.pb")) for k in range(2))
    expected = tensor(os.path.join(folder, "output_0.pb"))
    (positional,) = model.run(x, mask)
    (from_list,) = model.run([x, mask])
    (from_tuple,) = model.run((x, mask))
    by_name = model.run({"src_key_padding_mask": mask, "input": x})
    assert list(by_name) == ["output"]
    for output in (positional, from_list, from_tuple, by_name["output"]):
        numpy.testing.assert_allclose(output, expected, rtol=1e-4, atol=1e-4)
    with pytest.raises(switchyard.Error, match=r"missing: \['src_key_padding_mask'\]"):
        model.run({"input": x})
    with pytest.raises(switchyard.Error, match=r"unknown: \['mask'\]"):
        model.run({"input": x, "src_key_padding_mask": mask, "mask": mask})
    # One model input: a list of one array is that array, not one array of a higher rank.
    mlp = switchyard.OnnxModel(os.path.join(MODELS, "mlp_gelu", "model.onnx"), device="reference")
    rows = tensor(os.path.join(MODELS, "mlp_gelu", "test_data_set_1", "input_0.pb"))
    numpy.testing.assert_array_equal(mlp.run([rows])[0], mlp.run(rows)[0])


def softmax(scores):
    exp = numpy.exp(scores - scores.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def test_predictor_takes_an_onnx_file_as_the_cli_does(tmp_path):
    path = os.path.join(MODELS, "mlp_gelu", "model.onnx")
    rows = tensor(os.path.join(MODELS, "mlp_gelu", "test_data_set_1", "input_0.pb"))
    model = switchyard.Predictor(path, device="reference")
    assert (model.input_width, model.output_width) == (20, 5)
    assert model.class_names == ["0", "1", "2", "3", "4"] and model.target_names == []
    probabilities = model.predict(rows.astype(numpy.float64), batch_size=2)
    (scores,) = switchyard.OnnxModel(path, device="reference").run(rows)
    numpy.testing.assert_allclose(probabilities, softmax(scores), rtol=1e-5, atol=1e-6)
    # `switchyard predict model.onnx rows.csv`: the same probabilities, one column per class.
    numpy.savetxt(tmp_path / "rows.csv", rows, delimiter=",", fmt="%.9g")
    subprocess.run([os.environ["SWITCHYARD_CLI"], "predict", path, str(tmp_path / "rows.csv"),
                    "-o", str(tmp_path / "out.csv")], check=True, capture_output=True,
                   env={**os.environ, "SWITCHYARD_DEVICE": "reference"})
    with open(tmp_path / "out.csv") as f:
        header = f.readline().strip().split(",")
        table = numpy.loadtxt(f, delimiter=",", dtype=str, ndmin=2)
    columns = [header.index(f"p_{c}") for c in model.class_names]
    numpy.testing.assert_allclose(table[:, columns].astype(float), probabilities, atol=1e-5)
    with pytest.raises(switchyard.Error, match="row 1, column 3"):
        bad = rows.copy()
        bad[1, 3] = numpy.nan
        model.predict(bad)


def test_predictor_reads_other_onnx_outputs_as_regression_values():
    path = os.path.join(MODELS, "gru", "model.onnx")
    x = tensor(os.path.join(MODELS, "gru", "test_data_set_1", "input_0.pb"))
    model = switchyard.Predictor(path, device="reference")
    assert model.input_width == 30 and model.class_names == []
    values = model.predict(x.reshape(len(x), -1))
    (expected,) = switchyard.OnnxModel(path, device="reference").run(x)
    assert values.shape == (len(x), 40) and model.target_names[:2] == ["output_0", "output_1"]
    numpy.testing.assert_allclose(values, expected.reshape(len(x), -1), rtol=1e-5, atol=1e-6)
    with pytest.raises(switchyard.Error, match="takes 2 inputs"):
        switchyard.Predictor(os.path.join(MODELS, "transformer_mask", "model.onnx"))


@pytest.mark.parametrize("device", ["reference", "onednn"])
def test_capture_on_replays_the_same_bits(device):
    path = os.path.join(MODELS, "transformer_mask", "model.onnx")
    eager = switchyard.OnnxModel(path, device=device, capture="off")
    replaying = switchyard.OnnxModel(path, device=device, capture="on")
    assert replaying.capture == "on" and eager.capture == "off"
    folder = os.path.join(MODELS, "transformer_mask", "test_data_set_1")
    inputs = [tensor(os.path.join(folder, f"input_{k}.pb")) for k in range(len(eager.inputs))]
    summaries = []
    for shift in (0.0, 0.5, -0.25, 1.0):
        shifted = [x + numpy.float32(shift) if x.dtype == numpy.float32 else x for x in inputs]
        (ours,) = replaying.run(*shifted)
        summaries.append(replaying.capture_summary())
        (theirs,) = eager.run(*shifted)
        assert numpy.array_equal(ours, theirs)
    assert summaries[0] == "eager (first run of these input shapes)"
    assert summaries[1].startswith("recorded ")
    assert summaries[2].startswith("replayed ") and summaries[3].startswith("replayed ")
    assert eager.capture_summary() == "eager"
    with pytest.raises(switchyard.Error, match="not auto, on or off"):
        switchyard.OnnxModel(path, device=device, capture="sometimes")
