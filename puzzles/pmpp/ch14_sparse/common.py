"""Chapter 14's shared pieces: launch constants, tolerances, the matrices every case builds from the
seed (host, NumPy) and the helpers the op files' cases share.
"""

from __future__ import annotations

import numpy as np

TPB = 32  # threads per block for thread-per-row kernels: one warp, so views show whole warps


VEC_TPB = 64  # warp-per-row kernel: two warps per block


FULL_MASK = 0xFFFFFFFF


LANES = 4  # lanes per row in spmv_csr_lanes (the GPU benchmark picks 2 to 32 from the mean row length)


CHAPTER = "pmpp-14"


_TOL = dict(rtol=1e-4, atol=1e-4)  # float32 sums in any order (atomics, shuffles)


# The chapter 14 notebook states these (Poisson matrix, case 0, seed 0; tests check them):
# 32-byte sectors moved by all warp loads of `val` (CSR, a thread per row) and of `ell_val` (ELL),
# against the fewest sectors that hold the same elements.
VIEW_NUMBERS = {"csr_val": (148, 33), "ell_val": (33, 33)}


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


def _x(rng, n_cols):
    return rng.uniform(-1.0, 1.0, n_cols).astype(np.float32)


def _y(n_rows):
    return np.zeros(n_rows, np.float32)


def _blocks(n, tpb, rng):
    """Enough blocks for n threads, sometimes one spare (threads past the end must do nothing)."""
    return max(1, -(-n // tpb) + int(rng.integers(0, 2)))


def coo_spec_y(n_rows, row, col, val, x):
    a = np.zeros(n_rows, np.float64)
    np.add.at(a, row, val.astype(np.float64) * x[col].astype(np.float64))
    return a.astype(np.float32)
