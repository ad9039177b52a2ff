"""tools/bench/peer_env.py (issue 27): the PyTorch peer gets OPENBLAS_CORETYPE where OpenBLAS
picked a generic core on a CPU with AVX2 or AVX-512, and only there; a caller's OPENBLAS_CORETYPE
gives way to a core that measures faster."""

import os
import sys

from conftest import SOURCE_DIR

sys.path.insert(0, os.path.join(SOURCE_DIR, "tools", "bench"))
import peer_env  # noqa: E402

AVX512 = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl"]
AVX2 = ["sse4_2", "avx", "avx2", "fma"]


# What each core's 1024^3 matmul measures in the fake probe, GFLOP/s (about as on an AMD EPYC family
# 26 with 2 threads).
RATES = {"Prescott": 40.0, "Nehalem": 40.0, "Sandybridge": 90.0, "Haswell": 180.0, "Zen": 150.0, "SkylakeX": 300.0,
         "Cooperlake": 320.0}


def fake_openblas(picked, rates=RATES):
    """A probe whose OpenBLAS picks `picked`, or takes OPENBLAS_CORETYPE when it is set."""
    calls = []

    def probe(env, python):
        calls.append(env.get("OPENBLAS_CORETYPE"))
        forced = env.get("OPENBLAS_CORETYPE")
        core = {"SKYLAKEX": "SkylakeX", "HASWELL": "Haswell"}.get(forced, forced) or picked
        return {"blas_library": "/usr/lib/x/openblas-openmp/libopenblasp-r0.3.21.so",
                "corename": core, "config": "OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP " + core,
                "matmul_gflops": rates[core]}
    return probe, calls


def test_prescott_on_avx512_gets_skylakex_before_the_peer_starts():
    probe, calls = fake_openblas("Prescott")
    env, record = peer_env.at_its_best({"PATH": "/usr/bin"}, flags=AVX512, probe=probe)
    assert env["OPENBLAS_CORETYPE"] == "SKYLAKEX"
    assert (record["corename_picked"], record["corename_used"]) == ("Prescott", "SkylakeX")
    assert record["coretype_set"] == "SKYLAKEX"
    assert calls == [None, "SKYLAKEX"]  # probed again with the variable, to confirm it took
    assert "generic Prescott core" in peer_env.describe(record)


def test_nehalem_on_avx2_gets_haswell():
    probe, _ = fake_openblas("Nehalem")
    env, record = peer_env.at_its_best({}, flags=AVX2, probe=probe)
    assert env["OPENBLAS_CORETYPE"] == "HASWELL"
    assert record["corename_used"] == "Haswell"


def test_a_core_with_avx2_kernels_or_a_cpu_without_avx2_is_left_alone():
    for picked, flags in (("Cooperlake", AVX512), ("Haswell", AVX2), ("Zen", AVX2),
                          ("Prescott", ["sse4_2", "avx"])):
        probe, calls = fake_openblas(picked)
        env, record = peer_env.at_its_best({}, flags=flags, probe=probe)
        assert "OPENBLAS_CORETYPE" not in env, picked
        assert record["coretype_set"] is None and record["corename_used"] == picked
        assert calls == [None]


def test_a_callers_narrower_coretype_gives_way_to_openblass_own_faster_pick():
    # The workplace sets OPENBLAS_CORETYPE=Haswell for every process; OpenBLAS alone picks
    # Cooperlake on this AVX-512 CPU, and its matmul measures faster: the peer runs without it.
    probe, calls = fake_openblas("Cooperlake")
    env, record = peer_env.at_its_best({"OPENBLAS_CORETYPE": "Haswell", "PATH": "/usr/bin"},
                                       flags=AVX512, probe=probe, keep_preset=False)
    assert "OPENBLAS_CORETYPE" not in env and env["PATH"] == "/usr/bin"
    assert calls == ["Haswell", None]
    assert record["preset_dropped"] and record["preset"] == "Haswell"
    assert (record["corename_picked"], record["corename_used"]) == ("Haswell", "Cooperlake")
    assert record["matmul_gflops"] == 320.0
    assert "is slower than Cooperlake" in peer_env.describe(record)


def test_a_callers_coretype_over_a_generic_pick_gives_way_to_the_widest_core():
    probe, calls = fake_openblas("Prescott")
    env, record = peer_env.at_its_best({"OPENBLAS_CORETYPE": "Sandybridge"}, flags=AVX512,
                                       probe=probe, keep_preset=False)
    assert env["OPENBLAS_CORETYPE"] == "SKYLAKEX"
    assert calls == ["Sandybridge", None, "SKYLAKEX"]
    assert record["coretype_set"] == "SKYLAKEX" and record["corename_used"] == "SkylakeX"
    assert [a["corename"] for a in record["alternatives"]] == ["Prescott", "SkylakeX"]


def test_a_callers_coretype_is_kept_when_nothing_measures_ten_percent_faster():
    # Within the noise margin (5% faster) the preset stays; so does one that is the fastest.
    close = dict(RATES, Cooperlake=RATES["Haswell"] * 1.05)
    for picked, rates in (("Cooperlake", close), ("Zen", RATES)):
        probe, _ = fake_openblas(picked, rates)
        env, record = peer_env.at_its_best({"OPENBLAS_CORETYPE": "Haswell"}, flags=AVX512,
                                           probe=probe, keep_preset=False)
        assert env["OPENBLAS_CORETYPE"] == "Haswell", picked
        assert not record["preset_dropped"] and record["corename_used"] == "Haswell"
        assert "set by the caller and kept" in record["action"]


def test_a_coretype_the_caller_set_is_kept_when_asked_to():
    probe, calls = fake_openblas("Cooperlake")
    env, record = peer_env.at_its_best({"OPENBLAS_CORETYPE": "Sandybridge"}, flags=AVX512,
                                       probe=probe, keep_preset=True)
    assert env["OPENBLAS_CORETYPE"] == "Sandybridge" and calls == ["Sandybridge"]
    assert record["coretype_set"] is None and "SWITCHYARD_PEER_KEEP" in record["action"]
