"""Mutants and variants of puzzle 8, `shared` (puzzles/gpu_puzzles/p08_shared.py)."""

import numba
from numba import cuda

from mutants.common import BARRIER, OOB, UNINIT, over

TPB = 8


@cuda.jit
def shared_global_index_in_shared(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        cache[i] = a[i]  # cache has TPB slots; i runs over the whole array
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
        cuda.syncthreads()  # the spare threads of the last block never get here
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
        out[i] = 0.0  # a wasted global write
        cache[local_i] = a[i]
    cuda.syncthreads()
    if i < size:
        out[i] = cache[local_i] + 10


@cuda.jit
def shared_oversized(out, a, size):
    cache = cuda.shared.array(64, numba.float32)  # room for the whole input, in every block
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


@cuda.jit
def shared_skipped(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:  # right answer, but shared memory never used
        out[i] = a[i] + 10


@cuda.jit
def shared_written_not_read(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        v = a[i]
        cache[cuda.threadIdx.x] = v
        out[i] = v + 10  # the register copy, not the shared one


MUTANTS = {
    "shared": [
        ("global_index_in_shared", shared_global_index_in_shared, *OOB),
        ("unguarded_load", shared_unguarded_load, *OOB),
        ("barrier_in_branch", shared_barrier_in_branch, *BARRIER),
        ("read_before_load", shared_read_before_load, *UNINIT),
        ("zero_out_first", shared_zero_out_first, *over("global_writes")),
        ("oversized", shared_oversized, *over("shared_bytes")),
        ("skipped", shared_skipped, *over("outputs_via_shared")),
        ("written_not_read", shared_written_not_read, *over("outputs_via_shared")),
    ],
}

VARIANTS = {
    "shared": [("mirror", shared_mirror), ("zero_padded", shared_zero_padded)],
}
