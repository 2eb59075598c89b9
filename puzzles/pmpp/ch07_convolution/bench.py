"""Chapter 7's benchmark: the five rungs at GPU sizes and a batched register kernel (GPU only),
validated, the register kernels' knobs tuned, timed against the copy ceiling and the libraries'
convolutions.
"""

import math

import numpy as np
from numba import cuda, float32

from helpers import timing, tuning
from helpers.timing import specialize

from .common import FILTER, R, conv2d
from .direct import conv2d_basic, conv2d_const
from .register import ROWS, conv2d_register
from .tiled import conv2d_tiled_cached, conv2d_tiled_in

# ----------------------------------------------------------- GPU only: the register window with batched loads


BATCH = 4  # register_batched: rows whose loads a thread issues together before computing any


@cuda.jit
def conv2d_register_batched(out, a, h, w):
    # conv2d_register with BATCH rows' loads issued back to back: one row's loads per step leave a
    # thread waiting a full memory latency per output; a batch keeps BATCH rows in flight.
    f = cuda.const.array_like(FILTER)
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row0 = (cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y) * ROWS
    if col >= w or row0 >= h:
        return
    cl = max(col - 1, 0)
    cr = min(col + 1, w - 1)
    ml = float32(1.0) if col >= 1 else float32(0.0)
    mr = float32(1.0) if col + 1 < w else float32(0.0)
    k00, k01, k02 = f[0, 0] * ml, f[0, 1], f[0, 2] * mr
    k10, k11, k12 = f[1, 0] * ml, f[1, 1], f[1, 2] * mr
    k20, k21, k22 = f[2, 0] * ml, f[2, 1], f[2, 2] * mr
    t = max(row0 - 1, 0)
    mt = float32(1.0) if row0 >= 1 else float32(0.0)
    a0, a1, a2 = a[t, cl] * mt, a[t, col] * mt, a[t, cr] * mt
    b0, b1, b2 = a[row0, cl], a[row0, col], a[row0, cr]
    left = cuda.local.array(BATCH, float32)  # the row below each of the batch's rows
    mid = cuda.local.array(BATCH, float32)
    right = cuda.local.array(BATCH, float32)
    end = min(row0 + ROWS, h)
    for rb in range(row0, end, BATCH):
        for k in range(BATCH):
            nxt = min(rb + k + 1, h - 1)
            mb = float32(1.0) if rb + k + 1 < h else float32(0.0)
            left[k], mid[k], right[k] = a[nxt, cl] * mb, a[nxt, col] * mb, a[nxt, cr] * mb
        for k in range(BATCH):
            c0, c1, c2 = left[k], mid[k], right[k]
            if rb + k < end:
                top = k00 * a0 + k01 * a1 + k02 * a2
                out[rb + k, col] = top + k10 * b0 + k11 * b1 + k12 * b2 + k20 * c0 + k21 * c1 + k22 * c2
            a0, a1, a2 = b0, b1, b2
            b0, b1, b2 = c0, c1, c2


# --------------------------------------------------------------------------- launchers, validation, benchmark


GPU_TILE = 32
GPU_ROWS = 16
GPU_BLOCK = (32, 8)
GPU_BATCH = 4


def variants():
    """name -> launch(out, a, f): the five puzzle kernels and the batched one, at GPU sizes."""
    tiled_in = specialize(conv2d_tiled_in, IN_TILE=GPU_TILE, OUT_TILE=GPU_TILE - 2 * R)
    cached = specialize(conv2d_tiled_cached, TILE=GPU_TILE)

    def flat(kernel, with_f):
        def launch(out, a, f):
            h, w = a.shape
            grid = (math.ceil(w / 32), math.ceil(h / 8))
            if with_f:
                kernel[grid, (32, 8)](out, a, f, h, w)
            else:
                kernel[grid, (32, 8)](out, a, h, w)

        return launch

    def launch_in(out, a, f):
        h, w = a.shape
        o = GPU_TILE - 2 * R
        tiled_in[(math.ceil(w / o), math.ceil(h / o)), (GPU_TILE, GPU_TILE)](out, a, h, w)

    def launch_cached(out, a, f):
        h, w = a.shape
        cached[(math.ceil(w / GPU_TILE), math.ceil(h / GPU_TILE)), (GPU_TILE, GPU_TILE)](out, a, h, w)

    return {
        "ch07_conv2d_basic": flat(conv2d_basic, True),
        "ch07_conv2d_const": flat(conv2d_const, False),
        "ch07_conv2d_tiled_in": launch_in,
        "ch07_conv2d_tiled_cached": launch_cached,
        "ch07_conv2d_register": register_launcher(GPU_ROWS, GPU_BLOCK),
        "ch07_conv2d_batched": register_launcher(GPU_ROWS, GPU_BLOCK, GPU_BATCH),
    }


