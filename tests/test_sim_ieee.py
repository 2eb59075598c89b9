"""Simulator numerics follow IEEE float semantics, as a GPU does: `math.exp` of a large argument is
inf, `math.log(0)` is -inf, `math.sqrt(-1)` NaN, a float divided by zero inf or NaN, never a Python
exception (the math functions live once, in helpers/sim/semantics.py, for both engines). Kernels
that rely on IEEE infinities pass on both engines and agree with NumPy float32; on a machine with a
GPU the same kernels run on it too and must agree."""

import math
from math import exp, log

import numpy as np
import pytest
from numba import cuda

from helpers import engine as device
from helpers import sim
from helpers.sim import errors as E
from helpers.sim.semantics import MATH

ENGINES = ("greenlet", "lockstep", "auto")


def run(kernel, n, *args, engine):
    out = np.full(n, 7.0, np.float32)
    r = sim.launch(kernel, 1, n, (out, *[a.copy() for a in args]), engine=engine)
    if engine == "lockstep" or engine == "auto":
        assert r.engine == "lockstep" and r.fallback is None, r.fallback  # lockstep ran it itself
    return out


def on_gpu(kernel, n, *args):
    out = cuda.to_device(np.full(n, 7.0, np.float32))
    kernel[1, n](out, *[cuda.to_device(a) for a in args])
    return out.copy_to_host()


def agree(got, want):
    """Equal as float32 results: the same infinities (with their signs) and NaNs, finite values to
    float32 rounding (the simulator computes math.* in float64 before the store rounds)."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    assert np.array_equal(np.isinf(got) & (got > 0), np.isinf(want) & (want > 0)), (got, want)
    assert np.array_equal(np.isinf(got) & (got < 0), np.isinf(want) & (want < 0)), (got, want)
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=2e-6, atol=1e-30)


def numpy32(f, *args):
    with np.errstate(all="ignore"):
        return f(*[np.asarray(a, np.float32) for a in args])


# --- kernels a GPU runs correctly because of IEEE infinities ---------------------------------------


@cuda.jit
def masked_logprob(out, p, mask):
    """log p where the mask allows, -inf elsewhere; a zero probability is -inf too (log(0))."""
    i = cuda.grid(1)
    if i < out.size:
        lp = math.log(p[i])
        if mask[i] == 0:
            lp = -math.inf
        out[i] = lp


@cuda.jit
def softmax_of_logprobs(out, lp):
    """exp(lp - max) / sum: masked entries (-inf) give exactly 0."""
    i = cuda.grid(1)
    if i < out.size:
        m = -math.inf
        for j in range(lp.size):
            m = max(m, lp[j])
        s = 0.0
        for j in range(lp.size):
            s += math.exp(lp[j] - m)
        out[i] = math.exp(lp[i] - m) / s


@cuda.jit
def swish_like(out, u):
    """u / (1 + exp(-2u)): for very negative u, exp overflows to inf and the result is -0."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = u[i] / (1 + math.exp(-2 * u[i]))


@cuda.jit
def divide(out, a, b):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] / b[i]


