"""GPU-only: the partitioned merge (bench.merge_partitioned) with 32-bit unsigned indices throughout,
for the benchmark's search (no puzzle).

The partitioned merge is bound by integer instructions: the co-rank binary search in shared memory
and the branch-free merge loop are index arithmetic around one or two shared loads. Numba does it in
int64 with Python's floor division (a halving costs a shift plus sign fix-ups) and wraps every signed
index that could be negative; here every index is uint32, halving is a shift, and the co-rank reads
A and B as two ranges of the one shared tile (no array slices). Indices fit while m + n < 2^32.
"""

import numba
from numba import cuda, uint32

PART_TPB = 128  # threads per block
PART_ITEMS = 7  # outputs per thread
PART_TILE = PART_TPB * PART_ITEMS


@cuda.jit(device=True, inline="always")
def co_rank_tile(k, s, a_len, b_len):
    """co_rank on the shared tile: A = s[:a_len], B = s[a_len:a_len + b_len]; every argument uint32.
    The i with the first k outputs of merge(A, B) = merge(A[:i], B[:k - i]) (ties to A)."""
    i = min(k, a_len)
    j = uint32(k - i)
    i_low = uint32(k - b_len) if k > b_len else uint32(0)
    j_low = uint32(k - a_len) if k > a_len else uint32(0)
    while True:
        if i > 0 and j < b_len and s[uint32(i - uint32(1))] > s[uint32(a_len + j)]:
            delta = uint32(uint32(i - i_low + uint32(1)) >> uint32(1))
            j_low = j
            i = uint32(i - delta)
            j = uint32(j + delta)
        elif j > 0 and i < a_len and s[uint32(a_len + j - uint32(1))] >= s[i]:
            delta = uint32(uint32(j - j_low + uint32(1)) >> uint32(1))
            i_low = i
            i = uint32(i + delta)
            j = uint32(j - delta)
        else:
            return i


@cuda.jit
def merge_partitioned_u32(c, a, b, m, n, bounds):
    ins = cuda.shared.array(PART_TILE, numba.float32)  # the A slice, then the B slice
    outs = cuda.shared.array(PART_TILE, numba.float32)
    t = uint32(cuda.threadIdx.x)
    total = uint32(m + n)
    c0 = uint32(uint32(cuda.blockIdx.x) * uint32(PART_TILE))
    c_len = min(uint32(PART_TILE), uint32(total - c0))
    a0 = uint32(bounds[cuda.blockIdx.x])
    a_len = uint32(uint32(bounds[cuda.blockIdx.x + 1]) - a0)
    b0 = uint32(c0 - a0)
    b_len = uint32(c_len - a_len)
    x = t
    while x < c_len:  # coalesced: consecutive threads, consecutive elements of A, then of B
        ins[x] = a[uint32(a0 + x)] if x < a_len else b[uint32(b0 + x - a_len)]
        x = uint32(x + uint32(PART_TPB))
    cuda.syncthreads()
    k0 = min(uint32(t * uint32(PART_ITEMS)), c_len)
    i = co_rank_tile(k0, ins, a_len, b_len)
    j = uint32(k0 - i)
    last = uint32(c_len - uint32(1))
    for s in range(PART_ITEMS):  # both heads read (clamped into the tile), the smaller one taken
        va = ins[min(i, last)]
        vb = ins[min(uint32(a_len + j), last)]
        take_a = i < a_len and (j >= b_len or va <= vb)
        k = uint32(k0 + uint32(s))
        if k < c_len:
            outs[k] = va if take_a else vb
        i = uint32(i + uint32(1)) if take_a else i
        j = j if take_a else uint32(j + uint32(1))
    cuda.syncthreads()
    x = t
    while x < c_len:
        c[uint32(c0 + x)] = outs[x]
        x = uint32(x + uint32(PART_TPB))
