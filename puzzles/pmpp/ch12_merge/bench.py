"""Chapter 12 on the GPU: the merge kernels at GPU sizes (a 1024-element tile) and the GPU-only
partitioned merge (tuned on the GPU at hand), validated, then timed on 256 MiB against the copy
ceiling and the library's sort of the concatenation."""

import numba
import numpy as np
from numba import cuda

from .common import co_rank
from .merge import (
    co_rank_circular,
    merge_basic,
    merge_circular,
    merge_sequential,
    merge_sequential_circular,
    merge_spec,
    merge_tiled,
)

# ------------------------------------------------------------------ GPU benchmark

GOAL = {"ceiling": "copy", "fraction": 0.5, "best": "ch12_merge_partitioned_u32"}  # partitioned32.py
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
    rows.append(_partitioned_row(c, da, db, m, n, expected, nbytes, rng, scale, "ch12_merge_partitioned_u32"))
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


def _partitioned_kernels(tpb, items, u32=False):
    """(partition kernel, merge kernel, tile, threads); `u32`: the merge of partitioned32.py."""
    from helpers.timing import specialize

    from .partitioned32 import co_rank_tile, merge_partitioned_u32

    tile = tpb * items
    helpers = [co_rank, merge_sequential]
    part = specialize(merge_partition, helpers, PART_TILE=tile)
    kernel, used = (merge_partitioned_u32, [co_rank_tile]) if u32 else (merge_partitioned, helpers)
    merge = specialize(kernel, used, PART_TPB=tpb, PART_ITEMS=items, PART_TILE=tile)
    return part, merge, tile, tpb


def _partitioned_row(c, da, db, m, n, expected, nbytes, rng, scale, name="ch12_merge_partitioned"):
    """Validate every candidate of the search (odd sizes, ties, one side empty), tune, time; `name`
    ch12_merge_partitioned_u32: the same search over partitioned32.py's merge."""
    from helpers import timing, tuning

    def bounds_for(total, kernels):  # one co-rank per tile boundary
        return cuda.device_array((total + kernels[2] - 1) // kernels[2] + 1, np.int32)

    u32 = name.endswith("_u32")
    kernels = {cfg: _partitioned_kernels(*cfg, u32=u32) for cfg in PART_GRID.values()}
    checks = [(max(301, int(100_003 * scale)), max(203, int(77_777 * scale))), (0, 1000), (999, 1)]
    for label, cfg in PART_GRID.items():
        for sm, sn in checks:
            a, b = _merge_inputs(rng, sm, sn)
            small_c = cuda.device_array(sm + sn, np.float32)
            bounds = bounds_for(sm + sn, kernels[cfg])
            partitioned_merge(small_c, cuda.to_device(a), cuda.to_device(b), sm, sn, bounds, kernels[cfg])
            timing.validate(
                f"{name} ({label}, m={sm}, n={sn})",
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
    choice, seconds = tuning.tuned_time(name, PART_GRID, lambda cfg: timing.time_gpu(launches[cfg], reps=20))
    launches[choice.config]()
    timing.validate(name, c.copy_to_host(), expected, rtol=0, atol=0)
    return timing.Measurement(name, seconds, bytes=nbytes, config=choice.label)
