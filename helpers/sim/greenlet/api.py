"""The `cuda` a kernel sees inside the simulator: Numba's kernel API, one object per launch.

Thread and block indices are plain attributes that the scheduler sets before it
resumes a thread, so reading them costs no more than any attribute.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import mma, semantics
from ..errors import KernelException, LaunchError, Unsupported
from ..messages import learner_frame
from ..semantics import ALIASES, ATOMICS, INTRINSICS
from ..trace import WARP_SIZE


class _Namespace:
    def __init__(self, **fns):
        self.__dict__.update(fns)

    def __getattr__(self, name):
        raise Unsupported(f"`{name}` is not supported by the simulator (see helpers/README.md for what is)")


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

        def atomic(op_name):
            fn = ATOMICS[op_name]

            def f(ary, idx, val):
                return _array_of(ary, op_name).atomic(idx, lambda old: fn(old, val), 2)

            f.__name__ = op_name
            return f

        cas_ = ATOMICS["cas"]

        def cas(ary, idx, old, val):
            return _array_of(ary, "cas").atomic(idx, lambda cur: cas_(cur, old, val), 2)

        def compare_and_swap(ary, old, val):
            return _array_of(ary, "compare_and_swap").atomic(0, lambda cur: cas_(cur, old, val), 2)

        self.atomic = _Namespace(
            **{op: atomic(op) for op in ATOMICS if op != "cas"}, cas=cas, compare_and_swap=compare_and_swap
        )
        # alignment: accepted as numba-cuda does; NumPy storage is aligned enough for every dtype
        self.shared = _Namespace(
            array=lambda shape, dtype, alignment=None: r.shared_array(shape, dtype, sys._getframe(1))
        )
        self.local = _Namespace(
            array=lambda shape, dtype, alignment=None: r.local_array(shape, dtype, sys._getframe(1))
        )
        self.const = _Namespace(array_like=lambda ary: r.const_array(ary, sys._getframe(1)))
        from .grid import GridGroup

        group = GridGroup(r)
        self.cg = _Namespace(this_grid=lambda: group)

    # --- indexing helpers
    grid = semantics.grid
    gridsize = semantics.gridsize

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
        run = self._run
        run.steps += 1  # one step, as a memory access counts (and `step` looks when one is due)
        if run.steps > run.max_steps:
            run.step()

    # --- the course's tensor-core intrinsics (helpers/tensor_cores.py; what they mean: ../mma.py)
    def course_fragments(self, a, b, c):
        for name, frag in (("a", a), ("b", b), ("c", c)):
            if getattr(frag, "shape", None) != (mma.SIZE[name],) or frag.dtype != mma.DTYPE[name]:
                got = f"{getattr(frag, 'dtype', type(frag).__name__)} {getattr(frag, 'shape', '')}"
                raise self._run.error(
                    KernelException,
                    f"{mma.OP}: fragment {mma.WHAT[name]} must be "
                    f"cuda.local.array({mma.SIZE[name]}, numba.types.{np.dtype(mma.DTYPE[name]).name}) "
                    f"in every lane, got {got}: the tensor core reads that many registers of that type.",
                    frame=learner_frame(),
                )

    def course_mma(self, *values):
        why = mma.check_values(values, self.laneid)
        if why:
            raise self._run.error(KernelException, f"{mma.OP}: {why}", frame=learner_frame())
        return self._run.warp_op(mma.OP, 0xFFFFFFFF, values, None, learner_frame())

    def course_mma_packed(self, a01, a23, b01, c0, c1, c2, c3):
        words = np.array([a01, a23, b01], np.int64).astype(np.uint32)
        if any(type(v) is not np.float32 for v in (c0, c1, c2, c3)):
            raise self._run.error(
                KernelException, f"{mma.OP}_packed: the accumulators must be float32", frame=learner_frame()
            )
        halves = words.view(np.float16)  # little-endian: the low half first
        return self.course_mma(*halves[:6], c0, c1, c2, c3)

    def course_mma_k16_packed(self, a0, a1, a2, a3, b0, b1, c0, c1, c2, c3):
        d = self.course_mma_packed(a0, a1, b0, c0, c1, c2, c3)  # k 0-7
        return self.course_mma_packed(a2, a3, b1, *d)  # k 8-15 (one more fp32 rounding than the GPU)

    course_dp4a = staticmethod(mma.dp4a)

    def _row16(self, what, ary, offset, space="shared"):
        """The 16 bytes at element `offset` of `ary` (read through the array: race and unwritten-value
        checks apply) as 8 uint16, after checking the space and the 16-byte alignment."""
        self._check16(what, ary, offset, space)
        n = mma.LDMATRIX_ROW_BYTES // ary.dtype.itemsize
        vals = [ary[_at(ary, int(offset) + i)] for i in range(n)]
        return np.array(vals, ary.dtype).view(np.uint16)

    def _check16(self, what, ary, offset, space):
        from .memory import SimArray

        st = getattr(ary, "st", None)
        if type(ary) is not SimArray or (space == "shared") != (st.space == "shared"):
            raise self._run.error(
                KernelException,
                f"{what}: lane {self.laneid} passes {ary!r}, but this operand must be "
                + ("a cuda.shared.array" if space == "shared" else "a global (device) array"),
                frame=learner_frame(),
            )
        size = ary.dtype.itemsize
        if (int(offset) * size) % mma.LDMATRIX_ROW_BYTES:
            raise self._run.error(
                KernelException,
                f"{what}: lane {self.laneid}'s element offset {int(offset)} into `{st.name}` is byte "
                f"{int(offset) * size}, not a multiple of 16: the instruction moves aligned 16-byte rows "
                "(a GPU faults with a misaligned address). Start each row on a multiple of "
                f"{16 // size} elements.",
                frame=learner_frame(),
            )

    def _ldmatrix(self, count, trans, ary, offset):
        name = f"ldmatrix_x{count}{'_trans' if trans else ''}"
        row = self._row16(name, ary, offset) if self.laneid < 8 * count else None
        return self._run.warp_op(name, 0xFFFFFFFF, row, None, learner_frame())

    def course_ldmatrix_x1(self, ary, offset):
        return self._ldmatrix(1, False, ary, offset)

    def course_ldmatrix_x2(self, ary, offset):
        return self._ldmatrix(2, False, ary, offset)

    def course_ldmatrix_x4(self, ary, offset):
        return self._ldmatrix(4, False, ary, offset)

    def course_ldmatrix_x2_trans(self, ary, offset):
        return self._ldmatrix(2, True, ary, offset)

    def course_ldmatrix_x4_trans(self, ary, offset):
        return self._ldmatrix(4, True, ary, offset)

    def course_cp_async_16(self, dst, dst_offset, src, src_offset):
        """A plain synchronous copy here (the GPU's finishes by cp_async_wait: stronger, not weaker)."""
        row = self._row16("cp_async_16 (source)", src, src_offset, space="global")
        self._check16("cp_async_16 (destination)", dst, dst_offset, "shared")
        for i, v in enumerate(row.view(dst.dtype)):
            dst[_at(dst, int(dst_offset) + i)] = v

    def course_cp_async_commit(self):
        pass

    def course_cp_async_wait(self, n):
        pass

    # --- arithmetic intrinsics (cuda.fma, popc, ...)
    fma = staticmethod(INTRINSICS["fma"])
    popc = staticmethod(INTRINSICS["popc"])
    brev = staticmethod(INTRINSICS["brev"])
    clz = staticmethod(INTRINSICS["clz"])
    ffs = staticmethod(INTRINSICS["ffs"])
    selp = staticmethod(INTRINSICS["selp"])
    cbrt = staticmethod(INTRINSICS["cbrt"])

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


def _at(ary, flat: int):
    """The index of element `flat` of a C-contiguous array, as its own indexing takes it."""
    return tuple(int(i) for i in np.unravel_index(flat, ary.shape)) if ary.ndim > 1 else flat


def _array_of(ary, op):
    from .memory import SimArray

    if type(ary) is not SimArray:
        raise Unsupported(
            f"cuda.atomic.{op} needs a device array as its first argument, got {type(ary).__name__}"
        )
    return ary


__all__ = ["ALIASES", "SimCuda"]
