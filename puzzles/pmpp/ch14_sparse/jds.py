"""SpMV in JDS form: rows sorted by length, stored as jagged diagonals.

Rungs:
    ch14_spmv_jds    a thread per sorted row; stops at the first diagonal its row is missing from
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import _TOL, CHAPTER, TPB, _blocks, _x, _y, coo_spec_y, matrices
from .formats import to_jds


def jds_spec(perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    rows, cols, vals = [], [], []
    for d in range(n_diags):
        k = jd_ptr[d + 1] - jd_ptr[d]
        rows.append(perm[:k])
        cols.append(jd_col[jd_ptr[d] : jd_ptr[d + 1]])
        vals.append(jd_val[jd_ptr[d] : jd_ptr[d + 1]])
    return coo_spec_y(n_rows, np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), x)


def jds_cases(rng):
    cases = []
    for _, n_rows, n_cols, row, col, val in matrices(rng):
        perm, jd_ptr, jd_col, jd_val = to_jds(n_rows, row, col, val)
        cases.append(
            Case(
                _blocks(n_rows, TPB, rng),
                TPB,
                dict(
                    y=_y(n_rows),
                    perm=perm,
                    jd_ptr=jd_ptr,
                    jd_col=jd_col,
                    jd_val=jd_val,
                    x=_x(rng, n_cols),
                    n_rows=n_rows,
                    n_diags=int(jd_ptr.size - 1),
                ),
            )
        )
    return cases


@cuda.jit
def spmv_jds(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)  # position in the sorted order: row perm[r] of the matrix
    if r < n_rows:
        ### BEGIN SOLUTION
        s = numba.float32(0)
        for d in range(n_diags):
            start = jd_ptr[d]
            # diagonal d holds one entry for each of the jd_ptr[d+1] - start longest rows
            if r >= jd_ptr[d + 1] - start:
                break
            s += jd_val[start + r] * x[jd_col[start + r]]
        y[perm[r]] = s
        ### END SOLUTION


SPMV_JDS = Puzzle(
    name="ch14_spmv_jds",
    title="SpMV, JDS: jagged diagonals",
    statement="""`y = A @ x` for a matrix in JDS form: the rows sorted longest first (`perm[r]` is the
row in sorted position `r`); "jagged diagonal" `d` holds entry `d` of every row that has one, in sorted
order, at `jd_val[jd_ptr[d] : jd_ptr[d + 1]]` (columns in `jd_col`). Thread `r` computes sorted row `r`
and writes `y[perm[r]]`.""",
    outputs=("y",),
    spec=jds_spec,
    cases=jds_cases,
    reference=spmv_jds,
    hints=(
        "Diagonal d has jd_ptr[d + 1] - jd_ptr[d] entries, one for each of the sorted rows 0, 1, ... "
        "below that count; sorted row r's entry is at jd_ptr[d] + r.",
        "Rows are sorted longest first, so once row r is missing from a diagonal it is missing from "
        "every later one: stop there.",
        "Rows with no entries still need y written (zero).",
    ),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [SPMV_JDS]
