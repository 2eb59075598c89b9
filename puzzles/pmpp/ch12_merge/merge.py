"""The parallel merge ladder (PMPP 12.5-12.7): every thread finds its piece of the output by co-rank.

    ch12_merge_basic     each thread merges one contiguous piece straight from global memory
    ch12_merge_tiled     each block works through its slice in rounds of TILE elements of A and B
                         loaded into shared memory, coalesced
    ch12_merge_circular  the tiles as circular buffers: each input element read from global memory once

Merging two sorted arrays looks sequential: where output element k comes from depends on every
comparison before it. The co-rank function breaks that dependence.
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle, edge_sizes
from helpers.rules import outputs_via_shared

from .common import CHAPTER, TILE, TPB, co_rank, sorted_pair, split_total

# ------------------------------------------------------------------ spec


def merge_spec(a, b, m, n):
    return np.sort(np.concatenate([a, b]), kind="stable").astype(np.float32)


# ------------------------------------------------------------------ cases


def _merge_cases(rng, shapes):
    cases = []
    for m, n, grid in shapes:
        a, b = sorted_pair(rng, m, n)
        cases.append(Case(grid, TPB, dict(c=np.zeros(m + n, np.float32), a=a, b=b, m=m, n=n)))
    return cases


def basic_cases(rng):
    # case 0: 3 blocks of 8, 24 threads; per seed 1 to 3 blocks and m + n around the thread count
    # (fewer outputs than threads leaves threads with nothing to merge), up to more than the old 89
    first = _merge_cases(rng, [(37, 50, 3)])
    grid = int(rng.integers(1, 4))
    totals = edge_sizes(rng, 87, grid * TPB, (90, 120), smallest=2)[1:]
    return first + _merge_cases(rng, [(*split_total(rng, t), grid) for t in totals])


def tiled_cases(rng):
    # case 0: several TILE-sized rounds per block; per seed m + n around one tile (one round, one
    # short), uneven splits, 1 to 3 blocks, and one block with more rounds than the old cases (6)
    first = _merge_cases(rng, [(61, 74, 3)])
    totals = edge_sizes(rng, 135, TILE, (6 * TILE + 1, 8 * TILE), smallest=2)[1:]
    shapes = [(*split_total(rng, t), 1 if t > 6 * TILE else int(rng.integers(1, 4))) for t in totals]
    return first + _merge_cases(rng, shapes)


MERGE_STATEMENT = """Merge the sorted arrays `a` (length `m`) and `b` (length `n`) into `c` (length `m + n`),
taking the element of `a` first on a tie. Use the `co_rank` and `merge_sequential` device functions
defined above."""


# ------------------------------------------------------------------ device functions the kernels use


@cuda.jit(device=True)
def merge_sequential(c, c0, a, a0, m, b, b0, n):
    """c[c0:c0 + m + n] = merge(a[a0:a0 + m], b[b0:b0 + n]), one thread."""
    i = 0
    j = 0
    k = c0
    while i < m and j < n:
        if a[a0 + i] <= b[b0 + j]:
            c[k] = a[a0 + i]
            i += 1
        else:
            c[k] = b[b0 + j]
            j += 1
        k += 1
    while i < m:
        c[k] = a[a0 + i]
        i += 1
        k += 1
    while j < n:
        c[k] = b[b0 + j]
        j += 1
        k += 1


@cuda.jit(device=True)
def co_rank_circular(k, a, a_head, m, b, b_head, n):
    """co_rank on two circular buffers of TILE slots: element x of A sits at a[(a_head + x) % TILE]."""
    i = min(k, m)
    j = k - i
    i_low = max(0, k - n)
    j_low = max(0, k - m)
    while True:
        if i > 0 and j < n and a[(a_head + i - 1) % TILE] > b[(b_head + j) % TILE]:
            delta = (i - i_low + 1) // 2
            j_low = j
            i -= delta
            j += delta
        elif j > 0 and i < m and b[(b_head + j - 1) % TILE] >= a[(a_head + i) % TILE]:
            delta = (j - j_low + 1) // 2
            i_low = i
            i += delta
            j -= delta
        else:
            return i


@cuda.jit(device=True)
def merge_sequential_circular(c, c0, a, a_head, m, b, b_head, n):
    """merge_sequential reading A and B from circular buffers of TILE slots."""
    i = 0
    j = 0
    k = c0
    while i < m and j < n:
        x = a[(a_head + i) % TILE]
        y = b[(b_head + j) % TILE]
        if x <= y:
            c[k] = x
            i += 1
        else:
            c[k] = y
            j += 1
        k += 1
    while i < m:
        c[k] = a[(a_head + i) % TILE]
        i += 1
        k += 1
    while j < n:
        c[k] = b[(b_head + j) % TILE]
        j += 1
        k += 1


# ------------------------------------------------------------------ rung 1: basic


@cuda.jit
def merge_basic(c, a, b, m, n):
    tid = cuda.grid(1)
    per_thread = (m + n + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    k_curr = min(tid * per_thread, m + n)
    k_next = min(k_curr + per_thread, m + n)
    i_curr = co_rank(k_curr, a, m, b, n)
    i_next = co_rank(k_next, a, m, b, n)
    j_curr = k_curr - i_curr
    j_next = k_next - i_next
    merge_sequential(c, k_curr, a, i_curr, i_next - i_curr, b, j_curr, j_next - j_curr)


MERGE_BASIC = Puzzle(
    name="ch12_merge_basic",
    title="Basic parallel merge",
    statement=MERGE_STATEMENT
    + """ Every thread of the grid produces one contiguous piece of
