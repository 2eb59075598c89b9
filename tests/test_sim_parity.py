"""helpers.sim gives the same outputs as Numba's own simulator (and, with a GPU, as real numba-cuda)
on the suite of correct kernels in tests/sim_kernels.py."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sim_kernels

SCRIPT = Path(__file__).with_name("sim_kernels.py")


@pytest.fixture(scope="module")
def numba_sim(tmp_path_factory):
    """The suite's outputs from Numba's simulator, run in a subprocess: NUMBA_ENABLE_CUDASIM must be
    set before numba is imported, and this process has already imported the real numba-cuda."""
    path = tmp_path_factory.mktemp("numba_sim") / "out.npz"
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    p = subprocess.run(
        [sys.executable, str(SCRIPT), "--numba-sim", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return dict(np.load(path))


def test_suite_is_big_enough():
    assert len(sim_kernels.SUITE) >= 12


@pytest.mark.parametrize("name", list(sim_kernels.SUITE))
def test_same_as_numba_simulator(name, numba_sim):
    spec = sim_kernels.SUITE[name]
    err = numba_sim.get(f"{name}/!error")
    if err is not None:
        # only kernels that need warp shuffles/votes may fail there, and only for want of them
        assert spec.warp_ops and "has no attribute" in str(err), str(err)
        pytest.skip(f"Numba's simulator cannot run it: {err}")
    mine = sim_kernels.run_helpers_sim(name)
    for o, v in mine.items():
        ref = numba_sim[f"{name}/{o}"]
        assert v.dtype == ref.dtype and v.shape == ref.shape
        np.testing.assert_array_equal(v, ref, err_msg=f"{name}: output `{o}` differs from Numba's simulator")


def test_warp_kernels_checked_against_numpy():
    """Numba's simulator cannot run the warp kernels, so check them against NumPy here."""
    out = sim_kernels.run_helpers_sim("warp_reduce")["out"]
    a = dict(sim_kernels.inputs("warp_reduce"))["a"]
    want = np.add.reduceat(np.r_[a, np.zeros(8, np.float32)], range(0, 128, 32))
    np.testing.assert_allclose(out, want, rtol=1e-5)
    out = sim_kernels.run_helpers_sim("votes")["out"]
    a = np.r_[dict(sim_kernels.inputs("votes"))["a"], np.full(38, -1, np.float32)].reshape(4, 32)
    # numba-cuda types a ballot as a signed int32 (seen on a real H200: all lanes set gives -1)
    ballot = [np.uint32(sum(1 << k for k in range(32) if a[w, k] > 0)).view(np.int32) for w in range(4)]
    np.testing.assert_array_equal(out[:, 0], ballot)
    np.testing.assert_array_equal(out[:, 1], (a > 0).any(axis=1))
    np.testing.assert_array_equal(out[:, 2], (a > 0).all(axis=1))
    assert out[1, 2] == 1 and out[3, 0] == 0 and out[2, 0] != 0


def test_suite_compiles_with_real_numba():
    """The GPU run (`python tests/sim_kernels.py --gpu`) must work first time: every kernel compiles."""
    from helpers import ptx

    if not ptx.available():
        pytest.skip("NVVM not installed: cannot compile PTX here")
    for name, spec in sim_kernels.SUITE.items():
        ptx.ptx_check(spec.kernel, [v for _, v in sim_kernels.inputs(name)])


def test_same_as_real_gpu(tmp_path):
    import helpers

    if not helpers.gpu_present():
        pytest.skip(
            "no CUDA GPU here; on a GPU machine run `python tests/sim_kernels.py --gpu OUT.npz` "
            "then `--compare OUT.npz`"
        )
    path = tmp_path / "gpu.npz"
    p = subprocess.run(
        [sys.executable, str(SCRIPT), "--gpu", str(path)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert sim_kernels.compare(path) == []
