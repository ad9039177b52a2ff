#!/usr/bin/python3
"""The PyTorch side of tools/bench/zoo: each model's definition, its ONNX export, PyTorch's
reference outputs, and PyTorch eager's timings.

    /usr/bin/python3 tools/bench/zoo_models.py --model NAME --dir DIR [--quick]
        [--threads N] [--runs K] [--warmup W] [--no-time]

Writes DIR/NAME.onnx (opset 17, batch axis dynamic; re-exported only when DIR/NAME.spec.json
differs from this model's spec), DIR/NAME.input_<i>.npy (a seeded batch of 2) and
DIR/NAME.output_0.npy (PyTorch's output for it, in eval mode with autograd on: the unfused
computation the export traced), then times batch-1 latency and the throughput batch in PyTorch
eager as PyTorch ships it (eval mode under torch.inference_mode(), where torch 1.13's fused
Transformer fast path applies), with torch.set_num_threads(N) and OMP_NUM_THREADS etc. set to N
before torch is imported. Prints one JSON line.

Weights are random (seed 0): torchvision's architectures with weights=None (their BatchNorm
statistics measured on a seeded random batch: calibrate_batch_norm), and PyTorch's default
initialisation elsewhere, every encoder layer drawn afresh (nn.TransformerEncoder deep-copies one
layer, and identical layers would be merged into shared initializers by the exporter).
"""

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
OPSET = 17
SEED = 0

