"""Mutants of puzzles/pmpp/ch13_sorting.py (sorting); format: mutants/common.py."""

import numba
import numpy as np
from numba import cuda

from helpers.sim.errors import DataRace, OutOfBounds
from mutants.common import NO_BARRIER, OOB, RACE, WRONG, KernelDiagnosed
from puzzles.pmpp import ch13_sorting as ch13
from puzzles.pmpp.ch13_sorting import (
    BUCKETS,
    FULL_MASK,
    MAX_KEY,
    R_TPB,
    RADIX_BITS,
    SIGN,
    TPB,
    co_rank_runs,
    digit,
    split_shared,
)

OOB_OR_RACE = (KernelDiagnosed, (OutOfBounds, DataRace))


# ---------------------------------------------------------------- ch13_split


@cuda.jit
def split_inclusive(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t]  # inclusive: counts this key's own 1 as well
    total = ones[bd - 1]
    if i < n:
        dst = t - before if b == 0 else valid - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_unstable(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    if i < n:
        # the ones filled in from the back: a valid partition, but their order is reversed
        dst = t - before if b == 0 else valid - 1 - before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_no_final_barrier(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    before = ones[t] - b  # no barrier: the last thread may not have added its last term
    total = ones[bd - 1]
    if i < n:
        dst = t - before if b == 0 else valid - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_one_barrier_scan(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        if t >= stride:
            ones[t] += ones[t - stride]  # reads a neighbour that may already have updated itself
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    total = ones[bd - 1]
    if i < n:
        dst = t - before if b == 0 else valid - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_full_block_count(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    b = 0
    if i < n:
        b = (keys[i] >> bit) & 1
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    total = ones[bd - 1]
    if i < n:
        # assumes every section is full: in the last one the ones land past n
        dst = t - before if b == 0 else bd - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_mask_not_bit(keys_out, vals_out, keys, vals, bit, n):
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = 0
    if i < n:
        b = keys[i] & (1 << bit)  # 0 or 2**bit, not 0 or 1: the scan counts 2**bit per key
    ones[t] = b
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    before = ones[t] - b
    total = ones[bd - 1]
    if i < n:
        dst = t - before if b == 0 else valid - total + before
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_exclusive_shifted(keys_out, vals_out, keys, vals, bit, n):
    # variant: the exclusive scan directly (load shifted right by one), total = last exclusive + last bit
    ones = cuda.shared.array(TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    valid = min(bd, n - start)
    b = (keys[i] >> bit) & 1 if i < n else 0
    ones[t] = (keys[i - 1] >> bit) & 1 if t > 0 and i - 1 < n else 0
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        x = ones[t - stride] if t >= stride else 0
        cuda.syncthreads()
        ones[t] += x
        stride *= 2
    cuda.syncthreads()
    last = start + bd - 1
    total = ones[bd - 1] + ((keys[last] >> bit) & 1 if last < n else 0)
    if i < n:
        dst = t - ones[t] if b == 0 else valid - total + ones[t]
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


@cuda.jit
def split_count_zeros(keys_out, vals_out, keys, vals, bit, n):
    # variant: scan the zeros (padding counts as neither), double-buffered
    buf = cuda.shared.array((2, TPB), numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    i = start + t
    z = 0
    if i < n:
        z = 1 - ((keys[i] >> bit) & 1)
    src = 0
    buf[0, t] = z
    stride = 1
    while stride < bd:
        cuda.syncthreads()
        buf[1 - src, t] = buf[src, t] + (buf[src, t - stride] if t >= stride else 0)
        src = 1 - src
        stride *= 2
    cuda.syncthreads()
    zeros_before = buf[src, t] - z
    zeros = buf[src, bd - 1]
    if i < n:
        dst = zeros_before if z == 1 else zeros + (t - zeros_before)
        keys_out[start + dst] = keys[i]
        vals_out[start + dst] = vals[i]


# ---------------------------------------------------------------- ch13_radix_scatter


@cuda.jit
def scatter_block_offset_missed(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    first = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    for b in range(RADIX_BITS):
        split_shared(k_s, v_s, ones, shift + b, t, bd)
    d = digit(k_s[t], shift)
    if t == 0 or digit(k_s[t - 1], shift) != d:
        first[d] = t
    cuda.syncthreads()
    if i < n:
        dst = offsets[d * cuda.gridDim.x] + t - first[d]  # tile 0's offset for every tile
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


@cuda.jit
def scatter_no_bucket_start(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    for b in range(RADIX_BITS):
        split_shared(k_s, v_s, ones, shift + b, t, bd)
    d = digit(k_s[t], shift)
    if i < n:
        dst = offsets[d * cuda.gridDim.x + cuda.blockIdx.x] + t  # forgets where bucket d starts
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


@cuda.jit
def scatter_high_bit_first(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    first = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    for b in range(RADIX_BITS):
        # variant: most significant bit first. The buckets come out in another order (00, 10, 01, 11),
        # but each is contiguous and in its original order, which is all the scatter needs
        split_shared(k_s, v_s, ones, shift + RADIX_BITS - 1 - b, t, bd)
    d = digit(k_s[t], shift)
    if t == 0 or digit(k_s[t - 1], shift) != d:
        first[d] = t
    cuda.syncthreads()
    if i < n:
        dst = offsets[d * cuda.gridDim.x + cuda.blockIdx.x] + t - first[d]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


@cuda.jit
def scatter_same_bit(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    first = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    for _ in range(RADIX_BITS):
        split_shared(k_s, v_s, ones, shift, t, bd)  # the digit's lowest bit every time
    d = digit(k_s[t], shift)
    if t == 0 or digit(k_s[t - 1], shift) != d:
        first[d] = t
    cuda.syncthreads()
    if i < n:
        dst = offsets[d * cuda.gridDim.x + cuda.blockIdx.x] + t - first[d]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


@cuda.jit
def scatter_no_barrier(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    first = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    for b in range(RADIX_BITS):
        split_shared(k_s, v_s, ones, shift + b, t, bd)
    d = digit(k_s[t], shift)
    if t == 0 or digit(k_s[t - 1], shift) != d:
        first[d] = t
    # no barrier: first[d] may be read before the thread at the bucket's start has written it
    if i < n:
        dst = offsets[d * cuda.gridDim.x + cuda.blockIdx.x] + t - first[d]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


@cuda.jit
def scatter_unstable_split(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    first = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    for b in range(RADIX_BITS):
        bit = shift + b
        key = k_s[t]
        val = v_s[t]
        one = (key >> bit) & 1
        ones[t] = one
        stride = 1
        while stride < bd:
            cuda.syncthreads()
            x = ones[t - stride] if t >= stride else 0
            cuda.syncthreads()
            ones[t] += x
            stride *= 2
        cuda.syncthreads()
        before = ones[t] - one
        # ones packed from the back: partitioned, but in reverse order
        dst = t - before if one == 0 else bd - 1 - before
        k_s[dst] = key
        v_s[dst] = val
        cuda.syncthreads()
    d = digit(k_s[t], shift)
    if t == 0 or digit(k_s[t - 1], shift) != d:
        first[d] = t
    cuda.syncthreads()
    if i < n:
        dst = offsets[d * cuda.gridDim.x + cuda.blockIdx.x] + t - first[d]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


@cuda.jit
def scatter_zero_padding(keys_out, vals_out, keys, vals, offsets, shift, n):
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    first = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    i = cuda.blockIdx.x * bd + t
    k_s[t] = keys[i] if i < n else np.uint32(0)  # padding sorts first, ahead of the real keys
    v_s[t] = vals[i] if i < n else 0
    for b in range(RADIX_BITS):
        split_shared(k_s, v_s, ones, shift + b, t, bd)
    d = digit(k_s[t], shift)
    if t == 0 or digit(k_s[t - 1], shift) != d:
        first[d] = t
    cuda.syncthreads()
    if i < n:
        dst = offsets[d * cuda.gridDim.x + cuda.blockIdx.x] + t - first[d]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


@cuda.jit
def scatter_counting_rank(keys_out, vals_out, keys, vals, offsets, shift, n):
    # variant: the local sort by counting: position = keys of lower buckets + earlier keys of the same
    d_s = cuda.shared.array(R_TPB, numba.int32)
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    lower = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    blk = cuda.blockIdx.x
    i = blk * bd + t
    valid = min(bd, n - blk * bd)
    d = digit(keys[i], shift) if i < n else BUCKETS
    d_s[t] = d
    cuda.syncthreads()
    if t < BUCKETS:
        c = 0
        for s in range(valid):
            if d_s[s] < t:
                c += 1
        lower[t] = c
    cuda.syncthreads()
    if i < n:
        pos = lower[d]
        for s in range(t):
            if d_s[s] == d:
                pos += 1
        k_s[pos] = keys[i]
        v_s[pos] = vals[i]
    cuda.syncthreads()
    if i < n:
        e = digit(k_s[t], shift)
        dst = offsets[e * cuda.gridDim.x + blk] + t - lower[e]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


@cuda.jit
def scatter_histogram_starts(keys_out, vals_out, keys, vals, offsets, shift, n):
    # variant: bucket starts from a shared histogram of the tile (shared atomics), scanned by one thread
    k_s = cuda.shared.array(R_TPB, numba.uint32)
    v_s = cuda.shared.array(R_TPB, numba.int32)
    ones = cuda.shared.array(R_TPB, numba.int32)
    hist = cuda.shared.array(BUCKETS, numba.int32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    blk = cuda.blockIdx.x
    i = blk * bd + t
    if t < BUCKETS:
        hist[t] = 0
    k_s[t] = keys[i] if i < n else np.uint32(MAX_KEY)
    v_s[t] = vals[i] if i < n else 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist, digit(k_s[t], shift), 1)
    cuda.syncthreads()
    if t == 0:
        run = 0
        for d in range(BUCKETS):
            c = hist[d]
            hist[d] = run
            run += c
    for b in range(RADIX_BITS):
        split_shared(k_s, v_s, ones, shift + b, t, bd)  # its barriers cover thread 0's scan too
    if i < n:
        d = digit(k_s[t], shift)
        dst = offsets[d * cuda.gridDim.x + blk] + t - hist[d]
        keys_out[dst] = k_s[t]
        vals_out[dst] = v_s[t]


# ---------------------------------------------------------------- ch13_float_to_key


@cuda.jit
def float_no_flip(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = bits[i]  # signed floats read as unsigned: negatives sort last


@cuda.jit
def float_sign_bit_only(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = bits[i] ^ np.uint32(SIGN)  # negatives now first, but the larger magnitudes last


@cuda.jit
def float_flip_all(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = bits[i] ^ np.uint32(FULL_MASK)


@cuda.jit
def float_rule_swapped(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        if x >> 31:
            out[i] = x | np.uint32(SIGN)
        else:
            out[i] = x ^ np.uint32(FULL_MASK)


@cuda.jit
def float_abs(out, bits, n):
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        if x >> 31:
            out[i] = x ^ np.uint32(SIGN)  # clears the sign: sorts by magnitude
        else:
            out[i] = x | np.uint32(SIGN)


@cuda.jit
def float_no_guard(out, bits, n):
    i = cuda.grid(1)
    x = bits[i]
    if x >> 31:
        out[i] = x ^ np.uint32(FULL_MASK)
    else:
        out[i] = x | np.uint32(SIGN)


@cuda.jit
def float_mask(out, bits, n):
    # variant: one expression: the mask is all ones for negatives, the sign bit alone for positives
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        neg = np.uint32(x >> 31)
        out[i] = x ^ ((neg * np.uint32(FULL_MASK)) | np.uint32(SIGN))


@cuda.jit
def float_signed_compare(out, bits, n):
    # variant: the test as a comparison of the unsigned value with the sign bit
    i = cuda.grid(1)
    if i < n:
        x = bits[i]
        out[i] = ~x if x >= np.uint32(SIGN) else x + np.uint32(SIGN)


# ---------------------------------------------------------------- ch13_merge_pass


@cuda.jit
def merge_ties_to_b(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] < keys[mid + j]):  # B wins ties: unstable
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


@cuda.jit
def merge_unclipped(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = lo + width  # the last pair may be short: mid and hi can pass n
        hi = lo + 2 * width
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


@cuda.jit
def merge_pair_by_width(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % width  # pairs start every width, not every 2 * width
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


@cuda.jit
def merge_b_exhausted_unchecked(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if i < m and keys[lo + i] <= keys[mid + j]:  # B may be used up: keys[mid + j] is past it
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


@cuda.jit
def merge_local_output(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k - lo] = keys[src]  # the index within the pair: every pair writes the same slots
        vals_out[k - lo] = vals[src]


@cuda.jit
def merge_values_left_behind(keys_out, vals_out, keys, vals, width, n):
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        m = mid - lo
        i = co_rank_runs(k - lo, keys, lo, m, mid, hi - mid)
        j = k - lo - i
        if j >= hi - mid or (i < m and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[k]  # the value stays where it was


@cuda.jit
def merge_by_counting(keys_out, vals_out, keys, vals, width, n):
    # variant: no co-rank. Each input element finds its own output slot: its index in its run plus the
    # number of the other run's keys that precede it (A: those < it; B: those <= it, ties to A)
    x = cuda.grid(1)
    if x < n:
        lo = x - x % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        key = keys[x]
        if x < mid:
            a = mid
            lo_s, hi_s = mid, hi
            while lo_s < hi_s:  # first B key >= key
                h = (lo_s + hi_s) // 2
                if keys[h] < key:
                    lo_s = h + 1
                else:
                    hi_s = h
            dst = x + (lo_s - a)
        else:
            a = lo
            lo_s, hi_s = lo, mid
            while lo_s < hi_s:  # first A key > key
                h = (lo_s + hi_s) // 2
                if keys[h] <= key:
                    lo_s = h + 1
                else:
                    hi_s = h
            dst = lo + (x - mid) + (lo_s - a)
        keys_out[dst] = key
        vals_out[dst] = vals[x]


@cuda.jit
def merge_sequential_search(keys_out, vals_out, keys, vals, width, n):
    # variant: co-rank by a linear walk instead of a binary search (slow, but right)
    k = cuda.grid(1)
    if k < n:
        lo = k - k % (2 * width)
        mid = min(lo + width, n)
        hi = min(lo + 2 * width, n)
        i = 0
        j = 0
        while i + j < k - lo:
            if j >= hi - mid or (i < mid - lo and keys[lo + i] <= keys[mid + j]):
                i += 1
            else:
                j += 1
        if j >= hi - mid or (i < mid - lo and keys[lo + i] <= keys[mid + j]):
            src = lo + i
        else:
            src = mid + j
        keys_out[k] = keys[src]
        vals_out[k] = vals[src]


MUTANTS = {
    "ch13_split": [
        ("inclusive_scan", split_inclusive, *OOB_OR_RACE),
        ("unstable_ones", split_unstable, *WRONG),
        ("no_barrier_before_total", split_no_final_barrier, *RACE),
        ("one_barrier_per_step", split_one_barrier_scan, *RACE),
        ("full_section_assumed", split_full_block_count, *OOB),
        ("mask_not_bit", split_mask_not_bit, *OOB_OR_RACE),
    ],
    "ch13_radix_scatter": [
        ("block_offset_missed", scatter_block_offset_missed, *RACE),
        ("bucket_start_missed", scatter_no_bucket_start, *OOB_OR_RACE),
        ("same_bit_every_split", scatter_same_bit, *RACE),
        ("no_barrier_before_scatter", scatter_no_barrier, *NO_BARRIER),
        ("unstable_split", scatter_unstable_split, *OOB_OR_RACE),
        ("padding_sorts_first", scatter_zero_padding, *OOB_OR_RACE),
    ],
    "ch13_float_to_key": [
        ("no_flip", float_no_flip, *WRONG),
        ("sign_bit_only", float_sign_bit_only, *WRONG),
        ("flip_all", float_flip_all, *WRONG),
        ("rule_swapped", float_rule_swapped, *WRONG),
        ("abs", float_abs, *WRONG),
        ("no_guard", float_no_guard, *OOB),
    ],
    "ch13_merge_pass": [
        ("ties_to_b", merge_ties_to_b, *WRONG),
        ("last_pair_unclipped", merge_unclipped, *OOB),
        ("pairs_every_width", merge_pair_by_width, *WRONG),
        ("b_exhausted_unchecked", merge_b_exhausted_unchecked, *OOB),
        ("output_index_in_pair", merge_local_output, *RACE),
        ("values_left_behind", merge_values_left_behind, *WRONG),
    ],
}

VARIANTS = {
    "ch13_split": [("exclusive_shifted", split_exclusive_shifted), ("count_zeros_double", split_count_zeros)],
    "ch13_radix_scatter": [
        ("counting_rank", scatter_counting_rank),
        ("histogram_starts", scatter_histogram_starts),
        ("high_bit_first", scatter_high_bit_first),
    ],
    "ch13_float_to_key": [("mask", float_mask), ("compare", float_signed_compare)],
    "ch13_merge_pass": [("by_counting", merge_by_counting), ("sequential_search", merge_sequential_search)],
}

# exercises on three seeds, the worked kernels on two (as the chapter's tests ran them)
SEEDS = {p.name: (0, 1, 2) if p.name in MUTANTS else (0, 1) for p in ch13.PUZZLES}
