#!/usr/bin/python3
"""The PyTorch peer's environment at its best, shared by tools/bench/compare and tools/bench/zoo.

PyTorch's float matmul goes through the system BLAS (Debian's OpenBLAS). OpenBLAS 0.3.21 picks its
kernels by CPU model, and on a model it does not know (a newer Xeon or EPYC) it falls back to a
generic core (Prescott, the SSE3 kernels), 4-7x slower than its AVX2 or AVX-512 kernels. So before
the peer process starts:

1. a probe process, with the peer's environment, imports torch, runs a float matmul, reads
   /proc/self/maps for the BLAS library PyTorch actually mapped and asks it
   openblas_get_corename() through ctypes;
2. where that core is generic (no AVX2 kernels) on a CPU whose /proc/cpuinfo flags have AVX-512
   (avx512f, avx512bw, avx512dq, avx512vl) or AVX2 (avx2, fma), OPENBLAS_CORETYPE is set to SKYLAKEX
   or HASWELL (the names OpenBLAS 0.3.21's dynamic.c accepts, compared without regard to case) in
   the peer's environment, and the probe runs again to confirm that OpenBLAS took it.

3. where the caller's environment already sets OPENBLAS_CORETYPE (a workplace may set
   OPENBLAS_CORETYPE=Haswell for every process), the probe also runs without it, and with the
   widest core where OpenBLAS alone would pick a generic one. Each probe times a 1024^3 float
   matmul at the peer's thread count. The preset stays unless another core is at least 10% faster,
   and then the peer runs with the fastest (on an AMD EPYC family 26 with OPENBLAS_CORETYPE=Haswell
   preset, PyTorch's matmul ran at about 180 GFLOP/s, and at about 300 with OpenBLAS's own pick,
   Cooperlake). SWITCHYARD_PEER_KEEP_OPENBLAS_CORETYPE=1 keeps a preset whatever it measures.

The caller prints `describe(record)` and saves `record` in its JSON.

    /usr/bin/python3 tools/bench/peer_env.py [--threads 2]   # prints the record as JSON
"""

import json
import os
import subprocess
import sys

PYTHON = "/usr/bin/python3"  # Debian's, which sees python3-torch

# OpenBLAS core names (lower case, as openblas_get_corename() spells them in any case) by the
# widest vector kernels they use: 0 SSE only, 1 AVX, 2 AVX2 and FMA, 3 AVX-512.
CORE_TIERS = {
    "katmai": 0, "coppermine": 0, "northwood": 0, "prescott": 0, "banias": 0, "core2": 0,
    "penryn": 0, "dunnington": 0, "nehalem": 0, "atom": 0, "athlon": 0, "opteron": 0,
    "opteron_sse3": 0, "barcelona": 0, "bobcat": 0, "nano": 0, "unknown": 0,
    "sandybridge": 1, "bulldozer": 1, "piledriver": 1,
    "haswell": 2, "steamroller": 2, "excavator": 2, "zen": 2,
    "skylakex": 3, "cooperlake": 3, "sapphirerapids": 3,
}
AVX512_FLAGS = ("avx512f", "avx512bw", "avx512dq", "avx512vl")
AVX2_FLAGS = ("avx2", "fma")
# Another core replaces the caller's OPENBLAS_CORETYPE only when its matmul is this much faster, so
# that a noisy neighbour on a shared machine does not flip the choice.
FASTER = 1.10

# Runs in the probe process: the BLAS PyTorch mapped after a float matmul, and its core.
PROBE = r"""
import ctypes, json, os, time, torch
if os.environ.get("OMP_NUM_THREADS", "").isdigit():
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
torch.matmul(torch.ones(64, 64), torch.ones(64, 64))
found = []
with open("/proc/self/maps") as maps:
    for line in maps:
        fields = line.split(None, 5)
        if len(fields) == 6:
            path = fields[5].strip()
            name = os.path.basename(path)
            if (name.startswith(("libopenblas", "libblas")) and ".so" in name
                    and os.path.realpath(path) not in found):
                found.append(os.path.realpath(path))
record = {"blas_library": found[0] if found else None, "corename": None, "config": None}
for path in found:
    try:
        library = ctypes.CDLL(path)
        library.openblas_get_corename.restype = ctypes.c_char_p
        library.openblas_get_config.restype = ctypes.c_char_p
        record.update(blas_library=path, corename=library.openblas_get_corename().decode(),
                      config=library.openblas_get_config().decode())
        break
    except (OSError, AttributeError):
        continue
# The float matmul rate this core gives the peer: 1024^3, median of 15 after 3 warm-ups.
a, b = torch.rand(1024, 1024), torch.rand(1024, 1024)
seconds = []
for i in range(18):
    start = time.perf_counter()
    torch.matmul(a, b)
    if i >= 3:
        seconds.append(time.perf_counter() - start)
seconds.sort()
record["matmul_gflops"] = round(2 * 1024 ** 3 / seconds[len(seconds) // 2] / 1e9, 1)
print(json.dumps(record))
"""


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def best_coretype(flags):
    """The OPENBLAS_CORETYPE for the widest kernels this CPU runs, and its tier."""
    if all(f in flags for f in AVX512_FLAGS):
        return "SKYLAKEX", 3
    if all(f in flags for f in AVX2_FLAGS):
        return "HASWELL", 2
    return None, 0


