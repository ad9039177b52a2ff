"""switchyard.run() writes history.csv, curves.svg and run.json beside its checkpoint, as the CLI
does, returns their paths, and hands the progress callback each epoch's validation figures."""

import csv
import json
import xml.etree.ElementTree as ElementTree

import pytest

import switchyard

from conftest import train_config

SVG = "{http://www.w3.org/2000/svg}"


def test_run_writes_the_curves_and_history_beside_its_checkpoint(tmp_path):
    config = train_config(tmp_path / "run" / "m.ckpt", epochs=3)
    config["data"]["validation_fraction"] = 0.1
    seen = []
    metrics = switchyard.run(config, progress=seen.append)

    assert metrics["history_csv"] == str(tmp_path / "run" / "history.csv")
    assert metrics["curves_svg"] == str(tmp_path / "run" / "curves.svg")
    assert metrics["run_record"] == str(tmp_path / "run" / "run.json")
    assert [epoch["epoch"] for epoch in seen] == [1, 2, 3]
    assert all(epoch["val_loss"] > 0 and 0 <= epoch["val_accuracy"] <= 1 for epoch in seen)

    with open(metrics["history_csv"], newline="") as text:
        rows = list(csv.DictReader(text))
    assert [int(row["epoch"]) for row in rows] == [1, 2, 3]
    # history.csv keeps 9 significant digits.
    assert [float(row["val_loss"]) for row in rows] == pytest.approx([e["val_loss"] for e in seen],
                                                                     rel=1e-8)

    root = ElementTree.parse(metrics["curves_svg"]).getroot()
    assert root.tag == SVG + "svg"
    lines = {line.get("id"): line.get("points").split() for line in root.iter(SVG + "polyline")}
    assert sorted(lines) == ["accuracy-train", "accuracy-val", "loss-train", "loss-val"]
    assert all(len(points) == 3 for points in lines.values())

    with open(metrics["run_record"]) as text:
        record = json.load(text)
    assert record["format"] == "switchyard.run.v1"
    assert record["epochs"] == 3
    assert record["stop"]["reason"] == "epochs"
