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


def spec(data, n):
    return histogram(data)


def _data(rng, n):
    """Half uniform values, half long runs of one value (what aggregation is for), shuffled in chunks."""
    k = n // 2
    uniform = rng.integers(0, MAX_VALUE, k)
    runs = np.repeat(rng.integers(0, MAX_VALUE, n), rng.integers(1, 200, n))[: n - k]
    return np.concatenate([runs, uniform]).astype(np.int32)


SIZES = (300, 45, 1000, 777, 130)  # case 0's size is SIZES[0]; the others are drawn per seed


def _cases(rng, grid_of, block=(64, 32, 64, 48, 32), per_thread=1):
    """Case 0 the notebook's (SIZES[0] elements, block[0] threads); then per seed one block size drawn
    from `block` and n at the edges around what one block covers (1, that - 1, that, that + 1), a few
    blocks, and more elements than the old fixed sizes (1153-1300: more than 6 trips round
    the largest interleaved grid)."""
    first = Case(
        grid=grid_of(SIZES[0], block[0]),
        block=block[0],
        args={"hist": np.empty(NUM_BINS, np.int32), "data": _data(rng, SIZES[0]), "n": SIZES[0]},
    )
    threads = int(rng.choice(block))
    sizes = edge_sizes(rng, SIZES[0], threads * per_thread, (1153, 1300))[1:]
    return [first] + [
        Case(
            grid=grid_of(n, threads),
            block=threads,
            args={"hist": np.empty(NUM_BINS, np.int32), "data": _data(rng, n), "n": n},
        )
        for n in sizes
    ]


def cases_one_each(rng):
    # Some blocks larger than NUM_BINS (one atomic per element would break the budget), some smaller
    # (zeroing and flushing need a loop).
    return _cases(rng, lambda n, b: math.ceil(n / b), block=(128, 32, 96, 80, 48))


def cases_contiguous(rng):
    return _cases(rng, lambda n, b: math.ceil(n / (b * CFACTOR)), per_thread=CFACTOR)


def cases_interleaved(rng):
    # Far fewer threads than elements, so every thread loops; never a single block unless tiny.
    return _cases(rng, lambda n, b: max(1, min(3, n // (4 * b))))


COMMON = f"""

`data` holds `n` int32 values in `[0, MAX_VALUE)`; bin `b` of `hist` (`NUM_BINS = {NUM_BINS}`
int32 counters, zero at the start) counts the values `v` with `v // BIN_WIDTH == b`
(`BIN_WIDTH = {BIN_WIDTH}`). Blocks are 1-D."""

FLUSH = f"""
At the end each block adds its private counts into `hist` with at most one global atomic per
bin. Budget: at most `NUM_BINS = {NUM_BINS}` global atomics per block."""

# a block's private histogram in shared memory, flushed with one global atomic per bin
PRIVATE = Budget(global_atomics_per_block=NUM_BINS, shared_bytes=NUM_BINS * 4)
