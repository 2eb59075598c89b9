"""The `cuda` a lockstep kernel sees, and the shims for what it calls with per-lane values:
`math.*` (each lane through semantics.MATH: the greenlet engine's values exactly), casts
(`numba.float32(x)`, `np.int32(x)`), builtins (`min`, `max`, `abs`, `int`, `float`, `round`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import errors as E
from .. import mma, semantics
from ..semantics import INTRINSICS, MATH, MATH_FUNCTIONS, Dim3
from ..trace import WARP_SIZE
from .stop import Stop
from .values import ACTIVE, Mixed, V, from_lanes, lanes_of, mixed_op, split, tkey, truth, where


class _Idx:
    """threadIdx: x, y, z per lane (uniform where the block is flat in that axis)."""

    __slots__ = ("x", "y", "z")

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z

    def __getitem__(self, k):
        return (self.x, self.y, self.z)[k]


class _NS:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __getattr__(self, name):
        raise Stop.unsupported(f"cuda.{name} in lockstep")


class LCuda:
    warpsize = WARP_SIZE

    def __init__(self, run: Any) -> None:
        self._run = run
        bx, by, bz = run.blockdim
        n = bx * by * bz
        t = np.arange(n, dtype=np.int64)
        tx = V(t % bx, True)
        ty = V((t // bx) % by, True) if by > 1 else 0
        tz = V(t // (bx * by), True) if bz > 1 else 0
        self.threadIdx = _Idx(tx, ty, tz)
        self.laneid = V(t % WARP_SIZE, True) if n > 1 else 0
        self.blockDim = run.blockdim
        self.gridDim = run.griddim
        self.blockIdx = Dim3(0)
        self.atomic = _NS()
        self.shared = _NS()
        self.local = _NS()
        self.const = _NS()
        self.cg = _NS()

    grid = semantics.grid
    gridsize = semantics.gridsize

    def syncthreads(self):
        self._run.barrier("syncthreads", None)

    def syncthreads_count(self, pred):
        return self._run.barrier("syncthreads_count", pred)

    def syncthreads_and(self, pred):
        return self._run.barrier("syncthreads_and", pred)

    def syncthreads_or(self, pred):
        return self._run.barrier("syncthreads_or", pred)

    def threadfence(self):
        pass

    def syncwarp(self, mask=0xFFFFFFFF):
        if self._run.ctl.live:
            self._run.warps.syncwarp(mask)

    def shfl_sync(self, mask, value, src_lane):
        return self._run.warps.shuffle("shfl_sync", mask, value, src_lane)

    def shfl_up_sync(self, mask, value, delta):
        return self._run.warps.shuffle("shfl_up_sync", mask, value, delta)

    def shfl_down_sync(self, mask, value, delta):
        return self._run.warps.shuffle("shfl_down_sync", mask, value, delta)

    def shfl_xor_sync(self, mask, value, lane_mask):
        return self._run.warps.shuffle("shfl_xor_sync", mask, value, lane_mask)

    def all_sync(self, mask, pred):
        return self._run.warps.vote("all_sync", mask, pred)

    def any_sync(self, mask, pred):
        return self._run.warps.vote("any_sync", mask, pred)

    def eq_sync(self, mask, value):
        return self._run.warps.vote("eq_sync", mask, value)

    def ballot_sync(self, mask, pred):
        return self._run.warps.vote("ballot_sync", mask, pred)

    def match_any_sync(self, mask, value):
        return self._run.warps.match("match_any_sync", mask, value)

    def match_all_sync(self, mask, value):
        return self._run.warps.match("match_all_sync", mask, value)

    def activemask(self):
        return self._run.warps.activemask()

    def nanosleep(self, ns):
        self._run.warp_step(count=False)

    def lanemask_lt(self):
        return V((np.int64(1) << self._run.warps.lane) - 1, True)

    threadfence_block = threadfence_system = threadfence

    def course_fragments(self, a, b, c):
        raise Stop.unsupported(
            "the course's mma_m16n8k8 (one matrix product by the whole warp: its lanes' fragments "
            "gathered, multiplied and scattered) runs on the reference engine only"
        )

    course_fragments._lockstep = True  # called as it is, so that its reason is the one given
    course_mma = course_mma_packed = course_mma_k16_packed = course_fragments

    def course_ldmatrix(self, *args):
        raise Stop.unsupported(
            "the course's ldmatrix and cp.async (warp-wide loads of matrix rows, asynchronous copies) "
            "run on the reference engine only"
        )

    course_ldmatrix._lockstep = True
    course_ldmatrix_x1 = course_ldmatrix_x2 = course_ldmatrix_x4 = course_ldmatrix
    course_ldmatrix_x2_trans = course_ldmatrix_x4_trans = course_ldmatrix
    course_cp_async_16 = course_cp_async_commit = course_cp_async_wait = course_ldmatrix

    def __getattr__(self, name):
        if name == "course_dp4a":
            f = _lanewise(mma.dp4a, "dp4a")
            setattr(self, name, f)
            return f
        if name in INTRINSICS:
            f = _lanewise(INTRINSICS[name], f"cuda.{name}")
            setattr(self, name, f)
            return f
        import numba.cuda as real

        v = getattr(real, name, None)
        if v is not None and type(v).__module__.startswith("numba.core.types"):
            return cast(v)
        raise Stop.unsupported(f"cuda.{name} in lockstep")


# --- per-lane calls
def _lanewise(f, what: str):
    def g(*args):
        if not any(type(a) in (V, Mixed) for a in args):
            return f(*args)
        m = ACTIVE[0]
        n = len(m)
        cols = [
            [v for v, on in zip(lanes_of(a, n), m) if on] if type(a) in (V, Mixed) else None for a in args
        ]
        k = int(np.count_nonzero(m))
        per = [c if c is not None else [a] * k for c, a in zip(cols, args)]
        try:
            vals = [f(*xs) for xs in zip(*per)]
        except (ValueError, OverflowError, ZeroDivisionError, TypeError) as e:
            raise Stop.diagnostic(
                E.KernelException, f"{what} raised {type(e).__name__} in a thread"
            ) from None
        return from_lanes(vals, m, n, what)

    g.__name__ = getattr(f, "__name__", what)
    g._lockstep = True  # _R.call runs it as it is (it takes lane values)
    return g


class MathShim:
    """`math` inside a lockstep kernel: semantics.MATH (the greenlet engine's) lane by lane."""

    def __init__(self) -> None:
        for name in dir(MATH):
            if not name.startswith("_"):
                v = getattr(MATH, name)
                setattr(self, name, _lanewise(v, f"math.{name}") if callable(v) else v)


LMATH = MathShim()
# id(semantics.MATH's function) -> its lane-wise shim, for `from math import exp`
LMATH_FUNCTIONS = {id(f): getattr(LMATH, f.__name__) for f in MATH_FUNCTIONS.values()}


class Cast:
    """numba.float32 / np.float32 ... inside a lockstep kernel: a cast of lane values (NumPy's
    conversion, per lane); still usable as the dtype of an array declaration."""

    def __init__(self, t: Any) -> None:
        try:
            self.dt = np.dtype(t)
        except TypeError:
            from numba.np.numpy_support import as_dtype

            self.dt = as_dtype(t)
        self.orig = t

    def __call__(self, x: Any = 0) -> Any:
        if type(x) is Mixed:
            return mixed_op(lambda a, _: self(a), x, 0)
        if type(x) is V:
            a, w, d = split(x)
            if self.dt.kind in "iu" and d.kind == "f":
                if not np.isfinite(a[ACTIVE[0]]).all():
                    raise Stop.diagnostic(E.KernelException, "an integer cast of NaN or infinity")
            return V(a.astype(self.dt), False)
        return self.orig(x)


def cast(t: Any) -> Cast:
    return Cast(t)


class NumbaProxy:
    def __init__(self, real, cuda) -> None:
        self._real, self.cuda = real, cuda

    def __getattr__(self, name):
        v = getattr(self._real, name)
        if type(v).__module__.startswith("numba.core.types"):
            try:
                return cast(v)
            except Exception:  # noqa: BLE001 - a type that is not a number
                return v
        return v


class NumpyProxy:
    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name):
        v = getattr(self._real, name)
        if isinstance(v, type) and issubclass(v, np.generic):
            return cast(v)
        if isinstance(v, np.ufunc):
            return _ufunc(v)
        return v


