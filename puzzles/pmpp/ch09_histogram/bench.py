"""Chapter 9 on the GPU: every histogram kernel at GPU launch sizes, validated against NumPy, then
timed on 256 MiB of int32 data; the unrolled kernels' knobs tuned on the GPU at hand. Also the
GPU-only hist_unsigned (hist_unrolled with unsigned index arithmetic)."""

import math

import numpy as np
from numba import cuda, int32, uint32
from numba import uint64 as u

from helpers import timing, tuning
from helpers.timing import specialize

from .atomics import hist_atomic, hist_private_global, hist_private_shared
from .coarsened import hist_aggregated, hist_coarse_contiguous, hist_coarse_interleaved, hist_unrolled
from .common import BIN_WIDTH, MAX_VALUE, NUM_BINS, UNROLL, _data, histogram

GOAL = {"ceiling": "copy", "fraction": 0.9, "best": "ch09_hist_unsigned"}


@cuda.jit
def hist_unsigned(hist, data, n):
    # hist_unrolled with unsigned arithmetic (u is uint64), for the GPU: `data` is passed viewed as
    # uint32 (the values are never negative), so a bin is a shift rather than Python's floor
    # division of a signed value, and indices that cannot be negative skip Numba's wrap-around of
    # negative ones (a[-1] is the last element, as in Python). The profiler finds hist_unrolled
    # limited by the integer pipe on an H200, not by memory.
    hist_s = cuda.shared.array(NUM_BINS, int32)
    v = cuda.local.array(UNROLL, uint32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    stride = u(cuda.gridsize(1))
    nn = u(n)
    width = u(BIN_WIDTH)
    i = u(cuda.grid(1))
    while i + u(UNROLL - 1) * stride < nn:
        for k in range(UNROLL):
            v[k] = data[i + u(k) * stride]
        for k in range(UNROLL):
            cuda.atomic.add(hist_s, v[k] // width, 1)
        i += u(UNROLL) * stride
    while i < nn:
        cuda.atomic.add(hist_s, data[i] // width, 1)
        i += stride
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        count = hist_s[b]
        if count > 0:
            cuda.atomic.add(hist, b, count)


GPU_BLOCK = 256
GPU_CFACTOR = 32
GPU_UNROLL = 8  # unrolled: eight loads in flight per thread on the GPU
GPU_UNROLL_BLOCK = 1024  # ... in blocks of 1024, two per SM: a quarter of the blocks merging bins


def _blocks_to_fill():
    """Enough 256-thread blocks for every SM to hold eight (2048 threads), no more."""
    return cuda.get_current_device().MULTIPROCESSOR_COUNT * 8


def variants(block=GPU_BLOCK, blocks=None):
    """name -> (launch(hist, priv, data), slow): the kernels with GPU launch sizes.

    `blocks`: the grid of the grid-stride kernels (default: enough to fill the GPU)."""
    contiguous = specialize(hist_coarse_contiguous, CFACTOR=GPU_CFACTOR)
    unrolled = specialize(hist_unrolled, UNROLL=GPU_UNROLL)
    unsigned = specialize(hist_unsigned, UNROLL=GPU_UNROLL)

    def one_each(kernel):
        def launch(hist, priv, data):
            n = data.shape[0]
            kernel[math.ceil(n / block), block](hist, data, n)

        return launch

    def launch_global(hist, priv, data):
        n = data.shape[0]
        hist_private_global[priv.shape[0], block](hist, priv, data, n)

    def launch_contiguous(hist, priv, data):
        n = data.shape[0]
        contiguous[math.ceil(n / (block * GPU_CFACTOR)), block](hist, data, n)

    def strided(kernel):
        def launch(hist, priv, data):
            kernel[blocks or _blocks_to_fill(), block](hist, data, data.shape[0])

        return launch

    def launch_unrolled(hist, priv, data):
        # as many threads per SM as the 256-thread grids, in a quarter of the blocks
        grid = max(1, (blocks or _blocks_to_fill()) * block // GPU_UNROLL_BLOCK)
        unrolled[grid, GPU_UNROLL_BLOCK](hist, data, data.shape[0])

    def launch_unsigned(hist, priv, data):
        grid = max(1, (blocks or _blocks_to_fill()) * block // GPU_UNROLL_BLOCK)
        unsigned[grid, GPU_UNROLL_BLOCK](hist, data.view(np.uint32), data.shape[0])

    return {
        "ch09_hist_atomic": (one_each(hist_atomic), True),
        "ch09_hist_private_global": (launch_global, True),
        "ch09_hist_private_shared": (one_each(hist_private_shared), False),
        "ch09_hist_coarse_contiguous": (launch_contiguous, False),
        "ch09_hist_coarse_interleaved": (strided(hist_coarse_interleaved), False),
        "ch09_hist_aggregated": (strided(hist_aggregated), False),
        "ch09_hist_unrolled": (launch_unrolled, False),
        "ch09_hist_unsigned": (launch_unsigned, False),
    }


def validate_variants(sizes=(1_000_003, 4099), block=GPU_BLOCK, blocks=None, seed=1):
    """Every variant against NumPy on fresh data; raise naming the first wrong one."""
    rng = np.random.default_rng(seed)
    for n in sizes:
        data = _data(rng, n)
        d_data = cuda.to_device(data)
        priv = cuda.to_device(np.zeros((math.ceil(n / block), NUM_BINS), np.int32))
        for name, (launch, _) in variants(block, blocks).items():
            hist = cuda.to_device(np.zeros(NUM_BINS, np.int32))
            launch(hist, priv, d_data)
            timing.validate(f"{name} (n={n})", hist.copy_to_host(), histogram(data), rtol=0, atol=0)
            if not np.all(priv.copy_to_host() == 0):
                raise AssertionError(f"{name}: scratch `priv` not left zeroed")


# the unrolled kernel's knobs, searched on the GPU at hand: loads in flight x block x blocks per SM
UNROLLED_GRID = {
    f"UNROLL {u}, block {b}, {k} blocks/SM": (u, b, k)
    for u, b, k in ((4, 1024, 2), (8, 1024, 2), (16, 1024, 2), (8, 512, 4), (16, 512, 4), (8, 256, 8))
}


def unrolled_launcher(unroll, block, per_sm, unsigned=False):
    """launch(hist, data) for the unrolled kernel (`unsigned`: its GPU-only unsigned version, which
    reads the data as uint32) on `per_sm` blocks of `block` threads per SM."""
    kernel = specialize(hist_unsigned if unsigned else hist_unrolled, UNROLL=unroll)

    def launch(hist, data):
        view = data.view(np.uint32) if unsigned else data
        kernel[cuda.get_current_device().MULTIPROCESSOR_COUNT * per_sm, block](hist, view, data.shape[0])

    return launch


def _tuned_unrolled(hist, data, n):
    """Both unrolled kernels: validate every candidate (a ragged size), tune on the big input, time
    the winner."""
    small = np.random.default_rng(4).integers(0, MAX_VALUE, 100_003).astype(np.int32)
    d_small, want = cuda.to_device(small), histogram(small)
    rows = []
    for name, unsigned in (("ch09_hist_unrolled", False), ("ch09_hist_unsigned", True)):
        launchers = {cfg: unrolled_launcher(*cfg, unsigned=unsigned) for cfg in UNROLLED_GRID.values()}
        for label, cfg in UNROLLED_GRID.items():
            h = cuda.to_device(np.zeros(NUM_BINS, np.int32))
            launchers[cfg](h, d_small)
            timing.validate(f"{name} ({label})", h.copy_to_host(), want, rtol=0, atol=0)
        choice, seconds = tuning.tuned_time(
            name, UNROLLED_GRID, lambda cfg, ls=launchers: timing.time_gpu(lambda: ls[cfg](hist, data))
        )
        rows.append(timing.Measurement(name, seconds, bytes=n * 4 + NUM_BINS * 4, config=choice.label))
    return rows


def benchmark(scale: float = 1.0):
    """Every variant on 256 MiB of int32 data (at scale 1); bytes = data read once + bins written once."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    validate_variants()
    n = max(1 << 16, int((256 << 20) // 4 * scale)) + 3
    host = np.random.default_rng(2).integers(0, MAX_VALUE, n).astype(np.int32)
    data = cuda.to_device(host)
    hist = cuda.device_array(NUM_BINS, np.int32)
    priv = cuda.to_device(np.zeros((math.ceil(n / GPU_BLOCK), NUM_BINS), np.int32))
    rows = []
    for name, (launch, slow) in variants().items():
        if name in ("ch09_hist_unrolled", "ch09_hist_unsigned"):
            continue  # tuned below
        # hist accumulates (and wraps) over the timed launches: fine for timing; validation ran above.
        reps = dict(warmup=1, reps=5) if slow else {}
        seconds = timing.time_gpu(lambda launch=launch: launch(hist, priv, data), **reps)
        rows.append(timing.Measurement(name, seconds, bytes=n * 4 + NUM_BINS * 4))
    rows += _tuned_unrolled(hist, data, n)
    rows.append(timing.copy_ceiling(n * 4))
    want = histogram(host)
    peer = timing.library_peer(
        "histogram",
        [
            timing.via("cupy", "cupy.histogram", _peer_cupy_histogram, data),
            timing.via("torch", "torch.bincount", _peer_torch_bincount, data),
        ],
        bytes=n * 4 + NUM_BINS * 4,
        check=lambda got: timing.validate("histogram peer", got, want, rtol=0, atol=0),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_cupy_histogram(cp, data):
    """What a user would call instead: NUM_BINS equal bins over [0, MAX_VALUE), as the kernels count."""
    return cp.histogram(data, bins=NUM_BINS, range=(0, MAX_VALUE))[0]


def _peer_torch_bincount(torch, data):
    return torch.bincount(data // BIN_WIDTH, minlength=NUM_BINS)
