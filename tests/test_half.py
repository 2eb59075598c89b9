"""Half precision on the simulator: float16 arithmetic rounds after every operation (round to
nearest even, as a GPU's fp16 add and multiply do; NumPy's float16 does the same), on both engines;
a store that turns a finite value into inf in a float16 array (past 65504) is named, on both."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from helpers import sim
from helpers.sim import errors as E
from helpers.sim.semantics import half_overflow


@cuda.jit
def fma_half(a, b, c, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a[i] * b[i] + c[i]


@cuda.jit
def doubled_into_half(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = x[i] * 2.0


@pytest.mark.parametrize("engine", ["greenlet", "auto", "lockstep"])
def test_fp16_rounds_after_each_operation(engine):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(100).astype(np.float16) for _ in range(3))
    y = np.zeros(100, np.float16)
    sim.launch(fma_half, 4, 32, (a, b, c, y), engine=engine)
    np.testing.assert_array_equal(y, a * b + c)  # two roundings: the product, then the sum
    once = (a.astype(np.float32) * b + c).astype(np.float16)  # one rounding (an fma) differs here
    assert (y != once).sum() > 0


@pytest.mark.parametrize("engine", ["greenlet", "auto", "lockstep"])
def test_fp16_overflow_is_named(engine):
    x = np.full(64, 40000.0, np.float32)
    x[:5] = 1.0
    y = np.zeros(64, np.float16)
    want = "float16 overflow: storing 80000 .* 65504" if engine != "lockstep" else "float16 overflow"
    with pytest.raises(E.KernelException, match=want):
        sim.launch(doubled_into_half, 2, 32, (x, y), engine=engine)


def test_overflow_rule():
    assert half_overflow(65519.0) is False  # rounds down to 65504
    assert half_overflow(65520.0) is True
    assert half_overflow(np.inf) is False  # already inf: not an overflow of this store
    assert half_overflow(np.array([1.0, -70000.0])) is True
