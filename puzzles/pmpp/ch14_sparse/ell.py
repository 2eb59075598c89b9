"""SpMV in ELL form: every row padded to the longest, stored column-major.

Rungs:
    ch14_spmv_ell    a thread per row; column-major slots make neighbouring threads read neighbouring slots
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import _TOL, CHAPTER, TPB, _blocks, _x, _y, coo_spec_y, matrices
from .formats import to_ell


def ell_spec(row_len, ell_col, ell_val, x, n_rows, width):
    t = np.arange(width)[:, None]
    used = (t < row_len[None, :]).ravel()
    r = np.tile(np.arange(n_rows), width)
    return coo_spec_y(n_rows, r[used], ell_col[used], ell_val[used], x)


def ell_cases(rng):
    cases = []
    for _, n_rows, n_cols, row, col, val in matrices(rng):
        row_len, ell_col, ell_val, width = to_ell(n_rows, row, col, val)
        cases.append(
            Case(
                _blocks(n_rows, TPB, rng),
                TPB,
                dict(
                    y=_y(n_rows),
                    row_len=row_len,
                    ell_col=ell_col,
                    ell_val=ell_val,
                    x=_x(rng, n_cols),
                    n_rows=n_rows,
                    width=width,
                ),
            )
        )
    return cases


@cuda.jit
def spmv_ell(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        ### BEGIN SOLUTION
        s = numba.float32(0)
        for t in range(row_len[r]):
            # column-major: slot t of row r sits at t * n_rows + r, next to slot t of row r + 1
            i = t * n_rows + r
            s += ell_val[i] * x[ell_col[i]]
        y[r] = s
        ### END SOLUTION


SPMV_ELL = Puzzle(
    name="ch14_spmv_ell",
    title="SpMV, ELL: padded and column-major",
    statement="""`y = A @ x` for a matrix in ELL form: every row is padded to `width` slots, and the
slots are stored **column-major**: slot `t` of row `r` is `ell_val[t * n_rows + r]` in column
`ell_col[t * n_rows + r]`. Row `r` uses its first `row_len[r]` slots (padding slots hold 0 in column 0).
One thread per row.""",
    outputs=("y",),
    spec=ell_spec,
    cases=ell_cases,
    reference=spmv_ell,
    hints=(
        "The loop is the CSR loop; only the index of the k-th entry of a row changes.",
        "Column-major: consecutive rows' slot t are neighbours, n_rows apart from their slot t + 1.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [SPMV_ELL]
