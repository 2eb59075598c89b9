"""PMPP chapter 14: sparse matrix-vector multiplication (SpMV) in five storage formats.

A sparse matrix stores only its nonzeros, and how it stores them decides how a GPU can read them:
COO (one (row, col, value) triple per nonzero: a thread per nonzero, atomics to add into y), CSR
(rows packed one after another behind a row-pointer array: a thread or a warp per row), ELL (every
row padded to the longest, stored column by column so that neighbouring threads read neighbouring
slots), hybrid ELL + COO (pad to a modest width, send the overflow of long rows to COO) and JDS (rows
sorted by length, stored as "jagged diagonals": ELL's coalescing without most of its padding).

Conversions between formats happen on the host with NumPy (`to_csr`, `to_ell`, `to_hybrid`, `to_jds`).
Every case builds one matrix from the seed: a 2-D Poisson matrix, a power-law matrix (a few very long
rows, many short or empty ones), a banded one, a matrix with many empty rows, and the shapes 1x1, 1xN
and Nx1.

The ladder, one op per file:
    common.py    launch constants, tolerances, the seeded matrices and the cases' shared helpers
    formats.py   COO -> CSR, ELL, hybrid, JDS converters (host)
    coo.py       ch14_spmv_coo: a thread per nonzero, atomics
    csr.py       ch14_spmv_csr (a thread per row), ch14_spmv_csr_vector (a warp per row);
                 spmv_csr_lanes (GPU only: LANES lanes per row)
    csr_fast.py  GPU only, the benchmark's CSR search: 32-bit thread per row, sub-warp, CSR-Stream
    ell.py       ch14_spmv_ell: padded, column-major
    hybrid.py    ch14_spmv_hybrid: ELL + COO overflow in one launch
    jds.py       ch14_spmv_jds: jagged diagonals
    bench.py     benchmark() and GOAL
"""

# ruff: noqa: F401  (re-exports: notebooks and tests read these as `ch14.<name>`; `import *` gives __all__)
from .bench import GOAL, benchmark, poisson_csr, power_law_csr
from .common import (
    CHAPTER,
    FULL_MASK,
    LANES,
    TPB,
    VEC_TPB,
    VIEW_NUMBERS,
    banded,
    coo_spec_y,
    dense,
    matrices,
    poisson_2d,
    power_law,
    with_empty_rows,
)
from .coo import coo_cases, coo_spec, spmv_coo
from .csr import csr_cases, csr_spec, csr_vector_cases, spmv_csr, spmv_csr_lanes, spmv_csr_vector
from .ell import ell_cases, ell_spec, spmv_ell
from .formats import to_csr, to_ell, to_hybrid, to_jds
from .hybrid import hybrid_cases, hybrid_spec, hybrid_width, spmv_hybrid
from .jds import jds_cases, jds_spec, spmv_jds

# what `from puzzles.pmpp.ch14_sparse import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "VEC_TPB", "FULL_MASK", "LANES"]
