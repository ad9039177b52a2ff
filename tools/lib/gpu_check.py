#!/usr/bin/env python3
"""Judges for tools/gpu-check: each reads the files a step wrote and exits 0 only if they show
what the step must show. Standard library only (it runs on the GPU machine's python3).

    gpu_check.py train METRICS --backend cuda --min-accuracy 0.96
    gpu_check.py same-run METRICS_A METRICS_B
    gpu_check.py conformance REPORT.json
    gpu_check.py vulkan-device DEVICES.log
    gpu_check.py speed OURS_DIR PEER.json --out SPEED.json
    gpu_check.py summary STEPS.tsv --json SUMMARY.json --text SUMMARY.txt [--machine MACHINE.log]
"""

import argparse
import json
import math
import os
import re
import sys


def load_json(path):
    """The last JSON document in a file (a run's log may print lines before it)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.find("{")
    if start < 0:
        raise ValueError(f"{path}: no JSON object in it")
    return json.loads(text[start:])


def finite(value):
    return isinstance(value, (int, float)) and math.isfinite(value)


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


# --- train ---------------------------------------------------------------------------------------

def judge_train(args):
    m = load_json(args.metrics)
    problems = []
    backend = m.get("backend")
    if backend != args.backend:
        problems.append(f"ran on backend {backend!r} ({m.get('device')}), not {args.backend!r}")
    accuracy = m.get("test_accuracy")
    if not finite(accuracy) or accuracy < args.min_accuracy:
        problems.append(f"test accuracy {accuracy} is below {args.min_accuracy}")
    history = m.get("history", [])
    if not history:
        problems.append("no epochs in the metrics")
    for epoch in history:
        for key in ("train_loss", "test_loss"):
            if not finite(epoch.get(key)):
                problems.append(f"epoch {epoch.get('epoch')}: {key} is {epoch.get(key)} (not finite)")
    if m.get("fallback_ops", 0) != 0:
        problems.append(f"{m.get('fallback_ops')} ops fell back to another backend")
    print(f"{args.metrics}: backend {backend} ({m.get('device_name')}), {len(history)} epochs, "
          f"test accuracy {accuracy}, final losses train {m.get('train_loss')} test "
          f"{m.get('test_loss')}, median epoch {m.get('epoch_seconds_median')} s, settings "
          f"'{m.get('device_settings')}'")
    if problems:
        fail("; ".join(problems))
    print("ok")


# --- same-run ------------------------------------------------------------------------------------

def judge_same_run(args):
    a, b = load_json(args.first), load_json(args.second)
    problems = []
    if not a.get("deterministic") or not b.get("deterministic"):
        problems.append("a run was not deterministic: true")
    if a.get("weights_fnv1a64") != b.get("weights_fnv1a64"):
        problems.append(f"final weights differ: {a.get('weights_fnv1a64')} vs "
                        f"{b.get('weights_fnv1a64')}")
    losses_a = [(e.get("train_loss"), e.get("test_loss")) for e in a.get("history", [])]
    losses_b = [(e.get("train_loss"), e.get("test_loss")) for e in b.get("history", [])]
    if losses_a != losses_b:
        problems.append(f"per-epoch losses differ: {losses_a} vs {losses_b}")
    if a.get("backend") != b.get("backend"):
        problems.append(f"backends differ: {a.get('backend')} vs {b.get('backend')}")
    print(f"backend {a.get('backend')}: weights {a.get('weights_fnv1a64')} and "
          f"{b.get('weights_fnv1a64')}, {len(losses_a)} epochs of losses compared bit for bit")
    if problems:
        fail("; ".join(problems))
    print("ok: bit-identical")


# --- conformance ---------------------------------------------------------------------------------

def judge_conformance(args):
    r = load_json(args.report)
    failed = [c for c in r.get("cases", []) if c.get("outcome") == "failed"]
    skipped = [c for c in r.get("cases", []) if c.get("outcome") == "skipped"]
    settings = r.get("device_settings", "")
    print(f"{r.get('device')}: {r.get('passed')} passed, {r.get('failed')} failed, "
          f"{r.get('skipped')} skipped; device settings after the run: '{settings}'")
    missing = [pair for pair in args.expect if pair not in settings.split()]
    for c in failed[:40]:
        print(f"  failed {c['name']}: nmse {c.get('nmse')} (tolerance {c.get('tolerance')}) "
              f"{c.get('reason', '')}")
    reasons = sorted({c.get("reason", "") for c in skipped})
    for reason in reasons[:20]:
        print(f"  skipped ({sum(1 for c in skipped if c.get('reason') == reason)}): {reason}")
    for c in r.get("cases", []):
        if c["name"].startswith("large/"):
            print(f"  {c['outcome']} {c['name']}: nmse {c.get('nmse')} {c.get('reason', '')}")
    if failed or not r.get("passed"):
        fail(f"{len(failed)} failed, {r.get('passed')} passed")
    if missing:
        fail(f"the device's settings lack {', '.join(missing)}")
    print("ok")


# --- vulkan-device -------------------------------------------------------------------------------

def judge_vulkan_device(args):
    with open(args.devices_log, encoding="utf-8") as f:
        text = f.read()
    lines = [line.strip() for line in text.splitlines() if re.match(r"\s*vulkan:\d", line)]
    for line in lines:
        print(line)
    if not lines:
        fail("no vulkan device is listed (no NVIDIA Vulkan device)")
    if "nvidia" not in lines[0].lower():
        fail(f"vulkan:0 is not the NVIDIA GPU: {lines[0]}")
    # Its settings and details lines (the tile, the cooperative-matrix shapes) for the record.
    all_lines = text.splitlines()
    start = next(i for i, line in enumerate(all_lines) if re.match(r"\s*\*?\s*vulkan:0", line))
    for line in all_lines[start + 1:start + 4]:
        if line.strip().startswith(("settings:", "details:")):
            print(line.strip())
    print("ok: vulkan:0 is the NVIDIA GPU")


# --- speed ---------------------------------------------------------------------------------------

# (our bench file, the peer's key, what is compared, the bound, whether ours must be faster)
SPEED_ROWS = (
    ("matmul-bf16-cuda.json", "matmul_bf16", "matmul 8192^3 bf16, GFLOP/s", 0.8, "throughput"),
    ("matmul-f32-cuda.json", "matmul_f32", "matmul 8192^3 f32 (TF32 off), GFLOP/s", 0.8,
     "throughput"),
    ("step-cuda.json", "step", "784-2048-2048-10 b256 training step, ms", 1.25, "time"),
    # Issue 27 tightened the sequence steps' bound from 1.25 to 1.0 once both held it (0.80x and
    # 0.92x on 2026-11-26, 0.57x and 0.77x on 2026-11-28).
    ("transformer-cuda.json", "transformer", "Transformer training step, ms", 1.0, "time"),
    ("lstm-cuda.json", "lstm", "LSTM training step, ms", 1.0, "time"),
    # Replayed (CUDA Graphs on both sides); issue 30's bound is 1.0, reported here without one
    # until it holds.
    ("transformer-capture-cuda.json", "transformer_graph",
     "Transformer step replayed vs torch.cuda.graph, ms", None, "time"),
    ("lstm-capture-cuda.json", "lstm_graph", "LSTM step replayed vs torch.cuda.graph, ms", None,
     "time"),
    ("transformer-capture-cuda.json", "transformer", "Transformer step replayed vs eager torch, ms",
     None, "time"),
    ("lstm-capture-cuda.json", "lstm", "LSTM step replayed vs eager torch, ms", None, "time"),
    ("add-cuda.json", "add", "16-element add through the dispatch path, us", None, "time"),
)


def our_figure(doc, kind):
    if kind == "throughput":
        return doc.get("gflops")
    for key in ("median_microseconds", "median_ms"):
        if finite(doc.get(key)):
            return doc[key]
    return None


def judge_speed(args):
    peer = load_json(args.peer)
    rows, problems = [], []
    for file_name, key, label, bound, kind in SPEED_ROWS:
        try:
            ours_doc = load_json(f"{args.ours}/{file_name}")
        except (OSError, ValueError) as e:
            ours_doc, ours_error = None, str(e)
        theirs = peer.get(key, {})
        ours = our_figure(ours_doc, kind) if ours_doc else None
        their = theirs.get("gflops") if kind == "throughput" else theirs.get(
            "median_us" if key == "add" else "median_ms")
        row = {"what": label, "ours": ours, "peer": their, "bound": bound,
               "our_settings": ours_doc.get("settings") if ours_doc else None,
               "matmul_path": ours_doc.get("matmul_path") if ours_doc else None}
        if finite(ours) and finite(their) and their > 0:
            row["ratio"] = ours / their
            verdict = ""
            if bound is not None:
                good = row["ratio"] >= bound if kind == "throughput" else row["ratio"] <= bound
                verdict = "meets" if good else "MISSES"
                if not good:
                    problems.append(f"{label}: ratio {row['ratio']:.3f} (bound {bound})")
            row["verdict"] = verdict
        else:
            row["ratio"] = None
            row["verdict"] = "MISSING" if bound is not None else "missing"
            if bound is not None:
                problems.append(f"{label}: no figure (ours {ours}, peer {their})"
                                + (f": {ours_error}" if ours_doc is None else ""))
        rows.append(row)
    # Issue 30's figures for vulkan, reported (not judged): f32 on the shader GEMM's tiles, f16 on
    # cooperative matrices where the device has them (matmul_path says which kernel ran), and,
    # where they ran, the kernels those replaced (optional evidence).
    vulkan_targets = {"f32": 25000.0, "f16": 300000.0}
    for file_name, required in (("matmul-f32-vulkan.json", True), ("matmul-f16-vulkan.json", True),
                                ("matmul-f32-tile64-vulkan.json", False),
                                ("matmul-f16-shader-vulkan.json", False)):
        if not required and not os.path.exists(f"{args.ours}/{file_name}"):
            continue
        try:
            doc = load_json(f"{args.ours}/{file_name}")
            gflops, target = doc.get("gflops"), vulkan_targets.get(doc.get("dtype"))
            verdict = ""
            if finite(gflops) and target is not None:
                verdict = ("meets" if gflops >= target else "below") + f" {target:g} (issue 30)"
            kernel = doc.get("matmul_path") or "?"
            tile = re.search(r"matmul_tile=(\d+)", doc.get("settings") or "")
            if kernel == "shader" and tile:
                kernel += f", tile {tile.group(1)}"
            rows.append({"what": f"vulkan matmul 8192^3 {doc.get('dtype')} "
                                 f"({kernel}), GFLOP/s on "
                                 f"{doc.get('device_name')}", "ours": gflops,
                         "peer": None, "ratio": None, "bound": None, "verdict": verdict})
        except (OSError, ValueError) as e:
            rows.append({"what": f"vulkan {file_name}", "ours": None, "peer": None,
                         "ratio": None, "bound": None, "verdict": f"missing: {e}"})
    for row in rows:
        ratio = f"{row['ratio']:.3f}" if row.get("ratio") is not None else "-"
        ours = f"{row['ours']:.4g}" if finite(row.get("ours")) else "-"
        peer_value = f"{row['peer']:.4g}" if finite(row.get("peer")) else "-"
        print(f"{row['what']:<58} ours {ours:>10}  torch {peer_value:>10}  ratio {ratio:>6} "
              f"{row.get('verdict', '')}")
    document = {"timing": "both sides: host clock around each repetition, which ends when the "
                          "device has finished (ours: queue.finish; PyTorch: "
                          "torch.cuda.synchronize); medians",
                "peer_environment": peer.get("environment"), "rows": rows}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2)
    if problems:
        fail("; ".join(problems))
    print("ok")


# --- summary -------------------------------------------------------------------------------------

def write_summary(args):
    steps = []
    with open(args.steps, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            name, status, code, seconds, note = parts[:5]
            steps.append({"step": name, "status": status, "exit": int(code),
                          "seconds": float(seconds), "note": note})
    machine = ""
    if args.machine:
        try:
            with open(args.machine, encoding="utf-8") as f:
                machine = f.read().strip()
        except OSError:
            pass
    failed = [s["step"] for s in steps if s["status"] != "ok"]
    document = {"passed": not failed and bool(steps), "finished": args.finished,
                "failed_steps": failed, "machine": machine, "steps": steps}
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2)
    with open(args.text, "w", encoding="utf-8") as f:
        if machine:
            f.write(machine + "\n")
        for s in steps:
            f.write(f"{s['step']:<32} {s['status']:<22} {s['seconds']:7.1f} s  {s['note']}\n")
        state = "finished" if args.finished else "NOT FINISHED (still running, or stopped)"
        f.write(f"gpu-check {state}: {len(steps) - len(failed)} of {len(steps)} steps ok"
                + (f"; failed: {', '.join(failed)}" if failed else "") + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train")
    p.add_argument("metrics")
    p.add_argument("--backend", required=True)
    p.add_argument("--min-accuracy", type=float, required=True)
    p.set_defaults(run=judge_train)
    p = sub.add_parser("same-run")
    p.add_argument("first")
    p.add_argument("second")
    p.set_defaults(run=judge_same_run)
    p = sub.add_parser("conformance")
    p.add_argument("report")
    p.add_argument("--expect", action="append", default=[], metavar="KEY=VALUE",
                   help="a pair the device's settings line must hold after the run")
    p.set_defaults(run=judge_conformance)
    p = sub.add_parser("vulkan-device")
    p.add_argument("devices_log")
    p.set_defaults(run=judge_vulkan_device)
    p = sub.add_parser("speed")
    p.add_argument("ours")
    p.add_argument("peer")
    p.add_argument("--out", required=True)
    p.set_defaults(run=judge_speed)
    p = sub.add_parser("summary")
    p.add_argument("steps")
    p.add_argument("--json", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--machine")
    p.add_argument("--finished", action="store_true")
    p.set_defaults(run=write_summary)
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except (OSError, ValueError, KeyError) as e:
        fail(str(e))


if __name__ == "__main__":
    main(sys.argv[1:])