def register_launcher(rows, block, batch=None):
    """launch(out, a, f) for the register-window kernel: `rows` outputs per thread, `block` threads;
    with `batch`, the batched kernel issuing that many rows' loads together."""
    if batch is None:
        kernel = specialize(conv2d_register, ROWS=rows)
    else:
        kernel = specialize(conv2d_register_batched, ROWS=rows, BATCH=batch)
    bx, by = block

    def launch(out, a, f):
        h, w = a.shape
        kernel[(math.ceil(w / bx), math.ceil(h / (by * rows))), block](out, a, h, w)

    return launch


TUNE_CHECK_SHAPE = (517, 1031)  # every candidate of the search is validated on an image this size


# the register kernel's knobs, searched on the GPU at hand: outputs per thread x block shape
REGISTER_GRID = {
    f"ROWS {rows}, block {bx}x{by}": (rows, (bx, by))
    for rows in (4, 8, 16, 32)
    for bx, by in ((32, 8), (32, 4), (64, 4))
}


# the batched kernel adds the loads in flight per thread
BATCHED_GRID = {
    f"ROWS {rows}, BATCH {batch}, block {bx}x{by}": (rows, (bx, by), batch)
    for rows in (16, 32, 64)
    for batch in (4, 8, 16)
    for bx, by in ((32, 8), (32, 4), (32, 2))
    if batch <= rows
}
TUNED = {"ch07_conv2d_register": REGISTER_GRID, "ch07_conv2d_batched": BATCHED_GRID}


def validate_variants(shapes=((1000, 1333), (45, 37)), seed=1):
    rng = np.random.default_rng(seed)
    d_f = cuda.to_device(FILTER)
    for name, launch in variants().items():
        for h, w in shapes:
            a = rng.standard_normal((h, w)).astype(np.float32)
            d_out = cuda.device_array((h, w), np.float32)
            launch(d_out, cuda.to_device(a), d_f)
            timing.validate(
                f"{name} ({h}x{w})", d_out.copy_to_host(), conv2d(a, FILTER), rtol=1e-4, atol=1e-4
            )


def benchmark(scale: float = 1.0):
    """The six kernels on a 256 MiB image (at scale 1), bytes = image read once + written once."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    validate_variants()
    # every candidate of the search validated before any is timed
    small = np.random.default_rng(3).standard_normal(TUNE_CHECK_SHAPE).astype(np.float32)
    want = conv2d(small, FILTER)
    d_small, d_f = cuda.to_device(small), cuda.to_device(FILTER)
    d_out = cuda.device_array(small.shape, np.float32)
    launchers = {cfg: register_launcher(*cfg) for grid in TUNED.values() for cfg in grid.values()}
    for name, grid in TUNED.items():
        for label, cfg in grid.items():
            launchers[cfg](d_out, d_small, d_f)
            timing.validate(f"{name} ({label})", d_out.copy_to_host(), want, rtol=1e-4, atol=1e-4)
    h = max(64, int(8192 * math.sqrt(scale)))
    w = h + 96
    a = cuda.to_device(np.random.default_rng(2).standard_normal((h, w)).astype(np.float32))
    f = cuda.to_device(FILTER)
    out = cuda.device_array((h, w), np.float32)
    rows = [
        timing.Measurement(
            name, timing.time_gpu(lambda launch=launch: launch(out, a, f)), bytes=2 * h * w * 4
        )
        for name, launch in variants().items()
        if name not in TUNED
    ]

    def measure(cfg):
        launch = launchers[cfg]
        return timing.time_gpu(lambda: launch(out, a, f))

    for name, grid in TUNED.items():
        choice, seconds = tuning.tuned_time(name, grid, measure)
        rows.append(timing.Measurement(name, seconds, bytes=2 * h * w * 4, config=choice.label))
    rows.append(timing.copy_ceiling(h * w * 4))
    launchers[choice.config](out, a, f)
    ours = out.copy_to_host()  # validated kernel's answer: the peer must agree with it
    peer = timing.library_peer(
        "2-D convolution",
        [
            timing.via("cupy", "cupyx.scipy.ndimage.correlate", _peer_cupy_correlate, a, f),
            timing.via("torch", "torch conv2d", _peer_torch_conv2d, a, f),
        ],
        bytes=2 * h * w * 4,
        check=lambda got: timing.validate("2-D convolution peer", got, ours, rtol=1e-4, atol=1e-4),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_cupy_correlate(cp, a, f):
    """What a user would call instead: zero-padded correlation (PMPP's "convolution" flips no filter)."""
    from cupyx.scipy import ndimage

    return ndimage.correlate(a, f, mode="constant", cval=0.0)


def _peer_torch_conv2d(torch, a, f):
    """PyTorch's conv2d is a correlation too; padding R = zero ghost cells around the image."""
    torch.backends.cudnn.allow_tf32 = False  # FP32 like the kernels (cuDNN defaults to TF32)
    return torch.nn.functional.conv2d(a[None, None], f[None, None], padding=R)[0, 0]


GOAL = {"ceiling": "copy", "fraction": 0.8, "best": "ch07_conv2d_batched"}
