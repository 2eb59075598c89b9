"""PMPP chapter 12: merge. Co-rank, a basic merge, a tiled merge, a circular-buffer merge.

Merging two sorted arrays looks sequential: where output element k comes from
depends on every comparison before it. The co-rank function breaks that
dependence: for any output position k it finds, by binary search, how many
elements of A (i) and of B (j = k - i) the first k outputs use. Each thread
can then merge its own piece of the output independently.

Ties go to A (an element of A equal to one of B comes first), so the merge is
stable; the co-rank puzzle's answer depends on that rule.
"""

import numba
import numpy as np
from numba import cuda

from helpers.puzzle import Case, Puzzle, edge_sizes

TPB = 8  # threads per block in the puzzles
TILE = 16  # elements of A and of B held in shared memory per block (tiled and circular)

# what `from puzzles.pmpp.ch12_merge import *` gives a notebook: constants only, never a kernel
__all__ = ["TPB", "TILE"]
CHAPTER = "pmpp-12"


# ------------------------------------------------------------------ device functions


@cuda.jit(device=True)
def co_rank(k, a, m, b, n):
    """The i such that the first k outputs of merge(a[:m], b[:n]) are merge(a[:i], b[:k - i])."""
    i = min(k, m)
    j = k - i
    i_low = max(0, k - n)
    j_low = max(0, k - m)
    while True:
        if i > 0 and j < n and a[i - 1] > b[j]:
            # i is too big: a[i - 1] would come after b[j]
            delta = (i - i_low + 1) // 2
            j_low = j
            i -= delta
            j += delta
        elif j > 0 and i < m and b[j - 1] >= a[i]:
            # j is too big (>=: on a tie A goes first)
            delta = (j - j_low + 1) // 2
            i_low = i
            i += delta
            j -= delta
        else:
            return i


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


# ------------------------------------------------------------------ kernels


@cuda.jit
def co_rank_kernel(out, a, b, m, n):
    k = cuda.grid(1)
    if k <= m + n:
        ### BEGIN SOLUTION
        i = min(k, m)
        j = k - i
        i_low = max(0, k - n)
        j_low = max(0, k - m)
        while True:
            if i > 0 and j < n and a[i - 1] > b[j]:
                delta = (i - i_low + 1) // 2
                j_low = j
                i -= delta
                j += delta
            elif j > 0 and i < m and b[j - 1] >= a[i]:
                delta = (j - j_low + 1) // 2
                i_low = i
                i += delta
                j -= delta
            else:
                break
        out[k] = i
        ### END SOLUTION


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


# ------------------------------------------------------------------ GPU-only: partitioned merge

PART_TPB = 128  # merge_partitioned: threads per block
PART_ITEMS = 7  # outputs per thread (odd: a warp's writes to the staging tile spread over all banks)
PART_TILE = PART_TPB * PART_ITEMS  # outputs per block


@cuda.jit
def merge_partition(bounds, a, b, m, n):
    # bounds[p]: the co-rank of output position p * PART_TILE, one thread per tile boundary, so the
    # merge kernel starts with its slices known instead of searching global memory itself
    p = cuda.grid(1)
    if p < bounds.shape[0]:
        bounds[p] = co_rank(min(p * PART_TILE, m + n), a, m, b, n)


@cuda.jit
def merge_partitioned(c, a, b, m, n, bounds):
    # One tile of PART_TILE outputs per block, in one pass: the tile's slices of A and B (they hold
    # exactly as many elements as the tile has outputs) are loaded into shared memory coalesced,
    # each thread finds its start by co-rank and merges PART_ITEMS outputs from shared memory into
    # a staging tile, and the block writes the staging tile out coalesced.
    ins = cuda.shared.array(PART_TILE, numba.float32)  # the A slice, then the B slice
    outs = cuda.shared.array(PART_TILE, numba.float32)
    t = cuda.threadIdx.x
    c0 = cuda.blockIdx.x * PART_TILE
    c_len = min(PART_TILE, m + n - c0)
    a0 = bounds[cuda.blockIdx.x]
    a_len = bounds[cuda.blockIdx.x + 1] - a0
    b0 = c0 - a0
    for x in range(t, c_len, PART_TPB):
        ins[x] = a[a0 + x] if x < a_len else b[b0 + x - a_len]
    cuda.syncthreads()
    b_len = c_len - a_len
    k0 = min(t * PART_ITEMS, c_len)
    i = co_rank(k0, ins[:a_len], a_len, ins[a_len:c_len], b_len)
    j = k0 - i
    # PART_ITEMS outputs without a branch on the data: both heads read (clamped into the tile),
    # the smaller one taken (ties to A), its index advanced
    # (indices cast to unsigned: Numba spends integer instructions wrapping a signed index that
    # could be negative, and this loop is bound by integer instructions)
    for s in range(PART_ITEMS):
        va = ins[numba.uint32(min(i, c_len - 1))]
        vb = ins[numba.uint32(min(a_len + j, c_len - 1))]
        take_a = i < a_len and (j >= b_len or va <= vb)
        if k0 + s < c_len:
            outs[numba.uint32(k0 + s)] = va if take_a else vb
        i += 1 if take_a else 0
        j += 0 if take_a else 1
    cuda.syncthreads()
    for x in range(t, c_len, PART_TPB):
        c[c0 + x] = outs[x]


