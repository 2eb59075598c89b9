"""Mutants of puzzles/pmpp/ch14_sparse/coo.py (SpMV, COO); format: mutants/common.py.

Every case list starts with the 2-D Poisson matrix (rows of 3 to 5 entries, none empty), so a mistake
that shows on it fails the same way on every seed.
"""

from numba import cuda

from mutants.common import OOB, RACE, WRONG
from puzzles.pmpp.ch14_sparse import coo


@cuda.jit
def coo_no_atomic(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i < nnz:
        y[row[i]] += val[i] * x[col[i]]  # two nonzeros of one row: lost update


@cuda.jit
def coo_guard_le(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i <= nnz:
        cuda.atomic.add(y, row[i], val[i] * x[col[i]])


@cuda.jit
def coo_x_by_row(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i < nnz:
        cuda.atomic.add(y, row[i], val[i] * x[row[i]])  # x is indexed by the column


@cuda.jit
def coo_grid_stride(y, row, col, val, x, nnz, n_rows):
    for i in range(cuda.grid(1), nnz, cuda.gridsize(1)):
        cuda.atomic.add(y, row[i], x[col[i]] * val[i])


MUTANTS = {
    "ch14_spmv_coo": [
        ("no_atomic", coo_no_atomic, *RACE),
        ("guard_le", coo_guard_le, *OOB),
        ("x_by_row", coo_x_by_row, *WRONG),
    ],
}

VARIANTS = {
    "ch14_spmv_coo": [("grid_stride", coo_grid_stride)],
}

SEEDS = {p.name: (0, 1, 2) for p in coo.PUZZLES}
