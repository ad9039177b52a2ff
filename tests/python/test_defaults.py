"""The first hour with nothing but dataset, target and id: the defaults train a good model (tables
standardised, adam, train.epochs: auto with early stopping on a validation split the run takes),
and a run whose model is not worth keeping says so (TrainingWarning, `warning:` lines)."""

import json
import os
import subprocess
import warnings

import numpy
import pytest
from sklearn import datasets

import switchyard

SOURCE_DIR = os.environ.get("SWITCHYARD_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
CLI = os.environ.get("SWITCHYARD_CLI", os.path.join(SOURCE_DIR, "build", "bin", "switchyard"))


def write_table(path, loader):
    """A scikit-learn table as a user has it: a header, an id column, the class as a word."""
    bunch = loader()
    names = [name.replace(" ", "_") for name in bunch.feature_names]
    with open(path, "w") as out:
        out.write(",".join(["id"] + names + ["kind"]) + "\n")
        for i, (row, target) in enumerate(zip(bunch.data, bunch.target)):
            values = ",".join(repr(float(v)) for v in row)
            out.write(f"row-{i},{values},{bunch.target_names[target]}\n")


def three_keys(tmp_path, name, loader):
    write_table(tmp_path / f"{name}.csv", loader)
    config = tmp_path / f"{name}.yaml"
    config.write_text(f"data:\n  dataset: {name}.csv\n  target: kind\n  id: id\n")
    return config


def cli_run(config, *extra):
    metrics = config.parent / "metrics.json"
    done = subprocess.run([CLI, "run", str(config), "--metrics", str(metrics),
                           "--set", "train.checkpoint=none", *extra],
                          capture_output=True, text=True, cwd=config.parent, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, json.loads(metrics.read_text())


@pytest.mark.parametrize("name,loader", [("wine", datasets.load_wine),
                                         ("breast_cancer", datasets.load_breast_cancer)])
def test_three_keys_train_a_good_classifier(tmp_path, name, loader):
    output, metrics = cli_run(three_keys(tmp_path, name, loader))
    assert metrics["test_accuracy"] >= 0.93, output
    # Every choice is said once: the scaling, the optimizer, auto epochs and its validation rows.
    line = next(text for text in output.splitlines() if text.startswith("defaults (not in"))
    for said in ("data.scale: standard (a table)", "optimizer.type: adam", "optimizer.lr: 0.001",
                 "train.epochs: auto (up to 200, early stopping on val_loss with patience 10)",
                 "data.validation_fraction: 0.1 (held out for train.epochs: auto)"):
        assert said in line, line
    assert metrics["warnings"] == []
    assert "warning:" not in output


def test_python_run_uses_the_same_defaults(tmp_path):
    config = three_keys(tmp_path, "wine", datasets.load_wine)
    with warnings.catch_warnings():
        warnings.simplefilter("error", switchyard.TrainingWarning)
        metrics = switchyard.run(str(config), overrides={"train.checkpoint": "none",
                                                         "train.progress": "none"})
    assert metrics["test_accuracy"] >= 0.93
    # auto: the run stopped by itself or used its 200 epochs, judged on held-out rows.
    assert 1 <= metrics["epochs"] <= 200
    assert all("val_loss" in epoch for epoch in metrics["history"])


def test_the_old_defaults_are_warned_about(tmp_path):
    """The defaults of before (no scaling, sgd at 0.01, 10 epochs): a useless model, now said."""
    config = three_keys(tmp_path, "wine", datasets.load_wine)
    old = ["--set", "data.scale=none", "--set", "optimizer.type=sgd", "--set", "train.epochs=10"]
    output, metrics = cli_run(config, *old)
    scale = [w for w in metrics["warnings"] if w.startswith("features differ in scale by")]
    assert len(scale) == 1 and "'proline'" in scale[0] and "data.scale: standard" in scale[0]
    one_class = [w for w in metrics["warnings"] if "test predictions is class" in w]
    assert len(one_class) == 1, output
    for warning in metrics["warnings"]:
        assert f"warning: {warning}" in output
    with pytest.warns(switchyard.TrainingWarning, match="differ in scale"):
        switchyard.run(str(config), overrides={"data.scale": "none", "optimizer.type": "sgd",
                                               "train.epochs": 10, "train.checkpoint": "none",
                                               "train.progress": "none"})


def test_a_diverging_loss_is_warned_about(tmp_path):
    config = three_keys(tmp_path, "wine", datasets.load_wine)
    output, metrics = cli_run(config, "--set", "data.scale=none", "--set", "optimizer.type=sgd",
                              "--set", "optimizer.lr=0.5", "--set", "train.epochs=5")
    grew = [w for w in metrics["warnings"] if w.startswith("the training loss grew from")]
    assert len(grew) == 1, output
    assert "optimizer.lr (0.5) is probably too high" in grew[0]


def test_auto_epochs_on_too_few_rows_train_without_validation(tmp_path):
    rng = numpy.random.default_rng(0)
    rows = ["id,a,b,kind"] + [f"r{i},{rng.normal():.4f},{rng.normal():.4f},{'xy'[i % 2]}"
                              for i in range(6)]
    (tmp_path / "tiny.csv").write_text("\n".join(rows) + "\n")
    config = tmp_path / "tiny.yaml"
    config.write_text("data:\n  dataset: tiny.csv\n  target: kind\n  id: id\n")
    output, metrics = cli_run(config)
    assert "data: no validation split (train.epochs: auto holds out 10% of the training rows" \
        in output, output
    assert "early stopping watches the training loss" in output
    assert metrics["epochs"] >= 1
