"""Radix sort, one multi-bit pass, step 3 (PMPP 13.4-13.6): every key to its place in the output.

ch13_radix_scatter_direct  each thread ranks its key among its tile's keys of the same bucket
ch13_radix_scatter         the tile first sorted by the digit in shared memory (stable 1-bit
                           splits): neighbouring threads write neighbouring addresses
ch13_radix_scatter_coarse  keys only, COARSE keys per thread, WAYS-way splits with packed counters
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle
from helpers.rules import writes_in_thread_order

# FULL_MASK: a global of block_exclusive_scan, which timing.specialize compiles against this module
from .common import (  # noqa: F401
    BUCKETS,
    C_TILE,
    C_TPB,
    CHAPTER,
    COARSE,
    FULL_MASK,
    MAX_KEY,
    R_TPB,
    RADIX_BITS,
    SPLIT_BITS,
    WAYS,
    block_exclusive_scan,
    blocks_of,
    count_table,
    digit,
    draw_shift,
    exclusive,
    key_vals,
    make_keys,
    pass_order,
    radix_shapes,
)

# ------------------------------------------------------------------ specs


def scatter_spec(keys, vals, offsets, shift, n):
    order = pass_order(keys, shift)
    return {"keys_out": keys[order], "vals_out": vals[order]}


def scatter_coarse_spec(keys, offsets, shift, n):
    return keys[pass_order(keys, shift)]


# ------------------------------------------------------------------ cases


def scatter_cases(rng):
    cases = []
    for n, kind in radix_shapes(rng, R_TPB):
        keys, vals = key_vals(rng, n, kind)
        shift = draw_shift(rng)
        offsets = exclusive(count_table(keys, shift, n, R_TPB))
        cases.append(
            Case(
                blocks_of(n, R_TPB),
                R_TPB,
                dict(
                    keys_out=np.zeros(n, np.uint32),
                    vals_out=np.zeros(n, np.int32),
                    keys=keys,
                    vals=vals,
                    offsets=offsets,
                    shift=shift,
                    n=n,
                ),
            )
        )
    return cases


def scatter_coarse_cases(rng):
    cases = []
    for n, kind in radix_shapes(rng, C_TILE):
        keys = make_keys(rng, n, kind)
        shift = draw_shift(rng)
        offsets = exclusive(count_table(keys, shift, n, C_TILE))
        cases.append(
            Case(
                blocks_of(n, C_TILE),
                C_TPB,
                dict(keys_out=np.zeros(n, np.uint32), keys=keys, offsets=offsets, shift=shift, n=n),
            )
        )
    return cases


# ------------------------------------------------------------------ the stable 1-bit split (device function)


@cuda.jit(device=True)
def split_shared(k_s, v_s, ones, bit, t, bd):
    """Stable 1-bit split of the block's `bd` keys (and values) in shared memory, in place.

    Every thread holds one slot. Keys whose `bit` is 0 move to the front, keys whose bit is 1 to the
    back; within each group the order is kept (that is what makes radix sort work).
    """
    key = k_s[t]
    val = v_s[t]
    b = (key >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b  # exclusive: the ones strictly before t
    total = ones[bd - 1]
    if b == 0:
        dst = t - before
    else:
        dst = bd - total + before
    k_s[dst] = key  # every thread read its slot before the barriers above
    v_s[dst] = val
    cuda.syncthreads()


# ------------------------------------------------------------------ rung 1: direct scatter


@cuda.jit
def radix_scatter_direct(keys_out, vals_out, keys, vals, offsets, shift, n):
    d_s = cuda.shared.array(R_TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    d = digit(keys[i], shift) if i < n else BUCKETS
    d_s[t] = d
    cuda.syncthreads()
    if i < n:
        # rank among this block's keys of the same bucket: count the earlier ones
        rank = 0
        for s in range(t):
            if d_s[s] == d:
                rank += 1
        dst = offsets[d * cuda.gridDim.x + cuda.blockIdx.x] + rank
        keys_out[dst] = keys[i]
        vals_out[dst] = vals[i]


RADIX_SCATTER_DIRECT = Puzzle(
    name="ch13_radix_scatter_direct",
    title="Radix pass 3, first try: scatter straight to global memory",
    statement="""Each thread writes its key-value pair to `offsets[d * gridDim.x + b]` plus its rank
among the earlier keys of the same bucket in its tile.""",
    outputs=("keys_out", "vals_out"),
    spec=scatter_spec,
    cases=scatter_cases,
    reference=radix_scatter_direct,
    chapter=CHAPTER,
)


# ------------------------------------------------------------------ rung 2: sorted tile, coalesced scatter


@cuda.jit
def radix_scatter(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    first = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    blk = cuda.blockIdx.x
    i = blk * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    ### BEGIN SOLUTION
    # sort the tile by the digit: one stable split per bit, lowest bit first
    for b in range(RADIX_BITS):
        split_shared(k_s, v_s, ones, shift + b, t, bd)
    # where each bucket starts in the sorted tile
    d = digit(k_s[t], shift)
    if t == 0 or digit(k_s[t - 1], shift) != d:
        first[d] = t
    cuda.syncthreads()
    if i < n:
        # sorted position t is the (t - first[d])-th key of bucket d in this tile
        dst = offsets[d * cuda.gridDim.x + blk] + t - first[d]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]
    ### END SOLUTION


SORTED_TILE = (
    "Sort the tile by its digit in shared memory first: then thread t writes sorted position t, and the "
    "keys of each bucket go out side by side."
)

RADIX_SCATTER = Puzzle(
    name="ch13_radix_scatter",
    title="Radix pass 3: sort the tile locally, then scatter",
    statement=f"""As the direct scatter, but first sort the tile by its digit in shared memory with
