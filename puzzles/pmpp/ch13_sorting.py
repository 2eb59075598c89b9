"""PMPP chapter 13: sorting. Radix sort (split, bucket counts, scan, coalesced scatter, coarsening),
float keys, and merge sort built on the chapter 12 co-rank. (Over 500 lines: one chapter, one module,
as its notebook; the host pipelines and the GPU benchmark drive the same kernels.)

Radix sort, least significant digit first: each pass sorts the keys by one digit of RADIX_BITS bits,
*stably*, so the order the earlier (lower) digits left among keys with equal digits survives. After
32 / RADIX_BITS passes the keys are sorted. One pass is three launches (four on a big table):

1. count: each block counts its tile's keys per bucket (digit value) into `counts[d * tiles + tile]`;
2. scan: an exclusive scan of that bucket-major table gives, for every (bucket, tile), where the tile's
   keys of that bucket start in the output (all of bucket 0 first, tile by tile, then bucket 1, ...);
   a big table is scanned in chunks, one per block, after a launch that totals each chunk;
3. scatter: each block sorts its tile by the digit in shared memory (a few stable splits), then
   writes it out: neighbouring threads write neighbouring addresses within each bucket.

Merge sort: passes of width 1, 2, 4, ...; each merges pairs of neighbouring sorted runs with co-rank.
Both are stable; the puzzles check it with key-value pairs whose values are all distinct.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle

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

# what `from puzzles.pmpp.ch13_sorting import *` gives a notebook: constants only, never a kernel
__all__ = [
    "TPB",
    "R_TPB",
    "RADIX_BITS",
    "BUCKETS",
    "C_TPB",
    "COARSE",
    "C_TILE",
    "SPLIT_BITS",
    "WAYS",
    "S_ITEMS",
    "MAX_KEY",
    "SIGN",
    "FULL_MASK",
]
CHAPTER = "pmpp-13"


# ------------------------------------------------------------------ device functions


@cuda.jit(device=True)
def digit(key, shift):
    """The RADIX_BITS-bit digit of `key` starting at bit `shift`: its bucket in this pass."""
    return (key >> shift) & (BUCKETS - 1)


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


@cuda.jit(device=True)
def co_rank_runs(k, keys, a0, m, b0, n):
    """Chapter 12's co-rank on two runs of one array: A = keys[a0:a0 + m], B = keys[b0:b0 + n].

    The i such that the first k outputs of the merge are A's first i and B's first k - i (ties: A first).
    """
    i = min(k, m)
    j = k - i
    i_low = max(0, k - n)
    j_low = max(0, k - m)
    while True:
        if i > 0 and j < n and keys[a0 + i - 1] > keys[b0 + j]:
            delta = (i - i_low + 1) // 2
            j_low = j
            i -= delta
            j += delta
        elif j > 0 and i < m and keys[b0 + j - 1] >= keys[a0 + i]:
            delta = (j - j_low + 1) // 2
            i_low = i
            i += delta
            j -= delta
        else:
            return i


# ------------------------------------------------------------------ radix sort: one bit, one block


@cuda.jit
def split_kernel(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)  # keys in this block's section (fewer in the last block)
    ### BEGIN SOLUTION
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    # Kogge-Stone inclusive scan of the bits; minus b it is the exclusive one
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    # the scan's last writes must land before anyone reads the total
    cuda.syncthreads()
    before = ones[t] - b
    total = ones[bd - 1]
    if i < n:
        if b == 0:
            dst = t - before  # zeros keep their order, at the front
        else:
            dst = valid - total + before  # ones keep their order, after all zeros
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]
    ### END SOLUTION


# ------------------------------------------------------------------ radix sort: one multi-bit pass


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


# ------------------------------------------------------------------ radix sort: coarsened (keys only)


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


# ------------------------------------------------------------------ float keys


@cuda.jit
def float_to_key(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        ### BEGIN SOLUTION
        x = bits[i]
        if x >> 31:
            out[i] = x ^ np.uint32(FULL_MASK)  # negative: flip all, larger magnitudes first
        else:
            out[i] = x | np.uint32(SIGN)  # positive: after every negative
        ### END SOLUTION


@cuda.jit
def key_to_float(out, keys, n):
    i = cuda.grid(1)
    if i < n:
        k = keys[i]
        if k >> 31:
            out[i] = k ^ np.uint32(SIGN)
        else:
            out[i] = k ^ np.uint32(FULL_MASK)


# ------------------------------------------------------------------ merge sort


@cuda.jit
def merge_pass(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        ### BEGIN SOLUTION
        # k's pair of runs: A = [lo, mid), B = [mid, hi), both clipped at n
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        # output k is the smaller of the next element of A and of B (A on a tie: stable)
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]
        ### END SOLUTION


# ------------------------------------------------------------------ host pipelines (any engine)


def _blocks(n, section):
    return (n + section - 1) // section


def radix_sort(
    keys,
    vals,
    *,
    count=radix_count,
    scan=scan_counts,
    scatter=radix_scatter,
    tpb: int = R_TPB,
    bits: int = RADIX_BITS,
):
    """Sort key-value pairs (uint32 keys) with count, scan, scatter per pass; returns NumPy arrays.

    Launches run on whichever engine is active (the simulator on a CPU machine, else the GPU).
    """
    n = len(keys)
    tiles = _blocks(n, tpb)
    k_in, v_in = cuda.to_device(np.asarray(keys, np.uint32)), cuda.to_device(np.asarray(vals, np.int32))
    k_out, v_out = cuda.device_array(n, np.uint32), cuda.device_array(n, np.int32)
    counts = cuda.device_array(tiles << bits, np.int32)
    offsets = cuda.device_array(tiles << bits, np.int32)
    sums = cuda.device_array(1, np.int32)
    for shift in range(0, 32, bits):
        count[tiles, tpb](counts, k_in, shift, n)
        scan[1, 32](offsets, counts, sums, tiles << bits, tiles << bits)  # one chunk: no totals needed
        scatter[tiles, tpb](k_out, v_out, k_in, v_in, offsets, shift, n)
        k_in, k_out, v_in, v_out = k_out, k_in, v_out, v_in
    return k_in.copy_to_host(), v_in.copy_to_host()


def radix_sort_keys_plan(
    n: int,
    *,
    count=radix_count_coarse,
    scan=scan_counts,
    scatter=radix_scatter_coarse,
    sums_kernel=chunk_sums,
    tpb: int = C_TPB,
    coarse: int = COARSE,
    bits: int = RADIX_BITS,
    scan_tpb: int = 32,
    scan_blocks: int = 1,
):
    """Buffers allocated once; returns run(d_keys) -> device array of the sorted keys (keys only).

    The input array is left as it was; two work buffers ping-pong between the 32 / bits passes.
    """
    tiles = _blocks(n, tpb * coarse)
    bufs = [cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32)]
    counts = cuda.device_array(tiles << bits, np.int32)
    offsets = cuda.device_array(tiles << bits, np.int32)
    sums = cuda.device_array(scan_blocks, np.int32)
    chunk = _blocks(tiles << bits, scan_blocks)

    def run(d_keys):
        src = d_keys
        for p, shift in enumerate(range(0, 32, bits)):
            dst = bufs[p % 2]
            count[tiles, tpb](counts, src, shift, n)
            if scan_blocks > 1:  # reduce, then scan: each block's carry-in from the chunk totals
                sums_kernel[scan_blocks, scan_tpb](sums, counts, tiles << bits, chunk)
            scan[scan_blocks, scan_tpb](offsets, counts, sums, tiles << bits, chunk)
            scatter[tiles, tpb](dst, src, offsets, shift, n)
            src = dst
        return src

    return run


def sort_floats(x, sort_keys=None):
    """Sort float32 values by radix-sorting their bits: flip to sortable keys, sort, flip back."""
    x = np.ascontiguousarray(x, np.float32)
    n = x.size
    keys = np.zeros(n, np.uint32)
    float_to_key[_blocks(n, TPB), TPB](keys, x.view(np.uint32), n)
    if sort_keys is None:
        sorted_keys = radix_sort_keys_plan(n)(cuda.to_device(keys)).copy_to_host()
    else:
        sorted_keys = sort_keys(keys)
    bits = np.zeros(n, np.uint32)
    key_to_float[_blocks(n, TPB), TPB](bits, sorted_keys, n)
    return bits.view(np.float32)


def merge_sort(keys, vals, *, kernel=merge_pass, tpb: int = TPB):
    """Stable merge sort of key-value pairs: passes of width 1, 2, 4, ... of `kernel`."""
    n = len(keys)
    k_in, v_in = cuda.to_device(np.asarray(keys, np.uint32)), cuda.to_device(np.asarray(vals, np.int32))
    k_out, v_out = cuda.device_array(n, np.uint32), cuda.device_array(n, np.int32)
    width = 1
    while width < n:
        kernel[_blocks(n, tpb), tpb](k_out, v_out, k_in, v_in, width, n)
        k_in, k_out, v_in, v_out = k_out, k_in, v_out, v_in
        width *= 2
    return k_in.copy_to_host(), v_in.copy_to_host()


# ------------------------------------------------------------------ specs


def _digits(keys, shift, bits=RADIX_BITS):
    return (keys.astype(np.uint64) >> np.uint64(shift)) & np.uint64((1 << bits) - 1)


def split_spec(keys, vals, bit, n):
    order = np.concatenate(
        [s + np.argsort((keys[s : s + TPB] >> np.uint32(bit)) & 1, kind="stable") for s in range(0, n, TPB)]
    )
    return {"keys_out": keys[order], "vals_out": vals[order]}


def count_table(keys, shift, n, section):
    tiles = _blocks(n, section)
    d = _digits(keys, shift).astype(np.int64)
    table = np.zeros((BUCKETS, tiles), np.int32)
    np.add.at(table, (d, np.arange(n) // section), 1)
    return table.ravel()


def count_spec(keys, shift, n):
    return count_table(keys, shift, n, R_TPB)


def count_coarse_spec(keys, shift, n):
    return count_table(keys, shift, n, C_TILE)


def exclusive(a):
    return (np.cumsum(a, dtype=np.int64) - a).astype(np.int32)


def chunk_sums_spec(counts, m, chunk):
    return np.array([counts[lo : lo + chunk].sum() for lo in range(0, m, chunk)], np.int32)


def scan_spec(counts, sums, m, chunk):
    return exclusive(counts)


def pass_order(keys, shift):
    """One radix pass: a stable sort by the digit."""
    return np.argsort(_digits(keys, shift), kind="stable")


def scatter_spec(keys, vals, offsets, shift, n):
    order = pass_order(keys, shift)
    return {"keys_out": keys[order], "vals_out": vals[order]}


def scatter_coarse_spec(keys, offsets, shift, n):
    return keys[pass_order(keys, shift)]


def flip_spec(bits, n):
    return np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(SIGN)).astype(np.uint32)


def unflip_spec(keys, n):
    return np.where(keys >> np.uint32(31), keys ^ np.uint32(SIGN), ~keys).astype(np.uint32)


def merge_pass_spec(keys, vals, width, n):
    order = np.concatenate(
        [lo + np.argsort(keys[lo : lo + 2 * width], kind="stable") for lo in range(0, n, 2 * width)]
    )
    return {"keys_out": keys[order], "vals_out": vals[order]}


# ------------------------------------------------------------------ cases

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


def _kv(rng, n, kind):
    return make_keys(rng, n, kind), make_vals(rng, n)


def split_cases(rng):
    # a random multi-block case first; sizes 1, TPB - 1, TPB, TPB + 1; the rest of the kinds
    shapes = [
        (int(rng.integers(33, 60)), "random"),
        (1, "random"),
        (TPB - 1, "dups"),
        (TPB, "equal"),
        (TPB + 1, "sorted"),
        (int(rng.integers(20, 32)), "reversed"),
        (int(rng.integers(17, 40)), "dups"),
    ]
    cases = []
    for n, kind in shapes:
        keys, vals = _kv(rng, n, kind)
        bit = int(rng.integers(0, 32))
        cases.append(
            Case(
                _blocks(n, TPB),
                TPB,
                dict(
                    keys_out=np.zeros(n, np.uint32),
                    vals_out=np.zeros(n, np.int32),
                    keys=keys,
                    vals=vals,
                    bit=bit,
                    n=n,
                ),
            )
        )
    return cases


def _radix_shapes(rng, tile):
    return [
        (int(rng.integers(2 * tile + 5, 3 * tile - 3)), "random"),
        (1, "random"),
        (tile - 1, "dups"),
        (tile, "sorted"),
        (tile + 1, "reversed"),
        (int(rng.integers(tile + 9, 2 * tile - 9)), "equal"),
    ]


def _shift(rng):
    return RADIX_BITS * int(rng.integers(0, 32 // RADIX_BITS))


def count_cases(rng):
    cases = []
    for n, kind in _radix_shapes(rng, R_TPB):
        tiles = _blocks(n, R_TPB)
        cases.append(
            Case(
                tiles,
                R_TPB,
                dict(
                    counts=np.zeros(BUCKETS * tiles, np.int32),
                    keys=make_keys(rng, n, kind),
                    shift=_shift(rng),
                    n=n,
                ),
            )
        )
    return cases


def count_coarse_cases(rng):
    cases = []
    for n, kind in _radix_shapes(rng, C_TILE):
        tiles = _blocks(n, C_TILE)
        cases.append(
            Case(
                tiles,
                C_TPB,
                dict(
                    counts=np.zeros(BUCKETS * tiles, np.int32),
                    keys=make_keys(rng, n, kind),
                    shift=_shift(rng),
                    n=n,
                ),
            )
        )
    return cases


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
        size = _blocks(m, grid)  # chunk: not a multiple of the round in most cases
        cases.append(
            Case(
                _blocks(m, size),
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


def scatter_cases(rng):
    cases = []
    for n, kind in _radix_shapes(rng, R_TPB):
        keys, vals = _kv(rng, n, kind)
        shift = _shift(rng)
        offsets = exclusive(count_table(keys, shift, n, R_TPB))
        cases.append(
            Case(
                _blocks(n, R_TPB),
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
    for n, kind in _radix_shapes(rng, C_TILE):
        keys = make_keys(rng, n, kind)
        shift = _shift(rng)
        offsets = exclusive(count_table(keys, shift, n, C_TILE))
        cases.append(
            Case(
                _blocks(n, C_TILE),
                C_TPB,
                dict(keys_out=np.zeros(n, np.uint32), keys=keys, offsets=offsets, shift=shift, n=n),
            )
        )
    return cases


def make_floats(rng, n):
    """Non-integer floats of both signs and magnitudes from 1e-30 to 1e30, with zeros of both signs,
    infinities and repeats where there is room."""
    x = (rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-30, 30, n)).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1.5, -1.5], np.float32)
    if n >= 16:
        pos = rng.choice(n, special.size, replace=False)
        x[pos] = special
        x[rng.integers(0, n)] = x[rng.integers(0, n)]
    return x


def _float_sizes(rng):
    return (int(rng.integers(20, 40)), 1, TPB - 1, TPB, TPB + 1)


def float_cases(rng):
    cases = []
    for n in _float_sizes(rng):
        bits = make_floats(rng, n).view(np.uint32)
        cases.append(Case(_blocks(n, TPB), TPB, dict(out=np.zeros(n, np.uint32), bits=bits, n=n)))
    return cases


def unflip_cases(rng):
    cases = []
    for n in _float_sizes(rng):
        keys = flip_spec(make_floats(rng, n).view(np.uint32), n)
        cases.append(Case(_blocks(n, TPB), TPB, dict(out=np.zeros(n, np.uint32), keys=keys, n=n)))
    return cases


def merge_pass_cases(rng):
    # widths 1, 2, a non-power of two, a short last pair, one run longer than n (nothing to merge)
    shapes = [
        (int(rng.integers(30, 45)), 4),
        (int(rng.integers(20, 30)), 1),
        (1, 1),
        (int(rng.integers(17, 29)), 3),
        (int(rng.integers(25, 40)), 16),
        (TPB + 1, 2),
        (11, 16),
    ]
    cases = []
    for (n, width), kind in zip(
        shapes, ("random", "dups", "random", "equal", "dups", "reversed", "sorted"), strict=True
    ):
        keys, vals = _kv(rng, n, kind)
        # each run of `width` arrives sorted (stably, values following keys)
        for lo in range(0, n, width):
            o = np.argsort(keys[lo : lo + width], kind="stable")
            keys[lo : lo + width] = keys[lo : lo + width][o]
            vals[lo : lo + width] = vals[lo : lo + width][o]
        cases.append(
            Case(
                _blocks(n, TPB),
                TPB,
                dict(
                    keys_out=np.zeros(n, np.uint32),
                    vals_out=np.zeros(n, np.int32),
                    keys=keys,
                    vals=vals,
                    width=width,
                    n=n,
                ),
            )
        )
    return cases


# ------------------------------------------------------------------ puzzles

PUZZLES = [
    Puzzle(
        name="ch13_split",
        title="Radix sort, one bit: a stable split",
        statement=f"""Each block of `TPB = {TPB}` threads owns a section of `TPB` key-value pairs (fewer in
the last block). Reorder the section by bit `bit` of the keys: keys whose bit is 0 first, then keys whose
bit is 1, each group in its original order, values travelling with their keys. A key whose bit is 0 goes
to its index minus the number of 1s before it; a key whose bit is 1 goes after all the section's zeros,
plus the number of 1s before it. An **exclusive scan** of the bits in shared memory gives those counts.""",
        outputs=("keys_out", "vals_out"),
        spec=split_spec,
        cases=split_cases,
        reference=split_kernel,
        hints=(
            "b = (keys[i] >> bit) & 1; threads past n count as 0.",
            "Kogge-Stone gives the inclusive scan; the exclusive one (1s strictly before t) is it minus b. "
            "After the loop the section's total is the last thread's entry.",
            "valid = the section's number of keys; a 1 goes to valid - total + before. A barrier between "
            "the scan's last write and the reads of the total.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
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
    ),
    Puzzle(
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
    ),
    Puzzle(
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
    ),
    Puzzle(
        name="ch13_radix_scatter_direct",
        title="Radix pass 3, first try: scatter straight to global memory",
        statement="""Each thread writes its key-value pair to `offsets[d * gridDim.x + b]` plus its rank
