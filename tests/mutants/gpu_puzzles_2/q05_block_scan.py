"""Known-wrong and known-right kernels for Puzzles II.5 (block scan)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds, UninitializedRead
from puzzles.gpu_puzzles_2.q05_block_scan import warp_scan

FULL_MASK = 0xFFFFFFFF
TPB = 128
WARPS = TPB // 32


@cuda.jit
def total_from_lane_zero(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    x = warp_scan(a[i] if i < size else numba.float32(0))
    if t % 32 == 0:  # lane 0 holds only its own element
        totals[t // 32] = x
    cuda.syncthreads()
    for w in range(t // 32):
        x += totals[w]
    if i < size:
        out[i] = x


@cuda.jit
def no_barrier(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    x = warp_scan(a[i] if i < size else numba.float32(0))
    if t % 32 == 31:
        totals[t // 32] = x
    for w in range(t // 32):
        x += totals[w]
    if i < size:
        out[i] = x


@cuda.jit
def adds_own_total(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    x = warp_scan(a[i] if i < size else numba.float32(0))
    if t % 32 == 31:
        totals[t // 32] = x
    cuda.syncthreads()
    for w in range(t // 32 + 1):  # counts its own warp twice
        x += totals[w]
    if i < size:
        out[i] = x


@cuda.jit
def unguarded_write(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    x = warp_scan(a[i] if i < size else numba.float32(0))
    if t % 32 == 31:
        totals[t // 32] = x
    cuda.syncthreads()
    for w in range(t // 32):
        x += totals[w]
    out[i] = x


@cuda.jit
def every_lane_writes_total(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    x = warp_scan(a[i] if i < size else numba.float32(0))
    totals[t // 32] = x  # 32 lanes race for one slot
    cuda.syncthreads()
    for w in range(t // 32):
        x += totals[w]
    if i < size:
        out[i] = x


@cuda.jit
def all_totals_every_thread(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    x = warp_scan(a[i] if i < size else numba.float32(0))
    if t % 32 == 31:
        totals[t // 32] = x
    cuda.syncthreads()
    for w in range(WARPS):  # right, but reads every total to use a few
        if w < t // 32:
            x += totals[w]
        else:
            x += 0 * totals[w]
    if i < size:
        out[i] = x


@cuda.jit
def lanes_share_the_reads(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane, warp = t % 32, t // 32
    x = warp_scan(a[i] if i < size else numba.float32(0))
    if lane == 31:
        totals[warp] = x
    cuda.syncthreads()
    # lane k < warp reads totals[k]; a butterfly gives every lane the sum of the earlier warps
    before = totals[lane] if lane < warp else numba.float32(0)
    for m in (16, 8, 4, 2, 1):
        before += cuda.shfl_xor_sync(FULL_MASK, before, m)
    if i < size:
        out[i] = x + before


@cuda.jit
def inline_scan(out, a, size):
    totals = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    lane = cuda.laneid
    x = numba.float32(0)
    if i < size:
        x = a[i]
    for d in (1, 2, 4, 8, 16):
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
    last = cuda.shfl_sync(FULL_MASK, x, 31)
    if lane == 0:
        totals[t // 32] = last
    cuda.syncthreads()
    w = 0
    while w < t // 32:
        x += totals[w]
        w += 1
    if i < size:
        out[i] = x


MUTANTS = {
    "block_scan": [
        ("total_from_lane_zero", total_from_lane_zero, WrongAnswer, None),
        ("no_barrier", no_barrier, KernelDiagnosed, (DataRace, UninitializedRead)),
        ("adds_own_total", adds_own_total, WrongAnswer, None),
        ("unguarded_write", unguarded_write, KernelDiagnosed, OutOfBounds),
        ("every_lane_writes_total", every_lane_writes_total, KernelDiagnosed, DataRace),
        ("all_totals_every_thread", all_totals_every_thread, OverBudget, "shared_reads"),
    ]
}
VARIANTS = {"block_scan": [("lanes_share_the_reads", lanes_share_the_reads), ("inline_scan", inline_scan)]}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
