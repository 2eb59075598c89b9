"""The sum reduction ladder (PMPP chapter 10), one rung per kernel:

    ch10_reduce_simple      a tree in one block; the active threads spread out, so every warp
                            stays busy until the end
    ch10_reduce_convergent  the active threads packed at the front: whole warps go idle
    ch10_reduce_shared      the first step done while loading: half the shared memory
    ch10_reduce_segmented   any length: one segment per block, one atomic per block
    ch10_reduce_coarsened   each thread sums 2 * COARSE elements before the tree
    ch10_reduce_shuffle     warp shuffles and a grid-stride loop: what a fast GPU reduction looks like

The book's first two kernels reduce in place in global memory, overwriting the input. The harness
here never lets a kernel change its input (a learner must be able to rerun a cell), so these
kernels work on a shared-memory copy from the start.
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle, edge_sizes
from helpers.rules import active_threads_packed

TPB = 16  # threads per block in the puzzles
SEGMENT = 2 * TPB  # elements one block reduces in the one-block and segmented versions
COARSE = 2  # coarsened and shuffle versions: loads per thread per round
FULL_MASK = 0xFFFFFFFF
CHAPTER = "pmpp-10"

# ------------------------------------------------------------------ spec and tolerances


def sum_spec(a, n):
    return np.array([a.astype(np.float64).sum()], np.float32)


def sum_into_spec(out, a, n):
    """The any-length rungs add to what `out[0]` held before the launch (earlier launches' sum)."""
    return np.array([np.float64(out[0]) + a.astype(np.float64).sum()], np.float32)


_TOL = dict(rtol=1e-5, atol=1e-4)  # float32 sums in another order than NumPy's
# the tree rungs: the threads still adding are the first ones (t < stride), whole warps drop out
CONVERGENT = (active_threads_packed(),)
EARLIER = """ `out[0]` already holds the sum of earlier launches: add to it, never set or clear it."""

# ------------------------------------------------------------------ cases


def _case(rng, n, grid, block, earlier=False):
    """`earlier`: `out[0]` starts at a non-zero sum left by earlier launches, so that a kernel which
    sets it (`=` for `+=`, or clears it first) is wrong on every case."""
    a = rng.uniform(-2, 2, n).astype(np.float32)
    out = (
        rng.uniform(10, 50, 1).astype(np.float32) * rng.choice([-1, 1])
        if earlier
        else np.zeros(1, np.float32)
    )
    return Case(grid, block, dict(out=out, a=a, n=n))


def one_block_cases(rng):
    # case 0 a full segment; per seed 1, TPB-1, TPB, TPB+1 and a size up to the segment
    return [_case(rng, n, 1, TPB) for n in edge_sizes(rng, SEGMENT, TPB, (TPB + 2, SEGMENT - 1))]


def segmented_cases(rng):
    # per seed: within one segment (1, TPB-1, TPB, TPB+1), a few segments, and 9 to 12 segments
    sizes = edge_sizes(rng, 100, SEGMENT, (8 * SEGMENT + 1, 12 * SEGMENT))
    return [_case(rng, n, (n + SEGMENT - 1) // SEGMENT, TPB, earlier=True) for n in sizes]


def coarsened_cases(rng):
    # per seed: within one block's share (1, per_block-1, per_block, per_block+1), a few blocks, 6 to 8
    per_block = 2 * COARSE * TPB
    sizes = edge_sizes(rng, 150, per_block, (5 * per_block + 1, 8 * per_block))
    return [_case(rng, n, (n + per_block - 1) // per_block, TPB, earlier=True) for n in sizes]


def shuffle_cases(rng):
    # fewer blocks than the data needs: the grid-stride loop must go round; 1 to 4 warps per block,
    # 1 to 4 blocks, drawn per seed; n from 1 (one thread busy) to several trips round the grid
    first = _case(rng, 1000, 3, 64, earlier=True)
    grid, block = int(rng.integers(1, 5)), 32 * int(rng.integers(1, 5))
    threads = grid * block
    sizes = edge_sizes(rng, 1000, threads, (min(3 * threads + 1, 1300), 1600))[1:]
    # and always one launch of 4 warps per block, more than the statement's examples
    wide = _case(rng, int(rng.integers(700, 1600)), int(rng.integers(1, 4)), 128, earlier=True)
    return [first] + [_case(rng, n, grid, block, earlier=True) for n in sizes] + [wide]


# ------------------------------------------------------------------ rung 1: simple tree, one block


@cuda.jit
def reduce_simple(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    i = 2 * t
    part[i] = a[i] if i < n else 0.0
    part[i + 1] = a[i + 1] if i + 1 < n else 0.0
    # thread t owns position 2t; at stride s only threads with t % s == 0 still add
    stride = 1
    while stride <= cuda.blockDim.x:
        cuda.syncthreads()
        if t % stride == 0:
            part[i] += part[i + stride]
        stride *= 2
    if t == 0:
        out[0] = part[0]


REDUCE_SIMPLE = Puzzle(
    name="ch10_reduce_simple",
    title="Simple sum reduction",
    statement=f"""One block of `TPB = {TPB}` threads sums up to `2 * TPB` elements into `out[0]`. Thread
`t` copies `a[2t]` and `a[2t + 1]` into shared memory (0 past `n`) and owns position `2t`; at stride
`1, 2, 4, ...` the threads with `t % stride == 0` add the partial sum `stride` places to their
right.""",
    outputs=("out",),
    spec=sum_spec,
    cases=one_block_cases,
    reference=reduce_simple,
    budget=Budget(global_reads=2, global_writes=1),
    chapter=CHAPTER,
    **_TOL,
)


# ------------------------------------------------------------------ rung 2: convergent tree


@cuda.jit
def reduce_convergent(out, a, n):
    part = cuda.shared.array(SEGMENT, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    ### BEGIN SOLUTION
    part[t] = a[t] if t < n else 0.0
    part[t + bd] = a[t + bd] if t + bd < n else 0.0
    # active threads stay packed at the front: whole warps drop out together
    stride = bd
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]
    ### END SOLUTION


REDUCE_CONVERGENT = Puzzle(
    name="ch10_reduce_convergent",
    title="Convergent sum reduction",
    statement=f"""The same sum (one block of `TPB = {TPB}`, up to `2 * TPB` elements, 0 past `n`), but
thread `t` owns position `t`: copy `a[t]` and `a[t + blockDim]` into shared memory, then at stride
`blockDim, blockDim / 2, ..., 1` the threads `t < stride` add `part[t + stride]`. The active threads
stay together at the front, so whole warps go idle instead of every warp running at a fraction
(checked: no thread writes shared memory more often than a thread before it).""",
    outputs=("out",),
    spec=sum_spec,
    cases=one_block_cases,
    reference=reduce_convergent,
    budget=Budget(global_reads=2, global_writes=1),
    rules=CONVERGENT,
    hints=(
        "Every thread must reach every syncthreads(): keep the barrier outside the `if t < stride`.",
        "Barrier before each step: a thread reads part[t + stride], which another thread wrote in "
        "the step before.",
        "Only thread 0 writes out[0], after the last step.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


# ------------------------------------------------------------------ rung 3: first step while loading


@cuda.jit
def reduce_shared(out, a, n):
    # the first step of the tree happens while loading: TPB floats of shared memory, not 2 * TPB
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    x = a[t] if t < n else numba.float32(0.0)
    y = a[t + bd] if t + bd < n else numba.float32(0.0)
    part[t] = x + y
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        out[0] = part[0]


REDUCE_SHARED = Puzzle(
    name="ch10_reduce_shared",
    title="First step while loading",
    statement=f"""The convergent tree with its first step done as the data arrives: thread `t` stores
`a[t] + a[t + blockDim]` into a shared array of only `TPB = {TPB}` floats. Half the shared memory, one
barrier fewer, and two global reads per thread (enforced).""",
    outputs=("out",),
    spec=sum_spec,
    cases=one_block_cases,
    reference=reduce_shared,
    budget=Budget(global_reads=2, global_writes=1, shared_bytes=TPB * 4),
    rules=CONVERGENT,
    chapter=CHAPTER,
    **_TOL,
)


# ------------------------------------------------------------------ rung 4: any length, one atomic per block


@cuda.jit
def reduce_segmented(out, a, n):
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    ### BEGIN SOLUTION
    start = 2 * bd * cuda.blockIdx.x
    i = start + t
    x = a[i] if i < n else 0.0
    y = a[i + bd] if i + bd < n else 0.0
    part[t] = x + y
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    # one atomic per block: blocks finish in any order
    if t == 0:
        cuda.atomic.add(out, 0, part[0])
    ### END SOLUTION


REDUCE_SEGMENTED = Puzzle(
    name="ch10_reduce_segmented",
    title="Any length: one segment per block, one atomic per block",
    statement=f"""Add the sum of `a` (any length) to `out[0]`. Block `b` reduces the segment
of `2 * blockDim` elements starting at `2 * blockDim * b` as in the previous puzzle, then thread 0 adds
the block's total to `out[0]` with `cuda.atomic.add`. Budget: two global reads per thread, one atomic
per block, `TPB = {TPB}` floats of shared memory; the tree's adding threads packed at the front."""
    + EARLIER,
    outputs=("out",),
    spec=sum_into_spec,
    cases=segmented_cases,
    reference=reduce_segmented,
    accumulate=("out",),
    rules=CONVERGENT,
    budget=Budget(global_reads=2, shared_bytes=TPB * 4, global_atomics_per_block=1),
    hints=(
        "Index the input with the segment start plus t, not t alone.",
        "A plain out[0] += total from every block is a race between blocks: use cuda.atomic.add.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


# ------------------------------------------------------------------ rung 5: thread coarsening


@cuda.jit
def reduce_coarsened(out, a, n):
    part = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    start = 2 * COARSE * bd * cuda.blockIdx.x
    # each thread first adds 2 * COARSE elements, bd apart (coalesced), with no barriers at all
    acc = np.float32(0.0)
    for k in range(2 * COARSE):
        i = start + k * bd + t
        if i < n:
            acc += a[i]
    part[t] = acc
    stride = bd // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, part[0])


REDUCE_COARSENED = Puzzle(
    name="ch10_reduce_coarsened",
    title="Thread coarsening",
    statement=f"""Each block reduces `2 * COARSE * blockDim` elements (`COARSE = {COARSE}`): every thread
first adds its `2 * COARSE` elements, `blockDim` apart, in a register (no barriers needed), then the
block runs the (convergent) tree over one value per thread and adds its total atomically. Fewer
blocks, fewer barriers per element."""
    + EARLIER,
    outputs=("out",),
    spec=sum_into_spec,
    cases=coarsened_cases,
    reference=reduce_coarsened,
    accumulate=("out",),
    rules=CONVERGENT,
    budget=Budget(global_reads=2 * COARSE, shared_bytes=TPB * 4, global_atomics_per_block=1),
    chapter=CHAPTER,
    **_TOL,
)


# ------------------------------------------------------------------ rung 6: warp shuffles, grid-stride


@cuda.jit
def reduce_shuffle(out, a, n):
    warp_sums = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    bd = cuda.blockDim.x
    lane = t % 32
    warp = t // 32
    # grid-stride: any grid covers any n. A full round has no bounds test, so its COARSE loads are all
    # in flight at once (a load under an `if` waits for the one before); the last elements go singly
    acc = np.float32(0.0)
    step = cuda.gridDim.x * bd
    i = cuda.blockIdx.x * bd + t
    while i + (COARSE - 1) * step < n:
        for k in range(COARSE):
            acc += a[i + k * step]
        i += COARSE * step
    while i < n:
        acc += a[i]
        i += step
    ### BEGIN SOLUTION
    # the 32 lanes of a warp add through registers: no shared memory, no barrier
    offset = 16
    while offset > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
        offset //= 2
    if lane == 0:
        warp_sums[warp] = acc
    cuda.syncthreads()
    if warp == 0:
        acc = warp_sums[lane] if lane < bd // 32 else np.float32(0.0)
        offset = 16
        while offset > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, offset)
            offset //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, acc)
    ### END SOLUTION


REDUCE_SHUFFLE = Puzzle(
    name="ch10_reduce_shuffle",
    title="Warp shuffles and a grid-stride loop",
    statement="""The loop that gives each thread its running sum is written for you: a grid-stride loop,
so any grid covers any `n`. Finish the block's sum without a shared-memory tree: within each warp,
`cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)` for `offset = 16, 8, 4, 2, 1` leaves the warp's total
in lane 0; lane 0 of each warp stores it in `warp_sums`; after a barrier the first warp adds those up
the same way and its lane 0 adds the block's total to `out[0]` atomically. Budget per thread: one
shared write, one shared read; one atomic per block. Block sizes are whole warps (32 to 128)."""
    + EARLIER,
    outputs=("out",),
    spec=sum_into_spec,
    cases=shuffle_cases,
    reference=reduce_shuffle,
    accumulate=("out",),
    budget=Budget(shared_writes=1, shared_reads=1, global_atomics_per_block=1),
    hints=(
        "Every lane of the warp must execute each shfl_down_sync with the full mask: no `if` around it.",
        "The number of warps is blockDim.x // 32; lanes past it contribute 0 in the second round.",
        "Barrier between the warp_sums writes and the first warp reading them.",
    ),
    chapter=CHAPTER,
    **_TOL,
)


PUZZLES = [
    REDUCE_SIMPLE,
    REDUCE_CONVERGENT,
    REDUCE_SHARED,
    REDUCE_SEGMENTED,
    REDUCE_COARSENED,
    REDUCE_SHUFFLE,
]
