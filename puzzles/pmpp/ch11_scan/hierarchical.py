"""The hierarchical scan (PMPP 11.6): any length in three launches per level.

    ch11_scan_blocks  step 1: section scans, and each section's total into `sums`
    ch11_add_sums     step 3: every section gets the total of the sections before it

Step 2 scans `sums` with the same two kernels, recursively: hierarchical_plan below chains them.
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import CHAPTER, SIZES, TOL, TPB, _section_scan, _values, blocks_of, sizes

# ------------------------------------------------------------------ specs


def scan_blocks_spec(a, n):
    totals = [a[s : s + TPB].astype(np.float64).sum() for s in range(0, n, TPB)]
    return {"out": _section_scan(a, TPB), "sums": np.array(totals, np.float32)}


def add_sums_spec(partial, prefix, n):
    blk = np.arange(n) // TPB
    add = np.where(blk > 0, prefix[np.maximum(blk - 1, 0)], 0).astype(np.float64)
    return (partial.astype(np.float64) + add).astype(np.float32)


# ------------------------------------------------------------------ cases


def scan_blocks_cases(rng):
    return [
        Case(
            blocks_of(n, TPB),
            TPB,
            dict(
                out=np.zeros(n, np.float32),
                sums=np.zeros(blocks_of(n, TPB), np.float32),
                a=_values(rng, n),
                n=n,
            ),
        )
        for n in sizes(rng, SIZES[0], TPB, 7)
    ]


def add_sums_cases(rng):
    cases = []
    for n in sizes(rng, SIZES[0], TPB, 7):
        nb = blocks_of(n, TPB)
        cases.append(
            Case(
                nb,
                TPB,
                dict(
                    out=np.zeros(n, np.float32),
                    partial=_values(rng, n),
                    prefix=rng.uniform(-20, 20, nb).astype(np.float32),
                    n=n,
                ),
            )
        )
    return cases


# ------------------------------------------------------------------ rung 1: section scans and their totals


@cuda.jit
def scan_blocks(out, sums, a, n):
    xy = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    xy[t] = a[i] if i < n else 0.0
    stride = 1
    while stride < cuda.blockDim.x:
        cuda.syncthreads()
        if t >= stride:
            tmp = xy[t] + xy[t - stride]
        cuda.syncthreads()
        if t >= stride:
            xy[t] = tmp
        stride *= 2
    if i < n:
        out[i] = xy[t]
    # the section's total, for the next level
    if t == cuda.blockDim.x - 1:
        sums[cuda.blockIdx.x] = xy[t]


SCAN_BLOCKS = Puzzle(
    name="ch11_scan_blocks",
    title="Hierarchical scan, step 1: section scans and their totals",
    statement="""Kogge-Stone section scan, and the last thread of each block also writes the section's
total to `sums[blockIdx.x]`.""",
    outputs=("out", "sums"),
    spec=scan_blocks_spec,
    cases=scan_blocks_cases,
    reference=scan_blocks,
    chapter=CHAPTER,
    **TOL,
)


# ------------------------------------------------------------------ rung 2: add the block totals back


@cuda.jit
def add_block_sums(out, partial, prefix, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < n:
        if cuda.blockIdx.x > 0:
            out[i] = partial[i] + prefix[cuda.blockIdx.x - 1]
        else:
            out[i] = partial[i]
    ### END SOLUTION


ADD_SUMS = Puzzle(
    name="ch11_add_sums",
    title="Hierarchical scan, step 3: add the block totals back",
    statement=f"""`partial` holds section scans (sections of `TPB = {TPB}`); `prefix[b]` is the inclusive
scan of the section totals, so `prefix[b - 1]` is the sum of everything before section `b`. Write the
full scan: `out[i] = partial[i] + prefix[b - 1]` for `i` in section `b > 0`, and `partial[i]` in
section 0.""",
    outputs=("out",),
    spec=add_sums_spec,
    cases=add_sums_cases,
    reference=add_block_sums,
    hints=("Section 0 has nothing before it: prefix[-1] would silently read the last total.",),
    chapter=CHAPTER,
    **TOL,
)


PUZZLES = [SCAN_BLOCKS, ADD_SUMS]


# ------------------------------------------------------------------ the host pipeline (any engine)


def hierarchical_plan(n, scan_kernel=scan_blocks, add_kernel=add_block_sums, section=TPB):
    """Allocate every level's buffers once; return run(d_a) -> device array holding the inclusive scan.

    Level 1 scans sections of `a` and collects their totals; the totals are scanned the same way
    (recursively, until one section holds them all); then each section gets the total before it.
    """
    blocks = (n + section - 1) // section
    partial = cuda.device_array(n, np.float32)
    sums = cuda.device_array(blocks, np.float32)
    if blocks == 1:

        def run_one(d_a):
            scan_kernel[1, section](partial, sums, d_a, n)
            return partial

        return run_one
    inner = hierarchical_plan(blocks, scan_kernel, add_kernel, section)
    out = cuda.device_array(n, np.float32)

    def run(d_a):
        scan_kernel[blocks, section](partial, sums, d_a, n)
        prefix = inner(sums)
        add_kernel[blocks, section](out, partial, prefix, n)
        return out

    return run


def hierarchical_scan(a, scan_kernel=scan_blocks, add_kernel=add_block_sums, section=TPB):
    """Inclusive scan of any length with three launches per level; `a` is a NumPy or device array.

    Returns a device array. Runs on whichever engine launches run on (GPU or simulator).
    """
    d_a = cuda.to_device(a) if isinstance(a, np.ndarray) else a
    return hierarchical_plan(d_a.shape[0], scan_kernel, add_kernel, section)(d_a)
