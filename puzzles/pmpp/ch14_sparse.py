"""PMPP chapter 14: sparse matrix-vector multiplication (SpMV) in five storage formats. (Over 500
lines: one chapter, one module, as its notebook; the format converters and matrix builders too.)

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
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

TPB = 32  # threads per block for thread-per-row kernels: one warp, so views show whole warps
VEC_TPB = 64  # warp-per-row kernel: two warps per block
FULL_MASK = 0xFFFFFFFF
LANES = 4  # lanes per row in spmv_csr_lanes (the GPU benchmark picks 2 to 32 from the mean row length)

# what `from puzzles.pmpp.ch14_sparse import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "VEC_TPB", "FULL_MASK", "LANES"]
CHAPTER = "pmpp-14"


# ------------------------------------------------------------------ kernels


@cuda.jit
def spmv_coo(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i < nnz:
        # several nonzeros share a row: their threads must add into y[row] atomically
        cuda.atomic.add(y, row[i], val[i] * x[col[i]])


@cuda.jit
def spmv_csr(y, row_ptr, col, val, x, n_rows):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for k in range(row_ptr[r], row_ptr[r + 1]):
            s += val[k] * x[col[k]]
        y[r] = s


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


# ------------------------------------------------------------------ matrices (host, NumPy)


def _unique_cols(rng, n_cols, k):
    return np.sort(rng.choice(n_cols, size=min(k, n_cols), replace=False))


def _from_lengths(rng, lengths, n_cols):
    rows, cols = [], []
    for r, k in enumerate(lengths):
        c = _unique_cols(rng, n_cols, int(k))
        rows.append(np.full(c.size, r))
        cols.append(c)
    row = np.concatenate(rows).astype(np.int32)
    col = np.concatenate(cols).astype(np.int32)
    return row, col, _values(rng, row.size)


def _values(rng, n):
    # non-integer, both signs, never zero (a stored zero would hide a skipped entry)
    v = rng.uniform(0.25, 2.0, n) * rng.choice([-1.0, 1.0], n)
    return v.astype(np.float32)


def poisson_2d(gx: int, gy: int):
    """The 5-point Laplacian on a gx x gy grid: 4 on the diagonal, -1 for each grid neighbour."""
    n = gx * gy
    rows, cols, vals = [], [], []
    for r in range(n):
        i, j = divmod(r, gy)
        for di, dj, v in ((-1, 0, -1.0), (0, -1, -1.0), (0, 0, 4.0), (0, 1, -1.0), (1, 0, -1.0)):
            if 0 <= i + di < gx and 0 <= j + dj < gy:
                rows.append(r)
                cols.append((i + di) * gy + j + dj)
                vals.append(v)
    return n, n, np.array(rows, np.int32), np.array(cols, np.int32), np.array(vals, np.float32)


def power_law(rng, n_rows: int, n_cols: int, long_row: int):
    """Row lengths from a heavy-tailed law: many empty or short rows, one row of `long_row` entries."""
    lengths = np.minimum(np.floor(rng.pareto(1.2, n_rows)).astype(int), n_cols)
    lengths[rng.integers(n_rows)] = min(long_row, n_cols)
    return (n_rows, n_cols, *_from_lengths(rng, lengths, n_cols))


def banded(rng, n: int, half_width: int):
    row, col = [], []
    for r in range(n):
        for c in range(max(0, r - half_width), min(n, r + half_width + 1)):
            row.append(r)
            col.append(c)
    row, col = np.array(row, np.int32), np.array(col, np.int32)
    return n, n, row, col, _values(rng, row.size)


def with_empty_rows(rng, n_rows: int, n_cols: int):
    lengths = rng.integers(1, 6, n_rows)
    lengths[rng.random(n_rows) < 0.4] = 0
    lengths[-1] = 0  # the last row is empty: row_ptr ends on a repeat
    lengths[rng.integers(n_rows - 1)] = 3
    return (n_rows, n_cols, *_from_lengths(rng, lengths, n_cols))


def matrices(rng) -> list:
    """(label, n_rows, n_cols, row, col, val) for one seed; the Poisson matrix first (views use it)."""
    out = [("poisson", *poisson_2d(int(rng.integers(5, 9)), int(rng.integers(5, 9))))]
    out.append(
        (
            "power-law",
            *power_law(rng, int(rng.integers(40, 70)), int(rng.integers(40, 90)), int(rng.integers(36, 70))),
        )
    )
    out.append(("banded", *banded(rng, int(rng.integers(20, 45)), int(rng.integers(1, 4)))))
    out.append(("empty rows", *with_empty_rows(rng, int(rng.integers(25, 50)), int(rng.integers(10, 40)))))
    out.append(("1x1", 1, 1, np.zeros(1, np.int32), np.zeros(1, np.int32), _values(rng, 1)))
    n = int(rng.integers(40, 90))
    out.append(("1xN", 1, n, *_from_lengths(rng, [int(rng.integers(33, n + 1))], n)))
    n = int(rng.integers(20, 70))
    lengths = rng.integers(0, 2, n)
    lengths[0] = 1
    out.append(("Nx1", n, 1, *_from_lengths(rng, lengths, 1)))
    return out


def dense(n_rows, n_cols, row, col, val) -> np.ndarray:
    a = np.zeros((n_rows, n_cols), np.float64)
    np.add.at(a, (row, col), val)
    return a


def to_csr(n_rows, row, col, val):
    """(row_ptr, col, val) with rows in order and columns sorted inside each row."""
    order = np.lexsort((col, row))
    counts = np.bincount(row, minlength=n_rows)
    row_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return row_ptr, col[order].astype(np.int32), val[order].astype(np.float32)


def _slots(row_ptr):
    """(row of each stored entry, its position inside its row), for a CSR matrix."""
    lengths = np.diff(row_ptr)
    r_of = np.repeat(np.arange(lengths.size), lengths)
    return r_of, np.arange(r_of.size) - row_ptr[r_of]


def to_ell(n_rows, row, col, val, width=None):
    """(row_len, ell_col, ell_val, width): each row's first `width` entries, column-major.

    Padding slots hold column 0 and value 0, so reading them adds nothing. Entries past `width`
    (hybrid) are left out; `to_hybrid` puts them in COO."""
    return _ell_from_csr(n_rows, *to_csr(n_rows, row, col, val), width)


def _ell_from_csr(n_rows, row_ptr, c, v, width=None):
    lengths = np.diff(row_ptr)
    width = max(1, int(lengths.max()) if width is None else width)
    r_of, slot = _slots(row_ptr)
    keep = slot < width
    ell_col = np.zeros(width * n_rows, np.int32)
    ell_val = np.zeros(width * n_rows, np.float32)
    ell_col[slot[keep] * n_rows + r_of[keep]] = c[keep]
    ell_val[slot[keep] * n_rows + r_of[keep]] = v[keep]
    return np.minimum(lengths, width).astype(np.int32), ell_col, ell_val, width


def to_hybrid(n_rows, row, col, val, width):
    """ELL of `width` slots per row plus the overflow of longer rows as COO triples."""
    return _hybrid_from_csr(n_rows, *to_csr(n_rows, row, col, val), width)


def _hybrid_from_csr(n_rows, row_ptr, c, v, width):
    row_len, ell_col, ell_val, width = _ell_from_csr(n_rows, row_ptr, c, v, width)
    r_of, slot = _slots(row_ptr)
    over = slot >= width
    coo = (r_of[over].astype(np.int32), c[over].astype(np.int32), v[over].astype(np.float32))
    if not over.any():  # no overflow: one unused slot so the arrays are not empty
        coo = (np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.float32))
    return row_len, ell_col, ell_val, *coo, int(over.sum())


def to_jds(n_rows, row, col, val):
    """(perm, jd_ptr, jd_col, jd_val): rows sorted longest first (stable); diagonal d holds entry d
    of every row that has one, in sorted order, starting at jd_ptr[d]."""
    return _jds_from_csr(*to_csr(n_rows, row, col, val))


def _jds_from_csr(row_ptr, c, v):
    lengths = np.diff(row_ptr)
    perm = np.argsort(-lengths, kind="stable").astype(np.int32)
    # rows sorted longest first: diagonal d holds the first count[d] sorted rows
    count = np.searchsorted(-lengths[perm], -np.arange(int(lengths.max())), side="left")
    jd_ptr = np.concatenate([[0], np.cumsum(count)]).astype(np.int32)
    jd_col = np.empty(int(jd_ptr[-1]), np.int32)
    jd_val = np.empty(int(jd_ptr[-1]), np.float32)
    starts = row_ptr[perm]
    for d, k in enumerate(count):
        jd_col[jd_ptr[d] : jd_ptr[d + 1]] = c[starts[:k] + d]
        jd_val[jd_ptr[d] : jd_ptr[d + 1]] = v[starts[:k] + d]
    return perm, jd_ptr, jd_col, jd_val


# ------------------------------------------------------------------ specs and cases


def _x(rng, n_cols):
    return rng.uniform(-1.0, 1.0, n_cols).astype(np.float32)


def _y(n_rows):
    return np.zeros(n_rows, np.float32)


def _blocks(n, tpb, rng):
    """Enough blocks for n threads, sometimes one spare (threads past the end must do nothing)."""
    return max(1, -(-n // tpb) + int(rng.integers(0, 2)))


def _spmv(n_rows, n_cols, row, col, val, x):
    return (dense(n_rows, n_cols, row, col, val) @ x.astype(np.float64)).astype(np.float32)


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


def coo_spec_y(n_rows, row, col, val, x):
    a = np.zeros(n_rows, np.float64)
    np.add.at(a, row, val.astype(np.float64) * x[col].astype(np.float64))
    return a.astype(np.float32)


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


# The chapter 14 notebook states these (Poisson matrix, case 0, seed 0; tests check them):
# 32-byte sectors moved by all warp loads of `val` (CSR, a thread per row) and of `ell_val` (ELL),
# against the fewest sectors that hold the same elements.
VIEW_NUMBERS = {"csr_val": (148, 33), "ell_val": (33, 33)}

_TOL = dict(rtol=1e-4, atol=1e-4)  # float32 sums in any order (atomics, shuffles)

PUZZLES = [
    Puzzle(
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
    ),
    Puzzle(
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
    ),
    Puzzle(
        name="ch14_spmv_csr_vector",
        title="SpMV, CSR: a warp per row",
        statement=f"""As the CSR kernel, but a whole warp computes each row: lane `l` adds up the row's