among the earlier keys of the same bucket in its tile.""",
        outputs=("keys_out", "vals_out"),
        spec=scatter_spec,
        cases=scatter_cases,
        reference=radix_scatter_direct,
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch13_radix_scatter",
        title="Radix pass 3: sort the tile locally, then scatter",
        statement=f"""As the direct scatter, but first sort the tile by its digit in shared memory with
`RADIX_BITS = {RADIX_BITS}` stable splits (`split_shared`, lowest bit first). Then the tile's keys of each
bucket sit together: sorted position `t` holding a key of bucket `d` goes to `offsets[d * gridDim.x + b]`
plus `t` minus the position where bucket `d` starts in the sorted tile. Neighbouring threads now write
neighbouring addresses.""",
        outputs=("keys_out", "vals_out"),
        spec=scatter_spec,
        cases=scatter_cases,
        reference=radix_scatter,
        hints=(
            "Call split_shared(k_s, v_s, ones, shift + b, t, bd) for b = 0 .. RADIX_BITS - 1.",
            "Bucket d starts at the sorted position t where digit(k_s[t]) differs from digit(k_s[t - 1]) "
            "(or t == 0): that thread writes first[d] = t. Barrier, then scatter.",
            "The padding keys (MAX_KEY) sort to the end of the tile: only positions t < (keys in the tile) "
            "are written, and that is exactly i < n.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch13_radix_count_coarse",
        title="Coarsened count",
        statement=f"""As the count, but each block of `C_TPB = {C_TPB}` threads counts a tile of
