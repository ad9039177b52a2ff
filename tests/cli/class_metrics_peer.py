#!/usr/bin/python3
"""Checks switchyard's per-class metrics against scikit-learn, for the class metrics test.

    class_metrics_peer.py PREDICTIONS.csv PREDICT_METRICS.json [TRAIN_METRICS.json]
        PREDICTIONS.csv is what `switchyard run` (task: predict) wrote: "index,label,predicted,...".
        scikit-learn's precision_recall_fscore_support (per class, macro, weighted) and
        confusion_matrix, with labels = every class of the model and zero_division = 0, are
        computed from its label and predicted columns and compared with the "classification" ->
        "input" member of PREDICT_METRICS.json (the --metrics file of the same run). When
        TRAIN_METRICS.json is given (the --metrics file of the training run whose final weights
        made the predictions, on the same test split), its "classification" -> "test" member must
        hold the same confusion matrix and scores.
    Prints one "ok ..." line per check and "mismatch ..." for each difference; exits 1 on any
    mismatch, 3 when scikit-learn cannot be imported (the caller skips).
"""

import csv
import json
import sys

try:
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support
except ImportError:
    print("scikit-learn is not installed")
    sys.exit(3)

TOLERANCE = 1e-12


def read_predictions(path):
    truth, predicted = [], []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            truth.append(int(row["label"]))
            predicted.append(int(row["predicted"]))
    return truth, predicted


def compare(what, ours, theirs, failures):
    if abs(ours - theirs) > TOLERANCE:
        failures.append(f"mismatch {what}: switchyard {ours!r}, scikit-learn {theirs!r}")


def check_report(name, report, truth, predicted, failures):
    classes = len(report["classes"])
    labels = list(range(classes))
    matrix = confusion_matrix(truth, predicted, labels=labels).tolist()
    if report["confusion_matrix"] != matrix:
        failures.append(f"mismatch {name} confusion matrix: switchyard "
                        f"{report['confusion_matrix']}, scikit-learn {matrix}")
    p, r, f, s = precision_recall_fscore_support(truth, predicted, labels=labels,
                                                 zero_division=0)
    for c, entry in enumerate(report["classes"]):
        compare(f"{name} class {c} precision", entry["precision"], p[c], failures)
        compare(f"{name} class {c} recall", entry["recall"], r[c], failures)
        compare(f"{name} class {c} f1", entry["f1"], f[c], failures)
        compare(f"{name} class {c} support", entry["support"], s[c], failures)
    for average in ("macro", "weighted"):
        p, r, f, _ = precision_recall_fscore_support(truth, predicted, labels=labels,
                                                     average=average, zero_division=0)
        ours = report[average + "_avg"]
        compare(f"{name} {average} precision", ours["precision"], p, failures)
        compare(f"{name} {average} recall", ours["recall"], r, failures)
        compare(f"{name} {average} f1", ours["f1"], f, failures)
    correct = sum(1 for t, q in zip(truth, predicted) if t == q)
    compare(f"{name} accuracy", report["accuracy"], correct / len(truth), failures)
    compare(f"{name} samples", report["samples"], len(truth), failures)
    print(f"ok {name}: {classes} classes, {len(truth)} samples, "
          f"{len(truth) - correct} misclassified")


def main():
    truth, predicted = read_predictions(sys.argv[1])
    failures = []
    with open(sys.argv[2]) as f:
        check_report("predict", json.load(f)["classification"]["input"], truth, predicted,
                     failures)
    if len(sys.argv) > 3:
        with open(sys.argv[3]) as f:
            check_report("train test", json.load(f)["classification"]["test"], truth, predicted,
                         failures)
    for line in failures:
        print(line)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
