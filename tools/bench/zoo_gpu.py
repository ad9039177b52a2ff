#!/usr/bin/env python3
"""The model zoo on a GPU machine (issue 27): switchyard's cuda backend against PyTorch eager on
the same GPU, run by `tools/gpu-check` (step zoo-cuda) with the machine's own python3 and torch.

    zoo_gpu.py --cli BIN/switchyard --cli-library-path PATH --dir DIR --json OUT.json
               [--models a,b] [--carried DIR] [--backend cuda] [--runs 20] [--warmup 3]
               [--torch-device cuda|cpu] [--quick]

(--torch-device cpu, --backend onednn and --quick make a smoke test that runs without a GPU.)

For each model of tools/bench/zoo_models.py (full size):
  1. the ONNX file: DIR/NAME.onnx exported here by zoo_models.export (TorchScript exporter, opset
     17, seed 0), unless --carried holds NAME.onnx with its NAME.input_0.npy and NAME.output_0.npy
     (exported on the build machine by tools/bench/zoo: the same files the CPU figures use);
  2. switchyard: `switchyard bench model NAME.onnx` on --backend alone (SWITCHYARD_FALLBACK=error),
     batch 1 with --check-input/--check-output (PyTorch's output for the seeded batch of 2, within
     1e-4 + 1e-4 |expected|), then the throughput batch, then batch 1 again with
     predict.capture=on (a replayed pass, docs/capture.md; checked the same way); each repetition
     ends with the queue finished;
  3. PyTorch eager on the same GPU: the same architecture (its own seeded weights: time does not
     depend on them) in eval mode under torch.inference_mode(), TF32 off as the cuda plugin's
     default, each repetition ending with torch.cuda.synchronize(); medians after warm-up; and
     batch 1 again captured as one CUDA graph (torch.cuda.graph) and replayed, the peer of the
     replayed column;
  4. ONNX Runtime's CPU provider (the image's Python onnxruntime) at batch 1, where it imports.
Prints a table and writes OUT.json. Exit status 0 when every model ran and matched, 1 otherwise.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo_models  # noqa: E402

MODELS = ("mobilenet_v2", "efficientnet_b0", "resnet50", "bert", "gpt2", "sign_transformer",
          "text_rnn")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cli", required=True)
    p.add_argument("--cli-library-path", default=os.environ.get("LD_LIBRARY_PATH", ""))
    p.add_argument("--dir", required=True)
    p.add_argument("--json", required=True)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--carried", default="")
    p.add_argument("--backend", default="cuda")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--torch-device", default="cuda")
    p.add_argument("--quick", action="store_true")
    return p.parse_args(argv)


def log(message):
    print("zoo-gpu: " + message, flush=True)


def onnx_file(torch, name, spec, model, args):
    carried = os.path.join(args.carried, name) if args.carried else ""
    if carried and all(os.path.exists(carried + suffix)
                       for suffix in (".onnx", ".input_0.npy", ".output_0.npy")):
        return {"onnx": carried + ".onnx", "input": carried + ".input_0.npy",
                "output": carried + ".output_0.npy", "exported_by": "carried (build machine)"}
    info = zoo_models.export(torch, name, spec, model, args.dir)
    stem = os.path.join(args.dir, name)
    return {"onnx": info["onnx"], "input": stem + ".input_0.npy", "output": stem + ".output_0.npy",
            "exported_by": "torch " + torch.__version__, "export_seconds": info["export_seconds"]}


def ours(args, files, batch, check, capture="off"):
    command = [args.cli, "bench", "model", files["onnx"], "--batch-size", str(batch),
               "--repetitions", str(args.runs if batch == 1 else max(5, args.runs // 2)),
               "--warmup", str(args.warmup), "--set", "backends=[%s]" % args.backend,
               "--set", "predict.capture=" + capture, "--json"]
    if check:
        command += ["--check-input", files["input"], "--check-output", files["output"]]
    env = dict(os.environ, LD_LIBRARY_PATH=args.cli_library_path, SWITCHYARD_FALLBACK="error",
               SWITCHYARD_BACKENDS=args.backend)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    report = None
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            report = json.loads(line)
    if report is None or (done.returncode != 0 and "check" not in report):
        raise RuntimeError("switchyard bench model (exit %d): %s" %
                           (done.returncode, (done.stderr or done.stdout).strip()[-600:]))
    return report


def time_torch(torch, model, spec, batch, runs, warmup, device):
    inputs = [x.to(device) for x in
              zoo_models.sample_inputs(torch, spec, batch, seed=zoo_models.SEED + 2)]

    def synchronize():
        if device == "cuda":
            torch.cuda.synchronize()

    seconds = []
    with torch.inference_mode():
        for _ in range(warmup):
            model(*inputs)
        synchronize()
        for _ in range(runs):
            start = time.perf_counter()
            model(*inputs)
            synchronize()
            seconds.append(time.perf_counter() - start)
    return {"batch": batch, "median_ms": statistics.median(seconds) * 1e3,
            "min_ms": min(seconds) * 1e3}


def time_torch_graph(torch, model, spec, batch, runs, warmup):
    """The forward pass captured once as a CUDA graph (torch.cuda.graph, after warm-up passes on
    a side stream as PyTorch's documentation does it) and replayed: the peer of predict.capture."""
    inputs = [x.to("cuda") for x in
              zoo_models.sample_inputs(torch, spec, batch, seed=zoo_models.SEED + 2)]
    try:
        with torch.no_grad():
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    model(*inputs)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                model(*inputs)
    except Exception as e:  # noqa: BLE001 (reported: the eager peer still stands)
        return {"batch": batch, "error": f"{type(e).__name__}: {e}"[-300:]}
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        graph.replay()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return {"batch": batch, "median_ms": statistics.median(seconds) * 1e3,
            "min_ms": min(seconds) * 1e3}


def time_ort(files, runs, warmup):
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        return {"error": "onnxruntime: %s" % e}
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(files["onnx"], options, providers=["CPUExecutionProvider"])
    x = np.load(files["input"])[:1]
    name = session.get_inputs()[0].name
    for _ in range(warmup):
        session.run(None, {name: x})
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, {name: x})
        seconds.append(time.perf_counter() - start)
    return {"version": ort.__version__, "threads": options.intra_op_num_threads, "batch": 1,
            "median_ms": statistics.median(seconds) * 1e3}


