"""Known-wrong and known-right kernels for the 14 GPU puzzles: negative and positive controls.

MUTANTS[puzzle] = [(name, kernel, expected exception class, detail), ...] where detail is
  - the `helpers.sim.errors` class (or tuple of classes) of `.diagnostic` when the exception is
    KernelDiagnosed,
  - the Budget field name (e.g. "global_reads") when it is OverBudget,
  - None otherwise.
VARIANTS[puzzle] = [(name, kernel), ...]: correct kernels written differently from the reference.

Every mutant is a mistake a learner makes; each is wrong on every engine (the simulator sees more,
the GPU sees at least a wrong answer or garbage), so the lead can run this module on a real GPU too.
A barrier missing before the first read of freshly loaded shared memory shows up as
UninitializedRead when the simulator happens to run the reader before the writer, and as DataRace
when the writer ran first (block order is shuffled by seed): such mutants accept either
(`NO_BARRIER`, detail is a tuple). A barrier missing once every slot is initialised is always a
DataRace.
"""
import numba
from numba import cuda

from helpers.check import CompileRejected, KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import (
    BarrierDivergence,
    DataRace,
    OutOfBounds,
    ReadOnlyWrite,
    UninitializedRead,
)

TPB = 8
CACHE = TPB + 2          # pool
MAX_CONV = 4             # conv
A_TILE = TPB + MAX_CONV  # conv

OOB = (KernelDiagnosed, OutOfBounds)
RACE = (KernelDiagnosed, DataRace)
UNINIT = (KernelDiagnosed, UninitializedRead)
BARRIER = (KernelDiagnosed, BarrierDivergence)
READONLY = (KernelDiagnosed, ReadOnlyWrite)
NO_BARRIER = (KernelDiagnosed, (DataRace, UninitializedRead))
WRONG = (WrongAnswer, None)


def over(field):
    return (OverBudget, field)


# ---------------------------------------------------------------- 1. map

@cuda.jit
def map_arange_hardcode(out, a):
    i = cuda.threadIdx.x
    out[i] = i + 10          # passes with a = arange; the thread index is not the data


@cuda.jit
def map_times_ten(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] * 10


@cuda.jit
def map_block_index(out, a):
    i = cuda.blockIdx.x      # 0 for every thread: all write out[0]
    out[i] = a[i] + 10


@cuda.jit
def map_read_next(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i + 1] + 10


@cuda.jit
def map_read_previous(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i - 1] + 10   # a[-1] wraps to the last element in Numba


@cuda.jit
def map_accumulate_into_out(out, a):
    i = cuda.threadIdx.x
    out[i] += a[i] + 10      # out holds garbage, not zeros


@cuda.jit
def map_modifies_input(out, a):
    i = cuda.threadIdx.x
    a[i] += 10
    out[i] = a[i]


@cuda.jit
def map_python_list(out, a):
    i = cuda.threadIdx.x
    terms = [a[i], 10.0]     # fine in the simulator, refused by real Numba (no lists on the GPU)
    out[i] = terms[0] + terms[1]


@cuda.jit
def map_grid_index(out, a):
    i = cuda.grid(1)
    out[i] = 10 + a[i]


@cuda.jit
def map_grid_stride(out, a):
    for k in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        out[k] = a[k] + 10


# ---------------------------------------------------------------- 2. zip

@cuda.jit
def zip_a_twice(out, a, b):
    i = cuda.threadIdx.x
    out[i] = a[i] + a[i]


@cuda.jit
def zip_b_twice(out, a, b):
    i = cuda.threadIdx.x
    out[i] = b[i] + b[i]


@cuda.jit
def zip_subtract(out, a, b):
    i = cuda.threadIdx.x
    out[i] = a[i] - b[i]


@cuda.jit
def zip_thread_y(out, a, b):
    i = cuda.threadIdx.y     # the block is 1-D: always 0
    out[i] = a[i] + b[i]


@cuda.jit
def zip_b_shifted(out, a, b):
    i = cuda.threadIdx.x
    out[i] = a[i] + b[i + 1]