entries `row_ptr[r] + l`, `+ 32`, `+ 64`, ...; the 32 partial sums are combined with
`cuda.shfl_down_sync`, and lane 0 writes `y[r]`. Warp `w` of the grid takes rows `w`, `w + warps`, ...
(blocks of {VEC_TPB} threads: two warps each).""",
        outputs=("y",),
        spec=csr_spec,
        cases=csr_vector_cases,
        reference=spmv_csr_vector,
        hints=(
            "Consecutive lanes read consecutive entries of the row: k = row_ptr[r] + lane, stepping by 32.",
            "A tree of shfl_down_sync with offsets 16, 8, 4, 2, 1 leaves the warp's total in lane 0.",
            "Every lane must reach every shuffle: keep the shuffles outside any `if` on the lane.",
        ),
        chapter=CHAPTER,
        **_TOL,
    ),
    Puzzle(
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
    ),
    Puzzle(
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
    ),
    Puzzle(
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
    ),
]


# ------------------------------------------------------------------ GPU benchmark

GOAL = {"ceiling": "cuSPARSE", "fraction": 0.8, "best": "Poisson: ch14_spmv_csr_lanes"}


def poisson_csr(g: int):
    """(row_ptr, col, val) of the 5-point Laplacian on a g x g grid, built without a Python loop."""
    n = g * g
    r = np.arange(n)
    i, j = r // g, r % g
    cols = np.stack([r - g, r - 1, r, r + 1, r + g], axis=1)  # already in column order
    ok = np.stack([i > 0, j > 0, np.ones(n, bool), j < g - 1, i < g - 1], axis=1)
    vals = np.where(np.arange(5) == 2, 4.0, -1.0)[None, :].repeat(n, 0)
    row_ptr = np.concatenate([[0], np.cumsum(ok.sum(1))]).astype(np.int32)
    return row_ptr, cols[ok].astype(np.int32), vals[ok].astype(np.float32)


def power_law_csr(rng, n: int, max_len: int = 1 << 12):
    """(row_ptr, col, val): n rows with heavy-tailed lengths (mean about 8, a few up to max_len)."""
    lengths = np.minimum(np.floor(rng.pareto(1.5, n) * 4), max_len).astype(np.int64)
    row_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(row_ptr[-1])
    col = rng.integers(0, n, nnz).astype(np.int32)
    return row_ptr, col, _values(rng, nnz)


def _csr_ref(row_ptr, col, val, x):
    r_of = np.repeat(np.arange(row_ptr.size - 1), np.diff(row_ptr))
    return np.bincount(r_of, weights=val.astype(np.float64) * x[col], minlength=row_ptr.size - 1)


def _lanes_for(row_ptr) -> int:
    """CUSP's rule: lanes per row, a power of two near the mean row length, 2 to 32."""
    mean = row_ptr[-1] / max(1, row_ptr.size - 1)
    return int(min(32, max(2, 2 ** int(np.ceil(np.log2(max(mean, 1)))))))


