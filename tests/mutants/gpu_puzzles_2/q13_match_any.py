"""Known-wrong and known-right kernels for Puzzles II.13 (match_any_sync, warp-aggregated atomics)."""

import numba
import numpy as np
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import OutOfBounds, WarpDivergence

FULL_MASK = 0xFFFFFFFF
TPB = 64
BINS = 8


@cuda.jit
def atomic_per_lane(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size:
        cuda.atomic.add(out, keys[i], 1)  # right, 32 atomics where a few do


@cuda.jit
def lane_zero_leads(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    k = keys[i] if i < size else -1
    peers = numba.uint32(cuda.match_any_sync(FULL_MASK, k))
    if i < size and lane == 0:  # only lane 0's group is counted
        cuda.atomic.add(out, k, cuda.popc(peers))


@cuda.jit
def ffs_off_by_one(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    k = keys[i] if i < size else -1
    peers = numba.uint32(cuda.match_any_sync(FULL_MASK, k))
    if i < size and lane == cuda.ffs(peers):  # ffs counts from 1
        cuda.atomic.add(out, k, cuda.popc(peers))


@cuda.jit
def match_under_guard(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    if i < size:
        k = keys[i]
        peers = numba.uint32(cuda.match_any_sync(FULL_MASK, k))  # lanes past the end never match
        if lane == cuda.ffs(peers) - 1:
            cuda.atomic.add(out, k, cuda.popc(peers))


@cuda.jit
def ballot_instead(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    k = keys[i] if i < size else -1
    live = numba.uint32(cuda.ballot_sync(FULL_MASK, i < size))  # counts the warp, not the key
    if i < size and lane == cuda.ffs(live) - 1:
        cuda.atomic.add(out, k, cuda.popc(live))


@cuda.jit
def no_key_guard(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    k = keys[i]
    peers = numba.uint32(cuda.match_any_sync(FULL_MASK, k))
    if lane == cuda.ffs(peers) - 1:
        cuda.atomic.add(out, k, cuda.popc(peers))


@cuda.jit
def highest_lane_leads(out, keys, size):
    i = cuda.grid(1)
    k = np.int32(-1)
    if i < size:
        k = keys[i]
    peers = numba.uint32(cuda.match_any_sync(FULL_MASK, k))
    top = 31 - cuda.clz(peers)
    if i < size and cuda.laneid == top:
        cuda.atomic.add(out, k, cuda.popc(peers))


@cuda.jit
def lower_peers_count(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    k = keys[i] if i < size else -1
    peers = numba.uint32(cuda.match_any_sync(FULL_MASK, k))
    if i < size and (peers & cuda.lanemask_lt()) == 0:  # nobody of my group below me
        cuda.atomic.add(out, k, cuda.popc(peers))


@cuda.jit
def clears_out_first(out, keys, size):
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    lane = cuda.threadIdx.x % 32
    if cuda.blockIdx.x == 0 and cuda.threadIdx.x < BINS:
        cuda.atomic.exch(out, cuda.threadIdx.x, 0)  # as if out started as garbage: earlier counts lost
    cuda.syncthreads()
    k = keys[i] if i < size else -1
    peers = cuda.match_any_sync(FULL_MASK, k)
    if i < size and lane == cuda.ffs(peers) - 1:
        cuda.atomic.add(out, k, cuda.popc(peers))


MUTANTS = {
    "match_any": [
        ("atomic_per_lane", atomic_per_lane, OverBudget, "global_atomics_per_block"),
        ("lane_zero_leads", lane_zero_leads, WrongAnswer, None),
        ("ffs_off_by_one", ffs_off_by_one, WrongAnswer, None),
        ("match_under_guard", match_under_guard, KernelDiagnosed, WarpDivergence),
        ("ballot_instead", ballot_instead, WrongAnswer, None),
        ("no_key_guard", no_key_guard, KernelDiagnosed, OutOfBounds),
        ("clears_out_first", clears_out_first, WrongAnswer, None),
    ]
}
VARIANTS = {
    "match_any": [("highest_lane_leads", highest_lane_leads), ("lower_peers_count", lower_peers_count)]
}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
