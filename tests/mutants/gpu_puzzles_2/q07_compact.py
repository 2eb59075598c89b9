"""Known-wrong and known-right kernels for Puzzles II.7 (compaction with ballot + popc)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds, WarpDivergence

FULL_MASK = 0xFFFFFFFF
TPB = 64


@cuda.jit
def popc_of_whole_ballot(out, count, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    seg = i - lane
    x = a[i] if i < size else numba.float32(0)
    keep = i < size and x > 0
    kept = numba.uint32(cuda.ballot_sync(FULL_MASK, keep))
    before = cuda.popc(kept)  # the same number in every lane
    if keep:
        out[seg + before - 1] = x
    elif i < size:
        out[seg + before + (lane - cuda.popc(kept & cuda.lanemask_lt()))] = 0.0
    if lane == 0 and i < size:
        count[i // 32] = cuda.popc(kept)


@cuda.jit
def counts_itself(out, count, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    seg = i - lane
    x = a[i] if i < size else numba.float32(0)
    keep = i < size and x > 0
    kept = numba.uint32(cuda.ballot_sync(FULL_MASK, keep))
    upto = cuda.popc(kept & ((2 << lane) - 1))  # lanes <= me: one too many for a kept lane
    total = cuda.popc(kept)
    if keep:
        out[seg + upto] = x
    elif i < size:
        out[seg + total + (lane - upto)] = 0.0
    if lane == 0 and i < size:
        count[i // 32] = total


@cuda.jit
def ballot_under_guard(out, count, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    seg = i - lane
    if i < size:
        x = a[i]
        keep = x > 0
        kept = numba.uint32(cuda.ballot_sync(FULL_MASK, keep))  # lanes past size never vote
        before = cuda.popc(kept & cuda.lanemask_lt())
        total = cuda.popc(kept)
        if keep:
            out[seg + before] = x
        else:
            out[seg + total + (lane - before)] = 0.0
        if lane == 0:
            count[i // 32] = total


@cuda.jit
def every_lane_counts(out, count, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    seg = i - lane
    x = a[i] if i < size else numba.float32(0)
    keep = i < size and x > 0
    kept = numba.uint32(cuda.ballot_sync(FULL_MASK, keep))
    before = cuda.popc(kept & cuda.lanemask_lt())
    total = cuda.popc(kept)
    if keep:
        out[seg + before] = x
    elif i < size:
        out[seg + total + (lane - before)] = 0.0
    if i < size:
        count[i // 32] = total  # 32 lanes write one count


@cuda.jit
def no_zero_fill(out, count, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    seg = i - lane
    x = a[i] if i < size else numba.float32(0)
    keep = i < size and x > 0
    kept = numba.uint32(cuda.ballot_sync(FULL_MASK, keep))
    if keep:
        out[seg + cuda.popc(kept & cuda.lanemask_lt())] = x
    if lane == 0 and i < size:
        count[i // 32] = cuda.popc(kept)


@cuda.jit
def block_lane(out, count, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    seg = i - cuda.threadIdx.x  # the block's start: both warps pack to it
    x = a[i] if i < size else numba.float32(0)
    keep = i < size and x > 0
    kept = numba.uint32(cuda.ballot_sync(FULL_MASK, keep))
    before = cuda.popc(kept & cuda.lanemask_lt())
    total = cuda.popc(kept)
    if keep:
        out[seg + before] = x
    elif i < size:
        out[seg + total + (lane - before)] = 0.0
    if lane == 0 and i < size:
        count[i // 32] = total


@cuda.jit
def dropped_from_inverse_ballot(out, count, a, size):
    i = cuda.grid(1)
    lane = cuda.laneid
    seg = i - lane
    inside = i < size
    x = a[i] if inside else numba.float32(0)
    keep = inside and x > 0
    kept = numba.uint32(cuda.ballot_sync(FULL_MASK, keep))
    dropped = numba.uint32(cuda.ballot_sync(FULL_MASK, inside and not keep))
    below = (1 << lane) - 1
    if keep:
        out[seg + cuda.popc(kept & below)] = x
    elif inside:
        out[seg + cuda.popc(kept) + cuda.popc(dropped & below)] = 0.0
    if lane == 0 and i < size:
        count[i // 32] = cuda.popc(kept)


@cuda.jit
def value_then_select(out, count, a, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x & 31
    x = a[i] if i < size else numba.float32(-1)
    kept = numba.uint32(cuda.ballot_sync(FULL_MASK, x > 0))
    before = numba.int32(cuda.popc(kept & cuda.lanemask_lt()))
    dest = before if x > 0 else numba.int32(cuda.popc(kept)) + lane - before
    if i < size:
        out[i - lane + dest] = max(x, numba.float32(0))
    if lane == 0 and i < size:
        count[i >> 5] = cuda.popc(kept)


MUTANTS = {
    "compact": [
        ("popc_of_whole_ballot", popc_of_whole_ballot, KernelDiagnosed, (DataRace, OutOfBounds)),
        ("counts_itself", counts_itself, KernelDiagnosed, (OutOfBounds, DataRace)),
        ("ballot_under_guard", ballot_under_guard, KernelDiagnosed, WarpDivergence),
        ("every_lane_counts", every_lane_counts, KernelDiagnosed, DataRace),
        ("no_zero_fill", no_zero_fill, WrongAnswer, None),
        ("block_lane", block_lane, KernelDiagnosed, DataRace),
    ]
}
VARIANTS = {
    "compact": [
        ("dropped_from_inverse_ballot", dropped_from_inverse_ballot),
        ("value_then_select", value_then_select),
    ]
}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
