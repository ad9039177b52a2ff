#!/usr/bin/env python3
"""PyTorch peer on an NVIDIA GPU for tools/gpu-check: the workloads `switchyard bench` times on the
cuda backend, in PyTorch's CUDA build on the same GPU, timed the same way.

    python3 tools/bench/gpu_peer.py [--json PATH] [--repetitions 20]

Timing, as `switchyard bench` does (tools/switchyard/cli_common.cpp, time_repeated): warm-up
repetitions, then for each timed repetition the host's monotonic clock around the work and a
torch.cuda.synchronize() (ours: the work and queue.finish()); the median is reported. Both sides so
pay one host synchronisation per repetition, which is small against the large products and is part
of a training step's cost on both.

Parts:
  matmul_bf16  torch.matmul of two 8192x8192 bf16 matrices (uniform in [-1, 1]) into a
               preallocated output, GFLOP/s; like `switchyard bench matmul --dtype bf16`.
  matmul_f32   the same in f32 with TF32 off (torch.backends.cuda.matmul.allow_tf32 = False,
               PyTorch's default), like the cuda plugin's default tf32=false.
  step         one training step of the 784-2048-2048-10 ReLU MLP at batch 256 (forward,
               cross-entropy, backward, SGD momentum update, zero_grad), like `bench step`.
  transformer, lstm
               the training steps of `switchyard bench sequence --model transformer|lstm`
               (the models of tools/bench/torch_peer.py, on the GPU).
  transformer_graph, lstm_graph
               the same steps captured whole as one CUDA graph (torch.cuda.graph, after warm-up
               steps on a side stream, as PyTorch's documentation does it) and replayed: PyTorch's
               answer to the per-launch host cost, the peer of `bench sequence --capture on`.
  add          latency of torch.add on two 16-element f32 tensors on the GPU, including the
               Python call and one synchronisation, in microseconds, like `bench op --name add`.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peer  # noqa: E402  (the CPU peer's model definitions)


def timed(work, warmup, repetitions):
    for _ in range(warmup):
        work()
    torch.cuda.synchronize()
    seconds = []
    for _ in range(repetitions):
        start = time.perf_counter()
        work()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return seconds


def bench_matmul(dtype, n, repetitions):
    generator = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand(n, n, device="cuda", generator=generator).mul_(2).sub_(1).to(dtype)
    b = torch.rand(n, n, device="cuda", generator=generator).mul_(2).sub_(1).to(dtype)
    c = torch.empty(n, n, device="cuda", dtype=dtype)
    seconds = timed(lambda: torch.matmul(a, b, out=c), 3, repetitions)
    median = statistics.median(seconds)
    return {"size": n, "dtype": str(dtype), "tf32": torch.backends.cuda.matmul.allow_tf32,
            "repetitions": len(seconds), "median_ms": median * 1e3,
            "gflops": 2.0 * n ** 3 / median / 1e9}


def bench_step(repetitions):
    widths = [784, 2048, 2048, 10]
    torch.manual_seed(0)
    model = torch_peer.mlp(widths).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(256, widths[0], device="cuda")
    y = torch.randint(0, widths[-1], (256,), device="cuda")

    def step():
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    seconds = timed(step, 3, repetitions)
    return {"layers": "784-2048-2048-10", "batch": 256, "repetitions": len(seconds),
            "median_ms": statistics.median(seconds) * 1e3, "min_ms": min(seconds) * 1e3}


def sequence_setup(name):
    """The model, optimizer and batch of `bench sequence --model name`, on the GPU."""
    batch, steps, features, layers, classes = torch_peer.SEQUENCE_SHAPES[name]
    torch.manual_seed(0)
    cls = torch_peer.TransformerClassifier if name == "transformer" else torch_peer.LstmClassifier
    model = cls(features, layers, classes).cuda().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, steps, features, device="cuda")
    y = torch.randint(0, classes, (batch,), device="cuda")
    return model, optimizer, x, y


def bench_sequence(name, repetitions):
    batch, steps = torch_peer.SEQUENCE_SHAPES[name][:2]
    model, optimizer, x, y = sequence_setup(name)

    def step():
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    seconds = timed(step, 3, repetitions)
    return {"model": name, "batch": batch, "sequence_length": steps, "repetitions": len(seconds),
            "median_ms": statistics.median(seconds) * 1e3, "min_ms": min(seconds) * 1e3}


def bench_sequence_graph(name, repetitions):
    """The step of bench_sequence captured as one CUDA graph and replayed."""
    batch, steps = torch_peer.SEQUENCE_SHAPES[name][:2]
    model, optimizer, x, y = sequence_setup(name)

    def eager_step():
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                eager_step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    except Exception as e:  # noqa: BLE001 (reported, not fatal: the eager peer still stands)
        return {"model": name, "error": f"{type(e).__name__}: {e}"}
    seconds = timed(graph.replay, 3, repetitions)
    return {"model": name, "batch": batch, "sequence_length": steps, "repetitions": len(seconds),
            "median_ms": statistics.median(seconds) * 1e3, "min_ms": min(seconds) * 1e3,
            "capture": "torch.cuda.graph of forward, backward and SGD step"}


def bench_add():
    a = torch.rand(16, device="cuda")
    b = torch.rand(16, device="cuda")
    seconds = timed(lambda: torch.add(a, b), 1000, 20000)
    return {"size": 16, "repetitions": len(seconds),
            "median_us": statistics.median(seconds) * 1e6}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--size", type=int, default=8192, help="matmul M = N = K")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("gpu_peer: torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    results = {"environment": {"torch": torch.__version__, "cuda": torch.version.cuda,
                               "device": torch.cuda.get_device_name(),
                               "cudnn": torch.backends.cudnn.version(),
                               "tf32": False,
                               "timing": "host clock around each repetition, which ends with "
                                         "torch.cuda.synchronize(); median"}}
    results["matmul_bf16"] = bench_matmul(torch.bfloat16, args.size, args.repetitions)
    results["matmul_f32"] = bench_matmul(torch.float32, args.size, args.repetitions)
    results["step"] = bench_step(args.repetitions)
    results["transformer"] = bench_sequence("transformer", args.repetitions)
    results["lstm"] = bench_sequence("lstm", args.repetitions)
    results["transformer_graph"] = bench_sequence_graph("transformer", args.repetitions)
    results["lstm_graph"] = bench_sequence_graph("lstm", args.repetitions)
    results["add"] = bench_add()
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
