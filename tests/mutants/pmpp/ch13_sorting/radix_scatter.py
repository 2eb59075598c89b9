"""Mutants of puzzles/pmpp/ch13_sorting/radix_scatter.py; format: mutants/common.py."""

import numba
import numpy as np
from numba import cuda

from helpers.sim.errors import DataRace, OutOfBounds
from mutants.common import NO_BARRIER, RACE, KernelDiagnosed, OverBudget
from puzzles.pmpp.ch13_sorting import BUCKETS, MAX_KEY, R_TPB, RADIX_BITS, digit, split_shared
from puzzles.pmpp.ch13_sorting.radix_scatter import PUZZLES, radix_scatter_direct

OOB_OR_RACE = (KernelDiagnosed, (OutOfBounds, DataRace))


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


MUTANTS = {
    "ch13_radix_scatter": [
        ("block_offset_missed", scatter_block_offset_missed, *RACE),
        ("bucket_start_missed", scatter_no_bucket_start, *OOB_OR_RACE),
        ("same_bit_every_split", scatter_same_bit, *RACE),
        ("no_barrier_before_scatter", scatter_no_barrier, *NO_BARRIER),
        ("unstable_split", scatter_unstable_split, *OOB_OR_RACE),
        ("padding_sorts_first", scatter_zero_padding, *OOB_OR_RACE),
        ("direct_scatter", radix_scatter_direct, OverBudget, "writes_in_order_keys_out"),
    ],
}

VARIANTS = {
    "ch13_radix_scatter": [
        ("counting_rank", scatter_counting_rank),
        ("histogram_starts", scatter_histogram_starts),
        ("high_bit_first", scatter_high_bit_first),
    ],
}

# exercises on three seeds, the worked kernels on two (as the chapter's tests ran them); the sorted
# scatter on seeds 0-9 (issue 23, class 5: the writes in thread order, enforced on every seed)
SEEDS = {p.name: (0, 1, 2) if p.name in MUTANTS else (0, 1) for p in PUZZLES}
SEEDS["ch13_radix_scatter"] = tuple(range(10))
