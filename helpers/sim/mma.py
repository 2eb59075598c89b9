"""What the course's tensor-core intrinsics mean, once for both engines (helpers/tensor_cores.py is
the GPU side): the fragment layout of `mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32` from the
PTX ISA, the warp-wide product, and `dp4a`.

Fragments (per lane; group = lane >> 2, t = lane & 3, the lane's "thread in group"):
  A (16x8, fp16, 4 values): a[i] holds A[group + 8 * (i >> 1), 2 * t + (i & 1)]
  B (8x8,  fp16, 2 values): b[i] holds B[2 * t + i, group]
  C, D (16x8, fp32, 4 values): c[i] holds C[group + 8 * (i >> 1), 2 * t + (i & 1)]

ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 (PTX ISA, "Warp-level matrix load
instruction: ldmatrix"): lane 8 m + r gives the address of row r of matrix m (16 bytes: 8 16-bit
values); lane 4 r + w receives, of each matrix m, one 32-bit register holding that matrix's elements
(r, 2w) in its low half and (r, 2w + 1) in its high half, or with .trans elements (2w, r) and
(2w + 1, r): the layout of an mma fragment, so `ldmatrix_x4` fills an m16n8k16 A fragment at once.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

OP = "mma_m16n8k8"  # the warp operation's name in messages and in the scheduler
SHAPE = {"a": (16, 8), "b": (8, 8), "c": (16, 8)}
SIZE = {"a": 4, "b": 2, "c": 4}  # values per lane
DTYPE = {"a": np.float16, "b": np.float16, "c": np.float32}
WHAT = {"a": "A (16x8, row-major)", "b": "B (8x8, column-major)", "c": "C (16x8 accumulator)"}


def position(frag: str, lane: int, i: int) -> tuple[int, int]:
    """(row, column) of the matrix element that value `i` of `lane`'s fragment `frag` holds."""
    group, t = lane >> 2, lane & 3
    if frag == "b":
        return 2 * t + i, group
    return group + 8 * (i >> 1), 2 * t + (i & 1)


def check_values(values: Sequence[Any], lane: int) -> str | None:
    """Why the 10 values one lane passes (a0-a3, b0-b1, c0-c3) are not fragments, or None."""
    k = 0
    for frag in "abc":
        for i in range(SIZE[frag]):
            v, want = values[k], DTYPE[frag]
            k += 1
            if type(v) is not want:
                got = type(v).__name__
                return (
                    f"value {i} of lane {lane}'s {frag.upper()} fragment is a {got}, not a "
                    f"{np.dtype(want).name}: fragment {frag.upper()} is cuda.local.array({SIZE[frag]}, "
                    f"numba.types.{np.dtype(want).name})"
                )
    return None


def warp_product(per_lane: dict[int, Sequence[Any]]) -> dict[int, tuple]:
    """D = A @ B + C for one warp: gather every lane's fragments into A, B, C, multiply, scatter D.
    fp16 products are exact in fp32 (11 + 11 significant bits), so the sum is formed in float64 and
    rounded once to float32; a tensor core's own summation order may differ in the last bit."""
    a, b, c = (np.zeros(SHAPE[f], np.float64) for f in "abc")
    for lane, vals in per_lane.items():
        for i in range(4):
            a[position("a", lane, i)] = vals[i]
            c[position("c", lane, i)] = vals[6 + i]
        for i in range(2):
            b[position("b", lane, i)] = vals[4 + i]
    d = (a @ b + c).astype(np.float32)
    return {lane: tuple(d[position("c", lane, i)] for i in range(4)) for lane in per_lane}


def missing_lanes(present: Sequence[int], lanes_in_block: int) -> str:
    """The message for an mma that not all 32 lanes of a warp reach."""
    absent = sorted(set(range(32)) - set(present))
    shown = ", ".join(map(str, absent[:8])) + (" ..." if len(absent) > 8 else "")
    where = "(launch a multiple of 32 threads per block)" if lanes_in_block < 32 else "(a partial warp)"
    return (
        f"{OP} is one instruction for a whole warp: all 32 lanes hold a part of A, B and C, but lanes "
        f"{shown} do not exist in this block {where}. "
        "A real GPU hangs or computes garbage. Call it where every lane of the warp reaches it, "
        "outside any `if` on the thread index."
    )


LDMATRIX_ROW_BYTES = 16


def ldmatrix_source(lane: int, m: int, w: int, trans: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (row, column) of matrix `m` in the low and the high half of `lane`'s register `m`."""
    r = lane >> 2
    if trans:
        return (2 * w, r), (2 * w + 1, r)
    return (r, 2 * w), (r, 2 * w + 1)


def ldmatrix_scatter(rows: dict[int, np.ndarray], count: int, trans: bool) -> dict[int, tuple]:
    """Each lane's `count` registers (uint32) from the rows lanes 0 .. 8 count - 1 addressed
    (`rows[8 m + r]`: row r of matrix m as 8 uint16)."""
    out = {}
    for lane in range(32):
        regs = []
        for m in range(count):
            (r0, c0), (r1, c1) = ldmatrix_source(lane, m, lane & 3, trans)
            lo, hi = int(rows[8 * m + r0][c0]), int(rows[8 * m + r1][c1])
            regs.append(np.uint32(lo | hi << 16))
        out[lane] = tuple(regs)
    return out


def dp4a(a: Any, b: Any, c: Any) -> np.int32:
    """`dp4a.s32.s32`: the four signed bytes of `a` times those of `b`, summed into `c` (int32,
    wrapping as the GPU's 32-bit add does)."""
    ab = np.array([a], np.int64).astype(np.uint32).view(np.int8)
    bb = np.array([b], np.int64).astype(np.uint32).view(np.int8)
    s = int(np.dot(ab.astype(np.int64), bb.astype(np.int64))) + int(c)
    return np.uint32(s & 0xFFFFFFFF).view(np.int32)


__all__ = [
    "LDMATRIX_ROW_BYTES",
    "OP",
    "check_values",
    "dp4a",
    "ldmatrix_scatter",
    "ldmatrix_source",
    "missing_lanes",
    "position",
    "warp_product",
]
