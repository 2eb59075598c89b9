"""What both histogram ladders share: the constants, the NumPy truth, the data, the cases and the
statement's common paragraphs."""

import math

import numpy as np

from helpers.puzzle import Budget, Case, edge_sizes

NUM_BINS = 64
BIN_WIDTH = 16
MAX_VALUE = NUM_BINS * BIN_WIDTH
CFACTOR = 4  # contiguous coarsening: elements per thread
UNROLL = 4  # unrolled: loads in flight per thread per trip
CHAPTER = "pmpp-09"


def histogram(data):
    """NumPy truth."""
    return np.bincount(data // BIN_WIDTH, minlength=NUM_BINS).astype(np.int32)


def spec(hist, data, n):
    """`hist` arrives holding earlier launches' counts: this launch adds its own."""
    return hist + histogram(data)


def _data(rng, n):
    """Half uniform values, half long runs of one value (what aggregation is for), shuffled in chunks."""
    k = n // 2
    uniform = rng.integers(0, MAX_VALUE, k)
    runs = np.repeat(rng.integers(0, MAX_VALUE, n), rng.integers(1, 200, n))[: n - k]
    return np.concatenate([runs, uniform]).astype(np.int32)


def _earlier_counts(rng):
    """What earlier launches left in `hist`: non-zero, so a kernel that clears or overwrites a bin
    (`=` for `+=`) is wrong on every case."""
    return rng.integers(1, 1000, NUM_BINS).astype(np.int32)


SIZES = (300, 45, 1000, 777, 130)  # case 0's size is SIZES[0]; the others are drawn per seed
SMALL_BLOCKS = (32, 48)  # fewer threads than NUM_BINS: a thread must zero and flush several bins
BIG_BLOCKS = (96, 128)  # more threads than NUM_BINS: some threads own no bin at all


def _cases(rng, grid_of, first_block=64, per_thread=1):
    """Case 0 the notebook's (SIZES[0] elements, `first_block` threads); then, per seed, n at the edges
    around what one block covers (1, that - 1, that, that + 1), a few blocks, and more elements than
    the old fixed sizes (1153-1300: more than 6 trips round the largest interleaved grid), in blocks
    of a size drawn from SMALL_BLOCKS; and one case in blocks drawn from BIG_BLOCKS. So every seed
    has blocks smaller and larger than the histogram: a kernel that assumes a block has one thread
    per bin (zeroing or flushing only `hist_s[threadIdx.x]`) fails on every seed."""
    data_rng, start_rng = rng, rng.spawn(1)[0]  # the data drawn as before; the starting counts apart
    first = (SIZES[0], first_block)
    threads = int(data_rng.choice(SMALL_BLOCKS))
    sizes = edge_sizes(data_rng, SIZES[0], threads * per_thread, (1153, 1300))[1:]
    shapes = [first] + [(n, threads) for n in sizes]
    big = int(data_rng.choice(BIG_BLOCKS))
    shapes.append((int(data_rng.integers(4, 9)) * big * per_thread + int(data_rng.integers(1, big)), big))
    return [
        Case(
            grid=grid_of(n, b),
            block=b,
            args={"hist": _earlier_counts(start_rng), "data": _data(data_rng, n), "n": n},
        )
        for n, b in shapes
    ]


def cases_one_each(rng):
    # Case 0's block is larger than NUM_BINS (one atomic per element would break the budget)
    return _cases(rng, lambda n, b: math.ceil(n / b), first_block=128)


def cases_contiguous(rng):
    return _cases(rng, lambda n, b: math.ceil(n / (b * CFACTOR)), per_thread=CFACTOR)


def cases_interleaved(rng):
    # Far fewer threads than elements, so every thread loops; never a single block unless tiny.
    return _cases(rng, lambda n, b: max(1, min(3, n // (4 * b))))


COMMON = f"""

`data` holds `n` int32 values in `[0, MAX_VALUE)`; bin `b` of `hist` (`NUM_BINS = {NUM_BINS}`
int32 counters) counts the values `v` with `v // BIN_WIDTH == b` (`BIN_WIDTH = {BIN_WIDTH}`).
`hist` already holds the counts of earlier launches: add this launch's counts to them, never
clear or overwrite a bin. Blocks are 1-D, of any size: fewer threads than bins or more."""

FLUSH = f"""
At the end each block adds its private counts into `hist` with at most one global atomic per
bin. Budget: at most `NUM_BINS = {NUM_BINS}` global atomics per block."""

# a block's private histogram in shared memory, flushed with one global atomic per bin
PRIVATE = Budget(global_atomics_per_block=NUM_BINS, shared_bytes=NUM_BINS * 4)