def partitioned_merge(c, a, b, m, n, bounds, kernels=None):
    """Both launches of the partitioned merge; `bounds` holds ceil((m + n) / PART_TILE) + 1 int32."""
    part, merge, tile, tpb = kernels or (merge_partition, merge_partitioned, PART_TILE, PART_TPB)
    tiles = (m + n + tile - 1) // tile
    part[(tiles + 1 + 127) // 128, 128](bounds, a, b, m, n)
    merge[tiles, tpb](c, a, b, m, n, bounds)


# ------------------------------------------------------------------ specs and cases


def _sorted_pair(rng, m, n):
    # quarter-steps from a small range: non-integers, negatives, and many ties between A and B
    a = np.sort(rng.integers(-40, 40, m) / 4).astype(np.float32)
    b = np.sort(rng.integers(-40, 40, n) / 4).astype(np.float32)
    return a, b


def co_rank_spec(a, b, m, n):
    order = np.argsort(np.concatenate([a, b]), kind="stable")  # stable: A before B on ties
    from_a = np.concatenate([[0], np.cumsum(order < m)])
    return from_a.astype(np.int32)


def merge_spec(a, b, m, n):
    return np.sort(np.concatenate([a, b]), kind="stable").astype(np.float32)


def _split(rng, total):
    # m + n = total, both at least 1, drawn per case: uneven splits and near-even ones
    m = int(rng.integers(1, total))
    return m, total - m


def _co_rank_case(rng, m, n, grid):
    a, b = _sorted_pair(rng, m, n)
    return Case(grid, TPB, dict(out=np.zeros(m + n + 1, np.int32), a=a, b=b, m=m, n=n))


def co_rank_cases(rng):
    # case 0 the notebook's; then m + n per seed: the edges around one block (2, TPB-1, TPB, TPB+1),
    # a few blocks and more outputs than the old largest (81), one thread per output k in 0..m+n
    cases = [_co_rank_case(rng, 13, 21, 5)]
    for total in edge_sizes(rng, 34, TPB, (82, 120), smallest=2)[1:]:
        grid = (total + 1 + TPB - 1) // TPB + int(rng.integers(0, 2))
        cases.append(_co_rank_case(rng, *_split(rng, total), grid))
    return cases


def _merge_cases(rng, shapes):
    cases = []
    for m, n, grid in shapes:
        a, b = _sorted_pair(rng, m, n)
        cases.append(Case(grid, TPB, dict(c=np.zeros(m + n, np.float32), a=a, b=b, m=m, n=n)))
    return cases


def basic_cases(rng):
    # case 0: 3 blocks of 8, 24 threads; per seed 1 to 3 blocks and m + n around the thread count
    # (fewer outputs than threads leaves threads with nothing to merge), up to more than the old 89
    first = _merge_cases(rng, [(37, 50, 3)])
    grid = int(rng.integers(1, 4))
    totals = edge_sizes(rng, 87, grid * TPB, (90, 120), smallest=2)[1:]
    return first + _merge_cases(rng, [(*_split(rng, t), grid) for t in totals])


def tiled_cases(rng):
    # case 0: several TILE-sized rounds per block; per seed m + n around one tile (one round, one
    # short), uneven splits, 1 to 3 blocks, and one block with more rounds than the old cases (6)
    first = _merge_cases(rng, [(61, 74, 3)])
    totals = edge_sizes(rng, 135, TILE, (6 * TILE + 1, 8 * TILE), smallest=2)[1:]
    shapes = [(*_split(rng, t), 1 if t > 6 * TILE else int(rng.integers(1, 4))) for t in totals]
    return first + _merge_cases(rng, shapes)


_MERGE_STATEMENT = """Merge the sorted arrays `a` (length `m`) and `b` (length `n`) into `c` (length `m + n`),
taking the element of `a` first on a tie. Use the `co_rank` and `merge_sequential` device functions
defined above."""

PUZZLES = [
    Puzzle(
        name="ch12_co_rank",
        title="Co-rank",
        statement="""Thread `k` (for every `k` from 0 to `m + n`, inclusive) writes `out[k]`: how many
elements of `a` the first `k` outputs of the merge of `a` and `b` use. Find it by binary search: start from
`i = min(k, m)`, `j = k - i`; if `a[i-1] > b[j]` then `i` is too large, if `b[j-1] >= a[i]` then `j`
is too large; halve the distance to the last bound that was known to be safe each step.""",
        outputs=("out",),
        spec=co_rank_spec,
        cases=co_rank_cases,
        reference=co_rank_kernel,
        hints=(
            "The search range for i is [max(0, k - n), min(k, m)]; j = k - i always.",
            "Keep i_low and j_low: the smallest i and j that are still possible. When i is too large, "
            "the current j becomes the new j_low, and vice versa.",
            "Step by delta = ceil((i - i_low) / 2) (or (j - j_low)) so the search always moves.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch12_merge_basic",
        title="Basic parallel merge",
        statement=_MERGE_STATEMENT
        + """ Every thread of the grid produces one contiguous piece of
`ceil((m + n) / threads)` outputs: co-rank tells it where its inputs start and end.""",
        outputs=("c",),
        spec=merge_spec,
        cases=basic_cases,
        reference=merge_basic,
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch12_merge_tiled",
        title="Tiled merge",
        statement=_MERGE_STATEMENT
        + f""" Each block owns one contiguous slice of `c`. Work through it in
rounds: load the next `TILE = {TILE}` elements (or fewer) of the block's slices of `a` and of `b` into
shared memory with coalesced loads, merge the next `TILE` outputs from the shared tiles, then use co-rank
once more to learn how much of each tile that round used.""",
        outputs=("c",),
        spec=merge_spec,
        cases=tiled_cases,
        reference=merge_tiled,
        hints=(
            "A round never outputs more than TILE elements, so it never needs more than TILE of A or of B.",
            "Inside a round the tiles are just two short sorted arrays: co_rank works on a_s and b_s "
            "with lengths a_cnt and b_cnt.",
            "used_a = co_rank(c_cnt, a_s, a_cnt, b_s, b_cnt); B used c_cnt - used_a. Barrier before the "
            "next round overwrites the tiles.",
        ),
        chapter=CHAPTER,
    ),
    Puzzle(
        name="ch12_merge_circular",
        title="Circular-buffer merge",
        statement=_MERGE_STATEMENT
        + """ As the tiled merge, but the tiles are circular buffers: each
round reloads only the slots the previous round consumed, so each input element is read from global
memory once.""",
        outputs=("c",),
        spec=merge_spec,
        cases=tiled_cases,
        reference=merge_circular,
        chapter=CHAPTER,
    ),
]


# ------------------------------------------------------------------ GPU benchmark

GOAL = {"ceiling": "copy", "fraction": 0.5, "best": "ch12_merge_partitioned"}
# merge_partitioned's knobs, searched on the GPU at hand: threads per block x outputs per thread
PART_GRID = {  # two tiles of tpb x items floats must fit the 48 KiB of static shared memory
    f"{tpb} threads x {items}": (tpb, items)
    for tpb, items in ((128, 15), (128, 23), (128, 31), (256, 11), (256, 23))
}


def _merge_inputs(rng, m, n):
    # integer-valued floats: the merged output is exact, so validation can be exact
    a = np.sort(rng.integers(-1 << 20, 1 << 20, m)).astype(np.float32)
    b = np.sort(rng.integers(-1 << 20, 1 << 20, n)).astype(np.float32)
    return a, b


def benchmark(scale: float = 1.0):
    """Validate, then time, the merge kernels on the GPU. Bytes: A and B read once, C written once."""
    from helpers import timing
    from helpers.timing import specialize

    rng = np.random.default_rng(12)
    dev = cuda.get_current_device()
    sms = dev.MULTIPROCESSOR_COUNT
    rows = [timing.copy_ceiling(max(1 << 14, int((256 << 20) * scale)))]

    # the puzzle kernels, recompiled with a GPU-sized tile: 8 outputs per thread per round at 128 threads
    tiled = specialize(merge_tiled, [co_rank, merge_sequential], TILE=1024)
    circular = specialize(merge_circular, [co_rank, co_rank_circular, merge_sequential_circular], TILE=1024)
    # validation on modest sizes, several launch shapes, before any timing
    for name, kern in [
        ("ch12_merge_basic", merge_basic),
        ("ch12_merge_tiled", tiled),
        ("ch12_merge_circular", circular),
    ]:
        big = max(501, int((1 << 18) * scale))
        for m, n, blocks, tpb in [
            (max(301, int(100_003 * scale)), max(203, int(77_777 * scale)), 37, 64),
            (big, big + 5, 4 * sms, 128),
        ]:
            a, b = _merge_inputs(rng, m, n)
            c = cuda.device_array(m + n, np.float32)
            kern[blocks, tpb](c, cuda.to_device(a), cuda.to_device(b), m, n)
            timing.validate(
                f"{name} (m={m}, n={n}, {blocks}x{tpb})",
                c.copy_to_host(),
                merge_spec(a, b, m, n),
                rtol=0,
                atol=0,
            )

    # each of A and B 128 MiB at scale 1: C is 256 MiB
    half = max(1 << 11, int((32 << 20) * scale))
    a, b = _merge_inputs(rng, half, half + 1)
    m, n = len(a), len(b)
    da, db = cuda.to_device(a), cuda.to_device(b)
    c = cuda.device_array(m + n, np.float32)
    nbytes = 2 * (m + n) * 4
    # basic: enough threads that each merges a few dozen elements; tiled: many blocks, TILE per round
    configs = [
        ("ch12_merge_basic", merge_basic, max(1, (m + n) // (32 * 256)), 256),
        ("ch12_merge_tiled", tiled, 64 * sms, 128),
        ("ch12_merge_circular", circular, 64 * sms, 128),
    ]
    expected = merge_spec(a, b, m, n)
    for name, kern, blocks, tpb in configs:
        kern[blocks, tpb](c, da, db, m, n)
        timing.validate(name, c.copy_to_host(), expected, rtol=0, atol=0)
        seconds = timing.time_gpu(lambda k=kern, g=blocks, t=tpb: k[g, t](c, da, db, m, n), reps=10)
        rows.append(timing.Measurement(name, seconds, bytes=nbytes))
    rows.append(_partitioned_row(c, da, db, m, n, expected, nbytes, rng, scale))
    peer = timing.library_peer(
        "merge",
        [
            timing.via("cupy", "cupy.sort of the concatenation", _peer_merge, da, db),
            timing.via("torch", "torch.sort of the concatenation", _peer_merge, da, db),
        ],
        bytes=nbytes,
        check=lambda got: timing.validate("merge peer", got, expected, rtol=0, atol=0),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_merge(xp, a, b):
    """What a user would call instead: no library merges two sorted arrays, so sort them together."""
    if hasattr(xp, "concatenate"):  # CuPy, NumPy
        return xp.sort(xp.concatenate((a, b)))
    return xp.sort(xp.cat((a, b))).values  # PyTorch


def _partitioned_kernels(tpb, items):
    from helpers.timing import specialize

    tile = tpb * items
    helpers = [co_rank, merge_sequential]
    part = specialize(merge_partition, helpers, PART_TILE=tile)
    merge = specialize(merge_partitioned, helpers, PART_TPB=tpb, PART_ITEMS=items, PART_TILE=tile)
    return part, merge, tile, tpb


def _partitioned_row(c, da, db, m, n, expected, nbytes, rng, scale):
    """Validate every candidate of the search (odd sizes, ties, one side empty), tune, time."""
    from helpers import timing, tuning

    def bounds_for(total, kernels):  # one co-rank per tile boundary
        return cuda.device_array((total + kernels[2] - 1) // kernels[2] + 1, np.int32)

    kernels = {cfg: _partitioned_kernels(*cfg) for cfg in PART_GRID.values()}
    checks = [(max(301, int(100_003 * scale)), max(203, int(77_777 * scale))), (0, 1000), (999, 1)]
    for label, cfg in PART_GRID.items():
        for sm, sn in checks:
            a, b = _merge_inputs(rng, sm, sn)
            small_c = cuda.device_array(sm + sn, np.float32)
            bounds = bounds_for(sm + sn, kernels[cfg])
            partitioned_merge(small_c, cuda.to_device(a), cuda.to_device(b), sm, sn, bounds, kernels[cfg])
            timing.validate(
                f"ch12_merge_partitioned ({label}, m={sm}, n={sn})",
                small_c.copy_to_host(),
                merge_spec(a, b, sm, sn),
                rtol=0,
                atol=0,
            )
    bounds = {cfg: bounds_for(m + n, k) for cfg, k in kernels.items()}  # allocated outside the timing
    launches = {
        cfg: lambda k=k, bd=bounds[cfg]: partitioned_merge(c, da, db, m, n, bd, k)
        for cfg, k in kernels.items()
    }
    choice, seconds = tuning.tuned_time(
        "ch12_merge_partitioned", PART_GRID, lambda cfg: timing.time_gpu(launches[cfg], reps=20)
    )
    launches[choice.config]()
    timing.validate("ch12_merge_partitioned", c.copy_to_host(), expected, rtol=0, atol=0)
    return timing.Measurement("ch12_merge_partitioned", seconds, bytes=nbytes, config=choice.label)
