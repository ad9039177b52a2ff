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

The caller prints `describe(record)` and saves `record` in its JSON. An OPENBLAS_CORETYPE that the
caller's environment already sets is left as it is (and said so).

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

# Runs in the probe process: the BLAS PyTorch mapped after a float matmul, and its core.
PROBE = r"""
import ctypes, json, os, torch
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


def at_its_best(env, python=PYTHON, flags=None, probe=probe):
    """Returns (env, record): `env` with OPENBLAS_CORETYPE set where OpenBLAS picked a generic core
    on a CPU with AVX2 or AVX-512, and a record of what was found and done. `flags` (the CPU's,
    from /proc/cpuinfo by default) and `probe` are parameters for tests/python/test_peer_env.py."""
    env = dict(env)
    flags = cpu_flags() if flags is None else set(flags)
    wanted, wanted_tier = best_coretype(flags)
    before = probe(env, python)
    record = {"cpu_flags": [f for f in AVX512_FLAGS + AVX2_FLAGS if f in flags],
              "blas_library": before.get("blas_library"), "config": before.get("config"),
              "corename_picked": before.get("corename"), "coretype_set": None,
              "corename_used": before.get("corename"),
              "preset": env.get("OPENBLAS_CORETYPE")}
    if before.get("error"):
        record["error"] = before["error"]
    if before.get("corename") is None:
        record["action"] = "no OpenBLAS mapped: nothing to choose"
    elif record["preset"]:
        record["action"] = "OPENBLAS_CORETYPE=%s was already set by the caller" % record["preset"]
    elif wanted and tier(before["corename"]) < 2:
        env["OPENBLAS_CORETYPE"] = wanted
        after = probe(env, python)
        record.update(coretype_set=wanted, corename_used=after.get("corename"))
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
