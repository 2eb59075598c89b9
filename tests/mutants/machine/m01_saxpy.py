"""Known-wrong and known-right kernels for notebook 13's exercise (SAXPY with a grid-stride loop)."""

from numba import cuda

from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, OutOfBounds


@cuda.jit
def one_element_each(out, x, y, alpha, size):
    i = cuda.grid(1)
    if i < size:  # the grid is smaller than the data
        out[i] = alpha * x[i] + y[i]


@cuda.jit
def block_stride(out, x, y, alpha, size):
    for i in range(cuda.grid(1), size, cuda.blockDim.x):  # steps over the other blocks' elements
        out[i] = alpha * x[i] + y[i]


@cuda.jit
def no_block_offset(out, x, y, alpha, size):
    for i in range(cuda.threadIdx.x, size, cuda.gridsize(1)):  # every block starts at 0
        out[i] = alpha * x[i] + y[i]


@cuda.jit
def one_past_the_end(out, x, y, alpha, size):
    i = cuda.grid(1)
    while i <= size:
        out[i] = alpha * x[i] + y[i]
        i += cuda.gridsize(1)


@cuda.jit
def alpha_times_both(out, x, y, alpha, size):
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        out[i] = alpha * (x[i] + y[i])


@cuda.jit
def two_writes(out, x, y, alpha, size):
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        out[i] = alpha * x[i]  # a round trip through global memory
        out[i] += y[i]


@cuda.jit
def contiguous_chunks(out, x, y, alpha, size):
    threads = cuda.gridsize(1)
    chunk = (size + threads - 1) // threads
    start = cuda.grid(1) * chunk
    for i in range(start, min(start + chunk, size)):  # each thread its own run: lanes chunk apart
        out[i] = alpha * x[i] + y[i]


@cuda.jit
def while_loop(out, x, y, alpha, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < size:
        out[i] = alpha * x[i] + y[i]
        i += cuda.gridDim.x * cuda.blockDim.x


@cuda.jit
def tiles_of_the_grid(out, x, y, alpha, size):
    step = cuda.gridsize(1)
    for base in range(0, size, step):
        i = base + cuda.grid(1)
        if i < size:
            out[i] = y[i] + x[i] * alpha


MUTANTS = {
    "machine_saxpy": [
        ("one_element_each", one_element_each, WrongAnswer, None),
        ("block_stride", block_stride, KernelDiagnosed, DataRace),
        ("no_block_offset", no_block_offset, KernelDiagnosed, DataRace),
        ("one_past_the_end", one_past_the_end, KernelDiagnosed, OutOfBounds),
        ("alpha_times_both", alpha_times_both, WrongAnswer, None),
        ("two_writes", two_writes, OverBudget, "global_reads"),
        ("contiguous_chunks", contiguous_chunks, OverBudget, "min_coalescing"),
    ]
}
VARIANTS = {"machine_saxpy": [("while_loop", while_loop), ("tiles_of_the_grid", tiles_of_the_grid)]}
SEEDS = {name: tuple(range(10)) for name in MUTANTS}  # every mutant fails, every variant passes, on each
