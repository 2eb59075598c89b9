"""Radix sort, one multi-bit pass, step 2 (PMPP 13.4): the exclusive scan of the count table, in chunks.

ch13_chunk_sums   each block totals its chunk of the table (the carry-ins of the scan)
ch13_scan_counts  each block scans its chunk, starting from the totals of the chunks before it
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

# FULL_MASK: a global of block_exclusive_scan, which timing.specialize compiles against this module
from .common import (  # noqa: F401
    CHAPTER,
    FULL_MASK,
    S_ITEMS,
    block_exclusive_scan,
    blocks_of,
    exclusive,
)

# ------------------------------------------------------------------ specs


def chunk_sums_spec(counts, m, chunk):
    return np.array([counts[lo : lo + chunk].sum() for lo in range(0, m, chunk)], np.int32)


def scan_spec(counts, sums, m, chunk):
    return exclusive(counts)


# ------------------------------------------------------------------ cases


def scan_cases(rng):
    chunk = 32 * S_ITEMS
    cases = []
    # one block walking several rounds; several blocks, each with its own carry-in
    for m, grid in (
        (int(rng.integers(2 * chunk + 3, 3 * chunk)), 1),
        (int(rng.integers(3 * chunk, 5 * chunk)), 3),
        (1, 1),
        (chunk - 1, 2),
        (chunk, 1),
        (chunk + 1, 2),
    ):
        counts = rng.integers(0, 12, m).astype(np.int32)
        counts[0] = int(rng.integers(1, 12))
        size = blocks_of(m, grid)  # chunk: not a multiple of the round in most cases
        cases.append(
            Case(
                blocks_of(m, size),
                32,
                dict(
                    out=np.zeros(m, np.int32),
                    counts=counts,
                    sums=chunk_sums_spec(counts, m, size),
                    m=m,
                    chunk=size,
                ),
            )
        )
    return cases


def chunk_sums_cases(rng):
    return [
        Case(
            c.grid,
            32,
            dict(
                sums=np.zeros(c.grid, np.int32), counts=c.args["counts"], m=c.args["m"], chunk=c.args["chunk"]
            ),
        )
        for c in scan_cases(rng)
    ]


# ------------------------------------------------------------------ rung 1: chunk totals


@cuda.jit
def chunk_sums(sums, counts, m, chunk):
    warp_tot = cuda.shared.array(32, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lo = min(cuda.blockIdx.x * chunk, m)
    hi = min(lo + chunk, m)
    s = 0
    for k in range(lo + t, hi, bd * S_ITEMS):
        for c in range(S_ITEMS):  # S_ITEMS independent loads in flight per thread
            if k + c * bd < hi:
                s += counts[k + c * bd]
    _, total = block_exclusive_scan(s, warp_tot, t, bd)
    if t == 0:
        sums[cuda.blockIdx.x] = total


CHUNK_SUMS = Puzzle(
    name="ch13_chunk_sums",
    title="Radix pass 2a: chunk totals of the count table",
    statement="""The scan of the count table below runs on several blocks, each owning one chunk of
`chunk` entries (the last one shorter). First each block adds up its chunk: `sums[b]` is the total of
chunk `b` (reduce, then scan: chapter 11's hierarchical scan).""",
    outputs=("sums",),
    spec=chunk_sums_spec,
    cases=chunk_sums_cases,
    reference=chunk_sums,
    chapter=CHAPTER,
)


# ------------------------------------------------------------------ rung 2: the chunked scan


@cuda.jit
def scan_counts(out, counts, sums, m, chunk):
    warp_tot = cuda.shared.array(32, numba.int32)
    mine = cuda.local.array(S_ITEMS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lo = min(cuda.blockIdx.x * chunk, m)
    hi = min(lo + chunk, m)
    # carry-in: the totals of the chunks before this block's (one entry each)
    s = 0
    for k in range(t, cuda.blockIdx.x, bd):
        s += sums[k]
    _, carry = block_exclusive_scan(s, warp_tot, t, bd)
    start = lo
    while start < hi:
        base = start + t * S_ITEMS
        s = 0
        for c in range(S_ITEMS):
            mine[c] = counts[base + c] if base + c < hi else 0
            s += mine[c]
        before, total = block_exclusive_scan(s, warp_tot, t, bd)
        run = carry + before
        for c in range(S_ITEMS):
            if base + c < hi:
                out[base + c] = run
            run += mine[c]
        carry += total  # every thread keeps the same running total: no shared copy
        start += bd * S_ITEMS


SCAN_COUNTS = Puzzle(
    name="ch13_scan_counts",
    title="Radix pass 2: exclusive scan of the counts",
    statement="""Scan the count table (`m` entries), exclusive: `out[k]` is the sum of `counts[0..k-1]`.
Because the table is bucket-major, `out[d * tiles + b]` is where tile `b`'s keys of bucket `d` start in the
sorted output. Each block scans one chunk of `chunk` entries in rounds of
`S_ITEMS * blockDim`, carrying the running total; its carry-in is the sum of the totals `sums` of the
chunks before it.""",
    outputs=("out",),
    spec=scan_spec,
    cases=scan_cases,
    reference=scan_counts,
    chapter=CHAPTER,
)


PUZZLES = [CHUNK_SUMS, SCAN_COUNTS]
