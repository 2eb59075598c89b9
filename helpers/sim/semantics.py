"""What a kernel's operations mean, defined once for both engines (helpers/sim/greenlet/ and
helpers/sim/lockstep/ import this; neither restates it):

- `Dim3`, `grid`, `gridsize`: launch dimensions and the global thread index;
- `ATOMICS`: what each `cuda.atomic.*` does to the old value;
- `Actor`, `unordered`, `conflict`: the race rule (which two accesses no barrier orders);
- `SPIN_CHECK`, `greenlet_steps`: how steps are counted (the runaway limit);
- `INTRINSICS` and `MATH`: `cuda.fma/popc/...` and `math.*` with IEEE float semantics, as on a GPU:
  an overflow gives inf, a pole -inf or inf, a domain error NaN, never a Python exception;
- `gpu_int`: a value stored into an integer array converted as a GPU store converts it.
"""

from __future__ import annotations

import math
from operator import itemgetter
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from . import errors as E
from .trace import ATOMIC, READ


# --- launch dimensions
class Dim3(tuple):
    """(x, y, z) that also answers .x, .y, .z, like Numba's."""

    __slots__ = ()
    x = property(itemgetter(0))  # C-level getters: kernels read threadIdx.x on every line
    y = property(itemgetter(1))
    z = property(itemgetter(2))

    def __new__(cls, v):
        if isinstance(v, (int, np.integer)):
            v = (int(v),)
        v = tuple(int(a) for a in v)
        if not 1 <= len(v) <= 3:
            raise E.LaunchError(f"launch dimensions must have 1 to 3 entries, got {v}")
        return super().__new__(cls, v + (1,) * (3 - len(v)))


def grid(api: Any, ndim: int):
    """`cuda.grid(ndim)` (a method of either engine's `cuda`: reads its threadIdx, blockIdx, blockDim)."""
    t, b, d = api.threadIdx, api.blockIdx, api.blockDim
    x = b[0] * d[0] + t[0]
    if ndim == 1:
        return x
    y = b[1] * d[1] + t[1]
    if ndim == 2:
        return x, y
    return x, y, b[2] * d[2] + t[2]


def gridsize(api: Any, ndim: int):
    """`cuda.gridsize(ndim)`: threads of the grid along each axis."""
    g, d = api.gridDim, api.blockDim
    if ndim == 1:
        return g[0] * d[0]
    if ndim == 2:
        return g[0] * d[0], g[1] * d[1]
    return g[0] * d[0], g[1] * d[1], g[2] * d[2]


# --- atomics: the new value from the old one (cas: from the current one, the expected and the new)
ATOMICS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "max": max,
    "min": min,
    "nanmax": lambda a, b: np.fmax(a, b),
    "nanmin": lambda a, b: np.fmin(a, b),
    "exch": lambda a, b: b,
    "and_": lambda a, b: a & b,
    "or_": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "inc": lambda old, val: 0 if old >= val else old + 1,
    "dec": lambda old, val: val if (old == 0 or old > val) else old - 1,
    "cas": lambda cur, old, val: val if cur == old else cur,
}
# on integers these give one result in any order (when the old values are not used)
COMMUTING = frozenset({"add", "sub", "and_", "or_", "xor", "max", "min"})


# --- stores into integer arrays: a GPU converts, where Python and NumPy raise OverflowError/ValueError
def gpu_int(value: Any, dt: np.dtype) -> Any:
    """`value` (a number or an array) as integer dtype `dt`, as a GPU store converts it: an integer
    keeps its low bits (two's complement wrap: int32(2**31) is -2**31), a float is truncated toward
    zero and saturates at the type's range, NaN gives 0 (PTX cvt.rzi)."""
    dt = np.dtype(dt)
    a = np.asarray(value)
    if a.dtype.kind == "f":
        info = np.iinfo(dt)
        hi, lo = a >= float(info.max), a <= float(info.min)
        with np.errstate(invalid="ignore"):
            out = np.where(hi | lo | np.isnan(a), 0, a).astype(dt)
        out[hi], out[lo] = info.max, info.min
    elif a.dtype.kind == "O":  # a Python int past 64 bits
        bits = 8 * dt.itemsize
        low = int(value) & ((1 << bits) - 1)
        out = np.array(low - (1 << bits) if dt.kind == "i" and low >> (bits - 1) else low, dt)
    else:
        out = a.astype(dt)  # integers (and bools) keep their low bits
    return out if out.ndim else out[()]


