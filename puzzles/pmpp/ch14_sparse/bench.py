"""Chapter 14's GPU benchmark: every SpMV kernel validated, then timed, on a Poisson and a power-law
matrix, beside cuSPARSE (CuPy) and the device copy.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .common import _values
from .csr import spmv_csr, spmv_csr_lanes, spmv_csr_vector
from .csr_fast import spmv_csr_scalar32, spmv_csr_stream, spmv_csr_subwarp
from .ell import spmv_ell
from .formats import _ell_from_csr, _hybrid_from_csr, _jds_from_csr
from .hybrid import spmv_hybrid
from .jds import spmv_jds

# judged: the fastest of the CSR kernels that read the same CSR arrays (csr_fast.py's search)
GOAL = {"ceiling": "cuSPARSE", "fraction": 0.8, "best": "Poisson: ch14_spmv_csr_fast"}


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


def csr_fast_launchers(n):
    """label -> launch(y, row_ptr, col, val, x) for csr_fast.py's kernels: the CSR search's candidates
    (a thread per row on 32-bit indices; 2, 4 or 8 lanes per row; CSR-Stream with 128 to 512 rows a
    block)."""
    from helpers.timing import specialize

    def grid_launch(kernel, threads, tpb=256):
        return lambda y, *a: kernel[-(-threads // tpb), tpb](y, *a, n)

    out = {"scalar32": grid_launch(spmv_csr_scalar32, n)}
    for lanes in (2, 4, 8):
        k = specialize(spmv_csr_subwarp, LANES=lanes)
        out[f"subwarp, {lanes} lanes a row"] = grid_launch(k, n * lanes)
    for rows in (128, 256, 512):
        k = specialize(spmv_csr_stream, STREAM_ROWS=rows, STREAM_BUF=8 * rows)
        out[f"stream, {rows} rows a block"] = grid_launch(k, -(-n // rows) * rows, rows)
    return out


def _csr_fast_row(label, y, csr, d_x, n, want, nbytes):
    """Every candidate of the CSR search validated (NaN-filled y: a skipped row is caught), then the
    search tuned and its winner's time reported as one row."""
    from helpers import timing, tuning

    launchers = csr_fast_launchers(n)
    for cfg, launch in launchers.items():
        y.copy_to_device(np.full(n, np.nan, np.float32))
        launch(y, *csr, d_x)
        timing.validate(f"{label}: ch14_spmv_csr_fast {cfg}", y.copy_to_host(), want, rtol=1e-3, atol=1e-2)

    def measure(cfg):
        return timing.time_gpu(lambda: launchers[cfg](y, *csr, d_x))

    name = f"{label}: ch14_spmv_csr_fast"
    choice, seconds = tuning.tuned_time(name, {c: c for c in launchers}, measure)
    return timing.Measurement(name, seconds, bytes=nbytes, config=choice.label)


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
    rows.append(_csr_fast_row(label, y, csr, d_x, n, want, nbytes))  # the CSR search, after the ladder
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