@cuda.jit
def zip_writes_b(out, a, b):
    i = cuda.threadIdx.x
    b[i] = a[i] + b[i]
    out[i] = b[i]


@cuda.jit
def zip_grid_index(out, a, b):
    i = cuda.grid(1)
    out[i] = b[i] + a[i]


@cuda.jit
def zip_grid_stride(out, a, b):
    for k in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[k] = a[k] + b[k]


# ---------------------------------------------------------------- 3. guard

@cuda.jit
def guard_missing(out, a, size):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10


@cuda.jit
def guard_off_by_one(out, a, size):
    i = cuda.threadIdx.x
    if i <= size:
        out[i] = a[i] + 10


@cuda.jit
def guard_against_block(out, a, size):
    i = cuda.threadIdx.x
    if i < cuda.blockDim.x:
        out[i] = a[i] + 10


@cuda.jit
def guard_too_strict(out, a, size):
    i = cuda.threadIdx.x
    if i < size - 1:
        out[i] = a[i] + 10


@cuda.jit
def guard_read_only(out, a, size):
    i = cuda.threadIdx.x
    v = 0.0
    if i < size:
        v = a[i]
    out[i] = v + 10


@cuda.jit
def guard_clamped_index(out, a, size):
    k = min(cuda.threadIdx.x, size - 1)   # spare threads all rewrite the last element
    out[k] = a[k] + 10


@cuda.jit
def guard_early_return(out, a, size):
    i = cuda.threadIdx.x
    if i >= size:
        return
    out[i] = a[i] + 10


@cuda.jit
def guard_grid_stride(out, a, size):
    for k in range(cuda.grid(1), size, cuda.gridsize(1)):
        out[k] = a[k] + 10


# ---------------------------------------------------------------- 4. map_2d