# --- narrow integers read from arrays: Numba does integer arithmetic at 64 bits (int8 + int8 and
# `x & 0xFF` on an int8 are int64s), where NumPy 2 keeps a scalar's width (wraps, or raises
# OverflowError for 0xFF against an int8). Read as a Python int, an int8/int16/uint8 element takes
# 64-bit integer arithmetic and still gives a float32 (float16) with one, as Numba's int8 * float32
# does. uint16/uint32 keep NumPy's own scalars: as int64 they would make a mix with a uint64 (the
# course's 32/64-bit index kernels) a float64, where Numba gives a uint64.
NUMBA_INT = {
    np.dtype(np.int8): int,
    np.dtype(np.int16): int,
    np.dtype(np.uint8): int,
}


# --- float16 stores: a finite value past the format's largest (65504) becomes inf, silently on a GPU
HALF_MAX = 65504.0


def half_overflow(value: Any) -> bool:
    """Does storing `value` (a number or the lanes' array) into a float16 array turn a finite value
    into inf? (fp16 rounds to nearest even: 65519.99 still rounds down to 65504.)"""
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.asarray(value, np.float64)
        return bool((np.isfinite(v) & np.isinf(v.astype(np.float16))).any())


def half_overflow_text(value: Any, name: str, index: str) -> str:
    return (
        f"float16 overflow: storing {float(value):.7g} into float16 array `{name}`[{index}] gives inf, since "
        f"fp16's largest finite value is {HALF_MAX:.0f}. A GPU does this silently. Keep the value in "
        "float32 (accumulate in float32), or scale it into fp16's range before the store (as mixed-"
        "precision training scales its loss)."
    )


# --- races
class Actor(NamedTuple):
    """Who made an access, and where it stands among the barriers: `epoch` counts the block's
    barriers the thread has passed, `warp_epoch` its warp's syncwarps. The greenlet engine keeps
    its actors as plain tuples in this field order (its hot path indexes them, and Python indexes
    an exact tuple faster than a subclass); `unordered` takes either."""

    block: int
    epoch: int
    warp: int
    warp_epoch: int
    thread: int


def unordered(s: Actor, c: Actor, cross_block: bool) -> bool:
    """True when no barrier orders an access by `s` and one by `c`: two threads of one block in
    the same barrier interval (unless one warp's syncwarp separates them), or two blocks when
    cross-block races are checked (blocks run in any order). The greenlet engine's hot path inlines
    this (tests/test_sim_semantics.py holds the inline copies equal to it)."""
    if s[0] != c[0]:
        return cross_block
    if s[4] == c[4] or s[1] != c[1]:
        return False
    return not (s[2] == c[2] and s[3] != c[3])  # same warp, separated by syncwarp


def conflict(kind_a: int, kind_b: int) -> bool:
    """Two unordered accesses to one element race unless both read or both are atomic."""
    return not ((kind_a == READ and kind_b == READ) or (kind_a == ATOMIC and kind_b == ATOMIC))


# --- steps: one per memory access, barrier and warp operation of each thread (the runaway limit);
# the greenlet engine also counts one per look for a spin-wait, every SPIN_CHECK steps
SPIN_CHECK = 20_000


def greenlet_steps(steps: int, max_steps: int) -> int:
    """`steps` counted without the looks, as the greenlet engine counts them (with the looks)."""
    s, mx, left = 0, min(max_steps, SPIN_CHECK), steps
    while left > mx - s:
        left -= mx + 1 - s
        s = mx + 2
        mx = min(max_steps, s + SPIN_CHECK)
    return s + left