`COARSE * blockDim = {C_TILE}` keys, reading `COARSE` keys per thread, coalesced.""",
        outputs=("counts",),
        spec=count_coarse_spec,
        cases=count_coarse_cases,
        reference=radix_count_coarse,
        chapter=CHAPTER,
    ),
    Puzzle(
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
    ),
    Puzzle(
        name="ch13_float_to_key",
        title="Float keys: the sign flip",
        statement="""`bits` holds float32 values reinterpreted as uint32. Write sortable keys: for a
negative float (sign bit set) flip every bit; for a positive one set the sign bit. As unsigned integers,
the keys are then in the floats' order (-0.0 just before +0.0).""",
        outputs=("out",),
        spec=flip_spec,
        cases=float_cases,
        reference=float_to_key,
        hints=(
            "x >> 31 is the sign bit.",
            "Negative floats compare backwards as integers: a larger magnitude has larger bits. Flipping "
            "every bit reverses them and puts them below every positive key.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch13_key_to_float",
        title="Float keys: flip back",
        statement="""The inverse of the sign flip: a key with its top bit set came from a positive float
(clear that bit); any other key came from a negative one (flip every bit).""",
        outputs=("out",),
        spec=unflip_spec,
        cases=unflip_cases,
        reference=key_to_float,
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch13_merge_pass",
        title="Merge sort: one pass",
        statement="""`keys` is made of sorted runs of length `width` (the last one shorter). Merge each
pair of neighbouring runs, `[lo, lo + width)` and `[lo + width, lo + 2 * width)` with `lo` a multiple of
`2 * width` (clipped at `n`), stably: on a tie the key of the first run comes first; values travel with their
keys. Thread `k` writes output `k`: co-rank (`co_rank_runs`) says how many elements of each run come before
it; it is the smaller of the next one of each.""",
        outputs=("keys_out", "vals_out"),
        spec=merge_pass_spec,
        cases=merge_pass_cases,
        reference=merge_pass,
        hints=(
            "lo = k - k % (2 * width); mid = min(lo + width, n); hi = min(lo + 2 * width, n).",
            "i = co_rank_runs(k - lo, keys, lo, mid - lo, mid, hi - mid); j = k - lo - i.",
            "Take A's next (keys[lo + i]) if B is used up or A's is <= B's next, else B's: <= keeps "
            "ties stable.",
        ),
        chapter=CHAPTER,
    ),
]


