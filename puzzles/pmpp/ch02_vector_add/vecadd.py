"""Vector addition, `out = a + b`: the chapter's one op ladder.

Rungs:
- ch02_vecadd (worked): one element per thread; the grid is rounded up to whole blocks and the
  spare threads of the last block must not touch memory.
- ch02_vecadd_grid_stride (exercise): fewer threads than elements, a grid-stride loop; each warp's
  accesses stay coalesced (a contiguous chunk per thread is rejected).
- ch02_vecadd_x4 (worked): the grid-stride loop with four loads of each operand in flight (the one
  that should reach 80% of copy bandwidth).
"""

import math

import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import grid_stride_coalescing

CHAPTER = "pmpp-02"

# ---------------------------------------------------------------------------- spec


def spec(a, b, n):
    return a + b


def _vectors(rng, n):
    a = rng.uniform(-50, 50, n).astype(np.float32)
    b = rng.normal(0, 10, n).astype(np.float32)
    return a, b


# ---------------------------------------------------------------------------- cases


def _case(rng, n, grid, block):
    a, b = _vectors(rng, n)
    return Case(grid=grid, block=block, args={"out": np.empty(n, np.float32), "a": a, "b": b, "n": n})


def cases_one_per_thread(rng):
    # enough blocks to cover n, n never a multiple of the block
    # sizes per seed around the block (1, tpb-1, tpb, tpb+1), several blocks, up to ~16 blocks
    tpb = int(rng.choice((32, 64)))
    sizes = [(100, 32)] + [(n, tpb) for n in edge_sizes(rng, 100, tpb, (8 * tpb + 1, 16 * tpb))[1:]]
    return [_case(rng, n, math.ceil(n / b), b) for n, b in sizes]


def cases_grid_stride(rng):
    # deliberately too few threads: every thread must handle several elements
    # sizes per seed: fewer elements than threads (1, threads-1), exactly the grid, one more, and
    # several trips round the loop, up to ~12 per thread
    grid, tpb = int(rng.integers(1, 4)), int(rng.choice((16, 32, 64)))
    threads = grid * tpb
    sizes = edge_sizes(rng, 300, threads, (6 * threads + 1, 12 * threads))[1:]
    return [_case(rng, 300, 2, 32)] + [_case(rng, n, grid, tpb) for n in sizes]


COALESCED = 0.5  # a grid-stride loop is ~100%; a contiguous chunk per thread 20% or less


def _per_thread(case, per_element):
    threads = case.grid * case.block
    return per_element * math.ceil(case.args["n"] / threads)


# ---------------------------------------------------------------------------- one element per thread


@cuda.jit
def vecadd_kernel(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + b[i]


CH02_VECADD = Puzzle(
    name="ch02_vecadd",
    title="PMPP 2: Vector addition, one element per thread",
    statement="""\
`out[i] = a[i] + b[i]` for `i < n`. Each thread computes its global index from the block index, the
block size and its index inside the block, and handles that one element; the grid is rounded up to
whole blocks, so the last block has threads with nothing to do, and they must not touch memory.
Budget per thread: 2 global reads, 1 global write.""",
    outputs=("out",),
    spec=spec,
    cases=cases_one_per_thread,
    reference=vecadd_kernel,
    budget=Budget(global_reads=2, global_writes=1),
    chapter=CHAPTER,
)

# ---------------------------------------------------------------------------- grid-stride loop


@cuda.jit
def vecadd_grid_stride_kernel(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    ### BEGIN SOLUTION
    stride = cuda.blockDim.x * cuda.gridDim.x
    while i < n:
        out[i] = a[i] + b[i]
        i += stride
    ### END SOLUTION


CH02_VECADD_GRID_STRIDE = Puzzle(
    name="ch02_vecadd_grid_stride",
    title="PMPP 2: Vector addition with a grid-stride loop",
    statement=f"""\
Same sum, but the launch has **fewer threads than elements**: the grid is sized to the machine, not
to the data. Thread `i` handles `i`, then `i + stride`, `i + 2*stride`, ... while the index is below
`n`, where `stride` is the total number of threads in the grid (`blockDim.x * gridDim.x`).
Consecutive threads still touch consecutive elements on every trip round the loop, so each warp's
accesses stay coalesced. Giving each thread a contiguous chunk of its own (elements `i*k` to
`i*k + k - 1`) is rejected: neighbouring lanes of a warp would then touch addresses `k` elements
apart, and every line's global accesses must be at least {COALESCED:.0%} coalesced.
Budget per thread: 2 reads and 1 write per element it owns.""",
    outputs=("out",),
    spec=spec,
    cases=cases_grid_stride,
    reference=vecadd_grid_stride_kernel,
    hints=(
        "How many threads are there in the whole grid? That is the distance between two elements "
        "one thread handles.",
        "`stride = cuda.blockDim.x * cuda.gridDim.x`; loop while `i < n`.",
    ),
    budget=Budget(global_reads=lambda c: _per_thread(c, 2), global_writes=lambda c: _per_thread(c, 1)),
    rules=(grid_stride_coalescing(COALESCED),),
    chapter=CHAPTER,
)

# ---------------------------------------------------------------------------- four loads in flight


@cuda.jit
def vecadd_x4_kernel(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.blockDim.x * cuda.gridDim.x
    # All eight loads are issued before the first store: four times the bytes in flight per thread,
    # which is what a memory system with ~1 us latency needs to stay busy.
    while i + 3 * stride < n:
        a0 = a[i]
        a1 = a[i + stride]
        a2 = a[i + 2 * stride]
        a3 = a[i + 3 * stride]
        b0 = b[i]
        b1 = b[i + stride]
        b2 = b[i + 2 * stride]
        b3 = b[i + 3 * stride]
        out[i] = a0 + b0
        out[i + stride] = a1 + b1
        out[i + 2 * stride] = a2 + b2
        out[i + 3 * stride] = a3 + b3
        i += 4 * stride
    while i < n:
        out[i] = a[i] + b[i]
        i += stride


CH02_VECADD_X4 = Puzzle(
    name="ch02_vecadd_x4",
    title="PMPP 2: Grid-stride vector addition, four elements in flight",
    statement="""\
The grid-stride loop unrolled by four, with all eight loads written before the first store. A GPU
hides memory latency by having many loads outstanding; a thread that issues one load and waits for
it before issuing the next keeps only a few bytes in flight. A remainder loop handles the last
elements. Budget per thread: 2 reads and 1 write per element it owns.""",
    outputs=("out",),
    spec=spec,
    cases=cases_grid_stride,
    reference=vecadd_x4_kernel,
    budget=Budget(global_reads=lambda c: _per_thread(c, 2), global_writes=lambda c: _per_thread(c, 1)),
    chapter=CHAPTER,
)

PUZZLES = [CH02_VECADD, CH02_VECADD_GRID_STRIDE, CH02_VECADD_X4]
