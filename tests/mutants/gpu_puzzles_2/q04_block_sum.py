"""Known-wrong and known-right kernels for Puzzles II.4 (block sum, one shared slot per warp)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds, UninitializedRead
from puzzles.gpu_puzzles_2.q04_block_sum import warp_total

FULL_MASK = 0xFFFFFFFF
TPB = 128
WARPS = TPB // 32


@cuda.jit
def no_barrier(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane, warp = t % 32, t // 32
    x = warp_total(a[i] if i < size else numba.float32(0))
    if lane == 0:
        slots[warp] = x
    if warp == 0:  # the other warps' slots may not be written yet
        y = warp_total(slots[lane] if lane < WARPS else numba.float32(0))
        if lane == 0:
            out[cuda.blockIdx.x] = y


@cuda.jit
def every_lane_writes_slot(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane, warp = t % 32, t // 32
    x = warp_total(a[i] if i < size else numba.float32(0))
    slots[warp] = x  # 32 lanes, one slot, 32 different values
    cuda.syncthreads()
    if warp == 0:
        y = warp_total(slots[lane] if lane < WARPS else numba.float32(0))
        if lane == 0:
            out[cuda.blockIdx.x] = y


@cuda.jit
def reads_past_the_slots(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane, warp = t % 32, t // 32
    x = warp_total(a[i] if i < size else numba.float32(0))
    if lane == 0:
        slots[warp] = x
    cuda.syncthreads()
    if warp == 0:
        y = warp_total(slots[lane])  # lanes 4..31 read past the 4 slots
        if lane == 0:
            out[cuda.blockIdx.x] = y


@cuda.jit
def slot_per_lane_index(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane, warp = t % 32, t // 32
    x = warp_total(a[i] if i < size else numba.float32(0))
    if lane == 0:
        slots[warp] = x
    cuda.syncthreads()
    if t == 0:  # adds only the first two slots
        out[cuda.blockIdx.x] = slots[0] + slots[1]


@cuda.jit
def no_load_guard(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    lane, warp = t % 32, t // 32
    x = warp_total(a[i])
    if lane == 0:
        slots[warp] = x
    cuda.syncthreads()
    if warp == 0:
        y = warp_total(slots[lane] if lane < WARPS else numba.float32(0))
        if lane == 0:
            out[cuda.blockIdx.x] = y


@cuda.jit
def slot_per_thread(out, a, size):
    part = cuda.shared.array(TPB, numba.float32)  # right, but TPB floats where WARPS do
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    part[t] = a[i] if i < size else 0.0
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = part[0]


@cuda.jit
def one_thread_adds_slots(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    x = warp_total(a[i] if i < size else numba.float32(0))
    if t % 32 == 0:
        slots[t // 32] = x
    cuda.syncthreads()
    if t < WARPS:
        y = slots[t]
        y += cuda.shfl_xor_sync(0xF, y, 2)  # only the 4 lanes that hold a slot take part
        y += cuda.shfl_xor_sync(0xF, y, 1)
        if t == 0:
            out[cuda.blockIdx.x] = y


@cuda.jit
def xor_everywhere(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    x = numba.float32(0)
    if i < size:
        x = a[i]
    for m in (16, 8, 4, 2, 1):
        x += cuda.shfl_xor_sync(FULL_MASK, x, m)
    if cuda.laneid == 31:
        slots[t // 32] = x
    cuda.syncthreads()
    if t < 32:
        y = slots[t % WARPS]  # every lane reads a slot; 4 copies of each
        for m in (16, 8, 4, 2, 1):
            y += cuda.shfl_xor_sync(FULL_MASK, y, m)
        if t == 0:
            out[cuda.blockIdx.x] = y / (32 // WARPS)


NO_BARRIER = (DataRace, UninitializedRead)
MUTANTS = {
    "block_sum": [
        ("no_barrier", no_barrier, KernelDiagnosed, NO_BARRIER),
        ("every_lane_writes_slot", every_lane_writes_slot, KernelDiagnosed, DataRace),
        ("reads_past_the_slots", reads_past_the_slots, KernelDiagnosed, OutOfBounds),
        ("slot_per_lane_index", slot_per_lane_index, WrongAnswer, None),
        ("no_load_guard", no_load_guard, KernelDiagnosed, OutOfBounds),
        ("slot_per_thread", slot_per_thread, OverBudget, "shared_reads"),
    ]
}
VARIANTS = {
    "block_sum": [("one_thread_adds_slots", one_thread_adds_slots), ("xor_everywhere", xor_everywhere)]
}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
