"""SpMV in CSR form: rows packed behind a row-pointer array.

Rungs:
    ch14_spmv_csr           a thread per row (simple, but neighbouring threads read far-apart entries)
    ch14_spmv_csr_vector    a warp per row: lanes read consecutive entries, a shuffle tree adds them
GPU only (the benchmark): spmv_csr_lanes, LANES lanes per row so that short rows keep lanes busy.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from helpers.rules import lanes_interleaved

from .common import _TOL, CHAPTER, FULL_MASK, LANES, TPB, VEC_TPB, _blocks, _x, _y, coo_spec_y, matrices
from .formats import to_csr


def csr_spec(row_ptr, col, val, x, n_rows):
    r = np.repeat(np.arange(n_rows), np.diff(row_ptr))
    return coo_spec_y(n_rows, r, col, val, x)


def _csr_cases(rng, tpb, warp_per_row):
    cases = []
    for _, n_rows, n_cols, row, col, val in matrices(rng):
        row_ptr, c, v = to_csr(n_rows, row, col, val)
        if warp_per_row:  # fewer warps than rows on most cases: each warp takes several rows
            grid = int(rng.integers(1, 4))
        else:
            grid = _blocks(n_rows, tpb, rng)
        cases.append(
            Case(
                grid, tpb, dict(y=_y(n_rows), row_ptr=row_ptr, col=c, val=v, x=_x(rng, n_cols), n_rows=n_rows)
            )
        )
    return cases


def csr_cases(rng):
    return _csr_cases(rng, TPB, False)


def csr_vector_cases(rng):
    return _csr_cases(rng, VEC_TPB, True)


@cuda.jit
def spmv_csr(y, row_ptr, col, val, x, n_rows):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for k in range(row_ptr[r], row_ptr[r + 1]):
            s += val[k] * x[col[k]]
        y[r] = s


SPMV_CSR = Puzzle(
    name="ch14_spmv_csr",
    title="SpMV, CSR: a thread per row",
    statement="""`y = A @ x` for a matrix in CSR form: row `r`'s nonzeros are `val[k]` in column `col[k]`
for `k` from `row_ptr[r]` to `row_ptr[r + 1] - 1`. One thread per row.""",
    outputs=("y",),
    spec=csr_spec,
    cases=csr_cases,
    reference=spmv_csr,
    chapter=CHAPTER,
    **_TOL,
)


@cuda.jit
def spmv_csr_vector(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x % 32
    warp = cuda.grid(1) // 32
    n_warps = cuda.gridsize(1) // 32
    # the whole warp walks the same rows, so every lane reaches every shuffle
    for r in range(warp, n_rows, n_warps):
        ### BEGIN SOLUTION
        s = numba.float32(0)
        for k in range(row_ptr[r] + lane, row_ptr[r + 1], 32):
            s += val[k] * x[col[k]]
        offset = 16
        while offset > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        if lane == 0:
            y[r] = s
        ### END SOLUTION


SPMV_CSR_VECTOR = Puzzle(
    name="ch14_spmv_csr_vector",
    title="SpMV, CSR: a warp per row",
    statement=f"""As the CSR kernel, but a whole warp computes each row: lane `l` adds up the row's
entries `row_ptr[r] + l`, `+ 32`, `+ 64`, ...; the 32 partial sums are combined with
`cuda.shfl_down_sync`, and lane 0 writes `y[r]`. Warp `w` of the grid takes rows `w`, `w + warps`, ...
(blocks of {VEC_TPB} threads: two warps each). Enforced: no lane reads two neighbouring entries of a
row (interleaved lanes read a row's entries together, coalesced).""",
    outputs=("y",),
    spec=csr_spec,
    cases=csr_vector_cases,
    reference=spmv_csr_vector,
    rules=(lanes_interleaved(("val", "col"), "row_ptr"),),
    hints=(
        "Consecutive lanes read consecutive entries of the row: k = row_ptr[r] + lane, stepping by 32.",
        "A tree of shfl_down_sync with offsets 16, 8, 4, 2, 1 leaves the warp's total in lane 0.",
        "Every lane must reach every shuffle: keep the shuffles outside any `if` on the lane.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


@cuda.jit
def spmv_csr_lanes(y, row_ptr, col, val, x, n_rows):
    """CSR-vector with LANES lanes per row (32 // LANES rows per warp): short rows keep lanes busy."""
    lane = cuda.threadIdx.x % 32
    group = lane // LANES  # this lane's row within the warp's rows
    sub = lane % LANES
    rows_per_warp = 32 // LANES
    warp = cuda.grid(1) // 32
    n_warps = cuda.gridsize(1) // 32
    # every lane of a warp makes the same trips, so every lane reaches every shuffle
    for base in range(warp * rows_per_warp, n_rows, n_warps * rows_per_warp):
        r = base + group
        s = numba.float32(0)
        if r < n_rows:
            for k in range(row_ptr[r] + sub, row_ptr[r + 1], LANES):
                s += val[k] * x[col[k]]
        offset = LANES // 2
        while offset > 0:
            # lane sub reads sub + offset < LANES: never past its own group
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        if sub == 0 and r < n_rows:
            y[r] = s


PUZZLES = [SPMV_CSR, SPMV_CSR_VECTOR]