`ceil((m + n) / threads)` outputs: co-rank tells it where its inputs start and end.""",
    outputs=("c",),
    spec=merge_spec,
    cases=basic_cases,
    reference=merge_basic,
    chapter=CHAPTER,
)


# ------------------------------------------------------------------ rung 2: tiled


@cuda.jit
def merge_tiled(c, a, b, m, n):
    a_s = cuda.shared.array(TILE, numba.float32)
    b_s = cuda.shared.array(TILE, numba.float32)
    bounds = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    tpb = cuda.blockDim.x
    # this block's slice of the output, and the slices of A and B it needs
    per_block = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    c_start = min(cuda.blockIdx.x * per_block, m + n)
    c_end = min(c_start + per_block, m + n)
    if t == 0:
        bounds[0] = co_rank(c_start, a, m, b, n)
        bounds[1] = co_rank(c_end, a, m, b, n)
    cuda.syncthreads()
    a_start = bounds[0]
    a_len = bounds[1] - a_start
    b_start = c_start - a_start
    b_len = (c_end - c_start) - a_len
    c_len = c_end - c_start
    c_done = 0
    a_done = 0
    b_done = 0
    ### BEGIN SOLUTION
    while c_done < c_len:
        a_cnt = min(TILE, a_len - a_done)
        b_cnt = min(TILE, b_len - b_done)
        # neighbouring threads load neighbouring elements: coalesced
        for x in range(t, a_cnt, tpb):
            a_s[x] = a[a_start + a_done + x]
        for x in range(t, b_cnt, tpb):
            b_s[x] = b[b_start + b_done + x]
        cuda.syncthreads()
        # this tile yields at most TILE outputs; each thread merges a share of them
        c_cnt = min(TILE, c_len - c_done)
        per_thread = (TILE + tpb - 1) // tpb
        k_curr = min(t * per_thread, c_cnt)
        k_next = min(k_curr + per_thread, c_cnt)
        i_curr = co_rank(k_curr, a_s, a_cnt, b_s, b_cnt)
        i_next = co_rank(k_next, a_s, a_cnt, b_s, b_cnt)
        merge_sequential(
            c,
            c_start + c_done + k_curr,
            a_s,
            i_curr,
            i_next - i_curr,
            b_s,
            k_curr - i_curr,
            (k_next - i_next) - (k_curr - i_curr),
        )
        used_a = co_rank(c_cnt, a_s, a_cnt, b_s, b_cnt)
        c_done += c_cnt
        a_done += used_a
        b_done += c_cnt - used_a
        # everyone must be done reading the tiles before they are overwritten
        cuda.syncthreads()
    ### END SOLUTION


MERGE_TILED = Puzzle(
    name="ch12_merge_tiled",
    title="Tiled merge",
    statement=MERGE_STATEMENT
    + f""" Each block owns one contiguous slice of `c`. Work through it in
