"""SpMV in COO form.

Rungs:
    ch14_spmv_coo    a thread per nonzero; several nonzeros share a row, so they add into y atomically
"""

from __future__ import annotations

from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import _TOL, CHAPTER, TPB, _blocks, _x, _y, coo_spec_y, matrices


def coo_spec(row, col, val, x, nnz, n_rows):
    return coo_spec_y(n_rows, row, col, val, x)


def coo_cases(rng):
    cases = []
    for _, n_rows, n_cols, row, col, val in matrices(rng):
        perm = rng.permutation(row.size)  # COO order is arbitrary
        r, c, v = row[perm], col[perm], val[perm]
        cases.append(
            Case(
                _blocks(row.size, TPB, rng),
                TPB,
                dict(y=_y(n_rows), row=r, col=c, val=v, x=_x(rng, n_cols), nnz=int(row.size), n_rows=n_rows),
            )
        )
    return cases


@cuda.jit
def spmv_coo(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i < nnz:
        # several nonzeros share a row: their threads must add into y[row] atomically
        cuda.atomic.add(y, row[i], val[i] * x[col[i]])


SPMV_COO = Puzzle(
    name="ch14_spmv_coo",
    title="SpMV, COO: a thread per nonzero",
    statement="""`y = A @ x` for a matrix in COO form: nonzero `i` is `val[i]` at (`row[i]`, `col[i]`),
in no particular order. One thread per nonzero; `y` (of length `n_rows`) starts at zero.""",
    outputs=("y",),
    spec=coo_spec,
    cases=coo_cases,
    reference=spmv_coo,
    zeroed=("y",),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [SPMV_COO]