@cuda.jit
def reciprocal(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 1.0 / a[i]


@cuda.jit
def from_imports(out, a):
    """`from math import exp, log` binds the same IEEE functions as `math.exp`."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = exp(a[i]) + log(a[i])


P = np.array([0.5, 0.0, 0.25, 0.125, 0.0, 1.0, 0.0625, 0.0625], np.float32)
MASK = np.array([1, 1, 0, 1, 1, 1, 0, 1], np.int32)
U = np.array([-500.0, -60.0, -1.0, 0.0, 1.0, 60.0, 500.0, -1e30], np.float32)
A = np.array([1.0, -1.0, 0.0, -0.0, 2.0, np.inf, np.nan, 0.0], np.float32)
B = np.array([0.0, 0.0, 0.0, 0.0, -0.0, 0.0, 1.0, 3.0], np.float32)
BIG = np.array([0.0, -1.0, 1e3, 89.0, 100.0, 1.0, -1e3, 0.5], np.float32)


def expected_logprob():
    lp = numpy32(np.log, P)
    return np.where(MASK == 0, -np.inf, lp).astype(np.float32)


def expected_softmax(lp):
    e = numpy32(lambda x: np.exp(x - x.max()), lp)
    return (e / e.sum(dtype=np.float32)).astype(np.float32)


CASES = {
    "masked log-probability": (masked_logprob, (P, MASK), expected_logprob),
    "softmax over -inf": (
        softmax_of_logprobs,
        (expected_logprob(),),
        lambda: expected_softmax(expected_logprob()),
    ),
    "u / (1 + exp(-2u))": (swish_like, (U,), lambda: numpy32(lambda u: u / (1 + np.exp(-2 * u)), U)),
    "a / b with b = 0": (divide, (A, B), lambda: numpy32(np.divide, A, B)),
    "1.0 / a with a = 0": (reciprocal, (A,), lambda: numpy32(lambda a: np.float32(1.0) / a, A)),
    "from math import exp, log": (
        from_imports,
        (BIG,),
        lambda: numpy32(lambda a: np.exp(a) + np.log(a), BIG),
    ),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", list(CASES))
def test_ieee_kernels_pass_and_match_numpy_float32(case, engine):
    kernel, args, want = CASES[case]
    agree(run(kernel, len(args[0]), *args, engine=engine), want())


def test_the_cases_reach_the_infinities():
    """Each case does hit the IEEE special values it is about (else it would prove nothing)."""
    assert np.isneginf(expected_logprob()).sum() >= 3  # masked and log(0)
    assert (expected_softmax(expected_logprob()) == 0).sum() >= 3
    with np.errstate(all="ignore"):
        assert np.isinf(np.exp(-2 * U)).any()
        assert np.isinf(np.exp(BIG)).any()
    assert np.isnan(numpy32(np.divide, A, B)).any() and np.isinf(numpy32(np.divide, A, B)).any()
    with pytest.raises(OverflowError):
        math.exp(1000.0)  # Python's own math raises: the simulator must not
    with pytest.raises(ValueError):
        math.log(0.0)


@pytest.mark.skipif(not device.gpu_present(), reason="no CUDA GPU here")
@pytest.mark.parametrize("case", list(CASES))
def test_the_gpu_agrees(case):
    kernel, args, want = CASES[case]
    agree(on_gpu(kernel, len(args[0]), *args), want())


# --- the math table itself ---------------------------------------------------------------------------

EDGES = [
    ("exp", (1000.0,), math.inf),
    ("exp", (-math.inf,), 0.0),
    ("exp2", (2000.0,), math.inf),
    ("expm1", (1000.0,), math.inf),
    ("log", (0.0,), -math.inf),
    ("log", (-0.0,), -math.inf),
    ("log", (-1.0,), math.nan),
    ("log", (0.0, 2.0), -math.inf),
    ("log2", (0.0,), -math.inf),
    ("log10", (-2.0,), math.nan),
    ("log1p", (-1.0,), -math.inf),
    ("log1p", (-2.0,), math.nan),
    ("sqrt", (-1.0,), math.nan),
    ("sqrt", (-math.inf,), math.nan),
    ("pow", (0.0, -1.0), math.inf),
    ("pow", (-8.0, 1.0 / 3.0), math.nan),
    ("pow", (10.0, 400.0), math.inf),
    ("pow", (-10.0, 401.0), -math.inf),
    ("sin", (math.inf,), math.nan),
    ("cos", (-math.inf,), math.nan),
    ("tan", (math.inf,), math.nan),
    ("asin", (2.0,), math.nan),
    ("acos", (-2.0,), math.nan),
    ("acosh", (0.5,), math.nan),
    ("atanh", (1.0,), math.inf),
    ("atanh", (-1.0,), -math.inf),
    ("atanh", (2.0,), math.nan),
    ("sinh", (-1000.0,), -math.inf),
    ("cosh", (1000.0,), math.inf),
    ("fmod", (1.0, 0.0), math.nan),
    ("fmod", (math.inf, 1.0), math.nan),
    ("ldexp", (1.0, 5000), math.inf),
    ("gamma", (0.0,), math.inf),
    ("gamma", (-0.0,), -math.inf),
    ("gamma", (-2.0,), math.nan),
    ("gamma", (200.0,), math.inf),
    ("lgamma", (0.0,), math.inf),
    ("lgamma", (-3.0,), math.inf),
    ("lgamma", (1e308,), math.inf),
]


@pytest.mark.parametrize("name, args, want", EDGES, ids=[f"{n}{a}" for n, a, _ in EDGES])
def test_math_edges_are_ieee(name, args, want):
    got = getattr(MATH, name)(*args)
    assert type(got) is float  # a Python float, as Python's own function returns (same typing as before)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == want and math.copysign(1.0, got) == math.copysign(1.0, want)
    # NumPy (IEEE float64) agrees wherever it has the function
    np_name = {"asin": "arcsin", "acos": "arccos", "acosh": "arccosh", "atanh": "arctanh", "pow": "power"}
    f = getattr(np, np_name.get(name, name), None)
    if f is not None and name not in ("log", "ldexp") and isinstance(f, np.ufunc):
        with np.errstate(all="ignore"):
            ref = float(f(*[np.float64(a) for a in args]))
        assert (math.isnan(ref) and math.isnan(got)) or ref == got


def test_ordinary_values_are_pythons_own():
    """Away from the edges the table is Python's math, bit for bit (the engines' values unchanged)."""
    xs = [0.5, 1.0, 2.0, 3.25, 10.0, 88.0]
    for name in ("exp", "log", "sqrt", "sin", "cos", "tan", "log2", "log10", "log1p", "expm1", "cosh"):
        for x in xs:
            assert getattr(MATH, name)(x) == getattr(math, name)(x)
    assert MATH.pow(2.0, 0.5) == math.pow(2.0, 0.5) and MATH.pi == math.pi


# --- what stays a diagnostic -------------------------------------------------------------------------


@cuda.jit
def int_divide(out, a, d):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + 10 // (d - cuda.threadIdx.x)


@cuda.jit
def floor_of_inf(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = math.floor(math.exp(a[i]))


@pytest.mark.parametrize("engine", ENGINES)
def test_integer_division_by_zero_stays_a_diagnostic(engine):
    """Integer division by zero has no defined result on a GPU: the simulator keeps naming it."""
    out, a = np.zeros(8, np.float32), np.ones(8, np.float32)
    with pytest.raises(E.KernelException, match="ZeroDivisionError|division"):
        sim.launch(int_divide, 1, 8, (out, a, 3), engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_integer_from_infinity_stays_a_diagnostic(engine):
    """math.floor returns an integer (as in Numba): of inf it has no value, and the kernel is told."""
    out, a = np.zeros(4, np.float32), np.array([0, 1, 1000, 2], np.float32)
    with pytest.raises(E.KernelException):
        sim.launch(floor_of_inf, 1, 4, (out, a), engine=engine)


# --- stores into integer arrays convert as on a GPU ---------------------------------------------------


@cuda.jit
def int_stores(out, uout, big, f):
    i = cuda.threadIdx.x
    out[i] = big * (i + 1)  # an int64 past int32 (2**31 + 5, ...) stored into int32: its low 32 bits
    out[i + 4] = 4000000000 + i  # a Python int past int32: its low 32 bits
    out[i + 8] = f[i]  # a float: truncated toward zero, saturated at the range, NaN gives 0
    uout[i] = -1 - i  # a negative int into uint32 wraps to 2**32 - 1 - i
    uout[i + 4] = f[i]  # a float into uint32 saturates at 0 and 2**32 - 1


def int_stores_want(big, f):
    lo32 = np.array([big * (i + 1) for i in range(4)] + [4000000000 + i for i in range(4)], np.int64)
    wrapped = ((lo32 + 2**31) % 2**32 - 2**31).astype(np.int32)
    f = f.astype(np.float64)
    with np.errstate(invalid="ignore"):
        sat = np.where(np.isnan(f), 0, np.clip(np.trunc(f), -(2**31), 2**31 - 1)).astype(np.int64)
        usat = np.where(np.isnan(f), 0, np.clip(np.trunc(f), 0, 2**32 - 1)).astype(np.int64)
    return (
        np.concatenate([wrapped, sat.astype(np.int32)]),
        np.concatenate([2**32 - 1 - np.arange(4), usat]).astype(np.uint32),
    )


INT_STORE_ARGS = (2**31 + 5, np.array([3e9, -3e9, np.nan, -2.7], np.float32))


@pytest.mark.parametrize("engine", ENGINES)
def test_stores_into_integer_arrays_wrap_and_saturate_as_on_a_gpu(engine):
    """An int out of an integer array's range keeps its low bits (two's complement), a float is
    truncated and saturates, NaN gives 0: no OverflowError or ValueError from Python."""
    out, uout = np.zeros(12, np.int32), np.zeros(8, np.uint32)
    big, f = INT_STORE_ARGS
    r = sim.launch(int_stores, 1, 4, (out, uout, big, f.copy()), engine=engine)
    if engine != "greenlet":
        assert r.engine == "lockstep" and r.fallback is None, r.fallback
    want, uwant = int_stores_want(big, f)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(uout, uwant)


@pytest.mark.skipif(not device.gpu_present(), reason="no CUDA GPU here")
def test_integer_stores_agree_with_the_gpu():
    out, uout = cuda.to_device(np.zeros(12, np.int32)), cuda.to_device(np.zeros(8, np.uint32))
    big, f = INT_STORE_ARGS
    int_stores[1, 4](out, uout, big, cuda.to_device(f))
    want, uwant = int_stores_want(big, f)
    np.testing.assert_array_equal(out.copy_to_host(), want)
    np.testing.assert_array_equal(uout.copy_to_host(), uwant)
