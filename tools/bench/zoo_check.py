#!/usr/bin/python3
"""The switchyard side of tools/bench/zoo's correctness check: loads DIR/NAME.onnx with the Python
module as a user would (switchyard.OnnxModel), runs it on DIR/NAME.input_<i>.npy and compares the
first output with PyTorch's DIR/NAME.output_0.npy.

    PYTHONPATH=build/python /usr/bin/python3 tools/bench/zoo_check.py --dir DIR --model NAME
        [--backend onednn] [--threads 2]

Element by element, |ours - torch| <= 1e-4 + 1e-4 |torch| (the bound tests/onnx uses). Prints one
JSON line with max_abs_diff, max_rel_diff, within_tolerance (false also where PyTorch's outputs are
all below 1e-3 in magnitude, which any output would match), the device and the execution summary;
a model that cannot be loaded or run gives {"error": "..."} (exit 0: the zoo reports it).
"""

import argparse
import glob
import json
import os
import sys

ABSOLUTE, RELATIVE = 1e-4, 1e-4


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--backend", default="onednn")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    import numpy as np
    import switchyard

    stem = os.path.join(args.dir, args.model)
    inputs = [np.load(p) for p in sorted(glob.glob(stem + ".input_*.npy"))]
    expected = np.load(stem + ".output_0.npy")
    overrides = {}
    if args.backend == "onednn":
        overrides = {"backend_options.onednn.threads": args.threads,
                     "backend_options.onednn.adaptive_threads": "false"}
    try:
        model = switchyard.OnnxModel(stem + ".onnx", device=args.backend, overrides=overrides)
        outputs = model.run(*inputs)
    except Exception as error:  # the zoo reports any failure as this model's result
        print(json.dumps({"error": "%s: %s" % (type(error).__name__, error)}))
        return 0
    got = np.asarray(outputs[0], dtype=np.float64)
    want = expected.astype(np.float64)
    if got.shape != want.shape:
        print(json.dumps({"error": "output shape %s, PyTorch's %s" % (list(got.shape),
                                                                       list(want.shape)),
                          "device": model.device}))
        return 0
    difference = np.abs(got - want)
    result = {"device": model.device, "max_abs_diff": float(difference.max()),
              "max_rel_diff": float((difference / np.maximum(np.abs(want), 1e-30)).max()),
              "max_abs_reference": float(np.abs(want).max()),
              "within_tolerance": bool(np.all(difference <= ABSOLUTE + RELATIVE * np.abs(want))),
              "tolerance": "|ours - torch| <= %g + %g |torch|" % (ABSOLUTE, RELATIVE),
              "finite": bool(np.all(np.isfinite(got))),
              "execution": model.describe().splitlines()[-1]}
    # Outputs that all vanish (eval-mode BatchNorm with initial statistics shrinks them to 1e-15)
    # would pass any comparison: refused, so the check means something.
    result["reference_meaningful"] = result["max_abs_reference"] >= 1e-3
    result["within_tolerance"] = (result["within_tolerance"] and result["finite"]
                                  and result["reference_meaningful"])
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