def _ufunc(u):
    """np.sqrt, np.exp ... of lane values."""

    def f(*args):
        if not any(type(a) in (V, Mixed) for a in args):
            return u(*args)
        # lane by lane on the scalars the greenlet engine holds: NumPy's array loops may differ from
        # its scalar ones in the last bit (SIMD), as `**` does
        return _lanewise(u, f"numpy.{u.__name__}")(*args)

    return f


def _minmax(is_min: bool):
    real = min if is_min else max

    def f(*args, **kw):
        if kw or len(args) < 2 or not any(type(a) in (V, Mixed) for a in args):
            return real(*args, **kw)
        acc = args[0]
        for b in args[1:]:
            # Python keeps the first unless the next is strictly smaller (larger)
            c = (b < acc) if is_min else (b > acc)
            t = truth(c)
            if type(t) is not np.ndarray:
                acc = b if t else acc
                continue
            m = ACTIVE[0]
            if tkey(b) != tkey(acc):
                if not (t & m).any():
                    continue
                if (t | ~m).all():
                    acc = b
                    continue
            acc = where(t, b, acc, len(m), "min/max")
        return acc

    return f


def _int(x=0, *rest):
    if type(x) is Mixed:
        return mixed_op(lambda a, _: _int(a), x, 0)
    if type(x) is not V or rest:
        return int(x, *rest)
    a, w, d = split(x)
    m = ACTIVE[0]
    if d.kind == "f":
        if not np.isfinite(a[m]).all():
            raise Stop.diagnostic(E.KernelException, "int() of NaN or infinity")
        return V(np.trunc(a).astype(np.int64), True)
    return V(a.astype(np.int64), True)


def _float(x=0.0):
    if type(x) is Mixed:
        return mixed_op(lambda a, _: _float(a), x, 0)
    if type(x) is not V:
        return float(x)
    a, w, d = split(x)
    return V(a.astype(np.float64), True)


def _abs(x):
    return abs(x)


def _bool(x=False):
    if type(x) is not V:
        return bool(x)
    return V(truth(x), True)


def _len(x):
    return len(x)


BUILTINS = {
    min: _minmax(True),
    max: _minmax(False),
    int: _int,
    float: _float,
    abs: _abs,
    bool: _bool,
    len: _len,
}
