"""What the sorting ladders share: the constants, the device functions more than one op calls (the
digit of a key, the block-wide exclusive scan), the keys and values every case draws, and the NumPy
helpers behind the radix specs."""

import numpy as np
from numba import cuda

TPB = 8  # threads per block in the split and merge puzzles
R_TPB = 64  # radix puzzles: two warps, so a warp sees only part of its block's tile
RADIX_BITS = 2  # bits per radix pass in the puzzles (the GPU benchmark: 8 coarsened, 4 plain)
BUCKETS = 4  # 1 << RADIX_BITS (shared array shapes must be plain constants)
C_TPB = 64  # coarsened radix: threads per block (whole warps: it shuffles)
COARSE = 2  # coarsened radix: keys per thread
C_TILE = 128  # COARSE * C_TPB keys per tile
SPLIT_BITS = 2  # coarsened: bits per local split (a WAYS-way split, packed counters)
WAYS = 4  # 1 << SPLIT_BITS
S_ITEMS = 2  # scan of the counts: consecutive entries per thread per round
MAX_KEY = 0xFFFFFFFF  # padding past n: it sorts after every real key of its bucket
SIGN = 0x80000000
FULL_MASK = 0xFFFFFFFF
CHAPTER = "pmpp-13"


def blocks_of(n, section):
    return (n + section - 1) // section


# ------------------------------------------------------------------ device functions


@cuda.jit(device=True)
def digit(key, shift):
    """The RADIX_BITS-bit digit of `key` starting at bit `shift`: its bucket in this pass."""
    return (key >> shift) & (BUCKETS - 1)


@cuda.jit(device=True)
def block_exclusive_scan(x, warp_tot, t, bd):
    """(exclusive prefix of x over the block's threads, block total); bd a multiple of 32.

    Shuffles scan each warp; every warp then scans the (at most 32) warp totals itself.
    """
    lane = t % 32
    warp = t // 32
    v = x
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, v, d)
        if lane >= d:
            v += y
        d *= 2
    if lane == 31:
        warp_tot[warp] = v
    cuda.syncthreads()
    w = warp_tot[lane] if lane < bd // 32 else 0
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, w, d)
        if lane >= d:
            w += y
        d *= 2
    total = cuda.shfl_sync(FULL_MASK, w, 31)
    earlier = cuda.shfl_sync(FULL_MASK, w, max(warp - 1, 0))
    if warp == 0:
        earlier = 0
    # warp_tot is rewritten by the next call
    cuda.syncthreads()
    return v - x + earlier, total


# ------------------------------------------------------------------ keys and values


KINDS = ("random", "dups", "equal", "sorted", "reversed")


def make_keys(rng, n, kind="random"):
    """uint32 keys over the whole range: random, few distinct values, all equal, sorted, reversed."""
    if kind == "dups":
        return rng.choice(rng.integers(0, 1 << 32, 3, dtype=np.uint64), n).astype(np.uint32)
    if kind == "equal":
        return np.full(n, rng.integers(1, 1 << 32, dtype=np.uint64), np.uint32)
    keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    if kind == "sorted":
        return np.sort(keys)
    if kind == "reversed":
        return np.sort(keys)[::-1].copy()
    return keys


def make_vals(rng, n):
    """Distinct values of both signs: any reordering of equal keys shows in them."""
    return (rng.choice(1 << 20, n, replace=False) - (1 << 19)).astype(np.int32)


def key_vals(rng, n, kind):
    return make_keys(rng, n, kind), make_vals(rng, n)


# ------------------------------------------------------------------ radix helpers: digits, counts, cases


def digits(keys, shift, bits=RADIX_BITS):
    return (keys.astype(np.uint64) >> np.uint64(shift)) & np.uint64((1 << bits) - 1)


def count_table(keys, shift, n, section):
    tiles = blocks_of(n, section)
    d = digits(keys, shift).astype(np.int64)
    table = np.zeros((BUCKETS, tiles), np.int32)
    np.add.at(table, (d, np.arange(n) // section), 1)
    return table.ravel()


def exclusive(a):
    return (np.cumsum(a, dtype=np.int64) - a).astype(np.int32)


def pass_order(keys, shift):
    """One radix pass: a stable sort by the digit."""
    return np.argsort(digits(keys, shift), kind="stable")


def radix_shapes(rng, tile):
    return [
        (int(rng.integers(2 * tile + 5, 3 * tile - 3)), "random"),
        (1, "random"),
        (tile - 1, "dups"),
        (tile, "sorted"),
        (tile + 1, "reversed"),
        (int(rng.integers(tile + 9, 2 * tile - 9)), "equal"),
    ]


def draw_shift(rng):
    return RADIX_BITS * int(rng.integers(0, 32 // RADIX_BITS))
