"""SpMV in hybrid ELL + COO form: ELL of a modest width, the overflow of long rows as COO.

Rungs:
    ch14_spmv_hybrid    one launch: thread i adds ELL row i and COO entry i into y, both atomically
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import _TOL, CHAPTER, TPB, _blocks, _x, _y, coo_spec_y, matrices
from .ell import ell_spec
from .formats import to_csr, to_hybrid


def hybrid_width(row_ptr) -> int:
    """ELL slots per row for the hybrid: the mean row length, so only the longer rows overflow."""
    return max(1, int(row_ptr[-1] / (row_ptr.size - 1)))


def hybrid_spec(row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    width = ell_col.size // n_rows
    y = ell_spec(row_len, ell_col, ell_val, x, n_rows, width).astype(np.float64)
    y += coo_spec_y(n_rows, coo_row[:coo_nnz], coo_col[:coo_nnz], coo_val[:coo_nnz], x)
    return y.astype(np.float32)


def hybrid_cases(rng):
    cases = []
    for _, n_rows, n_cols, row, col, val in matrices(rng):
        row_ptr, _, _ = to_csr(n_rows, row, col, val)
        width = hybrid_width(row_ptr)
        row_len, ell_col, ell_val, coo_row, coo_col, coo_val, coo_nnz = to_hybrid(
            n_rows, row, col, val, width
        )
        perm = rng.permutation(coo_row.size)
        cases.append(
            Case(
                _blocks(max(n_rows, coo_nnz), TPB, rng),
                TPB,
                dict(
                    y=_y(n_rows),
                    row_len=row_len,
                    ell_col=ell_col,
                    ell_val=ell_val,
                    coo_row=coo_row[perm],
                    coo_col=coo_col[perm],
                    coo_val=coo_val[perm],
                    x=_x(rng, n_cols),
                    n_rows=n_rows,
                    coo_nnz=coo_nnz,
                ),
            )
        )
    return cases


@cuda.jit
def spmv_hybrid(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    ### BEGIN SOLUTION
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        # a long row's overflow is added by other threads: add, do not overwrite
        cuda.atomic.add(y, i, s)
    if i < coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])
    ### END SOLUTION


SPMV_HYBRID = Puzzle(
    name="ch14_spmv_hybrid",
    title="SpMV, hybrid ELL + COO",
    statement="""`y = A @ x` for a matrix split in two: an ELL part (as in the ELL exercise, at most
`width = ell_col.size // n_rows` slots per row) and the overflow of the longer rows as `coo_nnz` COO
triples (`coo_row`, `coo_col`, `coo_val`, in no order). One launch: thread `i` computes ELL row `i`
(if `i < n_rows`) and COO entry `i` (if `i < coo_nnz`). `y` starts at zero.""",
    outputs=("y",),
    spec=hybrid_spec,
    cases=hybrid_cases,
    reference=spmv_hybrid,
    zeroed=("y",),
    hints=(
        "Row i's ELL sum and the COO entries of row i are computed by different threads.",
        "So both must add into y[i] with cuda.atomic.add: a plain store would race with them.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [SPMV_HYBRID]
