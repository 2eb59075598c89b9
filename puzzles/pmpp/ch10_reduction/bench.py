"""Chapter 10 on the GPU: the any-length reductions at GPU sizes (block size, coarsening and blocks per
SM tuned on the GPU at hand), validated, then timed on 256 MiB of float32 against the copy ceiling
and the library's sum."""

import numpy as np
from numba import cuda

from .sum import reduce_coarsened, reduce_segmented, reduce_shuffle

GOAL = {"ceiling": "copy", "fraction": 0.95, "best": "ch10_reduce_shuffle"}


def _bench_data(rng, n):
    # small integers as floats: every partial sum is exact in float32, so any order of summation agrees
    return rng.integers(-8, 9, n).astype(np.float32)


def benchmark(scale: float = 1.0):
    """Validate, then time, the any-length reductions. Bytes: the input read once."""
    from helpers import timing, tuning
    from helpers.timing import specialize

    dev = cuda.get_current_device()
    sms = dev.MULTIPROCESSOR_COUNT
    rng = np.random.default_rng(10)

    def seg_launch(kern, tpb):
        return lambda out, a: kern[(a.shape[0] + 2 * tpb - 1) // (2 * tpb), tpb](out, a, a.shape[0])

    def coarse_launch(kern, tpb, coarse):
        per = 2 * coarse * tpb
        return lambda out, a: kern[(a.shape[0] + per - 1) // per, tpb](out, a, a.shape[0])

    def shuffle_launch(kern, tpb, blocks_per_sm):
        return lambda out, a: kern[blocks_per_sm * sms, tpb](out, a, a.shape[0])

    # the knobs searched on the GPU at hand (winners cached per device): block size, and for the
    # shuffle kernel elements per thread and resident blocks per SM
    variants = {}
    for tpb in (256, 512, 1024):
        variants[("ch10_reduce_segmented", f"{tpb} threads")] = seg_launch(
            specialize(reduce_segmented, TPB=tpb), tpb
        )
        variants[("ch10_reduce_coarsened", f"{tpb} threads")] = coarse_launch(
            specialize(reduce_coarsened, TPB=tpb, COARSE=8), tpb, 8
        )
    for coarse in (4, 8, 16):
        kern = specialize(reduce_shuffle, COARSE=coarse)
        for tpb in (256, 512):
            for per_sm in (4, 8):
                label = f"{tpb} threads, COARSE {coarse}, {per_sm} blocks/SM"
                variants[("ch10_reduce_shuffle", label)] = shuffle_launch(kern, tpb, per_sm)

    # validation first: fresh data, odd sizes, every block size
    for n in (max(777, int(1_000_003 * scale)), 77, max(1001, int(5_000_001 * scale))):
        a = _bench_data(rng, n)
        expected = np.array([a.astype(np.float64).sum()], np.float32)
        d_a = cuda.to_device(a)
        for (name, label), launch in variants.items():
            out = cuda.to_device(np.zeros(1, np.float32))
            launch(out, d_a)
            timing.validate(f"{name} ({label}, n={n})", out.copy_to_host(), expected, rtol=0, atol=0)

    n = max(1 << 12, int((64 << 20) * scale))  # 256 MiB of float32 at scale 1
    a = _bench_data(rng, n)
    d_a = cuda.to_device(a)
    expected = np.array([a.astype(np.float64).sum()], np.float32)
    out = cuda.device_array(1, np.float32)
    zero = cuda.to_device(np.zeros(1, np.float32))
    rows = [timing.copy_ceiling(n * 4)]
    for name in dict.fromkeys(name for name, _ in variants):
        grid = {label: variants[(n_, label)] for n_, label in variants if n_ == name}
        for label, launch in grid.items():
            out.copy_to_device(zero)  # the atomics accumulate: start from 0
            launch(out, d_a)
            timing.validate(f"{name} ({label})", out.copy_to_host(), expected, rtol=0, atol=0)
        # timed without the 4-byte reset between launches (checked above; the sum's value does not
        # change the kernel's time): the reset's CPU cost per launch rivals this kernel's GPU time
        choice, seconds = tuning.tuned_time(
            name, grid, lambda launch: timing.time_gpu(lambda: launch(out, d_a))
        )
        rows.append(timing.Measurement(name, seconds, bytes=n * 4, config=choice.label))
    peer = timing.library_peer(
        "sum",
        [
            timing.via("cupy", "cupy.sum", _peer_sum, d_a),
            timing.via("torch", "torch.sum", _peer_sum, d_a),
        ],
        bytes=n * 4,
        check=lambda got: timing.validate("sum peer", np.reshape(got, 1), expected, rtol=0, atol=0),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_sum(xp, a):
    """What a user would call instead: the library's sum (CuPy, PyTorch and NumPy spell it alike)."""
    return xp.sum(a)
