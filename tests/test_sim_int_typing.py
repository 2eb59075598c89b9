"""Integer typing of narrow array elements (int8, int16, uint8) on both simulator
engines against Numba's own typing, run on the CPU with numba.njit: Numba does integer arithmetic at
64 bits (`a[i] & 0xFF` on an int8 is an int64; int8 + int8 does not wrap), where NumPy 2 keeps the
scalar's width (and raises OverflowError for 0xFF against an int8). A store into a narrow array wraps
as on a GPU. uint16/uint32 elements keep NumPy's scalars (mixed with a uint64 they stay
integers, as in Numba: the last case). Cost: about 2 s (Numba's CPU compiles)."""

import numba
import numpy as np
import pytest
from numba import cuda

from helpers import sim

N = 64


def pack(x, y, f):
    return (x & 0xFF) | (y << 8)


def add(x, y, f):
    return x + y


def sub(x, y, f):
    return x - y


def mul(x, y, f):
    return x * y


def flip(x, y, f):
    return (x ^ 0xFFFFFFFF) + (y >> 1)


def by_u64(x, y, f):
    return (x // np.uint64(3)) >> 1 | (y // np.uint64(5))  # uint64 in Numba (an int64 would give a float64)


def scaled(x, y, f):
    return (x * f) * f  # float32 for int8/int16/uint8, as Numba types it


CASES = [  # (expression, input dtype, output dtype)
    (pack, np.int8, np.int32),
    (pack, np.uint8, np.int32),
    (add, np.int8, np.int16),  # 127 + 127 is 254: promoted, no wrap at 8 bits
    (add, np.int8, np.int8),  # ... and the store into an int8 array wraps, as a GPU's
    (sub, np.uint8, np.int32),
    (mul, np.int16, np.int32),
    (flip, np.int16, np.int64),
    (scaled, np.int8, np.float32),
    (scaled, np.uint8, np.float64),
    (by_u64, np.uint32, np.int64),
    (by_u64, np.uint16, np.int64),
]


def kernel_of(expr):
    fn = cuda.jit(device=True)(expr)

    @cuda.jit
    def k(out, a, b, f):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = fn(a[i], b[i], f[i])

    return k


def numba_cpu(expr, out, a, b, f):
    fn = numba.njit(expr)

    @numba.njit
    def loop(out, a, b, f):
        for i in range(a.size):
            out[i] = fn(a[i], b[i], f[i])

    loop(out, a, b, f)


def inputs(dtype, out_dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    a = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    a[:2], b[:2] = info.max, [info.max, info.min]  # the extremes: sums past the type, 0 - max
    f = rng.standard_normal(N).astype(np.float32) / np.float32(3)
    return np.zeros(N, out_dtype), a, b, f


@pytest.mark.parametrize("engine", ["greenlet", "lockstep"])
@pytest.mark.parametrize(("expr", "dtype", "out_dtype"), CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_narrow_integers_are_typed_as_numba_types_them(engine, expr, dtype, out_dtype):
    want = inputs(dtype, out_dtype)
    numba_cpu(expr, *want)
    got = inputs(dtype, out_dtype)
    run = sim.launch(kernel_of(expr), 2, 32, got, engine=engine)
    assert run.engine == engine and run.fallback is None
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize(("expr", "dtype", "out_dtype"), CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_the_gpu_types_them_as_numba_on_the_cpu(expr, dtype, out_dtype):
    """The reference itself: numba-cuda on a real GPU gives numba.njit's answers (run on a GPU machine)."""
    from helpers.device import gpu_present

    if not gpu_present():
        pytest.skip("no GPU: the simulator legs above compare with numba.njit")
    want = inputs(dtype, out_dtype)
    numba_cpu(expr, *want)
    got = inputs(dtype, out_dtype)
    kernel_of(expr)[2, 32](*got)  # NumPy arguments: copied to the GPU and back
    np.testing.assert_array_equal(got[0], want[0])
