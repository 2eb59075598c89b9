"""Mutants and variants of puzzle 1, `map` (puzzles/gpu_puzzles/p01_map.py)."""

from numba import cuda

from mutants.common import OOB, RACE, READONLY, UNINIT, WRONG, CompileRejected


@cuda.jit
def map_arange_hardcode(out, a):
    i = cuda.threadIdx.x
    out[i] = i + 10  # passes with a = arange; the thread index is not the data


@cuda.jit
def map_times_ten(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] * 10


@cuda.jit
def map_block_index(out, a):
    i = cuda.blockIdx.x  # 0 for every thread: all write out[0]
    out[i] = a[i] + 10


@cuda.jit
def map_read_next(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i + 1] + 10


@cuda.jit
def map_read_previous(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i - 1] + 10  # a[-1] wraps to the last element in Numba


@cuda.jit
def map_accumulate_into_out(out, a):
    i = cuda.threadIdx.x
    out[i] += a[i] + 10  # out holds garbage, not zeros


@cuda.jit
def map_modifies_input(out, a):
    i = cuda.threadIdx.x
    a[i] += 10
    out[i] = a[i]


@cuda.jit
def map_python_list(out, a):
    i = cuda.threadIdx.x
    terms = [a[i], 10.0]  # fine in the simulator, refused by real Numba (no lists on the GPU)
    out[i] = terms[0] + terms[1]


@cuda.jit
def map_grid_index(out, a):
    i = cuda.grid(1)
    out[i] = 10 + a[i]


@cuda.jit
def map_grid_stride(out, a):
    for k in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        out[k] = a[k] + 10


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
}

VARIANTS = {
    "map": [("grid_index", map_grid_index), ("grid_stride", map_grid_stride)],
}