def run_model(torch, name, args):
    spec = zoo_models.SPECS[name][1 if args.quick else 0]
    row = {"model": name, "description": zoo_models.describe_spec(name, spec)}
    started = time.perf_counter()
    model = zoo_models.build(torch, spec)
    files = onnx_file(torch, name, spec, model, args)
    row["exported_by"] = files["exported_by"]
    try:
        latency = ours(args, files, 1, check=True)
        throughput = ours(args, files, spec["batch"], check=False)
        replayed = ours(args, files, 1, check=True, capture="on")  # docs/capture.md
        row["switchyard"] = {"latency_ms": latency["median_ms"],
                             "throughput_ms": throughput["median_ms"],
                             "replayed_latency_ms": replayed["median_ms"],
                             "replayed_check": replayed.get("check"),
                             "capture_summary": replayed.get("capture_summary"),
                             "throughput_batch": spec["batch"], "device": latency["device"],
                             "device_name": latency["device_name"],
                             "execution": latency["execution"], "check": latency.get("check")}
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        row["error"] = str(e)
    model = model.to(args.torch_device).eval()
    row["pytorch"] = {"device": args.torch_device,
                      "latency": time_torch(torch, model, spec, 1, args.runs, args.warmup,
                                            args.torch_device),
                      "throughput": time_torch(torch, model, spec, spec["batch"],
                                               max(5, args.runs // 2), args.warmup,
                                               args.torch_device)}
    if args.torch_device == "cuda":
        row["pytorch"]["graph_latency"] = time_torch_graph(torch, model, spec, 1, args.runs,
                                                           args.warmup)
    del model
    if args.torch_device == "cuda":
        torch.cuda.empty_cache()
    try:
        row["onnxruntime_cpu"] = time_ort(files, 5, 1)
    except Exception as e:  # a peer that cannot load the file is reported, not fatal
        row["onnxruntime_cpu"] = {"error": str(e)[-300:]}
    if "switchyard" in row:
        ours_row = row["switchyard"]
        row["ratio_latency"] = ours_row["latency_ms"] / row["pytorch"]["latency"]["median_ms"]
        row["ratio_throughput"] = (ours_row["throughput_ms"] /
                                   row["pytorch"]["throughput"]["median_ms"])
    row["seconds"] = time.perf_counter() - started
    return row


def passed(row):
    ours_row = row.get("switchyard", {})
    check = ours_row.get("check") or {}
    replayed = ours_row.get("replayed_check") or {}
    return "error" not in row and check.get("passed") is True and replayed.get("passed") is True


def table(rows):
    lines = ["| model | switchyard b1 ms | replayed b1 ms | PyTorch b1 ms | ratio | PyTorch graph b1 "
             "ms | switchyard bN ms | PyTorch bN ms | ratio | ORT CPU b1 ms | max abs diff |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "switchyard" not in r:
            lines.append("| %s | error: %s |" % (r["model"], r.get("error", "?")[:200]))
            continue
        s, p = r["switchyard"], r["pytorch"]
        ort_ms = r.get("onnxruntime_cpu", {}).get("median_ms")
        graph_ms = p.get("graph_latency", {}).get("median_ms")
        lines.append("| %s | %.3f | %.3f | %.3f | %.2fx | %s | %.2f (b%d) | %.2f | %.2fx | %s | %.2g%s |" % (
            r["model"], s["latency_ms"], s["replayed_latency_ms"], p["latency"]["median_ms"],
            r["ratio_latency"], "%.3f" % graph_ms if graph_ms else "-",
            s["throughput_ms"], s["throughput_batch"], p["throughput"]["median_ms"],
            r["ratio_throughput"], "%.2f" % ort_ms if ort_ms else "-",
            (s["check"] or {}).get("max_abs_diff", float("nan")),
            "" if passed(r) else " MISMATCH"))
    return "\n".join(lines)


def main(argv):
    args = parse_args(argv)
    os.makedirs(args.dir, exist_ok=True)
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gpu = torch.cuda.get_device_name(0) if args.torch_device == "cuda" else "none"
    rows = []
    for name in args.models.split(","):
        log("%s ..." % name)
        try:
            rows.append(run_model(torch, name, args))
        except Exception as e:  # one model's failure is reported and the zoo goes on
            rows.append({"model": name, "error": "%s: %s" % (type(e).__name__, str(e)[-600:])})
        log("%s: %s" % (name, json.dumps(rows[-1])[:400]))
        with open(args.json, "w") as f:
            json.dump({"machine": {"gpu": gpu,
                                   "cpu": platform.processor(), "torch": torch.__version__},
                       "models": rows}, f, indent=1)
    print(table(rows))
    return 0 if all(passed(r) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
