"""The compile check's compiler choice (MP_COMPILER): numba-cuda by default, numba-cuda-mlir on request."""

import numpy as np
import pytest
from numba import cuda

from helpers import ptx


def test_an_unknown_compiler_is_named_with_the_choices(monkeypatch):
    monkeypatch.setenv(ptx.COMPILER_ENV, "nvcc")
    with pytest.raises(ValueError, match="MP_COMPILER must be one of numba-cuda, mlir, not 'nvcc'"):
        ptx.available()
    monkeypatch.setenv(ptx.COMPILER_ENV, "")
    assert ptx.compiler() == "numba-cuda"


@cuda.jit
def _shared_add(out, a):
    cache = cuda.shared.array(32, np.float32)
    i = cuda.threadIdx.x
    cache[i] = a[i]
    cuda.syncthreads()
    out[i] = cache[i] + 10


@cuda.jit
def _with_a_list(out, a):
    xs = [a[0], a[1]]
    out[0] = xs[0]


def test_mlir_compiles_a_learner_kernel_unchanged_and_refuses_a_list(monkeypatch):
    pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir not installed")
    monkeypatch.setenv(ptx.COMPILER_ENV, "mlir")
    args = (np.zeros(32, np.float32), np.ones(32, np.float32))
    text = ptx.ptx_check(_shared_add, args)
    assert ".target sm_75" in text and ".shared" in text
    with pytest.raises(ptx.NumbaRejected, match=r"Real Numba \(numba-cuda-mlir\) cannot compile"):
        ptx.ptx_check(_with_a_list, args)


def test_a_kernel_written_for_numba_cuda_mlir_runs_on_the_simulator(monkeypatch):
    pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir not installed")
    import numba_cuda_mlir.cuda as mcuda

    import helpers
    import puzzles
    from helpers.verdicts import PuzzleFailure

    monkeypatch.setenv(ptx.COMPILER_ENV, "mlir")

    @mcuda.jit
    def map_kernel(out, a):
        i = mcuda.threadIdx.x
        out[i] = a[i] + 10

    @mcuda.jit
    def map_wrong(out, a):
        i = mcuda.threadIdx.x
        out[i] = a[i] + 1

    helpers.use("sim")
    try:
        assert puzzles.check("map", map_kernel, seed=0, gpu=False).cases >= 5
        monkeypatch.setenv(ptx.COMPILER_ENV, "numba-cuda")  # its own compiler all the same
        assert puzzles.check("map", map_kernel, seed=1, gpu=False).cases >= 5
        with pytest.raises(PuzzleFailure, match="out"):
            puzzles.check("map", map_wrong, seed=0, gpu=False)
        out = np.zeros(4, np.float32)
        map_kernel[1, 4](out, mcuda.to_device(np.ones(4, np.float32)).copy_to_host())  # the simulator's
        assert out.tolist() == [11.0] * 4
    finally:
        helpers.use("auto")
