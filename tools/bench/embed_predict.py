#!/usr/bin/python3
"""Python's Predictor.predict beside the C++ API's predict_into, same model, rows, batch size,
device and threads, one run: the issue "Embedding" asks the Python path to stay within 10%.

    tools/bench/embed_predict.py [--build-dir build] [--model CKPT] [--rows 100000]
                                 [--batch-size 256] [--rounds 5] [--threads 2] [--json FILE]

Without --model it trains configs/digits-mlp.yaml for 2 epochs into a temporary folder (a 64 ->
256 -> 256 -> 10 MLP). Each round times the C++ side (`switchyard bench predict`, a separate
process: median of 10 predictions of the whole array) and then the Python side in this process
(median of 10 `Predictor.predict` calls on a float32 C-contiguous array of the same size).
Prints the CPU model, both throughputs, and the ratio python / C++ (>= 0.9 is the target).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return " ".join(fields.get(k, "").strip() for k in ("Model name", "CPU family", "Model")).strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--model")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="onednn")
    parser.add_argument("--json")
    args = parser.parse_args()
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    build = os.path.abspath(os.path.join(root, args.build_dir))
    sys.path.insert(0, os.path.join(build, "python"))
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy
    import switchyard

    cli = os.path.join(build, "bin", "switchyard")
    settings = [f"device={args.device}", f"backend_options={{onednn: {{threads: {args.threads}}}}}"]
    with tempfile.TemporaryDirectory() as work:
        model = args.model
        if model is None:
            model = os.path.join(work, "digits-mlp.ckpt")
            switchyard.run(os.path.join(root, "configs", "digits-mlp.yaml"),
                           overrides={"train.epochs": 2, "train.checkpoint": model,
                                      "train.progress": "none"})
        predictor = switchyard.Predictor(model, overrides=settings)
        rng = numpy.random.default_rng(0)
        x = rng.integers(0, 17, size=(args.rows, predictor.input_width)).astype(numpy.float32)
        cpp_rates, python_rates = [], []
        for _ in range(args.rounds):
            command = [cli, "bench", "predict", model, "--rows", str(args.rows), "--batch-size",
                       str(args.batch_size), "--json"]
            for setting in settings:
                command += ["--set", setting]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            cpp_rates.append(json.loads(done.stdout)["samples_per_second"])
            predictor.predict(x, batch_size=args.batch_size)  # warm-up
            seconds = []
            for _ in range(10):
                start = time.perf_counter()
                predictor.predict(x, batch_size=args.batch_size)
                seconds.append(time.perf_counter() - start)
            python_rates.append(args.rows / statistics.median(seconds))
    cpp = statistics.median(cpp_rates)
    python = statistics.median(python_rates)
    record = {"machine": cpu_model(), "device": predictor.device, "threads": args.threads,
              "rows": args.rows, "input_width": predictor.input_width,
              "batch_size": args.batch_size, "rounds": args.rounds,
              "cpp_samples_per_second": cpp, "python_samples_per_second": python,
              "ratio_python_to_cpp": python / cpp, "load_average": os.getloadavg()}
    print(f"machine: {record['machine']}; device {predictor.device}, {args.threads} threads")
    print(f"predict {args.rows} x {predictor.input_width}, batch {args.batch_size}, "
          f"median of {args.rounds} rounds:")
    print(f"  C++ API (switchyard bench predict): {cpp:12.0f} samples/s")
    print(f"  Python Predictor.predict          : {python:12.0f} samples/s")
    print(f"  ratio python / C++: {python / cpp:.3f} (target >= 0.90)")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(record, out, indent=2)
    return 0 if python / cpp >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
