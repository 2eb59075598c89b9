"""Chapter 2's benchmark: the vector-add rungs against the copy ceiling, what a plain Numba copy
kernel reaches (4- and 8-byte loads) and the library's add (GPU only)."""

import math

import numpy as np
from numba import cuda

from helpers import timing, tuning

from .vecadd import _vectors, vecadd_grid_stride_kernel, vecadd_kernel, vecadd_x4_kernel

BEST = "vecadd grid-stride x4"
GOAL = {"ceiling": "copy", "fraction": 0.9, "best": BEST}


@cuda.jit
def copy_kernel(dst, src):
    # GPU only: a grid-stride copy, one element per trip, to show what a plain Numba kernel reaches
    # against cudaMemcpy (float32: 4-byte loads; the same arrays viewed as complex64: 8-byte loads)
    i = cuda.grid(1)
    while i < src.shape[0]:
        dst[i] = src[i]
        i += cuda.gridsize(1)


def numba_copy_rows(nbytes: int) -> list:
    """A copy of `nbytes` by `copy_kernel` moving 4 and 8 bytes per load, validated, then timed."""
    n = nbytes // 8 * 2  # float32 elements, an even count so that a complex64 view exists
    host = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    src, dst = cuda.to_device(host), cuda.device_array(n, np.float32)
    blocks = _sm_count() * 32
    rows = []
    for name, dtype in (
        ("copy in Numba, 4-byte loads", np.float32),
        ("copy in Numba, 8-byte loads", np.complex64),
    ):
        s, d = src.view(dtype), dst.view(dtype)
        dst.copy_to_device(np.zeros(n, np.float32))
        copy_kernel[blocks, 256](d, s)
        timing.validate(name, dst.copy_to_host(), host, rtol=0, atol=0)
        seconds = timing.time_gpu(lambda s=s, d=d: copy_kernel[blocks, 256](d, s))
        rows.append(timing.Measurement(name, seconds, bytes=2 * 4 * n))
    return rows


def _sm_count():
    return cuda.get_current_device().MULTIPROCESSOR_COUNT


def _variants():
    """(name, kernel, launch config for n elements and block size tpb)."""
    sms = _sm_count()
    return [
        ("vecadd 1 elem/thread", vecadd_kernel, lambda n, tpb: (math.ceil(n / tpb), tpb)),
        # one full wave of resident threads (2048 per SM), never more blocks than the data needs
        (
            "vecadd grid-stride",
            vecadd_grid_stride_kernel,
            lambda n, tpb: (max(1, min(math.ceil(n / tpb), sms * 2048 // tpb)), tpb),
        ),
        (BEST, vecadd_x4_kernel, lambda n, tpb: (max(1, min(math.ceil(n / tpb), sms * 2048 // tpb)), tpb)),
    ]


def benchmark(scale: float = 1.0) -> list:
    """Validate every variant at several block sizes, then time it on 256 MiB arrays (at scale 1)."""
    rng = np.random.default_rng(2)
    variants = _variants()
    # validation: fresh random data, a size that is no multiple of anything, several block sizes
    nv = (1 << 20) + 37
    a, b = _vectors(rng, nv)
    da, db, dout = cuda.to_device(a), cuda.to_device(b), cuda.device_array(nv, np.float32)
    for name, kernel, config in variants:
        for tpb in (64, 128, 256, 512, 1024):
            dout.copy_to_device(np.full(nv, np.nan, np.float32))
            kernel[config(nv, tpb)](dout, da, db, nv)
            timing.validate(f"{name} (block {tpb})", dout.copy_to_host(), a + b)

    n = max(1 << 16, int((64 << 20) * scale)) + 3  # 256 MiB per float32 array at scale 1
    a, b = _vectors(rng, n)
    da, db, dout = cuda.to_device(a), cuda.to_device(b), cuda.device_array(n, np.float32)
    rows = []
    for name, kernel, config in variants:
        # block size tuned on this GPU (cached per device), validated above at every candidate
        choice, seconds = tuning.tuned_time(
            name,
            {f"{tpb} threads": tpb for tpb in (128, 256, 512, 1024)},
            lambda tpb, k=kernel, c=config: timing.time_gpu(lambda: k[c(n, tpb)](dout, da, db, n)),
        )
        kernel[config(n, choice.config)](dout, da, db, n)
        timing.validate(name, dout.copy_to_host(), a + b)
        rows.append(timing.Measurement(name, seconds, bytes=3 * 4 * n, config=choice.label))
    rows.append(timing.copy_ceiling(4 * n))
    rows += numba_copy_rows(4 * n)  # what "the copy" is for a Numba kernel on this GPU
    peer = timing.library_peer(
        "vector add",
        [
            timing.via("cupy", "cupy.add", _peer_add, da, db, dout),
            timing.via("torch", "torch.add", _peer_add, da, db, dout),
        ],
        bytes=3 * 4 * n,
        check=lambda got: timing.validate("vector add peer", got, a + b),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_add(xp, a, b, out):
    """What a user would call instead: the library's add (CuPy, PyTorch and NumPy spell it alike)."""
    return xp.add(a, b, out=out)
