"""Format converters (host, NumPy): COO triples to CSR, ELL, hybrid ELL + COO and JDS."""

from __future__ import annotations

import numpy as np


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