`RADIX_BITS = {RADIX_BITS}` stable splits (`split_shared`, lowest bit first). Then the tile's keys of each
bucket sit together: sorted position `t` holding a key of bucket `d` goes to `offsets[d * gridDim.x + b]`
plus `t` minus the position where bucket `d` starts in the sorted tile. Neighbouring threads now write
neighbouring addresses (checked: a tile's writes, thread by thread, jump at most `BUCKETS - 1` times).""",
    outputs=("keys_out", "vals_out"),
    spec=scatter_spec,
    cases=scatter_cases,
    reference=radix_scatter,
    rules=tuple(writes_in_thread_order(a, BUCKETS - 1, SORTED_TILE) for a in ("keys_out", "vals_out")),
    hints=(
        "Call split_shared(k_s, v_s, ones, shift + b, t, bd) for b = 0 .. RADIX_BITS - 1.",
        "Bucket d starts at the sorted position t where digit(k_s[t]) differs from digit(k_s[t - 1]) "
        "(or t == 0): that thread writes first[d] = t. Barrier, then scatter.",
        "The padding keys (MAX_KEY) sort to the end of the tile: only positions t < (keys in the tile) "
        "are written, and that is exactly i < n.",
    ),
    chapter=CHAPTER,
)


# ------------------------------------------------------------------ rung 3: coarsened, keys only


@cuda.jit
def radix_scatter_coarse(keys_out, keys, offsets, shift, n):
    k_s = cuda.shared.array(C_TILE, numba.uint32)
    warp_tot = cuda.shared.array(32, numba.int64)
    first = cuda.shared.array(BUCKETS, numba.int32)
    mine = cuda.local.array(COARSE, numba.uint32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    tile = cuda.blockIdx.x
    base = tile * COARSE * bd
    for d in range(t, BUCKETS, bd):
        first[d] = 0
    for c in range(COARSE):
        p = c * bd + t  # coalesced: a warp reads 32 neighbouring keys
        k_s[p] = keys[base + p] if base + p < n else np.uint32(MAX_KEY)
    cuda.syncthreads()
    # WAYS-way stable splits, SPLIT_BITS bits at a time: per way one 16-bit counter, all packed in an
    # int64, so one block scan counts every way (a 1-bit split is the case WAYS = 2)
    for s in range(RADIX_BITS // SPLIT_BITS):
        low = shift + s * SPLIT_BITS
        packed = np.int64(0)
        for c in range(COARSE):
            mine[c] = k_s[t * COARSE + c]  # thread t owns COARSE consecutive slots
            packed += np.int64(1) << (16 * ((mine[c] >> low) & (WAYS - 1)))
        before, total = block_exclusive_scan(packed, warp_tot, t, bd)  # its barriers end every read
        # field w of `dst`: where this thread's next key of way w goes (the keys of lower ways first)
        dst = before + (total << 16) + (total << 32) + (total << 48)
        for c in range(COARSE):
            w = 16 * ((mine[c] >> low) & (WAYS - 1))
            k_s[(dst >> w) & 0xFFFF] = mine[c]
            dst += np.int64(1) << w
        cuda.syncthreads()
    for c in range(COARSE):
        p = c * bd + t
        d = digit(k_s[p], shift)
        if p == 0 or digit(k_s[p - 1], shift) != d:
            first[d] = p
    cuda.syncthreads()
    # first[d] now holds where bucket d starts in the tile; fold the tile's output offset into it
    for d in range(t, BUCKETS, bd):
        first[d] = offsets[d * cuda.gridDim.x + tile] - first[d]
    cuda.syncthreads()
    for c in range(COARSE):
        p = c * bd + t  # a warp writes 32 neighbouring sorted keys: few runs
        if base + p < n:
            key = k_s[p]
            keys_out[first[digit(key, shift)] + p] = key


RADIX_SCATTER_COARSE = Puzzle(
    name="ch13_radix_scatter_coarse",
    title="Coarsened local sort and scatter (keys only)",
    statement=f"""As the scatter, keys only, for tiles of `COARSE * blockDim = {C_TILE}` keys: each
thread owns `COARSE` consecutive slots of the tile during the splits, so one block-wide scan (warp
shuffles) serves `COARSE` keys; each split handles `SPLIT_BITS = {SPLIT_BITS}` bits at once (a {WAYS}-way
split: one 16-bit counter per way, packed in an int64, scanned together); the coalesced loads and writes
stride by `blockDim`.""",
    outputs=("keys_out",),
    spec=scatter_coarse_spec,
    cases=scatter_coarse_cases,
    reference=radix_scatter_coarse,
    chapter=CHAPTER,
)


PUZZLES = [RADIX_SCATTER_DIRECT, RADIX_SCATTER, RADIX_SCATTER_COARSE]
