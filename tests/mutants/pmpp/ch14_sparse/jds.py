"""Mutants of puzzles/pmpp/ch14_sparse/jds.py (SpMV, JDS); format: mutants/common.py.

Every case list starts with the 2-D Poisson matrix (rows of 3 to 5 entries, none empty), so a mistake
that shows on it fails the same way on every seed.
"""

import numba
from numba import cuda

from mutants.common import OOB, WRONG
from puzzles.pmpp.ch14_sparse import jds


@cuda.jit
def jds_unpermuted_store(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            start = jd_ptr[d]
            if r >= jd_ptr[d + 1] - start:
                break
            s += jd_val[start + r] * x[jd_col[start + r]]
        y[r] = s  # r is a sorted position, not a row


@cuda.jit
def jds_no_length_check(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            s += jd_val[jd_ptr[d] + r] * x[jd_col[jd_ptr[d] + r]]
        y[perm[r]] = s


@cuda.jit
def jds_length_off_by_one(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            start = jd_ptr[d]
            if r > jd_ptr[d + 1] - start:
                break
            s += jd_val[start + r] * x[jd_col[start + r]]
        y[perm[r]] = s


@cuda.jit
def jds_no_guard(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    s = numba.float32(0)
    for d in range(n_diags):
        start = jd_ptr[d]
        if r >= jd_ptr[d + 1] - start:
            break
        s += jd_val[start + r] * x[jd_col[start + r]]
    y[perm[r]] = s


@cuda.jit
def jds_store_in_loop(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            start = jd_ptr[d]
            if r >= jd_ptr[d + 1] - start:
                break
            s += jd_val[start + r] * x[jd_col[start + r]]
            y[perm[r]] = s  # an empty row is never written


@cuda.jit
def jds_ell_indexing(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            if r >= jd_ptr[d + 1] - jd_ptr[d]:
                break
            s += jd_val[d * n_rows + r] * x[jd_col[d * n_rows + r]]  # diagonals are not n_rows long
        y[perm[r]] = s


@cuda.jit
def jds_while_loop(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        d = 0
        while d < n_diags and jd_ptr[d] + r < jd_ptr[d + 1]:
            k = jd_ptr[d] + r
            s += x[jd_col[k]] * jd_val[k]
            d += 1
        y[perm[r]] = s


@cuda.jit
def jds_grid_stride(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    for r in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
        s = numba.float32(0)
        for d in range(n_diags):
            k = jd_ptr[d] + r
            if k < jd_ptr[d + 1]:
                s += jd_val[k] * x[jd_col[k]]
        y[perm[r]] = s


MUTANTS = {
    "ch14_spmv_jds": [
        ("unpermuted_store", jds_unpermuted_store, *WRONG),
        ("no_length_check", jds_no_length_check, *OOB),
        ("length_off_by_one", jds_length_off_by_one, *OOB),
        ("no_guard", jds_no_guard, *OOB),
        ("store_in_loop", jds_store_in_loop, *WRONG),
        ("ell_indexing", jds_ell_indexing, *OOB),
    ],
}

VARIANTS = {
    "ch14_spmv_jds": [("while_loop", jds_while_loop), ("grid_stride", jds_grid_stride)],
}

SEEDS = {p.name: (0, 1, 2) for p in jds.PUZZLES}