def probe(env, python=PYTHON):
    """What OpenBLAS a PyTorch process started with `env` maps, and the core it picked."""
    result = subprocess.run([python, "-c", PROBE], env=env, capture_output=True, text=True,
                            timeout=300)
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        return {"blas_library": None, "corename": None,
                "error": (result.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def tier(corename):
    return CORE_TIERS.get((corename or "unknown").lower(), 0)


def at_its_best(env, python=PYTHON, flags=None, probe=probe, keep_preset=None):
    """Returns (env, record): `env` with OPENBLAS_CORETYPE set where OpenBLAS picked a generic core
    on a CPU with AVX2 or AVX-512, or with the caller's OPENBLAS_CORETYPE replaced where another core
    measures at least FASTER times its matmul rate, and a record of what was found and done.
    `flags` (the CPU's, from /proc/cpuinfo by default), `probe` and `keep_preset` (by default
    SWITCHYARD_PEER_KEEP_OPENBLAS_CORETYPE=1 in this process's environment) are parameters for
    tests/python/test_peer_env.py."""
    env = dict(env)
    flags = cpu_flags() if flags is None else set(flags)
    if keep_preset is None:
        keep_preset = os.environ.get("SWITCHYARD_PEER_KEEP_OPENBLAS_CORETYPE") == "1"
    wanted, wanted_tier = best_coretype(flags)
    before = probe(env, python)
    record = {"cpu_flags": [f for f in AVX512_FLAGS + AVX2_FLAGS if f in flags],
              "blas_library": before.get("blas_library"), "config": before.get("config"),
              "corename_picked": before.get("corename"), "coretype_set": None,
              "corename_used": before.get("corename"),
              "matmul_gflops": before.get("matmul_gflops"),
              "preset": env.get("OPENBLAS_CORETYPE"), "preset_dropped": False}
    if before.get("error"):
        record["error"] = before["error"]
    if before.get("corename") is None:
        record["action"] = "no OpenBLAS mapped: nothing to choose"
    elif record["preset"] and keep_preset:
        record["action"] = ("OPENBLAS_CORETYPE=%s was set by the caller and kept"
                            " (SWITCHYARD_PEER_KEEP_OPENBLAS_CORETYPE=1)" % record["preset"])
    elif record["preset"]:
        env = replace_preset(env, record, before, wanted, python, probe)
    elif wanted and tier(before["corename"]) < 2:
        env["OPENBLAS_CORETYPE"] = wanted
        after = probe(env, python)
        record.update(coretype_set=wanted, corename_used=after.get("corename"),
                      matmul_gflops=after.get("matmul_gflops"))
        if tier(after.get("corename")) >= min(wanted_tier, 2):
            record["action"] = ("OpenBLAS picked the generic %s core on a CPU with %s: the peer"
                                " runs with OPENBLAS_CORETYPE=%s (OpenBLAS now uses %s)"
                                % (before["corename"], "AVX-512" if wanted_tier == 3 else "AVX2",
                                   wanted, after.get("corename")))
        else:
            record["action"] = ("OpenBLAS picked %s; OPENBLAS_CORETYPE=%s did not take (core %s)"
                                % (before["corename"], wanted, after.get("corename")))
    else:
        record["action"] = "OpenBLAS picked %s, which uses this CPU's widest kernels it has" % (
            before["corename"])
    return env, record


def replace_preset(env, record, before, wanted, python, probe):
    """The caller set OPENBLAS_CORETYPE: probe without it (and with `wanted` where OpenBLAS alone
    picks a generic core), and keep the preset unless another core's matmul is FASTER times its."""
    preset = record["preset"]
    unaided = {k: v for k, v in env.items() if k != "OPENBLAS_CORETYPE"}
    tried = [(None, probe(unaided, python))]
    if wanted and tier(tried[0][1].get("corename")) < 2 and wanted.lower() != preset.lower():
        tried.append((wanted, probe(dict(unaided, OPENBLAS_CORETYPE=wanted), python)))
    record["alternatives"] = [{"coretype_set": coretype, "corename": found.get("corename"),
                               "matmul_gflops": found.get("matmul_gflops")}
                              for coretype, found in tried]
    coretype, best = max(tried, key=lambda t: t[1].get("matmul_gflops") or 0)
    rate, best_rate = before.get("matmul_gflops") or 0, best.get("matmul_gflops") or 0
    if best.get("corename") and best["corename"] != before["corename"] and (
            best_rate >= FASTER * rate):
        record.update(coretype_set=coretype, corename_used=best["corename"],
                      matmul_gflops=best_rate, preset_dropped=True)
        record["action"] = (
            "the caller's OPENBLAS_CORETYPE=%s (core %s, %s GFLOP/s for a 1024^3 matmul) is slower"
            " than %s (%s GFLOP/s): the peer runs with %s" % (
                preset, before["corename"], rate, best["corename"], best_rate,
                "OPENBLAS_CORETYPE=%s" % coretype if coretype
                else "OpenBLAS's own pick (OPENBLAS_CORETYPE unset)"))
        return dict(unaided, OPENBLAS_CORETYPE=coretype) if coretype else unaided
    record["action"] = (
        "OPENBLAS_CORETYPE=%s was set by the caller and kept: core %s, %s GFLOP/s for a 1024^3"
        " matmul; %s" % (preset, before["corename"], rate, "; ".join(
            "%s %s, %s GFLOP/s" % ("with OPENBLAS_CORETYPE=" + c if c else "unset, OpenBLAS picks",
                                   found.get("corename"), found.get("matmul_gflops"))
            for c, found in tried)))
    return env


def describe(record):
    return "peer OpenBLAS: %s; core %s -> %s. %s" % (
        record.get("blas_library"), record.get("corename_picked"), record.get("corename_used"),
        record.get("action"))


def main(argv):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(args.threads)
    _, record = at_its_best(env)
    print(describe(record), file=sys.stderr)
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
