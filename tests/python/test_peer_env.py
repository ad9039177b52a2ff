"""tools/bench/peer_env.py (issue 27): the PyTorch peer gets OPENBLAS_CORETYPE where OpenBLAS
picked a generic core on a CPU with AVX2 or AVX-512, and only there."""

import os
import sys

from conftest import SOURCE_DIR

sys.path.insert(0, os.path.join(SOURCE_DIR, "tools", "bench"))
import peer_env  # noqa: E402

AVX512 = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl"]
AVX2 = ["sse4_2", "avx", "avx2", "fma"]


def fake_openblas(picked):
    """A probe whose OpenBLAS picks `picked`, or takes OPENBLAS_CORETYPE when it is set."""
    calls = []

    def probe(env, python):
        calls.append(env.get("OPENBLAS_CORETYPE"))
        forced = env.get("OPENBLAS_CORETYPE")
        core = {"SKYLAKEX": "SkylakeX", "HASWELL": "Haswell"}.get(forced, forced) or picked
        return {"blas_library": "/usr/lib/x/openblas-openmp/libopenblasp-r0.3.21.so",
                "corename": core, "config": "OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP " + core}
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


def test_a_coretype_the_caller_set_is_kept():
    probe, _ = fake_openblas("Prescott")
    env, record = peer_env.at_its_best({"OPENBLAS_CORETYPE": "Sandybridge"}, flags=AVX512,
                                       probe=probe)
    assert env["OPENBLAS_CORETYPE"] == "Sandybridge"
    assert record["coretype_set"] is None and "already set" in record["action"]
