"""Mutants of puzzles/pmpp/ch14_sparse/ell.py (SpMV, ELL); format: mutants/common.py.

Every case list starts with the 2-D Poisson matrix (rows of 3 to 5 entries, none empty), so a mistake
that shows on it fails the same way on every seed.
"""

import numba
from numba import cuda

from mutants.common import OOB, UNINIT, WRONG
from puzzles.pmpp.ch14_sparse import ell


@cuda.jit
def ell_row_major(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(row_len[r]):
            i = r * width + t  # the layout is column-major
            s += ell_val[i] * x[ell_col[i]]
        y[r] = s


@cuda.jit
def ell_one_slot_too_many(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(row_len[r] + 1):
            i = t * n_rows + r
            s += ell_val[i] * x[ell_col[i]]
        y[r] = s


@cuda.jit
def ell_no_guard(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    s = numba.float32(0)
    for t in range(row_len[r]):
        i = t * n_rows + r
        s += ell_val[i] * x[ell_col[i]]
    y[r] = s


@cuda.jit
def ell_stride_width(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(row_len[r]):
            i = t * width + r  # stride between slots is n_rows
            s += ell_val[i] * x[ell_col[i]]
        y[r] = s


@cuda.jit
def ell_accumulates_into_y(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        for t in range(row_len[r]):
            i = t * n_rows + r
            y[r] += ell_val[i] * x[ell_col[i]]


@cuda.jit
def ell_sum_reset_in_loop(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(row_len[r]):
            i = t * n_rows + r
            s = ell_val[i] * x[ell_col[i]]  # = instead of +=
        y[r] = s


@cuda.jit
def ell_all_slots(y, row_len, ell_col, ell_val, x, n_rows, width):
    # the book's first ELL kernel: every slot, padding included (padding adds 0 * x[0])
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(width):
            s += ell_val[t * n_rows + r] * x[ell_col[t * n_rows + r]]
        y[r] = s


@cuda.jit
def ell_grid_stride(y, row_len, ell_col, ell_val, x, n_rows, width):
    for r in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
        s = numba.float32(0)
        i = r
        for _ in range(row_len[r]):
            s += ell_val[i] * x[ell_col[i]]
            i += n_rows
        y[r] = s


MUTANTS = {
    "ch14_spmv_ell": [
        ("row_major", ell_row_major, *WRONG),
        ("one_slot_too_many", ell_one_slot_too_many, *OOB),
        ("no_guard", ell_no_guard, *OOB),
        ("stride_width", ell_stride_width, *WRONG),
        ("accumulates_into_y", ell_accumulates_into_y, *UNINIT),
        ("sum_reset_in_loop", ell_sum_reset_in_loop, *WRONG),
    ],
}

VARIANTS = {
    "ch14_spmv_ell": [("all_slots", ell_all_slots), ("grid_stride", ell_grid_stride)],
}

SEEDS = {p.name: (0, 1, 2) for p in ell.PUZZLES}