# name: full-size spec, --quick spec. "batch" is the throughput batch.
SPECS = {
    "resnet50": ({"kind": "vision", "arch": "resnet50", "image": 224, "batch": 32},
                 {"kind": "vision", "arch": "resnet50", "image": 64, "batch": 4}),
    "mobilenet_v2": ({"kind": "vision", "arch": "mobilenet_v2", "image": 224, "batch": 32},
                     {"kind": "vision", "arch": "mobilenet_v2", "image": 64, "batch": 4}),
    "efficientnet_b0": ({"kind": "vision", "arch": "efficientnet_b0", "image": 224, "batch": 32},
                        {"kind": "vision", "arch": "efficientnet_b0", "image": 64, "batch": 4}),
    # BERT-base: token, position and segment-free embeddings, post-norm encoder, GELU.
    "bert": ({"kind": "encoder", "vocab": 30522, "tokens": 128, "width": 768, "heads": 12,
              "ff": 3072, "layers": 12, "causal": False, "batch": 32},
             {"kind": "encoder", "vocab": 1000, "tokens": 32, "width": 128, "heads": 4, "ff": 512,
              "layers": 2, "causal": False, "batch": 4}),
    # GPT-2 small: pre-norm layers, a causal mask, a final LayerNorm (no LM head: its
    # [batch, 128, 50257] output would be most of the work and memory).
    "gpt2": ({"kind": "encoder", "vocab": 50257, "tokens": 128, "width": 768, "heads": 12,
              "ff": 3072, "layers": 12, "causal": True, "batch": 32},
             {"kind": "encoder", "vocab": 1000, "tokens": 32, "width": 128, "heads": 4, "ff": 512,
              "layers": 2, "causal": True, "batch": 4}),
    # tools/bench/torch_peer.py's TransformerClassifier (`switchyard bench sequence --model
    # transformer`): [B, 64, 469] -> Linear 256 -> 2 post-norm ReLU layers -> mean -> Linear 100.
    "sign_transformer": ({"kind": "sign", "steps": 64, "features": 469, "width": 256, "heads": 4,
                          "ff": 1024, "layers": 2, "classes": 100, "batch": 32},
                         {"kind": "sign", "steps": 16, "features": 469, "width": 64, "heads": 2,
                          "ff": 128, "layers": 1, "classes": 100, "batch": 4}),
    # A text RNN over windows of 50 steps of 2000 features (e.g. a one-hot or hashed vocabulary):
    # LSTM(2000, 256) -> the last step -> Linear(256, 2000), the next token's scores.
    "text_rnn": ({"kind": "rnn", "steps": 50, "features": 2000, "hidden": 256, "layers": 1,
                  "classes": 2000, "batch": 128},
                 {"kind": "rnn", "steps": 10, "features": 200, "hidden": 32, "layers": 1,
                  "classes": 200, "batch": 8}),
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, choices=sorted(SPECS))
    parser.add_argument("--dir", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--no-time", action="store_true", help="export and reference only")
    return parser.parse_args(argv)


def describe_spec(name, spec):
    kind = spec["kind"]
    if kind == "vision":
        return "%s (torchvision 0.14, weights=None), 3x%dx%d" % (name, spec["image"], spec["image"])
    if kind == "encoder":
        return "%s-shaped %s: %d layers, %d wide, %d heads, ff %d, %d tokens, vocab %d" % (
            "GPT-2" if spec["causal"] else "BERT", "decoder (causal)" if spec["causal"]
            else "encoder", spec["layers"], spec["width"], spec["heads"], spec["ff"],
            spec["tokens"], spec["vocab"])
    if kind == "sign":
        return "SignTransformer: %dx%d -> %d, %d heads, ff %d, %d layers, %d classes" % (
            spec["steps"], spec["features"], spec["width"], spec["heads"], spec["ff"],
            spec["layers"], spec["classes"])
    return "text RNN: window %d x %d features, LSTM hidden %d, %d layer(s), %d outputs" % (
        spec["steps"], spec["features"], spec["hidden"], spec["layers"], spec["classes"])


def build(torch, spec):
    nn = torch.nn
    torch.manual_seed(SEED)
    kind = spec["kind"]
    if kind == "vision":
        import torchvision

        model = getattr(torchvision.models, spec["arch"])(weights=None)
        calibrate_batch_norm(torch, model, spec)
        return model.eval()
    if kind == "encoder":
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.tokens = nn.Embedding(spec["vocab"], spec["width"])
                self.position = nn.Parameter(0.02 * torch.randn(1, spec["tokens"], spec["width"]))
                layer = nn.TransformerEncoderLayer(
                    spec["width"], spec["heads"], dim_feedforward=spec["ff"], dropout=0.1,
                    activation="gelu", batch_first=True, norm_first=spec["causal"])
                self.encoder = nn.TransformerEncoder(layer, spec["layers"])
                self.norm = nn.LayerNorm(spec["width"])
                t = spec["tokens"]
                mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
                self.register_buffer("mask", mask if spec["causal"] else None)

            def forward(self, ids):
                x = self.tokens(ids) + self.position
                if not spec["causal"]:  # BERT: LayerNorm on the embeddings, post-norm layers
                    return self.encoder(self.norm(x))
                return self.norm(self.encoder(x, mask=self.mask))  # GPT-2: pre-norm, final LN

        model = Encoder()
    elif kind == "sign":
        class SignTransformer(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(spec["features"], spec["width"])
                layer = nn.TransformerEncoderLayer(
                    spec["width"], spec["heads"], dim_feedforward=spec["ff"], dropout=0.1,
                    activation="relu", batch_first=True, norm_first=False)
                self.encoder = nn.TransformerEncoder(layer, spec["layers"])
                self.head = nn.Linear(spec["width"], spec["classes"])

            def forward(self, x):
                return self.head(self.encoder(self.proj(x)).mean(1))

        model = SignTransformer()
    else:
        class TextRnn(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(spec["features"], spec["hidden"], num_layers=spec["layers"],
                                    batch_first=True)
                self.head = nn.Linear(spec["hidden"], spec["classes"])

            def forward(self, x):
                return self.head(self.lstm(x)[0][:, -1])

        model = TextRnn()
    redraw_encoder_layers(torch, model)
    return model.eval()


def calibrate_batch_norm(torch, model, spec):
    """BatchNorm's running statistics measured on a seeded random batch, as training would leave
    them. With torchvision's initial statistics (mean 0, variance 1) eval-mode BatchNorm is the
    identity, activations shrink layer after layer, and MobileNetV2's and EfficientNet-B0's outputs
    come out near 1e-15, where any comparison passes; calibrated, every output is of order 1."""
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None  # a cumulative average over the calibration pass
    generator = torch.Generator().manual_seed(SEED + 3)
    model.train()
    with torch.no_grad():
        model(torch.randn(8, 3, spec["image"], spec["image"], generator=generator))


def redraw_encoder_layers(torch, model):
    """Every parameter of a deep-copied encoder layer drawn afresh (see the module's docstring)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.startswith("encoder."):
                continue
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(0.02 * torch.randn_like(p))


def sample_inputs(torch, spec, batch, seed=SEED + 1):
    generator = torch.Generator().manual_seed(seed)
    kind = spec["kind"]
    if kind == "vision":
        return (torch.randn(batch, 3, spec["image"], spec["image"], generator=generator),)
    if kind == "encoder":
        return (torch.randint(0, spec["vocab"], (batch, spec["tokens"]), generator=generator),)
    return (torch.randn(batch, spec["steps"], spec["features"], generator=generator),)


def spec_key(torch, name, spec):
    text = json.dumps({"name": name, "spec": spec, "seed": SEED, "opset": OPSET,
                       "torch": torch.__version__, "script": file_digest(__file__)},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def file_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def exporter_options(torch):
    """The TorchScript-based exporter everywhere: torch 1.13 has only it, and torch 2.9 and later
    default to the dynamo-based one (dynamo=True), whose graphs differ (opset 18 and up)."""
    import inspect

    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        return {"dynamo": False}
    return {}


def export(torch, name, spec, model, folder):
    """Exports unless the cached file was made from the same spec; writes the reference data."""
    import numpy as np

    path = os.path.join(folder, name + ".onnx")
    spec_path = os.path.join(folder, name + ".spec.json")
    key = spec_key(torch, name, spec)
    cached = False
    if os.path.exists(path) and os.path.exists(spec_path):
        with open(spec_path) as f:
            cached = json.load(f).get("key") == key
    inputs = sample_inputs(torch, spec, 2)
    names = ["input_ids" if spec["kind"] == "encoder" else "input"]
    started = time.perf_counter()
    if not cached:
        os.makedirs(folder, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # autograd stays on: under no_grad torch 1.13's TransformerEncoder takes its fused
            # fast path, which cannot be exported (MACHINE.md).
            torch.onnx.export(model, inputs, path + ".part", input_names=names,
                              output_names=["output"], opset_version=OPSET,
                              dynamic_axes={names[0]: {0: "batch"}, "output": {0: "batch"}},
                              do_constant_folding=True, **exporter_options(torch))
        os.replace(path + ".part", path)
        with open(spec_path, "w") as f:
            json.dump({"key": key, "name": name, "spec": spec}, f)
    export_seconds = time.perf_counter() - started
    with torch.enable_grad():  # the unfused computation the export traced
        output = model(*inputs).detach()
    for i, value in enumerate(inputs):
        np.save(os.path.join(folder, "%s.input_%d.npy" % (name, i)), value.numpy())
    np.save(os.path.join(folder, name + ".output_0.npy"), output.numpy())
    return {"onnx": path, "cached": cached, "export_seconds": export_seconds,
            "onnx_bytes": os.path.getsize(path), "input_names": names,
            "inputs": [{"name": n, "dtype": str(v.dtype).replace("torch.", ""),
                        "shape": list(v.shape[1:])} for n, v in zip(names, inputs)],
            "output_shape": list(output.shape[1:]),
            "parameters": sum(p.numel() for p in model.parameters())}


def time_eager(torch, model, spec, batch, runs, warmup):
    inputs = sample_inputs(torch, spec, batch, seed=SEED + 2)
    seconds = []
    with torch.inference_mode():
        for _ in range(warmup):
            model(*inputs)
        for _ in range(runs):
            start = time.perf_counter()
            model(*inputs)
            seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    return {"batch": batch, "runs": runs, "median_ms": median * 1e3, "min_ms": min(seconds) * 1e3,
            "samples_per_second": batch / median}


def main(argv):
    args = parse_args(argv)
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(args.threads)
    import torch  # only now: OpenMP and the BLAS read their thread counts when loaded

    spec = SPECS[args.model][1 if args.quick else 0]
    torch.set_num_threads(args.threads)
    model = build(torch, spec)
    result = {"model": args.model, "description": describe_spec(args.model, spec), "spec": spec,
              "torch_version": torch.__version__}
    result.update(export(torch, args.model, spec, model, args.dir))
    if not args.no_time:
        sys.path.insert(0, HERE)
        import torch_peer

        result["pytorch"] = {
            "latency": time_eager(torch, model, spec, 1, args.runs, args.warmup),
            "throughput": time_eager(torch, model, spec, spec["batch"], args.runs, args.warmup),
            "threads": torch.get_num_threads()}
        report = torch_peer.environment_report()
        result["pytorch"]["environment"] = {k: report[k] for k in (
            "blas_library", "blas_kind", "openblas", "torch_threads", "environment")}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
