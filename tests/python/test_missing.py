"""Missing values from Python (issue 29): a model trained with data.missing: median fills NaN in
arrays given to Predictor.predict with the training split's medians, as `predict` fills holes in
a CSV file; a model trained without it still refuses NaN."""

import csv
import os
import subprocess

import numpy
import pytest

import switchyard
from conftest import SOURCE_DIR

ROWS = 240
FEATURES = 4
# Each feature holds its usual value in 70% of the rows, so the median of any training split
# (80% of the rows) is that value: the medians are known here without knowing the split.
USUAL = [2.0, -1.0, 30.0, 0.5]


def _table(path):
    rng = numpy.random.default_rng(7)
    rows = []
    with open(path, "w", newline="") as out:
        out.write("f1,f2,f3,f4,kind\n")
        for row in range(ROWS):
            kind = row % 3
            values = []
            for f in range(FEATURES):
                if (row * 7 + f * 3) % 10 < 7:
                    value = USUAL[f]
                else:
                    value = USUAL[f] + (kind + 1) * 1.5 + float(rng.normal(0, 0.3))
                hole = (row * FEATURES + f) % 20 == 0  # 5% of the cells
                values.append("NA" if hole and row % 2 else "" if hole else "%.4f" % value)
            out.write(",".join(values) + ",k%d\n" % kind)
            rows.append(values)
    return rows


def _config(data, checkpoint, missing="median"):
    return {
        "backends": ["reference"],
        "seed": 0,
        "data": {"dataset": str(data), "target": "kind", "missing": missing, "scale": "standard"},
        "model": {"layers": [{"type": "linear", "out_features": 16}, {"type": "relu"},
                             {"type": "linear", "out_features": 3}]},
        "optimizer": {"type": "adam", "lr": 0.01},
        "train": {"epochs": 4, "batch_size": 16, "progress": "none",
                  "checkpoint": str(checkpoint)},
    }


def test_nan_in_an_array_is_filled_with_the_training_medians(tmp_path):
    _table(tmp_path / "t.csv")
    switchyard.run(_config(tmp_path / "t.csv", tmp_path / "m.ckpt"))
    predictor = switchyard.Predictor(tmp_path / "m.ckpt", config={"backends": ["reference"]})
    rng = numpy.random.default_rng(3)
    x = rng.normal(3.0, 2.0, size=(10, FEATURES)).astype(numpy.float32)
    holed = x.copy()
    by_hand = x.copy()
    for row in range(10):
        holed[row, row % FEATURES] = numpy.nan
        by_hand[row, row % FEATURES] = USUAL[row % FEATURES]
    kept = holed.copy()
    filled = predictor.predict(holed)
    assert numpy.array_equal(filled, predictor.predict(by_hand))
    assert numpy.isfinite(filled).all()
    assert numpy.array_equal(holed, kept, equal_nan=True)  # the caller's array is not written
    # Infinities are still refused.
    holed[0, 0] = numpy.inf
    with pytest.raises(switchyard.Error, match="input row 0, column 0"):
        predictor.predict(holed)

    # The same rows as a CSV file with holes, through `predict`: the same probabilities.
    with open(tmp_path / "new.csv", "w") as out:
        out.write("f1,f2,f3,f4\n")
        for row in range(10):
            out.write(",".join("" if numpy.isnan(v) else repr(float(v)) for v in kept[row]) + "\n")
    cli = os.environ.get("SWITCHYARD_CLI", os.path.join(SOURCE_DIR, "build", "bin", "switchyard"))
    subprocess.run([cli, "predict", str(tmp_path / "m.ckpt"), str(tmp_path / "new.csv"), "-o",
                    str(tmp_path / "p.csv")],
                   env=dict(os.environ, SWITCHYARD_BACKENDS="reference"), check=True,
                   capture_output=True)
    with open(tmp_path / "p.csv") as text:
        written = list(csv.DictReader(text))
    assert len(written) == 10
    probabilities = numpy.array([[float(r["p_k0"]), float(r["p_k1"]), float(r["p_k2"])]
                                 for r in written])
    numpy.testing.assert_allclose(probabilities, filled, atol=1e-5)


def test_without_a_filling_policy_nan_is_still_refused(tmp_path):
    rows = _table(tmp_path / "t.csv")
    assert sum(v in ("", "NA") for r in rows for v in r) == ROWS * FEATURES // 20
    with pytest.raises(switchyard.Error, match=r"48 missing values \(data.missing: error\)"):
        switchyard.run(_config(tmp_path / "t.csv", tmp_path / "m.ckpt", missing="error"))
    switchyard.run(_config(tmp_path / "t.csv", tmp_path / "m.ckpt", missing="drop_rows"))
    predictor = switchyard.Predictor(tmp_path / "m.ckpt", config={"backends": ["reference"]})
    x = numpy.zeros((2, FEATURES), dtype=numpy.float32)
    x[1, 2] = numpy.nan
    with pytest.raises(switchyard.Error, match="input row 1, column 2 .* is NaN"):
        predictor.predict(x)
