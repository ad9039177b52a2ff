#!/usr/bin/python3
"""The keypoint-style Transformer classifier for the ONNX import benchmark: its ONNX export, and
PyTorch eager's batch-1 inference latency on the same model.

    /usr/bin/python3 tools/bench/onnx_peer.py --export PATH [--data DIR]
    /usr/bin/python3 tools/bench/onnx_peer.py --time PATH|none [--threads 2] [--rounds 50]
                                              [--warmup 5] [--fast-path default|off]

The model (seed 0, eval mode): [N, 64, 469] float32 -> Linear(469, 256) + a learned positional
term [1, 64, 256] -> nn.TransformerEncoder(d_model 256, 4 heads, feed-forward 1024, relu, post-norm,
dropout 0.1 (inactive in eval), batch_first, 4 layers) -> mean over time -> Linear(256, 100).
3.3 M parameters. nn.TransformerEncoder deep-copies one layer, so its layers would start out
identical (and the exporter would then merge their weights into shared initializers); every
parameter is therefore drawn afresh from the seeded generator, as a trained model's would differ.

--export PATH writes the model as ONNX (opset 17, axis 0 of 'input' and 'output' dynamic: 'batch'),
exported with autograd on: under no_grad/inference_mode torch 1.13's TransformerEncoder takes its
fused "fast path", which cannot be exported. --data DIR also writes DIR/input_0.pb and
DIR/output_0.pb (a seeded batch-1 input and PyTorch's output, serialized onnx.TensorProto).

--time PATH|none times PyTorch eager batch-1 inference of the same model as PyTorch ships it: eval
mode under torch.inference_mode(), where torch 1.13 runs each encoder layer as one fused
aten::_transformer_encoder_layer_fwd (the fast path); --fast-path off times the unfused layers
instead. The JSON says whether the fast path ran (seen in torch.profiler's op list). With a PATH,
the ONNX file's parameter initializers are first checked against the timed model (exit 1 when they
differ), so the timing is of the exported model. Threads: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
MKL_NUM_THREADS are set to --threads before torch is imported, then torch.set_num_threads; the BLAS
library and thread report is torch_peer.py's environment_report(). Prints one JSON line:
{"peer": "pytorch-eager", "batch": 1, "ms_median": ..., "ms_min": ..., "threads": N, ...}.

Run it with /usr/bin/python3 (Debian's python3-torch; --export and a --time PATH need python3-onnx).
"""

import argparse
import json
import os
import platform
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# torch_peer.THREAD_VARIABLES; repeated here because they must be set before torch (which
# torch_peer imports) is loaded. main() checks the two lists agree.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
STEPS, FEATURES, WIDTH, HEADS, FEED_FORWARD, LAYERS, CLASSES = 64, 469, 256, 4, 1024, 4, 100
SEED = 0
OPSET = 17
FUSED_OP = "aten::_transformer_encoder_layer_fwd"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--export", metavar="PATH", help="write the model as ONNX to PATH")
    parser.add_argument("--data", metavar="DIR",
                        help="with --export: write a batch-1 input_0.pb and output_0.pb into DIR")
    parser.add_argument("--time", metavar="PATH|none",
                        help="time PyTorch eager batch-1 inference; PATH: check the ONNX file's"
                             " initializers against the timed model first")
    parser.add_argument("--threads", type=int, default=2, help="default 2")
    parser.add_argument("--rounds", type=int, default=50, help="timed passes (default 50)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed passes first (default 5)")
    parser.add_argument("--fast-path", default="default", choices=("default", "off"),
                        help="default: as PyTorch ships it; off: the unfused encoder layers")
    args = parser.parse_args(argv)
    if not args.export and args.time is None:
        parser.error("give --export PATH, --time PATH|none, or both")
    if args.data and not args.export:
        parser.error("--data goes with --export")
    if args.threads < 1 or args.rounds < 1 or args.warmup < 0:
        parser.error("--threads and --rounds must be at least 1, --warmup at least 0")
    return args


def build_model(torch):
    nn = torch.nn

    class KeypointTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(FEATURES, WIDTH)
            self.position = nn.Parameter(torch.zeros(1, STEPS, WIDTH))
            layer = nn.TransformerEncoderLayer(WIDTH, HEADS, dim_feedforward=FEED_FORWARD,
                                               dropout=0.1, activation="relu", batch_first=True,
                                               norm_first=False)
            self.encoder = nn.TransformerEncoder(layer, LAYERS)
            self.head = nn.Linear(WIDTH, CLASSES)

        def forward(self, x):
            return self.head(self.encoder(self.proj(x) + self.position).mean(1))

    torch.manual_seed(SEED)
    model = KeypointTransformer()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name == "position":
                p.normal_(0.0, 0.02)
            elif not name.startswith("encoder."):
                continue  # proj and head keep PyTorch's default init
            elif p.dim() > 1:
                nn.init.xavier_uniform_(p)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(0.02 * torch.randn_like(p))
    return model.eval()


