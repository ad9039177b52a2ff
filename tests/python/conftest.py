"""Shared fixtures: a small digits model trained once per session through switchyard.run()."""

import gzip
import os

import numpy
import pytest

import switchyard

SOURCE_DIR = os.environ.get("SWITCHYARD_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))


def digits():
    """The digits data set (1797 x 64 pixel values 0..16, and the labels), as the file holds it."""
    with gzip.open(os.path.join(SOURCE_DIR, "data", "digits.csv.gz"), "rt") as text:
        table = numpy.loadtxt(text, delimiter=",", dtype=numpy.float32)
    return numpy.ascontiguousarray(table[:, :64]), table[:, 64].astype(numpy.int64)


def train_config(checkpoint, epochs=3):
    return {
        "seed": 0,
        "data": {"dataset": "digits", "test_fraction": 0.2, "scale": "divide", "divisor": 16.0},
        "model": {"layers": [{"type": "linear", "out_features": 32}, {"type": "relu"},
                             {"type": "linear", "out_features": 10}]},
        "optimizer": {"type": "sgd", "lr": 0.1, "momentum": 0.9},
        "train": {"epochs": epochs, "batch_size": 64, "progress": "none",
                  "checkpoint": str(checkpoint)},
    }


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    """(checkpoint path, the metrics run() returned) of a 3-epoch digits MLP."""
    checkpoint = tmp_path_factory.mktemp("model") / "digits.ckpt"
    metrics = switchyard.run(train_config(checkpoint))
    return checkpoint, metrics


@pytest.fixture(scope="session")
def digits_data():
    return digits()
