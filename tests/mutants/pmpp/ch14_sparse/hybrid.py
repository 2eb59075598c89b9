"""Mutants of puzzles/pmpp/ch14_sparse/hybrid.py (SpMV, HYBRID); format: mutants/common.py.

Every case list starts with the 2-D Poisson matrix (rows of 3 to 5 entries, none empty), so a mistake
that shows on it fails the same way on every seed.
"""

import numba
from numba import cuda

from mutants.common import OOB, RACE, WRONG
from puzzles.pmpp.ch14_sparse import hybrid


@cuda.jit
def hyb_coo_no_atomic(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)
    if i < coo_nnz:
        y[coo_row[i]] += coo_val[i] * x[coo_col[i]]


@cuda.jit
def hyb_ell_plain_store(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        y[i] = s  # the overflow's atomics race with it
    if i < coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])


@cuda.jit
def hyb_forgets_coo(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)


@cuda.jit
def hyb_coo_guard_le(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)
    if i <= coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])


@cuda.jit
def hyb_ell_row_major(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    width = ell_col.size // n_rows
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = i * width + t
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)
    if i < coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])


@cuda.jit
def hyb_else_branch(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)
    elif i < coo_nnz:  # threads below n_rows skip their COO entry
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])


@cuda.jit
def hyb_split_grid(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    # a grid-stride loop over n_rows + coo_nnz work items: ELL rows first, then COO entries
    for w in range(cuda.grid(1), n_rows + coo_nnz, cuda.gridsize(1)):
        if w < n_rows:
            s = numba.float32(0)
            for t in range(row_len[w]):
                s += ell_val[t * n_rows + w] * x[ell_col[t * n_rows + w]]
            cuda.atomic.add(y, w, s)
        else:
            j = w - n_rows
            cuda.atomic.add(y, coo_row[j], coo_val[j] * x[coo_col[j]])


@cuda.jit
def hyb_all_slots(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    width = ell_col.size // n_rows
    if i < coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])
    if i < n_rows:
        s = numba.float32(0)
        for t in range(width):  # padding slots add 0 * x[0]
            s += ell_val[t * n_rows + i] * x[ell_col[t * n_rows + i]]
        cuda.atomic.add(y, i, s)


MUTANTS = {
    "ch14_spmv_hybrid": [
        ("coo_no_atomic", hyb_coo_no_atomic, *RACE),
        ("ell_plain_store", hyb_ell_plain_store, *RACE),
        ("forgets_coo", hyb_forgets_coo, *WRONG),
        ("coo_guard_le", hyb_coo_guard_le, *OOB),
        ("ell_row_major", hyb_ell_row_major, *WRONG),
        ("else_branch", hyb_else_branch, *WRONG),
    ],
}

VARIANTS = {
    "ch14_spmv_hybrid": [("split_grid", hyb_split_grid), ("all_slots", hyb_all_slots)],
}

SEEDS = {p.name: (0, 1, 2) for p in hybrid.PUZZLES}
