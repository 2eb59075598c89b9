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
