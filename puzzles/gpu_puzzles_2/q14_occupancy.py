"""Puzzles II.14, Occupancy: choose the block size so that a T4 SM is full despite a big shared array."""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle
from helpers.rules import grid_stride_coalescing, min_occupancy

__all__ = ["BINS"]  # the notebook's constants (not BLOCK: that is the learner's choice)
BINS = 2048  # int32 bins: 8 KiB of shared memory per block
BLOCK = 128  # the reference's choice; the check reads the learner's from their kernel's globals
CHAPTER = "puzzles-2"
# a grid-stride loop reads whole lines of keys (~100%); a contiguous chunk per thread puts lanes k
# keys apart (the last case gives k >= 3 whatever BLOCK is: 33% or less)
COALESCED = 0.5


@cuda.jit
def occupancy_kernel(out, keys, size):
    bins = cuda.shared.array(BINS, numba.int32)
    t = cuda.threadIdx.x
    ### BEGIN SOLUTION
    for k in range(t, BINS, BLOCK):
        bins[k] = 0
    cuda.syncthreads()
    # grid-stride: the grid is whatever fills the GPU, the data any length
    for i in range(cuda.blockIdx.x * BLOCK + t, size, cuda.gridDim.x * BLOCK):
        cuda.atomic.add(bins, keys[i], 1)
    cuda.syncthreads()
    for k in range(t, BINS, BLOCK):
        c = bins[k]
        if c != 0:
            cuda.atomic.add(out, k, c)
    ### END SOLUTION


def spec(out, keys, size):
    # `out` arrives holding earlier batches' counts: this launch adds its own
    return (out + np.bincount(keys, minlength=BINS)).astype(np.int32)


def _earlier_counts(rng, bins):
    """What `out` holds before this launch: the counts of earlier batches of keys (its own stream,
    so the keys drawn from `rng` stay what they were)."""
    return rng.spawn(1)[0].integers(1, 200, bins).astype(np.int32)


def cases(rng, BLOCK=BLOCK):  # the learner's constant, passed by its name
    """The cases for a kernel written for blocks of BLOCK threads (Puzzle.choices)."""
    out = []
    for n, grid in (
        (int(rng.integers(600, 1200)), 2),
        (1, 1),
        (BLOCK + 1, 1),
        (int(rng.integers(2, 64)), 2),
        (int(rng.integers(300, 700)), 3),
        (3 * BLOCK + int(rng.integers(1, BLOCK)), 1),  # every thread at least 3 trips, any BLOCK
    ):
        keys = np.minimum(rng.geometric(0.004, n) - 1, BINS - 1).astype(np.int32)
        keys = rng.permutation(keys ^ int(rng.integers(0, BINS)))
        out.append(
            Case(grid=grid, block=BLOCK, args={"out": _earlier_counts(rng, BINS), "keys": keys, "size": n})
        )
    return out


STATEMENT = f"""\
A histogram with `BINS = {BINS}` bins, privatized in shared memory as in puzzle II.8: `{BINS * 4 // 1024}
KiB` of `int32` counters per block. The grid is small and fixed by the case (a few blocks), so
loop over the keys with a grid-stride loop (neighbouring threads read neighbouring keys on every
trip: a contiguous chunk of keys per thread is rejected, the reads of `keys` must be at least
{COALESCED:.0%} coalesced); `out` holds earlier batches' counts, and this launch
adds to them.

This time **you choose the block size**: set `BLOCK` in the cell above the kernel, and use it in
the kernel (the checker launches your kernel with `BLOCK` threads per block). The rule is
**100% occupancy on a T4**: every SM holding its maximum of 32 resident warps. A T4 SM holds at
most 16 blocks, 1024 threads (32 warps), 64 KiB of shared memory and 65536 registers; the number
of blocks that fit is the smallest of what each of those allows, and occupancy is those blocks'
warps over 32. With {BINS * 4 // 1024} KiB per block, shared memory caps the blocks per SM; work
out which block sizes still fill the SM (`t4_occupancy(threads, shared_bytes)` from
`helpers.metrics` computes it: `.fraction` is the occupancy, `.limit` the resource that runs out
first; it assumes 32 registers per thread, which is not what limits here).
Rule: T4 occupancy 100%. Budget: at most {BINS} global atomics per block; 1 global read per key."""

PUZZLES = [
    Puzzle(
        name="occupancy",
        title="Puzzle II.14: Occupancy",
        statement=STATEMENT,
        outputs=("out",),
        spec=spec,
        cases=cases,
        reference=occupancy_kernel,
        hints=(
            "64 KiB per SM divided by the shared memory one block uses is the most blocks an SM can hold.",
            "Those blocks must bring 32 warps between them; how many threads is that per block?",
            "Clearing and merging BINS counters with BLOCK threads: each thread takes every BLOCK-th bin.",
        ),
        budget=Budget(
            global_reads=lambda c: -(-c.args["size"] // (int(np.prod(c.grid)) * int(np.prod(c.block)))),
            global_writes=0,
            global_atomics_per_block=BINS,
        ),
        rules=(min_occupancy(1.0), grid_stride_coalescing(COALESCED, arrays=("keys",))),
        accumulate=("out",),
        chapter=CHAPTER,
        choices=("BLOCK",),
    )
]
