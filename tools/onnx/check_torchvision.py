#!/usr/bin/python3
"""torchvision models exported to ONNX and run by switchyard, against PyTorch's own outputs.

    /usr/bin/python3 tools/onnx/check_torchvision.py [--models a,b,...] [--backends onednn,vulkan]
                                                     [--out DIR] [--cli build/bin/switchyard]
                                                     [--opset N]

Each model is built with random weights (seed 0, eval mode) and its classifier (the last Linear or
convolution) scaled so that the outputs are of order 1 (random initialisation leaves some near 0 and some near 1e12, where a 1e-4
check says little). It is exported with torch.onnx.export at opset 17 (or --opset: torch 1.13
exports 7 to 17), batch 1; PyTorch's output
for one random input is kept as .npy, and `switchyard bench model --check-input/--check-output`
runs the file on each backend and compares (1e-4 absolute plus 1e-4 relative). A model that does
not import or run is reported with switchyard's message. Exit status 1 if any check failed.

Run with Debian's /usr/bin/python3 (python3-torch, python3-torchvision, python3-onnx).
"""
import argparse
import os
import subprocess
import sys
import warnings

import numpy as np
import torch
import torchvision

DEFAULT_MODELS = ("mobilenet_v3_small,mobilenet_v3_large,googlenet,efficientnet_v2_s,squeezenet1_1,"
                  "shufflenet_v2_x0_5,densenet121,mnasnet0_5,regnet_y_400mf,alexnet,resnext50_32x4d,"
                  "convnext_tiny,inception_v3,vit_b_32,swin_t,maxvit_t")


def export(name, out, opset):
    torch.manual_seed(0)
    kwargs = {"aux_logits": False, "init_weights": True} if name in ("googlenet",
                                                                      "inception_v3") else {}
    model = getattr(torchvision.models, name)(weights=None, **kwargs).eval()
    size = 299 if name == "inception_v3" else 224
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        # The classifier: the last Linear (SqueezeNet's is a convolution).
        last = [m for m in model.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))][-1]
        if float(last.weight.abs().max()) == 0:  # a zero-initialised head (ViT)
            torch.nn.init.normal_(last.weight, std=0.02)
        scale = float(model(x).abs().max())
        if scale > 0:
            last.weight /= scale
            if last.bias is not None:
                last.bias /= scale
        y = model(x)
    path = os.path.join(out, name + ".onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, path, opset_version=opset, input_names=["x"],
                          output_names=["y"])
    np.save(os.path.join(out, name + ".x.npy"), x.numpy())
    np.save(os.path.join(out, name + ".y.npy"), y.numpy())
    return path


def check(cli, path, backend):
    stem = path[:-len(".onnx")]
    command = [cli, "bench", "model", path, "--batch-size", "1", "--repetitions", "1", "--warmup",
               "0", "--check-input", stem + ".x.npy", "--check-output", stem + ".y.npy", "--set",
               "backends=[%s]" % backend]
    run = subprocess.run(command, capture_output=True, text=True)
    lines = [line for line in (run.stdout + run.stderr).splitlines()
             if line.startswith("check against") or "error" in line]
    return run.returncode == 0, (lines[-1] if lines else "exit status %d" % run.returncode)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--backends", default="onednn,vulkan")
    parser.add_argument("--out", default="build/torchvision-check")
    parser.add_argument("--cli", default="build/bin/switchyard")
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for name in filter(None, args.models.split(",")):
        path = export(name, args.out, args.opset)
        for backend in filter(None, args.backends.split(",")):
            ok, line = check(args.cli, path, backend)
            failed += 0 if ok else 1
            print("%-20s %-8s %s %s" % (name, backend, "ok  " if ok else "FAIL", line[:150]),
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
