"""Known-wrong and known-right kernels for Puzzles II.15 (cooperative groups' grid barrier)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import BarrierDivergence, DataRace, Deadlock, UninitializedRead

TPB = 32
FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True)
def block_max(cache, a, size):
    """Phase 1 as in the reference: the block's largest |a| in cache[0]."""
    t = cuda.threadIdx.x
    m = numba.float32(0)
    for i in range(cuda.blockIdx.x * TPB + t, size, cuda.gridDim.x * TPB):
        m = max(m, abs(a[i]))
    cache[t] = m
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] = max(cache[t], cache[t + stride])
        stride //= 2


@cuda.jit
def block_barrier_only(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_max(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
    cuda.syncthreads()  # waits for this block only
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@cuda.jit
def one_element_per_thread(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    i = b * TPB + t
    cache[t] = abs(a[i]) if i < size else 0.0  # the grid is smaller than the data
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] = max(cache[t], cache[t + stride])
        stride //= 2
    if t == 0:
        partial[b] = cache[0]
    cuda.cg.this_grid().sync()
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    if i < size:
        out[i] = a[i] / top


@cuda.jit
def grid_sync_in_branch(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_max(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.cg.this_grid().sync()  # only thread 0 of each block gets here
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@cuda.jit
def own_block_only(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_max(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
    cuda.cg.this_grid().sync()
    top = partial[b]  # the block's own maximum
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@cuda.jit
def every_thread_stores(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_max(cache, a, size)
    partial[b] = cache[0]  # TPB writers, one slot
    cuda.cg.this_grid().sync()
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@cuda.jit
def signed_max(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    m = numba.float32(-1e30)
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        m = max(m, a[i])  # the largest value, not magnitude
    cache[t] = m
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] = max(cache[t], cache[t + stride])
        stride //= 2
    if t == 0:
        partial[b] = cache[0]
    cuda.cg.this_grid().sync()
    top = numba.float32(-1e30)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@cuda.jit
def serial_block_max(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    m = numba.float32(0)
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        m = max(m, abs(a[i]))
    cache[t] = m
    cuda.syncthreads()
    if t == 0:  # one thread scans the block's TPB maxima: no tree, same answer
        best = cache[0]
        for k in range(1, TPB):
            best = max(best, cache[k])
        partial[b] = best
    cuda.cg.this_grid().sync()
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@cuda.jit
def shuffle_max(out, partial, a, size):
    g = cuda.cg.this_grid()
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    m = numba.float32(0)
    i = b * TPB + t
    while i < size:
        m = max(m, abs(a[i]))
        i += cuda.gridDim.x * TPB
    for d in (16, 8, 4, 2, 1):  # TPB == 32: the block is one warp
        m = max(m, cuda.shfl_xor_sync(FULL_MASK, m, d))
    if t == 0:
        partial[b] = m
    g.sync()
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    i = b * TPB + t
    while i < size:
        out[i] = a[i] / top
        i += cuda.gridDim.x * TPB


@cuda.jit
def contiguous_chunks(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    threads = cuda.gridDim.x * TPB
    chunk = (size + threads - 1) // threads
    start = (b * TPB + t) * chunk
    m = numba.float32(0)
    for i in range(start, min(start + chunk, size)):  # a run of elements per thread: lanes chunk apart
        m = max(m, abs(a[i]))
    cache[t] = m
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] = max(cache[t], cache[t + stride])
        stride //= 2
    if t == 0:
        partial[b] = cache[0]
    cuda.cg.this_grid().sync()
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(start, min(start + chunk, size)):
        out[i] = a[i] / top


MUTANTS = {
    "grid_sync": [
        ("block_barrier_only", block_barrier_only, KernelDiagnosed, (DataRace, UninitializedRead)),
        ("one_element_per_thread", one_element_per_thread, WrongAnswer, None),
        (
            "grid_sync_in_branch",
            grid_sync_in_branch,
            KernelDiagnosed,
            (DataRace, BarrierDivergence, Deadlock),
        ),
        ("own_block_only", own_block_only, WrongAnswer, None),
        ("every_thread_stores", every_thread_stores, KernelDiagnosed, DataRace),
        ("signed_max", signed_max, WrongAnswer, None),
        ("contiguous_chunks", contiguous_chunks, OverBudget, "min_coalescing"),
    ]
}
VARIANTS = {"grid_sync": [("serial_block_max", serial_block_max), ("shuffle_max", shuffle_max)]}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
