"""Chapter 11 on the GPU: the full-length scans (hierarchical, domino, decoupled look-back and the
GPU-only raked look-back) at GPU sizes, validated, then timed on 256 MiB of float32 against the copy
ceiling and the library's cumsum."""

import numba
import numpy as np
from numba import cuda

from .common import FULL_MASK, ITEMS, LB_TILE, RAKED_BUF
from .hierarchical import add_block_sums, hierarchical_plan, hierarchical_scan, scan_blocks
from .lookback32 import lookback_overlap, lookback_u32
from .single_pass import domino_scan, look_back, lookback_scan

# "peer": 1.0 -- the look-back scan must also be at least as fast as the library's cumsum in the same run
# judged on the search over lookback32.py's kernels (the look-back scan with 32-bit indices, and with
# its look-back overlapped with the scan work)
GOAL = {"ceiling": "copy", "fraction": 0.85, "best": "ch11_lookback_fast", "peer": 1.0}
# the look-back scan's block shapes searched on the GPU at hand: (threads, items per thread)
LOOKBACK_GRID = ((512, 16), (768, 16), (512, 24), (256, 32), (256, 48), (128, 64), (384, 32))
RAKED_GRID = ((256, 16), (256, 32), (512, 16), (512, 8), (128, 32), (1024, 8))  # ITEMS: powers of 2


@cuda.jit
def lookback_raked(out, flags, sums, counter, a, n):
    # lookback_scan with the work inside a tile moved from shuffles to registers ("raking"): each
    # thread scans ITEMS consecutive elements one after another, so a warp runs one 5-step shuffle
    # scan per 32 * ITEMS elements instead of one per 32. Loads and stores stay coalesced: a warp
    # moves rows of 32 through shared memory, turning them into runs of ITEMS per thread and back.
    # One padding word per 32 keeps both directions free of bank conflicts; with ITEMS a power of
    # two up to 32, each direction's shared index is a per-thread base plus a constant.
    buf = cuda.shared.array(RAKED_BUF, numba.float32)
    warp_tot = cuda.shared.array(32, numba.float32)
    ticket = cuda.shared.array(1, numba.int32)
    carry_in = cuda.shared.array(1, numba.float32)
    x = cuda.local.array(ITEMS, numba.float32)
    t = cuda.threadIdx.x
    lane = t % 32
    warp = t // 32
    nwarps = cuda.blockDim.x // 32
    if t == 0:
        ticket[0] = cuda.atomic.add(counter, 0, 1)
    cuda.syncthreads()
    tile = ticket[0]
    section = warp * ITEMS * 32  # this warp's ITEMS rows of 32, within the tile
    first = tile * LB_TILE + section + lane  # global index of this thread's element in row 0
    rows_at = section + section // 32 + lane  # shared index of that element; row r: + 33 r
    runs_at = rows_at - lane + lane * ITEMS + lane * ITEMS // 32  # this thread's run; item r: + r
    full = tile * LB_TILE + LB_TILE <= n
    for r in range(ITEMS):
        if full or first + r * 32 < n:
            buf[rows_at + r * 33] = a[first + r * 32]
        else:
            buf[rows_at + r * 33] = np.float32(0.0)
    cuda.syncwarp()
    total = np.float32(0.0)
    for r in range(ITEMS):
        total += buf[runs_at + r]
        x[r] = total
    v = total
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, v, d)
        if lane >= d:
            v += y
        d *= 2
    if lane == 31:
        warp_tot[warp] = v
    cuda.syncthreads()
    if warp == 0:
        w = warp_tot[lane] if lane < nwarps else np.float32(0.0)
        d = 1
        while d < 32:
            y = cuda.shfl_up_sync(FULL_MASK, w, d)
            if lane >= d:
                w += y
            d *= 2
        if lane < nwarps:
            warp_tot[lane] = w
        prev = look_back(flags, sums, tile, cuda.shfl_sync(FULL_MASK, w, 31), lane)
        if lane == 0:
            carry_in[0] = prev
    cuda.syncthreads()
    add = carry_in[0] + v - total  # before this tile, this warp, this thread
    if warp > 0:
        add += warp_tot[warp - 1]
    for r in range(ITEMS):
        buf[runs_at + r] = x[r] + add
    cuda.syncwarp()
    for r in range(ITEMS):
        if full or first + r * 32 < n:
            out[first + r * 32] = buf[rows_at + r * 33]


def _bench_data(rng, n):
    # small integers as floats: every partial sum is exact in float32, so any order of summation agrees
    return rng.integers(-8, 9, n).astype(np.float32)


@cuda.jit
def reset_scan_state(flags, counter):
    """Zero the flags and the ticket counter of a single-pass scan: a tiny kernel, so the reset
    stays on the GPU's queue (two host-issued copies cost far more than the bytes they move)."""
    i = cuda.grid(1)
    if i < flags.shape[0]:
        flags[i] = 0
    if i == 0:
        counter[0] = 0