# ------------------------------------------------------------------ GPU benchmark

# cupy.sort is a peer, not a ceiling; puzzles/bench.py judges goals against a ceiling row, so the benchmark
# lists CuPy's sort as that row (first) and the device copy after it (see benchmark()).
GOAL = {"ceiling": "cupy.sort", "fraction": 0.4, "best": "ch13_radix_scatter_coarse"}

# GPU shapes. Coarsened: 8-bit digits (4 passes, 256 buckets), tiles of 256 threads x 8 keys, four
# 4-way splits per pass. Plain: 4-bit digits (8 passes), 256 keys per tile, four 1-bit splits.
GPU = dict(RADIX_BITS=8, BUCKETS=256, C_TPB=256, COARSE=8, C_TILE=2048, SPLIT_BITS=2, WAYS=4, S_ITEMS=8)
GPU_PLAIN = dict(RADIX_BITS=4, BUCKETS=16, R_TPB=256, S_ITEMS=8)
SCAN_BLOCKS = 256  # GPU: chunks (blocks) of the count-table scan


def gpu_kernels(coarse: dict | None = None, plain: dict | None = None) -> dict:
    """The puzzle kernels recompiled with GPU-sized constants (GPU, GPU_PLAIN, or the given shapes)."""
    from helpers.timing import specialize

    c = {**GPU, **(coarse or {})}
    p = {**GPU_PLAIN, **(plain or {})}
    return dict(
        count=specialize(radix_count, [digit], **p),
        scan=specialize(scan_counts, [block_exclusive_scan], **p),
        sums=specialize(chunk_sums, [block_exclusive_scan], **p),
        scatter=specialize(radix_scatter, [digit, split_shared], **p),
        count_coarse=specialize(radix_count_coarse, [digit], **c),
        scatter_coarse=specialize(radix_scatter_coarse, [digit, block_exclusive_scan], **c),
    )