@cuda.jit
def map_2d_missing_guard(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_guard_rows_only(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_guard_typo(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and i < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_transposed_read(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[j, i] + 10


@cuda.jit
def map_2d_arange_hardcode(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = i * size + j + 10


@cuda.jit
def map_2d_guard_against_block(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < cuda.blockDim.y and j < cuda.blockDim.x:
        out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_x_is_row(out, a, size):
    i = cuda.threadIdx.x     # the other convention: x picks the row
    j = cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def map_2d_grid_early_return(out, a, size):
    j, i = cuda.grid(2)
    if i >= size or j >= size:
        return
    out[i, j] = a[i, j] + 10


# ---------------------------------------------------------------- 5. broadcast

@cuda.jit
def broadcast_swapped_axes(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[j, 0] + b[0, i]


@cuda.jit
def broadcast_column_as_row(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[0, i] + b[0, j]


@cuda.jit
def broadcast_missing_guard(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    out[i, j] = a[i, 0] + b[0, j]


@cuda.jit
def broadcast_a_twice(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, 0] + a[j, 0]


@cuda.jit
def broadcast_outer_product(out, a, b, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, 0] * b[0, j]


@cuda.jit
def broadcast_x_is_row(out, a, b, size):
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = b[0, j] + a[i, 0]


@cuda.jit
def broadcast_grid_early_return(out, a, b, size):
    j, i = cuda.grid(2)
    if i >= size or j >= size:
        return
    out[i, j] = a[i, 0] + b[0, j]


# ---------------------------------------------------------------- 6. blocks

@cuda.jit
def blocks_local_index(out, a, size):
    i = cuda.threadIdx.x     # every block redoes the first few elements
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_forgot_thread(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_missing_guard(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i] = a[i] + 10


@cuda.jit
def blocks_hardcoded_block_size(out, a, size):
    i = cuda.blockIdx.x * 8 + cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_guard_local(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if cuda.threadIdx.x < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_block_plus_thread(out, a, size):
    i = cuda.blockIdx.x + cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def blocks_grid_early_return(out, a, size):
    i = cuda.grid(1)
    if i >= size:
        return
    out[i] = a[i] + 10


@cuda.jit
def blocks_grid_stride(out, a, size):
    for k in range(cuda.grid(1), size, cuda.gridsize(1)):
        out[k] = a[k] + 10


# ---------------------------------------------------------------- 7. blocks_2d

@cuda.jit
def blocks_2d_missing_guard(out, a, size):
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_local_index(out, a, size):
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_mixed_axes(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y   # block x picks the row
    j = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_block_width_for_rows(out, a, size):
    i = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.y   # blockDim.x: right only for square blocks
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_transposed_read(out, a, size):
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size and j < size:
        out[i, j] = a[j, i] + 10


@cuda.jit
def blocks_2d_guard_one_axis(out, a, size):
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_x_is_row(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


@cuda.jit
def blocks_2d_grid(out, a, size):
    j, i = cuda.grid(2)
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


# ---------------------------------------------------------------- 8. shared

@cuda.jit
def shared_global_index_in_shared(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        cache[i] = a[i]      # cache has TPB slots; i runs over the whole array
    cuda.syncthreads()
    if i < size:
        out[i] = cache[i] + 10


@cuda.jit
def shared_unguarded_load(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i]
    cuda.syncthreads()
    if i < size:
        out[i] = cache[local_i] + 10


@cuda.jit
def shared_barrier_in_branch(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i] = a[i]
        cuda.syncthreads()   # the spare threads of the last block never get here
        out[i] = cache[local_i] + 10


@cuda.jit
def shared_read_before_load(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        out[i] = cache[local_i] + 10
    cuda.syncthreads()
    if i < size:
        cache[local_i] = a[i]


@cuda.jit
def shared_zero_out_first(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        out[i] = 0.0         # a wasted global write
        cache[local_i] = a[i]
    cuda.syncthreads()
    if i < size:
        out[i] = cache[local_i] + 10


@cuda.jit
def shared_oversized(out, a, size):
    cache = cuda.shared.array(64, numba.float32)   # room for the whole input, in every block
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i] = a[i]
    cuda.syncthreads()
    if i < size:
        out[i] = cache[local_i] + 10


@cuda.jit
def shared_mirror(out, a, size):
    # Each thread loads its mirror slot, so it reads a value another thread wrote: needs the barrier.
    cache = cuda.shared.array(TPB, numba.float32)
    start = cuda.blockIdx.x * cuda.blockDim.x
    m = TPB - 1 - cuda.threadIdx.x
    if start + m < size:
        cache[m] = a[start + m]
    cuda.syncthreads()
    i = start + cuda.threadIdx.x
    if i < size:
        out[i] = cache[cuda.threadIdx.x] + 10


@cuda.jit
def shared_zero_padded(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t] = a[i] if i < size else 0.0
    cuda.syncthreads()
    if i < size:
        out[i] = cache[t] + 10


# ---------------------------------------------------------------- 9. pool

@cuda.jit
def pool_no_padding(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
    cuda.syncthreads()
    if i < size:
        # assumes the slots before the block hold zeros: they hold garbage
        out[i] = cache[local_i] + cache[local_i + 1] + cache[local_i + 2]


@cuda.jit
def pool_block_start_boundary(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
    cuda.syncthreads()
    if i < size:
        total = cache[local_i + 2]
        if local_i >= 1:     # treats each block as the start of the array: no halo
            total += cache[local_i + 1]
        if local_i >= 2:
            total += cache[local_i]
        out[i] = total


@cuda.jit
def pool_missing_syncthreads(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
    if local_i < 2 and i >= 2:
        cache[local_i] = a[i - 2]
    if i < size:
        total = cache[local_i + 2]
        if i >= 1:
            total += cache[local_i + 1]
        if i >= 2:
            total += cache[local_i]
        out[i] = total


@cuda.jit
def pool_barrier_in_branch(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
        if local_i < 2 and i >= 2:
            cache[local_i] = a[i - 2]
        cuda.syncthreads()
        total = cache[local_i + 2]
        if i >= 1:
            total += cache[local_i + 1]
        if i >= 2:
            total += cache[local_i]
        out[i] = total


@cuda.jit
def pool_all_global(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        total = a[i]
        if i >= 1:
            total += a[i - 1]
        if i >= 2:
            total += a[i - 2]
        out[i] = total


@cuda.jit
def pool_negative_halo(out, a, size):
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i + 2] = a[i]
    if local_i < 2:
        cache[local_i] = a[i - 2]   # block 0 has no halo: a[-2] silently wraps in Numba
    cuda.syncthreads()
    if i < size:
        total = cache[local_i + 2]
        if i >= 1:
            total += cache[local_i + 1]
        if i >= 2:
            total += cache[local_i]
        out[i] = total


@cuda.jit
def pool_tail_halo(out, a, size):
    # The last two threads fetch the halo, and the terms are summed in a loop.
    cache = cuda.shared.array(CACHE, numba.float32)
    start = cuda.blockIdx.x * cuda.blockDim.x
    t = cuda.threadIdx.x
    i = start + t
    if i < size:
        cache[t + 2] = a[i]
    if t >= TPB - 2:
        h = start - TPB + t
        if h >= 0:
            cache[t - TPB + 2] = a[h]
    cuda.syncthreads()
    if i < size:
        total = 0.0
        for k in range(3):
            if i - k >= 0:
                total += cache[t + 2 - k]
        out[i] = total


@cuda.jit
def pool_zero_padded(out, a, size):
    # Missing neighbours are stored as zeros, so every thread adds three slots.
    cache = cuda.shared.array(CACHE, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t + 2] = a[i] if i < size else 0.0
    if t < 2:
        cache[t] = a[i - 2] if i >= 2 else 0.0
    cuda.syncthreads()
    if i < size:
        out[i] = cache[t] + cache[t + 1] + cache[t + 2]


# ---------------------------------------------------------------- 10. dot

@cuda.jit
def dot_a_squared(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * a[i]
    cuda.syncthreads()
    if i == 0:
        total = 0.0
        for k in range(size):
            total += cache[k]
        out[0] = total


@cuda.jit
def dot_all_threads_write(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
    cuda.syncthreads()
    total = 0.0
    for k in range(size):
        total += cache[k]
    out[0] = total           # every thread writes the same value: still a race


@cuda.jit
def dot_missing_syncthreads(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
    if i == 0:
        total = 0.0
        for k in range(size):
            total += cache[k]
        out[0] = total


@cuda.jit
def dot_no_zero_padding(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
    cuda.syncthreads()
    if i == 0:
        total = 0.0
        for k in range(TPB):  # sums slots nobody wrote when size < TPB
            total += cache[k]
        out[0] = total


@cuda.jit
def dot_barrier_in_branch(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
        cuda.syncthreads()
    if i == 0:
        total = 0.0
        for k in range(size):
            total += cache[k]
        out[0] = total


@cuda.jit
def dot_no_shared(out, a, b, size):
    if cuda.threadIdx.x == 0:
        total = 0.0
        for k in range(size):
            total += a[k] * b[k]
        out[0] = total


@cuda.jit
def dot_tree(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    cache[i] = a[i] * b[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if i < stride:
            cache[i] += cache[i + stride]
        cuda.syncthreads()
        stride //= 2
    if i == 0:
        out[0] = cache[0]


@cuda.jit
def dot_last_thread_sums(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    if i < size:
        cache[i] = a[i] * b[i]
    else:
        cache[i] = 0.0
    cuda.syncthreads()
    if i == TPB - 1:
        total = 0.0
        for k in range(TPB):
            total += cache[k]
        out[0] = total


# ---------------------------------------------------------------- 11. conv

@cuda.jit
def conv_first_tap_skipped(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(1, b_size):   # passes when b[0] == 0
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_no_halo(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_block_end_boundary(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size and local_i + j < TPB:   # treats the block's end as the array's end
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_missing_syncthreads(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_no_shared(out, a, b, a_size, b_size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a[i + j] * b[j]
        out[i] = total


@cuda.jit
def conv_true_convolution(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[b_size - 1 - j]   # flipped weights
        out[i] = total


@cuda.jit
def conv_missing_tail_check(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if local_i < b_size:
        b_tile[local_i] = b[local_i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):   # near the end of a, reads tile slots nobody loaded
            total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_b_by_global_index(out, a, b, a_size, b_size):
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        a_tile[local_i] = a[i]
    if local_i < b_size - 1 and i + TPB < a_size:
        a_tile[local_i + TPB] = a[i + TPB]
    if i < b_size:           # only block 0 loads b; every block needs its own copy
        b_tile[local_i] = b[i]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size):
            if i + j < a_size:
                total += a_tile[local_i + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_strided_tile_load(out, a, b, a_size, b_size):
    # Fill the tile (block plus halo) with a strided loop; taps past the end are zero slots.
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    start = cuda.blockIdx.x * cuda.blockDim.x
    t = cuda.threadIdx.x
    for s in range(t, TPB + b_size - 1, TPB):
        a_tile[s] = a[start + s] if start + s < a_size else 0.0
    if t < b_size:
        b_tile[t] = b[t]
    cuda.syncthreads()
    i = start + t
    if i < a_size:
        total = numba.float32(0.0)
        for j in range(b_size):
            total += a_tile[t + j] * b_tile[j]
        out[i] = total


@cuda.jit
def conv_reversed_taps(out, a, b, a_size, b_size):
    # The last threads load b; the taps are summed from the far end.
    a_tile = cuda.shared.array(A_TILE, numba.float32)
    b_tile = cuda.shared.array(MAX_CONV, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < a_size:
        a_tile[t] = a[i]
    if t < b_size - 1 and i + TPB < a_size:
        a_tile[t + TPB] = a[i + TPB]
    w = TPB - 1 - t
    if w < b_size:
        b_tile[w] = b[w]
    cuda.syncthreads()
    if i < a_size:
        total = 0.0
        for j in range(b_size - 1, -1, -1):
            if i + j < a_size:
                total += a_tile[t + j] * b_tile[j]
        out[i] = total


# ---------------------------------------------------------------- 12. prefix_sum

@cuda.jit
def prefix_sum_thread0_loop(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    if local_i == 0:         # right answer, but one thread does all the adding
        total = 0.0
        for k in range(TPB):
            total += cache[k]
        out[cuda.blockIdx.x] = total


@cuda.jit
def prefix_sum_missing_sync_in_loop(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        stride //= 2
    cuda.syncthreads()
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_barrier_in_branch(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
            cuda.syncthreads()   # only the active half arrives
        stride //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_no_zero_padding(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        cache[local_i] = a[i]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_global_index_out(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[i] = cache[0]    # out has one slot per block, not per element


@cuda.jit
def prefix_sum_all_threads_write(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_stops_early(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    cache[local_i] = a[i] if i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 1:        # the last halving (stride 1) never runs
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_interleaved(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < size:
        cache[t] = a[i]
    else:
        cache[t] = 0.0
    cuda.syncthreads()
    stride = 1
    while stride < TPB:
        if t % (2 * stride) == 0:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]


@cuda.jit
def prefix_sum_fold(out, a, size):
    # Fold the live part of the array in half each step: slot t gets slot (2*half - 1 - t).
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    cache[t] = a[i] if i < size else 0.0
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if t < half:
            cache[t] += cache[2 * half - 1 - t]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        out[cuda.blockIdx.x] = cache[0]


# ---------------------------------------------------------------- 13. axis_sum

@cuda.jit
def axis_sum_row_from_x(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.x    # always 0: the grid is (1, rows)
    local_i = cuda.threadIdx.x
    cache[local_i] = a[row, local_i] if local_i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_swapped_index(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    cache[local_i] = a[local_i, row] if local_i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_thread0_loop(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    cache[local_i] = a[row, local_i] if local_i < size else 0.0
    cuda.syncthreads()
    if local_i == 0:
        total = 0.0
        for k in range(TPB):
            total += cache[k]
        out[row, 0] = total


@cuda.jit
def axis_sum_missing_sync(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    cache[local_i] = a[row, local_i] if local_i < size else 0.0
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_no_zero_padding(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    if local_i < size:
        cache[local_i] = a[row, local_i]
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
        cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_barrier_in_branch(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    local_i = cuda.threadIdx.x
    cache[local_i] = a[row, local_i] if local_i < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if local_i < stride:
            cache[local_i] += cache[local_i + stride]
            cuda.syncthreads()
        stride //= 2
    if local_i == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_interleaved(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    t = cuda.threadIdx.x
    if t < size:
        cache[t] = a[row, t]
    else:
        cache[t] = 0.0
    cuda.syncthreads()
    stride = 1
    while stride < TPB:
        if t % (2 * stride) == 0:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride *= 2
    if t == 0:
        out[row, 0] = cache[0]


@cuda.jit
def axis_sum_fold(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    t = cuda.threadIdx.x
    cache[t] = a[row, t] if t < size else 0.0
    cuda.syncthreads()
    half = TPB // 2
    while half > 0:
        if t < half:
            cache[t] += cache[2 * half - 1 - t]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        out[row, 0] = cache[0]


# ---------------------------------------------------------------- 14. matmul

@cuda.jit
def matmul_naive(out, a, b, size):
    i = cuda.blockIdx.y * TPB + cuda.threadIdx.y
    j = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    if i < size and j < size:
        total = 0.0
        for k in range(size):   # 2 * size global reads per thread
            total += a[i, k] * b[k, j]
        out[i, j] = total


@cuda.jit
def matmul_never_reads_b(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        b_tile[ty, tx] = a[j, k] if k < size and j < size else 0.0   # copy-paste: loads a.T
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_missing_second_sync(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        b_tile[ty, tx] = b[k, j] if k < size and j < size else 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        # no barrier: fast threads overwrite the tiles while slow ones still read them
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_missing_first_sync(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        b_tile[ty, tx] = b[k, j] if k < size and j < size else 0.0
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_no_zero_padding(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        if i < size and k < size:
            a_tile[ty, tx] = a[i, k]
        k = t * TPB + ty
        if k < size and j < size:
            b_tile[ty, tx] = b[k, j]
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_barrier_in_branch(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    if i < size and j < size:   # threads outside the matrix skip the barriers
        total = 0.0
        for t in range((size + TPB - 1) // TPB):
            k = t * TPB + tx
            a_tile[ty, tx] = a[i, k] if k < size else 0.0
            k = t * TPB + ty
            b_tile[ty, tx] = b[k, j] if k < size else 0.0
            cuda.syncthreads()
            for kk in range(TPB):
                total += a_tile[ty, kk] * b_tile[kk, tx]
            cuda.syncthreads()
        out[i, j] = total


@cuda.jit
def matmul_wrong_axis_load(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + ty     # ty for both tiles: a's tile should walk along x
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        b_tile[ty, tx] = b[k, j] if k < size and j < size else 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_transposed_b_tile(out, a, b, size):
    # b's tile is stored transposed, so both dot-product operands walk along a row of a tile.
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    bt_tile = cuda.shared.array((TPB, TPB), numba.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.y * TPB + ty
    j = cuda.blockIdx.x * TPB + tx
    total = 0.0
    for t in range((size + TPB - 1) // TPB):
        k = t * TPB + tx
        a_tile[ty, tx] = a[i, k] if i < size and k < size else 0.0
        k = t * TPB + ty
        bt_tile[tx, ty] = b[k, j] if k < size and j < size else 0.0
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * bt_tile[tx, kk]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = total


@cuda.jit
def matmul_grid_index(out, a, b, size):
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    b_tile = cuda.shared.array((TPB, TPB), numba.float32)
    j, i = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    inside = i < size and j < size
    total = numba.float32(0.0)
    ntiles = (size + TPB - 1) // TPB
    t = 0
    while t < ntiles:
        base = t * TPB
        a_tile[ty, tx] = 0.0
        b_tile[ty, tx] = 0.0
        if i < size and base + tx < size:
            a_tile[ty, tx] = a[i, base + tx]
        if j < size and base + ty < size:
            b_tile[ty, tx] = b[base + ty, j]
        cuda.syncthreads()
        for kk in range(TPB):
            total += a_tile[ty, kk] * b_tile[kk, tx]
        cuda.syncthreads()
        t += 1
    if inside:
        out[i, j] = total


# ---------------------------------------------------------------- tables

MUTANTS = {
    "map": [
        ("arange_hardcode", map_arange_hardcode, *WRONG),
        ("times_ten", map_times_ten, *WRONG),
        ("block_index", map_block_index, *RACE),
        ("read_next", map_read_next, *OOB),
        ("read_previous", map_read_previous, *OOB),
        ("accumulate_into_out", map_accumulate_into_out, *UNINIT),
        ("modifies_input", map_modifies_input, *READONLY),
        ("python_list", map_python_list, CompileRejected, None),
    ],
    "zip": [
        ("a_twice", zip_a_twice, *WRONG),
        ("b_twice", zip_b_twice, *WRONG),
        ("subtract", zip_subtract, *WRONG),
        ("thread_y", zip_thread_y, *RACE),
        ("b_shifted", zip_b_shifted, *OOB),
        ("writes_b", zip_writes_b, *READONLY),
    ],
    "guard": [
        ("missing", guard_missing, *OOB),
        ("off_by_one", guard_off_by_one, *OOB),
        ("against_block", guard_against_block, *OOB),
        ("too_strict", guard_too_strict, *WRONG),
        ("read_only", guard_read_only, *OOB),
        ("clamped_index", guard_clamped_index, *RACE),
    ],
    "map_2d": [
        ("missing_guard", map_2d_missing_guard, *OOB),
        ("guard_rows_only", map_2d_guard_rows_only, *OOB),
        ("guard_typo", map_2d_guard_typo, *OOB),
        ("transposed_read", map_2d_transposed_read, *WRONG),
        ("arange_hardcode", map_2d_arange_hardcode, *WRONG),
        ("guard_against_block", map_2d_guard_against_block, *OOB),
    ],
    "broadcast": [
        ("swapped_axes", broadcast_swapped_axes, *WRONG),
        ("column_as_row", broadcast_column_as_row, *OOB),
        ("missing_guard", broadcast_missing_guard, *OOB),
        ("a_twice", broadcast_a_twice, *WRONG),
        ("outer_product", broadcast_outer_product, *WRONG),
    ],
    "blocks": [
        ("local_index", blocks_local_index, *RACE),
        ("forgot_thread", blocks_forgot_thread, *RACE),
        ("missing_guard", blocks_missing_guard, *OOB),
        ("hardcoded_block_size", blocks_hardcoded_block_size, *WRONG),
        ("guard_local", blocks_guard_local, *OOB),
        ("block_plus_thread", blocks_block_plus_thread, *RACE),
    ],
    "blocks_2d": [
        ("missing_guard", blocks_2d_missing_guard, *OOB),
        ("local_index", blocks_2d_local_index, *RACE),
        ("mixed_axes", blocks_2d_mixed_axes, *WRONG),
        ("block_width_for_rows", blocks_2d_block_width_for_rows, *WRONG),
        ("transposed_read", blocks_2d_transposed_read, *WRONG),
        ("guard_one_axis", blocks_2d_guard_one_axis, *OOB),
    ],
    "shared": [
        ("global_index_in_shared", shared_global_index_in_shared, *OOB),
        ("unguarded_load", shared_unguarded_load, *OOB),
        ("barrier_in_branch", shared_barrier_in_branch, *BARRIER),
        ("read_before_load", shared_read_before_load, *UNINIT),
        ("zero_out_first", shared_zero_out_first, *over("global_writes")),
        ("oversized", shared_oversized, *over("shared_bytes")),
    ],
    "pool": [
        ("no_padding", pool_no_padding, *UNINIT),
        ("block_start_boundary", pool_block_start_boundary, *WRONG),
        ("missing_syncthreads", pool_missing_syncthreads, *NO_BARRIER),
        ("barrier_in_branch", pool_barrier_in_branch, *BARRIER),
        ("all_global", pool_all_global, *over("global_reads")),
        ("negative_halo", pool_negative_halo, *OOB),
    ],
    "dot": [
        ("a_squared", dot_a_squared, *WRONG),
        ("all_threads_write", dot_all_threads_write, *RACE),
        ("missing_syncthreads", dot_missing_syncthreads, *NO_BARRIER),
        ("no_zero_padding", dot_no_zero_padding, *UNINIT),
        ("barrier_in_branch", dot_barrier_in_branch, *BARRIER),
        ("no_shared", dot_no_shared, *over("global_reads")),
    ],
    "conv": [
        ("first_tap_skipped", conv_first_tap_skipped, *WRONG),
        ("no_halo", conv_no_halo, *UNINIT),
        ("block_end_boundary", conv_block_end_boundary, *WRONG),
        ("missing_syncthreads", conv_missing_syncthreads, *NO_BARRIER),
        ("no_shared", conv_no_shared, *over("global_reads")),
        ("true_convolution", conv_true_convolution, *WRONG),
        ("missing_tail_check", conv_missing_tail_check, *UNINIT),
        ("b_by_global_index", conv_b_by_global_index, *UNINIT),
    ],
    "prefix_sum": [
        ("thread0_loop", prefix_sum_thread0_loop, *over("shared_reads")),
        ("missing_sync_in_loop", prefix_sum_missing_sync_in_loop, *RACE),
        ("barrier_in_branch", prefix_sum_barrier_in_branch, *BARRIER),
        ("no_zero_padding", prefix_sum_no_zero_padding, *UNINIT),
        ("global_index_out", prefix_sum_global_index_out, *OOB),
        ("all_threads_write", prefix_sum_all_threads_write, *RACE),
        ("stops_early", prefix_sum_stops_early, *WRONG),
    ],
    "axis_sum": [
        ("row_from_x", axis_sum_row_from_x, *RACE),
        ("swapped_index", axis_sum_swapped_index, *OOB),
        ("thread0_loop", axis_sum_thread0_loop, *over("shared_reads")),
        ("missing_sync", axis_sum_missing_sync, *NO_BARRIER),
        ("no_zero_padding", axis_sum_no_zero_padding, *UNINIT),
        ("barrier_in_branch", axis_sum_barrier_in_branch, *BARRIER),
    ],
    "matmul": [
        ("naive", matmul_naive, *over("global_reads")),
        ("never_reads_b", matmul_never_reads_b, *WRONG),
        ("missing_second_sync", matmul_missing_second_sync, *RACE),
        ("missing_first_sync", matmul_missing_first_sync, *NO_BARRIER),
        ("no_zero_padding", matmul_no_zero_padding, *UNINIT),
        ("barrier_in_branch", matmul_barrier_in_branch, *BARRIER),
        ("wrong_axis_load", matmul_wrong_axis_load, *WRONG),
    ],
}

VARIANTS = {
    "map": [("grid_index", map_grid_index), ("grid_stride", map_grid_stride)],
    "zip": [("grid_index", zip_grid_index), ("grid_stride", zip_grid_stride)],
    "guard": [("early_return", guard_early_return), ("grid_stride", guard_grid_stride)],
    "map_2d": [("x_is_row", map_2d_x_is_row), ("grid_early_return", map_2d_grid_early_return)],
    "broadcast": [("x_is_row", broadcast_x_is_row), ("grid_early_return", broadcast_grid_early_return)],
    "blocks": [("grid_early_return", blocks_grid_early_return), ("grid_stride", blocks_grid_stride)],
    "blocks_2d": [("x_is_row", blocks_2d_x_is_row), ("grid", blocks_2d_grid)],
    "shared": [("mirror", shared_mirror), ("zero_padded", shared_zero_padded)],
    "pool": [("tail_halo", pool_tail_halo), ("zero_padded", pool_zero_padded)],
    "dot": [("tree", dot_tree), ("last_thread_sums", dot_last_thread_sums)],
    "conv": [("strided_tile_load", conv_strided_tile_load), ("reversed_taps", conv_reversed_taps)],
    "prefix_sum": [("interleaved", prefix_sum_interleaved), ("fold", prefix_sum_fold)],
    "axis_sum": [("interleaved", axis_sum_interleaved), ("fold", axis_sum_fold)],
    "matmul": [("transposed_b_tile", matmul_transposed_b_tile), ("grid_index", matmul_grid_index)],
}
