"""Known-wrong and known-right kernels for Puzzles II.10 (last block adds the partial sums)."""

import numba
from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, UninitializedRead

TPB = 32


@cuda.jit(device=True)
def block_tree(cache, a, size):
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    cache[t] = a[i] if i < size else 0.0
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] += cache[t + stride]
        stride //= 2


@cuda.jit
def first_ticket_is_last(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    am_last = cuda.shared.array(1, numba.int32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
        am_last[0] = cuda.atomic.add(ticket, 0, 1) == 0  # the first to finish, not the last
    cuda.syncthreads()
    if am_last[0] and t == 0:
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total


@cuda.jit
def every_thread_takes_a_ticket(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
    cuda.syncthreads()
    taken = cuda.atomic.add(ticket, 0, 1)  # TPB tickets per block
    if taken == cuda.gridDim.x * TPB - 1:
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total


@cuda.jit
def highest_index_is_last(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
    if t == 0 and b == cuda.gridDim.x - 1:  # the last index need not finish last
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total


@cuda.jit
def every_block_adds_up(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
        # no ticket at all: every block adds up whatever is in `partial` and overwrites out[0];
        # run one block after another, the block that runs last sees every partial sum
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]  # partials of blocks that have not run yet: never written
        out[0] = total


@cuda.jit
def no_barrier_before_flag(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    am_last = cuda.shared.array(1, numba.int32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
        am_last[0] = cuda.atomic.add(ticket, 0, 1) == cuda.gridDim.x - 1
    if am_last[0] and t == TPB - 1:  # another thread reads the flag, no barrier
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total


@cuda.jit
def atomic_into_garbage(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    block_tree(cache, a, size)
    if t == 0:
        cuda.atomic.add(out, 0, cache[0])  # out starts as garbage, not zero


@cuda.jit
def last_adds_only_itself(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    am_last = cuda.shared.array(1, numba.int32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
        am_last[0] = cuda.atomic.add(ticket, 0, 1) == cuda.gridDim.x - 1
    cuda.syncthreads()
    if am_last[0] and t == 0:
        out[0] = cache[0]  # its own sum only


@cuda.jit
def last_block_tree(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    am_last = cuda.shared.array(1, numba.int32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
        am_last[0] = cuda.atomic.add(ticket, 0, 1) + 1 == cuda.gridDim.x
    cuda.syncthreads()
    if am_last[0]:
        # the whole last block adds the partials, TPB at a time, then one more tree
        acc = numba.float32(0)
        for k in range(t, cuda.gridDim.x, TPB):
            acc += partial[k]
        cuda.syncthreads()
        cache[t] = acc
        stride = TPB // 2
        while stride > 0:
            cuda.syncthreads()
            if t < stride:
                cache[t] += cache[t + stride]
            stride //= 2
        if t == 0:
            out[0] = cache[0]


@cuda.jit
def syncthreads_or_flag(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    last = 0
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
        last = 1 if cuda.atomic.add(ticket, 0, 1) == cuda.gridDim.x - 1 else 0
    if cuda.syncthreads_or(last) and t == 1 % TPB:  # the barrier itself carries the flag
        s = numba.float32(0)
        for k in range(cuda.gridDim.x):
            s += partial[k]
        out[0] = s


NO_BARRIER = (DataRace, UninitializedRead)
MUTANTS = {
    "last_block": [
        ("first_ticket_is_last", first_ticket_is_last, KernelDiagnosed, UninitializedRead),
        ("every_thread_takes_a_ticket", every_thread_takes_a_ticket, OverBudget, "global_atomics_per_block"),
        ("highest_index_is_last", highest_index_is_last, KernelDiagnosed, (DataRace, UninitializedRead)),
        # no ticket: partials read before they are written, or written by another block with nothing
        # ordering the write before the read (issue 23 item 4; needs the simulator's scratch role)
        ("every_block_adds_up", every_block_adds_up, KernelDiagnosed, (DataRace, UninitializedRead)),
        ("no_barrier_before_flag", no_barrier_before_flag, KernelDiagnosed, NO_BARRIER),
        ("atomic_into_garbage", atomic_into_garbage, KernelDiagnosed, UninitializedRead),
        ("last_adds_only_itself", last_adds_only_itself, WrongAnswer, None),
    ]
}
VARIANTS = {
    "last_block": [("last_block_tree", last_block_tree), ("syncthreads_or_flag", syncthreads_or_flag)]
}
SEEDS = {name: (0, 1, 2) for name in MUTANTS}  # every mutant fails, every variant passes, on each
