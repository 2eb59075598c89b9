"""Chapter 3's benchmark: grayscale and blur against the copy ceiling (and the library's
matrix-vector product), the naive matmul against cuBLAS where CuPy exists (GPU only).
"""

import math

import numpy as np
from numba import cuda

from helpers import timing, tuning

from .blur import blur_kernel, spec_blur
from .common import _grid2d
from .grayscale import grayscale_kernel, spec_grayscale
from .matmul import matmul_kernel, spec_matmul

# grayscale reads 12 bytes and writes 4 per pixel: a streaming kernel, judged against the copy
GOAL = {"ceiling": "copy", "fraction": 0.8, "best": "grayscale"}


def benchmark(scale: float = 1.0) -> list:
    """Grayscale and blur against the copy ceiling; naive matmul against cuBLAS where CuPy exists."""
    rng = np.random.default_rng(4)
    # validation on an odd-sized image at several block shapes
    h, w = 517, 1031
    rgb = rng.random((h, w, 3), dtype=np.float32)
    img = rng.uniform(-1, 2, (h, w)).astype(np.float32)
    drgb, dimg, dout = cuda.to_device(rgb), cuda.to_device(img), cuda.device_array((h, w), np.float32)
    for block in ((16, 16), (32, 8), (8, 32), (32, 32), (32, 4), (64, 4), (128, 2)):
        grid = _grid2d(h, w, block)
        grayscale_kernel[grid, block](dout, drgb, h, w)
        timing.validate(f"grayscale (block {block})", dout.copy_to_host(), spec_grayscale(rgb, h, w))
        blur_kernel[grid, block](dout, dimg, h, w)
        timing.validate(f"blur (block {block})", dout.copy_to_host(), spec_blur(img, h, w))

    side = max(256, int(8192 * math.sqrt(scale)))  # 256 MiB gray image at scale 1
    rgb = rng.random((side, side, 3), dtype=np.float32)
    drgb, dout = cuda.to_device(rgb), cuda.device_array((side, side), np.float32)
    img = rgb[..., 0].copy()
    dimg = cuda.to_device(img)
    gray = spec_grayscale(rgb, side, side)
    blocks = {f"{bx}x{by}": (bx, by) for bx, by in ((32, 8), (32, 4), (64, 4), (16, 16), (128, 2))}
    rows = []
    for name, kernel, args, nbytes in (
        ("grayscale", grayscale_kernel, (dout, drgb, side, side), 16 * side * side),
        ("blur 3x3", blur_kernel, (dout, dimg, side, side), 8 * side * side),
    ):
        # the block shape, tuned on this GPU (cached per device)
        choice, seconds = tuning.tuned_time(
            f"ch03 {name}",
            blocks,
            lambda block, k=kernel, a=args: timing.time_gpu(lambda: k[_grid2d(side, side, block), block](*a)),
        )
        rows.append(timing.Measurement(name, seconds, bytes=nbytes, config=f"block {choice.label}"))
        kernel[_grid2d(side, side, choice.config), choice.config](*args)
        want = spec_blur(img, side, side) if name.startswith("blur") else gray
        timing.validate(name, dout.copy_to_host(), want)
    dw = cuda.to_device(np.array([0.21, 0.72, 0.07], np.float32))
    peer = timing.library_peer(
        "grayscale",
        [
            timing.via("cupy", "cupy matmul (rgb @ weights)", _peer_gray, drgb, dw),
            timing.via("torch", "torch matmul (rgb @ weights)", _peer_gray, drgb, dw),
        ],
        bytes=16 * side * side,
        check=lambda got: timing.validate("grayscale peer", got, gray, rtol=1e-4),
    )
    if peer is not None:
        rows.append(peer)
    rows.append(timing.copy_ceiling(4 * side * side))
    rows.extend(_matmul_rows(rng, scale))
    return rows


def _matmul_rows(rng, scale):
    rows, inner, cols = 300, 257, 411
    m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
    n = rng.normal(0, 1, (inner, cols)).astype(np.float32)
    dm, dn, dp = cuda.to_device(m), cuda.to_device(n), cuda.device_array((rows, cols), np.float32)
    for block in ((16, 16), (32, 8), (8, 8)):
        matmul_kernel[_grid2d(rows, cols, block), block](dp, dm, dn, rows, inner, cols)
        timing.validate(
            f"naive matmul (block {block})",
            dp.copy_to_host(),
            spec_matmul(m, n, rows, inner, cols),
            rtol=1e-3,
            atol=1e-3,
        )
    size = max(256, int(2048 * scale ** (1 / 3)))
    dm = cuda.to_device(rng.normal(0, 1, (size, size)).astype(np.float32))
    dn = cuda.to_device(rng.normal(0, 1, (size, size)).astype(np.float32))
    dp = cuda.device_array((size, size), np.float32)
    block = (16, 16)
    grid = _grid2d(size, size, block)
    seconds = timing.time_gpu(
        lambda: matmul_kernel[grid, block](dp, dm, dn, size, size, size), warmup=1, reps=5
    )
    out = [timing.Measurement(f"naive matmul {size}", seconds, bytes=3 * 4 * size * size, flops=2 * size**3)]
    ceiling = timing.sgemm_ceiling(size)
    if ceiling is not None:
        ceiling.peer = True  # cuBLAS is what a user calls instead, and the ceiling at once
        out.append(ceiling)
    return out


def _peer_gray(xp, rgb, weights):
    """What a user would write instead: one matrix-vector product over the colour axis."""
    return rgb @ weights
