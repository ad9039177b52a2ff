#!/usr/bin/python3
"""The node suite's cases (tools/onnx/node_suite.py) on ONNX Runtime, against their expected data.

    /usr/bin/python3 tools/onnx/node_suite.py --out DIR
    /usr/bin/python3 tools/onnx/check_ort.py DIR [--cases 'sy_*'] [--node-path build/zoo/node/...]

The sy_* cases' expected values are switchyard's own numpy reimplementations (of the op versions of
opsets 7 to 27, Einsum, functions, quantization); this runs each case's test_data_set_0 on ONNX
Runtime's CPU provider (the npm package onnxruntime-node, which tools/bench/zoo installs into
build/zoo/node with --ignore-scripts) and prints the largest difference from the expected outputs,
or ONNX Runtime's error (a case refused on purpose, an opset newer than it knows). It checks the
oracle, not switchyard: a case where ONNX Runtime and the expected data disagree is a question to
settle before the data is trusted (docs/onnx.md, "Opsets", names the two known ones).
Exit status 1 when a case that ONNX Runtime runs differs by more than --tolerance.
"""
import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

# Where ONNX Runtime and the expected data are known to part (docs/onnx.md, "Opsets"). A case
# named *_refused is one switchyard refuses; its data is a placeholder, and ONNX Runtime's answer is
# printed for information.
KNOWN = {
    "sy_opset7_dropout_mask_has_the_input_type":
        "Dropout-7's mask in inference is not defined; ONNX Runtime writes zeros, switchyard ones",
}

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def graph_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def cases_of(folder, pattern, work):
    cases, expected = [], {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not fnmatch.fnmatch(name, pattern) or not os.path.isdir(path):
            continue
        model = onnx.load(os.path.join(path, "model.onnx"))
        data = os.path.join(path, "test_data_set_0")
        inputs = []
        for k, info in enumerate(graph_inputs(model)):
            value = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{k}.pb")))
            raw = os.path.join(work, f"{name}.in{k}.bin")
            np.ascontiguousarray(value).tofile(raw)
            inputs.append({"name": info.name, "dtype": str(value.dtype),
                           "shape": list(value.shape), "path": raw})
        outputs = [o.name for o in model.graph.output]
        expected[name] = [numpy_helper.to_array(onnx.load_tensor(
            os.path.join(data, f"output_{k}.pb"))) for k in range(len(outputs))]
        cases.append({"name": name, "model": os.path.join(path, "model.onnx"), "inputs": inputs,
                      "outputs": outputs, "out_prefix": os.path.join(work, name + ".out")})
    return cases, expected


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--cases", default="sy_*", help="a glob of case names (default sy_*)")
    parser.add_argument("--node-path", default=os.path.join(REPO, "build/zoo/node/node_modules"))
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.node_path, "onnxruntime-node")):
        sys.exit(f"check_ort.py: no onnxruntime-node in {args.node_path} (tools/bench/zoo installs "
                 "it; or npm install --ignore-scripts onnxruntime-node@1.30.0 there)")
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        cases, expected = cases_of(args.folder, args.cases, work)
        listing, report = os.path.join(work, "cases.json"), os.path.join(work, "report.json")
        with open(listing, "w") as out:
            json.dump(cases, out)
        subprocess.run(["node", os.path.join(HERE, "check_ort.js"), listing, report], check=True,
                       env=dict(os.environ, NODE_PATH=args.node_path))
        with open(report) as f:
            results = json.load(f)
        for result in results:
            name = result["name"]
            if not result["ok"]:
                print(f"{name:60s} ONNX Runtime refuses: {result['error'][:120]}")
                continue
            worst = 0.0
            for k, out in enumerate(result["outputs"]):
                got = np.fromfile(out["file"], dtype=np.dtype(out["dtype"].replace("bool", "?")))
                want = expected[name][k]
                got = got.reshape(out["shape"])
                if got.shape != want.shape:
                    worst = float("inf")
                    continue
                if want.size:
                    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
                    worst = max(worst, float(np.nanmax(np.where(
                        np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64)),
                        0.0, diff))))
            bad = worst > args.tolerance
            note = ("(refused by switchyard: placeholder data)" if name.endswith("_refused")
                    else KNOWN.get(name, "") if bad else "")
            failed += bad and not note
            print(f"{name:60s} {'DIFFERS' if bad else 'agrees '} largest difference {worst:.3g} "
                  f"{note}".rstrip())
    print(f"{len(results)} cases, {failed} where ONNX Runtime and the expected data differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