rounds: load the next `TILE = {TILE}` elements (or fewer) of the block's slices of `a` and of `b` into
shared memory with coalesced loads, merge the next `TILE` outputs from the shared tiles, then use co-rank
once more to learn how much of each tile that round used. Checked: every thread that writes `c` reads
the shared tiles (a merge straight from global memory is the basic kernel).""",
    outputs=("c",),
    spec=merge_spec,
    cases=tiled_cases,
    reference=merge_tiled,
    rules=(outputs_via_shared(1),),
    hints=(
        "A round never outputs more than TILE elements, so it never needs more than TILE of A or of B.",
        "Inside a round the tiles are just two short sorted arrays: co_rank works on a_s and b_s "
        "with lengths a_cnt and b_cnt.",
        "used_a = co_rank(c_cnt, a_s, a_cnt, b_s, b_cnt); B used c_cnt - used_a. Barrier before the "
        "next round overwrites the tiles.",
    ),
    chapter=CHAPTER,
)


# ------------------------------------------------------------------ rung 3: circular buffers


@cuda.jit
def merge_circular(c, a, b, m, n):
    a_s = cuda.shared.array(TILE, numba.float32)
    b_s = cuda.shared.array(TILE, numba.float32)
    bounds = cuda.shared.array(2, numba.int32)
    t = cuda.threadIdx.x
    tpb = cuda.blockDim.x
    per_block = (m + n + cuda.gridDim.x - 1) // cuda.gridDim.x
    c_start = min(cuda.blockIdx.x * per_block, m + n)
    c_end = min(c_start + per_block, m + n)
    if t == 0:
        bounds[0] = co_rank(c_start, a, m, b, n)
        bounds[1] = co_rank(c_end, a, m, b, n)
    cuda.syncthreads()
    a_start = bounds[0]
    a_len = bounds[1] - a_start
    b_start = c_start - a_start
    b_len = (c_end - c_start) - a_len
    c_len = c_end - c_start
    c_done = 0
    a_done = 0
    b_done = 0
    # the buffers hold a_held (b_held) valid elements starting at slot a_head (b_head)
    a_head = 0
    b_head = 0
    a_held = 0
    b_held = 0
    while c_done < c_len:
        # refill only the slots the last tile consumed; the rest are still valid
        a_cnt = min(TILE, a_len - a_done)
        b_cnt = min(TILE, b_len - b_done)
        for x in range(a_held + t, a_cnt, tpb):
            a_s[(a_head + x) % TILE] = a[a_start + a_done + x]
        for x in range(b_held + t, b_cnt, tpb):
            b_s[(b_head + x) % TILE] = b[b_start + b_done + x]
        cuda.syncthreads()
        c_cnt = min(TILE, c_len - c_done)
        per_thread = (TILE + tpb - 1) // tpb
        k_curr = min(t * per_thread, c_cnt)
        k_next = min(k_curr + per_thread, c_cnt)
        i_curr = co_rank_circular(k_curr, a_s, a_head, a_cnt, b_s, b_head, b_cnt)
        i_next = co_rank_circular(k_next, a_s, a_head, a_cnt, b_s, b_head, b_cnt)
        merge_sequential_circular(
            c,
            c_start + c_done + k_curr,
            a_s,
            a_head + i_curr,
            i_next - i_curr,
            b_s,
            b_head + k_curr - i_curr,
            (k_next - i_next) - (k_curr - i_curr),
        )
        used_a = co_rank_circular(c_cnt, a_s, a_head, a_cnt, b_s, b_head, b_cnt)
        used_b = c_cnt - used_a
        c_done += c_cnt
        a_done += used_a
        b_done += used_b
        a_head = (a_head + used_a) % TILE
        b_head = (b_head + used_b) % TILE
        a_held = a_cnt - used_a
        b_held = b_cnt - used_b
        cuda.syncthreads()


MERGE_CIRCULAR = Puzzle(
    name="ch12_merge_circular",
    title="Circular-buffer merge",
    statement=MERGE_STATEMENT
    + """ As the tiled merge, but the tiles are circular buffers: each
round reloads only the slots the previous round consumed, so each input element is read from global
memory once.""",
    outputs=("c",),
    spec=merge_spec,
    cases=tiled_cases,
    reference=merge_circular,
    rules=(outputs_via_shared(1),),
    chapter=CHAPTER,
)


PUZZLES = [MERGE_BASIC, MERGE_TILED, MERGE_CIRCULAR]