def gpu_plans(
    n: int, k: dict, coarse: dict | None = None, plain: dict | None = None, scan_blocks: int = SCAN_BLOCKS
) -> dict:
    """{row name: run(d_keys)} for the coarsened and the plain keys-only radix sorts at GPU shapes."""
    c = {**GPU, **(coarse or {})}
    p = {**GPU_PLAIN, **(plain or {})}
    common = dict(scan=k["scan"], sums_kernel=k["sums"], scan_tpb=1024, scan_blocks=scan_blocks)
    return {
        "ch13_radix_scatter_coarse": radix_sort_keys_plan(
            n,
            count=k["count_coarse"],
            scatter=k["scatter_coarse"],
            tpb=c["C_TPB"],
            coarse=c["COARSE"],
            bits=c["RADIX_BITS"],
            **common,
        ),
        "ch13_radix_scatter": radix_sort_keys_plan(
            n,
            count=k["count"],
            scatter=_keys_only(k["scatter"]),
            tpb=p["R_TPB"],
            coarse=1,
            bits=p["RADIX_BITS"],
            **common,
        ),
    }


def benchmark(scale: float = 1.0):
    """Validate, then time, the full sorts of 2^26 uint32 keys (scaled) against cupy.sort and the copy.

    Each sort row is named after the scatter puzzle it is built around: "ch13_radix_scatter_coarse" is
    the whole coarsened sort (count_coarse, chunk sums, scan, scatter_coarse per pass), and
    "ch13_radix_scatter" the whole plain one (its key-value scatter moves a scratch value with every
    key, as the puzzle kernel does). Bytes counted for every sort: the keys read once and
    written once (2 * 4 * n), so GB/s ratios are throughput (keys/s) ratios. The cupy.sort row is
    marked as the ceiling so that the goal (a fraction of it) is judged by `python -m puzzles.bench`.
    """
    from helpers import timing

    rng = np.random.default_rng(13)
    k = gpu_kernels()

    # validation first: odd sizes, every kind of key, key-value stability for the key-value sorts
    for n in (1, 2047, 2049, max(5001, int(1_000_003 * scale))):
        for kind in KINDS:
            keys, vals = _kv(rng, n, kind) if n > 1 else (make_keys(rng, 1), make_vals(rng, 1))
            order = np.argsort(keys, kind="stable")
            for name, run in gpu_plans(n, k).items():
                got = run(cuda.to_device(keys)).copy_to_host()
                timing.validate(f"{name} (n={n}, {kind})", got, keys[order], rtol=0, atol=0)
            if n < 100_000:
                kv = {
                    "radix_sort with ch13_radix_scatter": radix_sort(
                        keys,
                        vals,
                        count=k["count"],
                        scan=k["scan"],
                        scatter=k["scatter"],
                        tpb=GPU_PLAIN["R_TPB"],
                        bits=GPU_PLAIN["RADIX_BITS"],
                    ),
                    "merge_sort with ch13_merge_pass": merge_sort(keys, vals, tpb=256),
                }
                for name, (gk, gv) in kv.items():
                    timing.validate(f"{name} (n={n}, {kind}) keys", gk, keys[order], rtol=0, atol=0)
                    timing.validate(f"{name} (n={n}, {kind}) values", gv, vals[order], rtol=0, atol=0)
    x = make_floats(rng, 100_003)
    got = sort_floats(
        x,
        sort_keys=lambda kk: gpu_plans(kk.size, k)["ch13_radix_scatter_coarse"](
            cuda.to_device(kk)
        ).copy_to_host(),
    )
    timing.validate("ch13 float sort", got, np.sort(x), rtol=0, atol=0)

    n = max(1 << 14, int((1 << 26) * scale))
    keys = make_keys(rng, n)
    expected = np.sort(keys)
    d_keys = cuda.to_device(keys)
    nbytes = 2 * 4 * n
    rows = []
    try:
        import cupy as cp
    except ImportError:
        cp = None
        print("CuPy is not installed: no cupy.sort row; the goal cannot be judged.")
    if cp is not None:
        c_keys = cp.asarray(keys)
        timing.validate("cupy.sort", cp.asnumpy(cp.sort(c_keys)), expected, rtol=0, atol=0)
        seconds = timing.time_gpu(lambda: cp.sort(c_keys), reps=10)
        rows.append(timing.Measurement("cupy.sort", seconds, bytes=nbytes, ceiling=True))
    copy = timing.copy_ceiling(n * 4)
    copy.ceiling = cp is not None  # without the peer, nothing may stand in for it
    rows.append(copy)

    for name, run in gpu_plans(n, k).items():
        timing.validate(name, run(d_keys).copy_to_host(), expected, rtol=0, atol=0)
        seconds = timing.time_gpu(lambda r=run: r(d_keys), warmup=1, reps=5, batch=2)
        rows.append(timing.Measurement(name, seconds, bytes=nbytes))
    for r in rows:
        print(
            f"{r.name}: {n / r.seconds / 1e9:.2f} G keys/s"
            if not r.name.startswith("device copy")
            else f"{r.name}: {r.gbps:.0f} GB/s"
        )
    return rows


def _keys_only(scatter_kv):
    """The key-value scatter used for keys alone: the values ride along in a scratch array."""
    scratch = {}

    def launch_config(grid, block):
        def run(keys_out, keys, offsets, shift, n):
            if n not in scratch:
                scratch[n] = (cuda.device_array(n, np.int32), cuda.device_array(n, np.int32))
            v_out, v_in = scratch[n]
            scatter_kv[grid, block](keys_out, v_out, keys, v_in, offsets, shift, n)

        return run

    class _Launcher:
        def __getitem__(self, cfg):
            return launch_config(*cfg)

    return _Launcher()
