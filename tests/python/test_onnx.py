"""switchyard.OnnxModel: a PyTorch export (tests/onnx/models) run from Python gives PyTorch's
outputs; bad files and bad inputs raise switchyard.Error naming them."""

import os

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