def _single_pass(kernel, section, tpb, out, a, two_sums=False):
    """A launcher for a single-pass scan: resets flags and counter with a kernel, then launches."""
    n = a.shape[0]
    nb = (n + section - 1) // section
    flags = cuda.device_array(nb, np.int32)
    counter = cuda.device_array(1, np.int32)
    sums = cuda.device_array((nb, 2) if two_sums else nb, np.float32)

    def launch():
        reset_scan_state[(nb + 255) // 256, 256](flags, counter)
        kernel[nb, tpb](out, flags, sums, counter, a, n)

    return launch


def benchmark(scale: float = 1.0):
    """Validate, then time, the full-length scans. Bytes: input read once, output written once."""
    from helpers import timing, tuning
    from helpers.timing import specialize

    rng = np.random.default_rng(11)
    ks = specialize(scan_blocks, TPB=1024)
    add = specialize(add_block_sums, TPB=1024)
    domino = specialize(domino_scan, TPB=1024)
    lookback = {
        (tpb, items): specialize(lookback_scan, ITEMS=items, LB_TPB=tpb, LB_TILE=tpb * items)
        for tpb, items in LOOKBACK_GRID
    }
    raked = {
        (tpb, items): specialize(
            lookback_raked, ITEMS=items, LB_TPB=tpb, LB_TILE=tpb * items, RAKED_BUF=tpb * items * 33 // 32
        )
        for tpb, items in RAKED_GRID
    }
    # lookback32.py's kernels in one search (the kernel is part of the knob): 32-bit indices, and the
    # look-back overlapped with the scan work; keys end with (threads, items) like the others'
    fast = {
        (kind, tpb, items): specialize(kernel, ITEMS=items, LB_TPB=tpb, LB_TILE=tpb * items)
        for kind, kernel in (("u32", lookback_u32), ("overlap", lookback_overlap))
        for tpb, items in LOOKBACK_GRID
    }
    single_pass = {"ch11_lookback": lookback, "ch11_lookback_raked": raked, "ch11_lookback_fast": fast}

    # validation on fresh data, odd sizes, several block shapes, before any timing
    for n in (max(3001, int(1_000_003 * scale)), 4097):
        a = _bench_data(rng, n)
        expected = np.cumsum(a, dtype=np.float64).astype(np.float32)
        d_a = cuda.to_device(a)
        timing.validate(
            f"ch11_hierarchical (n={n})",
            hierarchical_scan(d_a, ks, add, 1024).copy_to_host(),
            expected,
            rtol=0,
            atol=0,
        )
        out = cuda.device_array(n, np.float32)
        _single_pass(domino, 1024, 1024, out, d_a)()
        timing.validate(f"ch11_domino (n={n})", out.copy_to_host(), expected, rtol=0, atol=0)
        for name, kernels in single_pass.items():
            for (*kind, tpb, items), kern in kernels.items():
                out = cuda.device_array(n, np.float32)
                _single_pass(kern, tpb * items, tpb, out, d_a, two_sums=True)()
                timing.validate(
                    f"{name} (n={n}, {', '.join([*kind, f'{tpb} threads x {items}'])})",
                    out.copy_to_host(),
                    expected,
                    rtol=0,
                    atol=0,
                )

    n = max(1 << 12, int((64 << 20) * scale))  # 256 MiB of float32 at scale 1
    a = _bench_data(rng, n)
    expected = np.cumsum(a, dtype=np.float64).astype(np.float32)
    d_a = cuda.to_device(a)
    out = cuda.device_array(n, np.float32)
    nbytes = 2 * n * 4
    rows = [timing.copy_ceiling(n * 4)]

    plan = hierarchical_plan(n, ks, add, 1024)  # buffers allocated once, outside the timing
    timing.validate("ch11_hierarchical", plan(d_a).copy_to_host(), expected, rtol=0, atol=0)
    seconds = timing.time_gpu(lambda: plan(d_a))
    rows.append(timing.Measurement("ch11_hierarchical", seconds, bytes=nbytes))
    # the reset kernel (flags and counter, a few KiB) is part of every single-pass launch
    launch = _single_pass(domino, 1024, 1024, out, d_a)
    launch()
    timing.validate("ch11_domino", out.copy_to_host(), expected, rtol=0, atol=0)
    rows.append(timing.Measurement("ch11_domino", timing.time_gpu(launch, reps=5), bytes=nbytes))
    for name, kernels in single_pass.items():
        grid = {}
        for (*kind, tpb, items), kern in kernels.items():
            launch = _single_pass(kern, tpb * items, tpb, out, d_a, two_sums=True)
            launch()
            label = ", ".join([*kind, f"{tpb} threads x {items} items"])
            timing.validate(f"{name} ({label})", out.copy_to_host(), expected, rtol=0, atol=0)
            grid[label] = launch
        # block shape searched on the GPU at hand, the winner cached per device
        choice, seconds = tuning.tuned_time(name, grid, lambda launch: timing.time_gpu(launch, reps=30))
        rows.append(timing.Measurement(name, seconds, bytes=nbytes, config=choice.label))
    peer = timing.library_peer(
        "scan",
        [
            timing.via("cupy", "cupy.cumsum", _peer_cumsum, d_a),
            timing.via("torch", "torch.cumsum", _peer_cumsum, d_a),
        ],
        bytes=nbytes,
        check=lambda got: timing.validate("scan peer", got, expected, rtol=0, atol=0),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_cumsum(xp, a):
    """What a user would call instead: the library's inclusive scan."""
    return xp.cumsum(a, 0)
