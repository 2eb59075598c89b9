"""Radix sort, one multi-bit pass, step 1 (PMPP 13.4): each tile counts its keys per bucket.

ch13_radix_count         one key per thread, counts in shared memory, a bucket-major table
ch13_radix_count_coarse  COARSE keys per thread (the coarsened sort's tiles)
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

from .common import (
    BUCKETS,
    C_TILE,
    C_TPB,
    CHAPTER,
    COARSE,
    R_TPB,
    RADIX_BITS,
    blocks_of,
    count_table,
    digit,
    draw_shift,
    make_keys,
    radix_shapes,
)

# ------------------------------------------------------------------ specs


def count_spec(keys, shift, n):
    return count_table(keys, shift, n, R_TPB)


def count_coarse_spec(keys, shift, n):
    return count_table(keys, shift, n, C_TILE)


# ------------------------------------------------------------------ cases


def count_cases(rng):
    cases = []
    for n, kind in radix_shapes(rng, R_TPB):
        tiles = blocks_of(n, R_TPB)
        cases.append(
            Case(
                tiles,
                R_TPB,
                dict(
                    counts=np.zeros(BUCKETS * tiles, np.int32),
                    keys=make_keys(rng, n, kind),
                    shift=draw_shift(rng),
                    n=n,
                ),
            )
        )
    return cases


def count_coarse_cases(rng):
    cases = []
    for n, kind in radix_shapes(rng, C_TILE):
        tiles = blocks_of(n, C_TILE)
        cases.append(
            Case(
                tiles,
                C_TPB,
                dict(
                    counts=np.zeros(BUCKETS * tiles, np.int32),
                    keys=make_keys(rng, n, kind),
                    shift=draw_shift(rng),
                    n=n,
                ),
            )
        )
    return cases


# ------------------------------------------------------------------ rung 1: counts per tile


@cuda.jit
def radix_count(counts, keys, shift, n):
    c_s = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    for d in range(t, BUCKETS, bd):
        c_s[d] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(c_s, digit(keys[i], shift), 1)
    cuda.syncthreads()
    # bucket-major: one scan of the table puts bucket d of every tile after all of bucket d - 1
    for d in range(t, BUCKETS, bd):
        counts[d * cuda.gridDim.x + cuda.blockIdx.x] = c_s[d]


RADIX_COUNT = Puzzle(
    name="ch13_radix_count",
    title="Radix pass 1: bucket counts per tile",
    statement=f"""Each block (a tile of `blockDim` keys) counts its keys per bucket, the bucket being the
`RADIX_BITS = {RADIX_BITS}`-bit digit `(key >> shift) & (BUCKETS - 1)`, and writes the count of bucket `d` of
tile `b` to `counts[d * gridDim.x + b]`.""",
    outputs=("counts",),
    spec=count_spec,
    cases=count_cases,
    reference=radix_count,
    chapter=CHAPTER,
)


# ------------------------------------------------------------------ rung 2: coarsened counts


@cuda.jit
def radix_count_coarse(counts, keys, shift, n):
    c_s = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    base = cuda.blockIdx.x * COARSE * bd
    for d in range(t, BUCKETS, bd):
        c_s[d] = 0
    cuda.syncthreads()
    for c in range(COARSE):
        i = base + c * bd + t  # coalesced: a warp reads 32 neighbouring keys
        if i < n:
            cuda.atomic.add(c_s, digit(keys[i], shift), 1)
    cuda.syncthreads()
    for d in range(t, BUCKETS, bd):
        counts[d * cuda.gridDim.x + cuda.blockIdx.x] = c_s[d]


RADIX_COUNT_COARSE = Puzzle(
    name="ch13_radix_count_coarse",
    title="Coarsened count",
    statement=f"""As the count, but each block of `C_TPB = {C_TPB}` threads counts a tile of
`COARSE * blockDim = {C_TILE}` keys, reading `COARSE` keys per thread, coalesced.""",
    outputs=("counts",),
    spec=count_coarse_spec,
    cases=count_coarse_cases,
    reference=radix_count_coarse,
    chapter=CHAPTER,
)


PUZZLES = [RADIX_COUNT, RADIX_COUNT_COARSE]