# names of real numba.cuda functions a kernel may have imported directly
ALIASES = (
    "syncthreads",
    "syncthreads_count",
    "syncthreads_and",
    "syncthreads_or",
    "syncwarp",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "all_sync",
    "any_sync",
    "eq_sync",
    "ballot_sync",
    "match_any_sync",
    "match_all_sync",
    "activemask",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "grid",
    "gridsize",
    "fma",
    "popc",
    "brev",
    "clz",
    "ffs",
    "selp",
    "cbrt",
    "atomic",
    "shared",
    "local",
    "const",
    "lanemask_lt",
    "nanosleep",
)


# --- cuda.* intrinsics
def _bits32(x):
    return int(x) & 0xFFFFFFFF


def _popc(x):
    # the width is the value's type's, as on a GPU: popc(int32(-1)) is 32; a Python int is an int64
    bits = 8 * getattr(getattr(x, "dtype", None), "itemsize", 8)
    return (int(x) & ((1 << bits) - 1)).bit_count()


def _ffs(x):
    x = _bits32(x)
    return (x & -x).bit_length()


INTRINSICS = {
    "fma": lambda a, b, c: a * b + c,
    "popc": _popc,
    "brev": lambda x: int(f"{_bits32(x):032b}"[::-1], 2),
    "clz": lambda x: 32 - _bits32(x).bit_length(),
    "ffs": _ffs,
    "selp": lambda cond, a, b: a if cond else b,
    "cbrt": lambda x: math.copysign(abs(x) ** (1.0 / 3.0), x),
}


# --- math.*: Python's functions, and where Python raises (overflow, a pole, a domain error) the
# IEEE value a GPU returns, computed by NumPy in float64 (returned as a Python float, as before)
def _f64(*args):
    return tuple(np.float64(a) for a in args)


def _gamma(x):
    x = float(x)
    if x == 0.0:
        return math.copysign(math.inf, x)  # tgamma(+-0) = +-inf
    if x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan  # the poles at negative integers
    return math.inf  # overflow


_IEEE = {
    "exp": lambda x: np.exp(*_f64(x)),
    "exp2": lambda x: np.exp2(*_f64(x)),
    "expm1": lambda x: np.expm1(*_f64(x)),
    "log": lambda x, base=None: np.log(*_f64(x)) if base is None else np.log(*_f64(x)) / np.log(*_f64(base)),
    "log2": lambda x: np.log2(*_f64(x)),
    "log10": lambda x: np.log10(*_f64(x)),
    "log1p": lambda x: np.log1p(*_f64(x)),
    "sqrt": lambda x: np.sqrt(*_f64(x)),
    "pow": lambda x, y: np.power(*_f64(x, y)),
    "sin": lambda x: np.sin(*_f64(x)),
    "cos": lambda x: np.cos(*_f64(x)),
    "tan": lambda x: np.tan(*_f64(x)),
    "asin": lambda x: np.arcsin(*_f64(x)),
    "acos": lambda x: np.arccos(*_f64(x)),
    "acosh": lambda x: np.arccosh(*_f64(x)),
    "atanh": lambda x: np.arctanh(*_f64(x)),
    "sinh": lambda x: np.sinh(*_f64(x)),
    "cosh": lambda x: np.cosh(*_f64(x)),
    "fmod": lambda x, y: np.fmod(*_f64(x, y)),
    "ldexp": lambda x, i: np.ldexp(np.float64(x), int(i)),
    "gamma": _gamma,
    "lgamma": lambda x: math.inf,  # at its poles (0, negative integers) and on overflow
}


def _ieee(name: str):
    py, fallback = getattr(math, name), _IEEE[name]

    def f(*args):
        try:
            return py(*args)
        except (OverflowError, ValueError):
            with np.errstate(all="ignore"):
                return float(fallback(*args))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"math.{name} with IEEE results where Python raises"
    return f


# `math` inside a kernel, in both engines (integer conversions such as math.floor of inf keep
# Python's error: converting inf or NaN to an integer has no defined value on a GPU either)
MATH = ModuleType("math", "math.* inside a simulated kernel: IEEE results where Python raises")
for _n in dir(math):
    if not _n.startswith("_"):
        setattr(MATH, _n, _ieee(_n) if _n in _IEEE else getattr(math, _n))
# id(real math function) -> its kernel version, for `from math import exp`
MATH_FUNCTIONS = {id(getattr(math, n)): getattr(MATH, n) for n in _IEEE}