@cuda.jit
def _fill_zero(y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = 0


def _bench_matrix(label, row_ptr, col, val, rng, cp, cusparse):
    """(our rows, cuSPARSE row or None) for one matrix: every kernel validated, then timed."""
    from helpers import timing
    from helpers.timing import specialize

    tpb = 256
    n = row_ptr.size - 1
    x = rng.uniform(-1, 1, n).astype(np.float32)
    want = _csr_ref(row_ptr, col, val, x).astype(np.float32)
    nbytes = 8 * int(row_ptr[-1]) + 4 * (n + 1) + 8 * n
    csr = [cuda.to_device(a) for a in (row_ptr, col, val)]
    d_x = cuda.to_device(x)
    y = cuda.device_array(n, np.float32)
    blocks = -(-n // tpb)
    lanes_kernel = specialize(spmv_csr_lanes, (), LANES=_lanes_for(row_ptr))
    lane_blocks = -(-n * _lanes_for(row_ptr) // tpb)
    launches = [
        ("ch14_spmv_csr", lambda: spmv_csr[blocks, tpb](y, *csr, d_x, n)),
        ("ch14_spmv_csr_vector", lambda: spmv_csr_vector[-(-n // 8), tpb](y, *csr, d_x, n)),
        ("ch14_spmv_csr_lanes", lambda: lanes_kernel[lane_blocks, tpb](y, *csr, d_x, n)),
    ]
    perm, jd_ptr, jd_col, jd_val = _jds_from_csr(row_ptr, col, val)
    jds = [cuda.to_device(a) for a in (perm, jd_ptr, jd_col, jd_val)]
    n_diags = int(jd_ptr.size - 1)
    launches.append(("ch14_spmv_jds", lambda: spmv_jds[blocks, tpb](y, *jds, d_x, n, n_diags)))
    if label == "Poisson":  # ELL's padding is small only when rows are alike
        row_len, ell_col, ell_val, width = _ell_from_csr(n, row_ptr, col, val)
        ell = [cuda.to_device(a) for a in (row_len, ell_col, ell_val)]
        launches.append(("ch14_spmv_ell", lambda: spmv_ell[blocks, tpb](y, *ell, d_x, n, width)))
    hyb = _hybrid_from_csr(n, row_ptr, col, val, max(1, int(round(row_ptr[-1] / n))))
    d_hyb = [cuda.to_device(a) for a in hyb[:6]]
    coo_nnz = hyb[6]

    def hybrid():
        _fill_zero[blocks, tpb](y)  # the hybrid adds into y: zeroing is part of its time
        spmv_hybrid[-(-max(n, coo_nnz) // tpb), tpb](y, *d_hyb, d_x, n, coo_nnz)

    launches.append(("ch14_spmv_hybrid", hybrid))
    rows = []
    for name, launch in launches:
        y.copy_to_device(np.full(n, np.nan, np.float32))  # a kernel that skips a row is caught
        launch()
        timing.validate(f"{label}: {name}", y.copy_to_host(), want, rtol=1e-3, atol=1e-2)
        rows.append(timing.Measurement(f"{label}: {name}", timing.time_gpu(launch), bytes=nbytes))
    if cp is None:
        print(f"{label}: cuSPARSE row skipped (CuPy is not installed)")
        return rows, None
    a = cusparse.csr_matrix((cp.asarray(val), cp.asarray(col), cp.asarray(row_ptr)), shape=(n, n))
    cx = cp.asarray(x)
    timing.validate(f"{label}: cuSPARSE", cp.asnumpy(a @ cx), want, rtol=1e-3, atol=1e-2)
    # cuSPARSE on the Poisson matrix is the goal's reference: the first ceiling row in bytes/s
    peer = timing.Measurement(
        f"{label}: cuSPARSE", timing.time_gpu(lambda: a @ cx), bytes=nbytes, ceiling=label == "Poisson"
    )
    best = min(rows, key=lambda r: r.seconds)
    print(
        f"{label}: fastest here {best.name.split(': ')[1]}, "
        f"{peer.seconds / best.seconds:.0%} of cuSPARSE's speed"
    )
    return rows, peer


def benchmark(scale: float = 1.0):
    """Validate, then time, the SpMV kernels on a 2-D Poisson matrix (2048^2 rows at scale 1) and a
    power-law matrix (2^20 rows), with cuSPARSE (CuPy) and the device copy in the same run. Bytes counted
    for every variant of a matrix: its CSR arrays, x and y once each."""
    from helpers import timing

    copy = timing.copy_ceiling(max(1 << 16, int((256 << 20) * scale)))  # raises without a GPU
    try:
        import cupy as cp
        import cupyx.scipy.sparse as cusparse
    except ImportError:
        cp = cusparse = None
    rng = np.random.default_rng(14)
    g = max(16, int(2048 * scale**0.5))
    n = max(1 << 10, int((1 << 20) * scale))
    ours, peers = [], []
    for label, mat in [("Poisson", poisson_csr(g)), ("power-law", power_law_csr(rng, n))]:
        rows, peer = _bench_matrix(label, *mat, rng, cp, cusparse)
        ours += rows
        peers += [peer] if peer else []
    return [*[p for p in peers if p.ceiling], copy, *ours, *[p for p in peers if not p.ceiling]]