def sample_input(torch, batch):
    return torch.randn(batch, STEPS, FEATURES, generator=torch.Generator().manual_seed(SEED + 1))


def export(torch, model, path, data_dir):
    import warnings

    import onnx
    import onnx.checker
    import onnx.numpy_helper

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # autograd stays on: see the module's docstring
        torch.onnx.export(model, (sample_input(torch, 2),), path, input_names=["input"],
                          output_names=["output"], opset_version=OPSET,
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                          do_constant_folding=True)
    onnx.checker.check_model(path, full_check=True)
    if data_dir:
        os.makedirs(data_dir, exist_ok=True)
        x = sample_input(torch, 1)
        with torch.enable_grad():  # the unfused computation the export traced
            y = model(x).detach()
        for name, value, file_name in (("input", x, "input_0.pb"), ("output", y, "output_0.pb")):
            with open(os.path.join(data_dir, file_name), "wb") as f:
                f.write(onnx.numpy_helper.from_array(value.numpy(), name).SerializeToString())


def initializer_difference(torch, model, path):
    """The largest difference between the ONNX file's initializers named after parameters and the
    model's, and how many were compared (the transposed MatMul weights are skipped)."""
    import onnx
    import onnx.numpy_helper
    import numpy as np

    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    worst, compared = 0.0, 0
    for tensor in onnx.load(path).graph.initializer:
        if tensor.name in state:
            value = onnx.numpy_helper.to_array(tensor)
            expected = state[tensor.name]
            compared += 1
            if value.shape != expected.shape:
                return float("inf"), compared
            worst = max(worst, float(np.max(np.abs(value - expected))))
    return worst, compared


def fast_path_ran(torch, model, x):
    """Whether the forward pass under inference_mode ran the fused encoder layer."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        with torch.inference_mode():
            model(x)
    return any(event.key == FUSED_OP for event in profile.key_averages())


def machine():
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "logical_cpus": os.cpu_count(), "arch": platform.machine(),
            "python": platform.python_version()}


def time_model(torch, torch_peer, model, args):
    if args.fast_path == "off":
        # torch 1.13 takes the fast path only where this flag (set from `activation`) is true
        for layer in model.encoder.layers:
            layer.activation_relu_or_gelu = False
    x = sample_input(torch, 1)
    fused = fast_path_ran(torch, model, x)

    def work():
        with torch.inference_mode():
            model(x)

    seconds = torch_peer.time_repeated(work, args.warmup, args.rounds)
    return {"ms_median": statistics.median(seconds) * 1e3, "ms_min": min(seconds) * 1e3,
            "rounds": len(seconds), "warmup": args.warmup, "fast_path": fused,
            "fast_path_setting": args.fast_path}


def main(argv):
    args = parse_args(argv)
    if args.time is not None:
        for name in THREAD_VARIABLES:
            os.environ[name] = str(args.threads)
    import torch  # only now: OpenMP and the BLAS read their thread counts when loaded

    sys.path.insert(0, HERE)
    import torch_peer

    assert tuple(torch_peer.THREAD_VARIABLES) == THREAD_VARIABLES
    model = build_model(torch)
    if args.export:
        export(torch, model, args.export, args.data)
        print("wrote %s (%d bytes)" % (args.export, os.path.getsize(args.export)),
              file=sys.stderr if args.time is not None else sys.stdout)
    if args.time is None:
        return 0

    result = {"peer": "pytorch-eager", "batch": 1}
    if args.time.lower() != "none":
        difference, compared = initializer_difference(torch, model, args.time)
        result.update({"onnx": args.time, "onnx_initializers_compared": compared,
                       "onnx_max_difference": difference})
        if compared == 0 or not difference <= 1e-7:
            print("%s does not hold this model's parameters (%d compared, max difference %g);"
                  " export it again with --export" % (args.time, compared, difference),
                  file=sys.stderr)
            return 1
    torch.set_num_threads(args.threads)
    result.update(time_model(torch, torch_peer, model, args))
    result.update({"threads": torch.get_num_threads(), "torch_version": torch.__version__,
                   "model": {"input": [1, STEPS, FEATURES], "d_model": WIDTH, "heads": HEADS,
                             "feed_forward": FEED_FORWARD, "layers": LAYERS, "classes": CLASSES,
                             "activation": "relu", "parameters":
                                 sum(p.numel() for p in model.parameters())},
                   "machine": machine(), "environment": torch_peer.environment_report()})
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
