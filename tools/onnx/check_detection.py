#!/usr/bin/python3
"""torchvision's detection models exported to ONNX and run by switchyard, against ONNX Runtime
and PyTorch.

    /usr/bin/python3 tools/onnx/check_detection.py [--models a,b,...] [--backends onednn,vulkan]
                                                   [--opset N] [--size S] [--out DIR]
                                                   [--node-path build/zoo/node/node_modules]

Each model is built with random weights (seed 0, 5 classes, eval mode), its score thresholds at 0
so that it keeps boxes, and exported with torch.onnx.export at opset 17 (or --opset), one image of
S x S (default 320). switchyard runs the file on each backend (the Python package of build/python)
and is compared with ONNX Runtime's CPU provider (onnxruntime-node, which tools/bench/zoo
installs, through tools/onnx/check_ort.js) on the same file and input: the same number of boxes and
each output within 1e-2 of the largest value (boxes, scores, labels, masks, keypoints), both sides
sorted by label, score and box first (boxes of one score, which the rounding orders, and ties are
common with random weights even after the fresh initialisation below), and against PyTorch's
own outputs the same way. Near-ties that rounding decides can still part any two of the three;
and torchvision 0.14 exports roi_align without coordinate_transformation_mode, which from opset 16
means aligned=True where the model says aligned=False (every ONNX runtime follows ONNX there:
--opset 13 compares like with like). Exit status 1 when switchyard agrees with neither or a model
does not run.

Run with Debian's /usr/bin/python3 (python3-torch, python3-torchvision, python3-onnx).
"""
import argparse
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import onnx
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "build", "python"), os.path.join(ROOT, "python")]
import switchyard  # noqa: E402

DEFAULT_MODELS = ("fasterrcnn_mobilenet_v3_large_320_fpn,fasterrcnn_resnet50_fpn,"
                  "retinanet_resnet50_fpn,fcos_resnet50_fpn,ssdlite320_mobilenet_v3_large,"
                  "ssd300_vgg16,maskrcnn_resnet50_fpn,keypointrcnn_resnet50_fpn")


def build(name):
    torch.manual_seed(0)
    kwargs = {"weights": None, "weights_backbone": None, "num_classes": 5}
    if "rcnn" in name:
        kwargs["box_score_thresh"] = 0.0
    elif name.startswith(("retinanet", "fcos")):
        kwargs["score_thresh"] = 0.0
    model = getattr(torchvision.models.detection, name)(**kwargs).eval()
    # torchvision's initialisation leaves the heads' scores nearly uniform (every class near
    # 1 / classes): ties everywhere, whose order any rounding decides. Fresh values spread them.
    with torch.no_grad():
        for key, p in model.named_parameters():
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)
            elif key.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.1 * torch.randn_like(p))
        for key, b in model.named_buffers():
            if key.endswith("running_var"):
                b.copy_(0.5 + torch.rand_like(b))
            elif key.endswith("running_mean"):
                b.copy_(0.1 * torch.randn_like(b))
    return model


def on_ort(model_path, x, out, node_path):
    """ONNX Runtime's outputs for input x, or its error message."""
    x_path = os.path.join(out, "input.bin")
    x.numpy().tofile(x_path)
    case = {"name": "m", "model": model_path, "out_prefix": os.path.join(out, "ort_"),
            "inputs": [{"name": "images", "dtype": "float32", "shape": list(x.shape),
                        "path": x_path}],
            "outputs": [o.name for o in onnx.load(model_path).graph.output]}
    listing, report = os.path.join(out, "cases.json"), os.path.join(out, "report.json")
    with open(listing, "w") as f:
        json.dump([case], f)
    env = dict(os.environ, NODE_PATH=node_path)
    subprocess.run(["node", os.path.join(ROOT, "tools", "onnx", "check_ort.js"), listing, report],
                   check=True, env=env)
    with open(report) as f:
        result = json.load(f)[0]
    if not result["ok"]:
        return result["error"]
    return [np.fromfile(o["file"], o["dtype"]).reshape(o["shape"]) for o in result["outputs"]]


def canonical(outputs):
    """The detections in one order, whatever order tied scores took: by label, score (to 1e-4),
    then box; every output of one row per detection permuted alike."""
    boxes = next((o for o in outputs if o.ndim == 2 and o.shape[1] == 4), None)
    if boxes is None or boxes.shape[0] == 0:
        return outputs
    count = boxes.shape[0]
    rows = [o for o in outputs if o.shape[:1] == (count,) and o.ndim == 1]
    keys = [np.round(boxes[:, k].astype(np.float64), 1) for k in range(3, -1, -1)]
    keys += [np.round(r.astype(np.float64), 4) for r in rows]
    order = np.lexsort(keys)
    return [o[order] if o.shape[:1] == (count,) else o for o in outputs]


def compare(ours, theirs):
    """(agrees, text): shapes equal and each output within 1e-2 of its largest value, once both
    are in canonical order."""
    texts, agrees = [], True
    for a, b in zip(canonical(ours), canonical(theirs)):
        if a.shape != b.shape:
            texts.append("%s vs %s" % (list(a.shape), list(b.shape)))
            agrees = False
            continue
        if a.size == 0:
            texts.append("%s" % list(a.shape))
            continue
        diff = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())
        scale = max(1.0, float(np.abs(b.astype(np.float64)).max()))
        agrees = agrees and diff <= 1e-2 * scale
        texts.append("%s %.2g" % (list(a.shape), diff))
    return agrees, ", ".join(texts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--backends", default="onednn")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--size", type=int, default=320)
    parser.add_argument("--out", default="/tmp/switchyard-detection")
    parser.add_argument("--node-path",
                        default=os.path.join(ROOT, "build", "zoo", "node", "node_modules"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = False
    for name in args.models.split(","):
        model = build(name)
        x = torch.rand(3, args.size, args.size, generator=torch.Generator().manual_seed(1))
        path = os.path.join(args.out, name + ".onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, ([x],), path, opset_version=args.opset,
                              input_names=["images"])
        with torch.no_grad():
            expected = [v.numpy() for v in model([x])[0].values()]
        ort = on_ort(path, x, args.out, args.node_path)
        if isinstance(ort, str):
            print("%-38s ONNX Runtime: %s" % (name, ort))
            ort = None
        for backend in args.backends.split(","):
            try:
                ours = switchyard.OnnxModel(path, device=backend).run(x.numpy())
            except switchyard.Error as error:
                print("%-38s %-9s ERROR %s" % (name, backend, error))
                failed = True
                continue
            line = "%-38s %-9s" % (name, backend)
            agrees_torch, torch_text = compare(ours, expected)
            agrees = agrees_torch
            if ort is not None:
                agrees_ort, text = compare(ours, ort)
                agrees = agrees or agrees_ort
                line += " vs ONNX Runtime: %s (%s);" % ("agrees" if agrees_ort else "differs", text)
            line += " vs PyTorch: %s (%s)" % ("agrees" if agrees_torch else "differs", torch_text)
            failed = failed or not agrees
            print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
