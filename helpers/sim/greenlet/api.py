"""The `cuda` a kernel sees inside the simulator: Numba's kernel API, one object per launch.

Thread and block indices are plain attributes that the scheduler sets before it
resumes a thread, so reading them costs no more than any attribute.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..errors import LaunchError, Unsupported
from ..trace import WARP_SIZE


class _Namespace:
    def __init__(self, **fns):
        self.__dict__.update(fns)

    def __getattr__(self, name):
        raise Unsupported(f"`{name}` is not supported by the simulator (see helpers/README.md for what is)")


def _bits32(x):
    return int(x) & 0xFFFFFFFF


class SimCuda:
    """One per launch; see helpers/README.md for the supported API."""

    warpsize = WARP_SIZE

    def __init__(self, run):
        self._run = run
        self.blockDim = run.blockdim
        self.gridDim = run.griddim
        self.threadIdx = self.blockIdx = None
        self.laneid = 0
        r = run

        def atomic(op_name, fn):
            def f(ary, idx, val):
                return _array_of(ary, op_name).atomic(idx, lambda old: fn(old, val), 2)

            f.__name__ = op_name
            return f

        def cas(ary, idx, old, val):
            return _array_of(ary, "cas").atomic(idx, lambda cur: val if cur == old else cur, 2)

        def compare_and_swap(ary, old, val):
            return _array_of(ary, "compare_and_swap").atomic(0, lambda cur: val if cur == old else cur, 2)

        def inc(ary, idx, val):
            return _array_of(ary, "inc").atomic(idx, lambda old: 0 if old >= val else old + 1, 2)

        def dec(ary, idx, val):
            return _array_of(ary, "dec").atomic(
                idx, lambda old: val if (old == 0 or old > val) else old - 1, 2
            )

        self.atomic = _Namespace(
            add=atomic("add", lambda a, b: a + b),
            sub=atomic("sub", lambda a, b: a - b),
            max=atomic("max", max),
            min=atomic("min", min),
            nanmax=atomic("nanmax", lambda a, b: np.fmax(a, b)),
            nanmin=atomic("nanmin", lambda a, b: np.fmin(a, b)),
            exch=atomic("exch", lambda a, b: b),
            and_=atomic("and_", lambda a, b: a & b),
            or_=atomic("or_", lambda a, b: a | b),
            xor=atomic("xor", lambda a, b: a ^ b),
            cas=cas,
            compare_and_swap=compare_and_swap,
            inc=inc,
            dec=dec,
        )
        # alignment: accepted as numba-cuda does; NumPy storage is aligned enough for every dtype
        self.shared = _Namespace(
            array=lambda shape, dtype, alignment=None: r.shared_array(shape, dtype, sys._getframe(1))
        )
        self.local = _Namespace(
            array=lambda shape, dtype, alignment=None: r.local_array(shape, dtype, sys._getframe(1))
        )
        self.const = _Namespace(array_like=lambda ary: r.const_array(ary, sys._getframe(1)))
        from ..grid import GridGroup

        group = GridGroup(r)
        self.cg = _Namespace(this_grid=lambda: group)

    # --- indexing helpers
    def grid(self, ndim):
        t, b, d = self.threadIdx, self.blockIdx, self.blockDim
        x = b[0] * d[0] + t[0]
        if ndim == 1:
            return x
        y = b[1] * d[1] + t[1]
        if ndim == 2:
            return x, y
        return x, y, b[2] * d[2] + t[2]

    def gridsize(self, ndim):
        g, d = self.gridDim, self.blockDim
        if ndim == 1:
            return g[0] * d[0]
        if ndim == 2:
            return g[0] * d[0], g[1] * d[1]
        return g[0] * d[0], g[1] * d[1], g[2] * d[2]

    # --- barriers and warp operations
    def syncthreads(self):
        self._run.barrier("syncthreads", None, sys._getframe(1))

    def syncthreads_count(self, pred):
        return self._run.barrier("syncthreads_count", bool(pred), sys._getframe(1))

    def syncthreads_and(self, pred):
        return self._run.barrier("syncthreads_and", bool(pred), sys._getframe(1))

    def syncthreads_or(self, pred):
        return self._run.barrier("syncthreads_or", bool(pred), sys._getframe(1))

    def syncwarp(self, mask=0xFFFFFFFF):
        self._run.warp_op("syncwarp", mask, None, None, sys._getframe(1))

    def shfl_sync(self, mask, value, src_lane):
        return self._run.warp_op("shfl_sync", mask, value, src_lane, sys._getframe(1))

    def shfl_up_sync(self, mask, value, delta):
        return self._run.warp_op("shfl_up_sync", mask, value, delta, sys._getframe(1))

    def shfl_down_sync(self, mask, value, delta):
        return self._run.warp_op("shfl_down_sync", mask, value, delta, sys._getframe(1))

    def shfl_xor_sync(self, mask, value, lane_mask):
        return self._run.warp_op("shfl_xor_sync", mask, value, lane_mask, sys._getframe(1))

    def all_sync(self, mask, pred):
        return self._run.warp_op("all_sync", mask, bool(pred), None, sys._getframe(1))

    def any_sync(self, mask, pred):
        return self._run.warp_op("any_sync", mask, bool(pred), None, sys._getframe(1))

    def eq_sync(self, mask, value):
        return self._run.warp_op("eq_sync", mask, value, None, sys._getframe(1))

    def match_any_sync(self, mask, value):
        return self._run.warp_op("match_any_sync", mask, value, None, sys._getframe(1))

    def match_all_sync(self, mask, value):
        return self._run.warp_op("match_all_sync", mask, value, None, sys._getframe(1))

    def ballot_sync(self, mask, pred):
        return self._run.warp_op("ballot_sync", mask, bool(pred), None, sys._getframe(1))

    def activemask(self):
        return self._run.activemask(sys._getframe(1))

    def lanemask_lt(self):
        return (1 << self.laneid) - 1

    def threadfence(self):
        pass  # blocks run one after another here, so memory is always visible

    threadfence_block = threadfence_system = threadfence

    def nanosleep(self, ns):
        self._run.step()

    # --- arithmetic intrinsics
    @staticmethod
    def fma(a, b, c):
        return a * b + c

    @staticmethod
    def popc(x):
        # the width is the value's type's, as on a GPU: popc(int32(-1)) is 32; a Python int is an int64
        bits = 8 * getattr(getattr(x, "dtype", None), "itemsize", 8)
        return (int(x) & ((1 << bits) - 1)).bit_count()

    @staticmethod
    def brev(x):
        return int(f"{_bits32(x):032b}"[::-1], 2)

    @staticmethod
    def clz(x):
        return 32 - _bits32(x).bit_length()

    @staticmethod
    def ffs(x):
        x = _bits32(x)
        return (x & -x).bit_length()

    @staticmethod
    def selp(cond, a, b):
        return a if cond else b

    @staticmethod
    def cbrt(x):
        return math.copysign(abs(x) ** (1.0 / 3.0), x)

    def __getattr__(self, name):
        import numba.cuda as real

        v = getattr(real, name, None)
        if v is not None and type(v).__module__.startswith("numba.core.types"):
            return v  # numba types such as cuda.float32 pass through
        if name in ("to_device", "device_array", "device_array_like", "synchronize"):
            raise LaunchError(f"cuda.{name} is a host function: call it outside the kernel")
        raise Unsupported(
            f"cuda.{name} is not supported by the simulator (see the table in "
            "helpers/README.md); on a real GPU it may work"
        )


def _array_of(ary, op):
    from .memory import SimArray

    if type(ary) is not SimArray:
        raise Unsupported(
            f"cuda.atomic.{op} needs a device array as its first argument, got {type(ary).__name__}"
        )
    return ary


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
