"""Chapter 5's benchmark: every matmul rung at GPU-sized tiles (recompiled with `specialize`),
validated on ragged shapes, then timed on square matrices against cuBLAS (GPU only).
"""

import math

import numpy as np
from numba import cuda

from helpers import timing, tuning
from helpers.timing import specialize
from puzzles.pmpp.ch03_grids.matmul import matmul_kernel, spec_matmul

from . import sgemm_fast, sgemm_v4
from .regtile import prefetch_matmul_kernel, regtile_constants, regtile_matmul_kernel
from .sgemm_fast import fast_constants, prefetch2_matmul_kernel
from .tiled import dynamic_tiled_matmul_kernel, tiled_matmul_kernel

BEST = "prefetched 128x128, 8x8/thread, v4 shared reads"
GOAL = {"ceiling": "sgemm", "fraction": 0.7, "best": BEST}


def _launchers():
    """(name, launch(p, m, n, rows, inner, cols)) for every variant, at GPU-sized tiles."""

    def grid_for(rows, cols, bm, bn):
        return (math.ceil(cols / bn), math.ceil(rows / bm))

    def naive(p, m, n, rows, inner, cols):
        matmul_kernel[grid_for(rows, cols, 16, 16), (16, 16)](p, m, n, rows, inner, cols)

    def tiled(tile):
        kernel = specialize(tiled_matmul_kernel, TILE=tile)

        def launch(p, m, n, rows, inner, cols):
            kernel[grid_for(rows, cols, tile, tile), (tile, tile)](p, m, n, rows, inner, cols)

        return launch

    def dynamic(tile):
        nbytes = 2 * tile * tile * 4

        def launch(p, m, n, rows, inner, cols):
            grid = grid_for(rows, cols, tile, tile)
            dynamic_tiled_matmul_kernel[grid, (tile, tile), 0, nbytes](p, m, n, rows, inner, cols, tile)

        return launch

    def regtile(bm, bn, bk, tm, tn, kernel=regtile_matmul_kernel, jit_options=None):
        consts = regtile_constants(bm, bn, bk, tm, tn)
        kernel = specialize(kernel, jit_options=jit_options, **consts)

        def launch(p, m, n, rows, inner, cols):
            kernel[grid_for(rows, cols, bm, bn), (consts["TX"], consts["TY"])](p, m, n, rows, inner, cols)

        return launch

    return [
        ("naive (ch. 3)", naive),
        ("tiled 16x16", tiled(16)),
        ("tiled 32x32", tiled(32)),
        ("dynamic shared, tile 32", dynamic(32)),
        ("register-tiled 64x64, 4x4/thread", regtile(64, 64, 8, 4, 4)),
        ("register-tiled 128x128, 8x8/thread", regtile(128, 128, 8, 8, 8)),
        # capped at 128 registers (150 uncapped): two blocks of 256 threads per SM instead of one
        (BEST, prefetch_launcher(128, 8, 128)),
    ]


def prefetch_launcher(bn: int, bk: int, max_registers: int | None, two_stage: bool = False):
    """launch(p, m, n, rows, inner, cols) for the prefetching kernel: 128 x `bn` block tiles, 8 x 8
    outputs per thread, `bk` columns of m per step, registers capped at `max_registers`;
    `two_stage`: sgemm_fast.py's version of it (two shared stages, k unrolled by 4, unchecked loads
    for whole tiles; it reads m and n flattened)."""
    options = {"max_registers": max_registers} if max_registers else None
    if two_stage:
        consts = fast_constants(128, bn, bk, 8, 8)
        inline = (sgemm_fast._k1, sgemm_fast._k4, sgemm_fast._fetch)
        kernel = specialize(prefetch2_matmul_kernel, inline, jit_options=options, **consts)
    else:
        consts = regtile_constants(128, bn, bk, 8, 8)
        kernel = specialize(prefetch_matmul_kernel, jit_options=options, **consts)
    grid_block = (consts["TX"], consts["TY"])

    def launch(p, m, n, rows, inner, cols):
        grid = (math.ceil(cols / bn), math.ceil(rows / 128))
        if two_stage:
            m, n = m.reshape(m.size), n.reshape(n.size)
        kernel[grid, grid_block](p, m, n, rows, inner, cols)

    return launch


def v4_launcher(bn: int, bk: int, max_registers: int | None, unroll: int = 8):
    """launch(p, m, n, rows, inner, cols) for sgemm_v4.py's kernel (16-byte loads and stores):
    128 x `bn` block tiles, 8 x 8 outputs per thread, `bk` columns of m per step, `unroll` k values
    written out per trip of the k loop."""
    options = {"max_registers": max_registers} if max_registers else None
    consts = sgemm_v4.v4_constants(128, bn, bk, 8, 8, unroll)
    inline = (sgemm_v4._fetch, sgemm_v4._k1, sgemm_v4._k4, sgemm_v4._k8)
    kernel = specialize(sgemm_v4.v4_matmul_kernel, inline, jit_options=options, **consts)

    def launch(p, m, n, rows, inner, cols):
        grid = (math.ceil(cols / bn), math.ceil(rows / 128))
        vec = int(inner % 4 == 0 and cols % 4 == 0 and all(_aligned16(a) for a in (p, m, n)))
        kernel[grid, (consts["TX"], consts["TY"])](
            p.reshape(p.size), m.reshape(m.size), n.reshape(n.size), rows, inner, cols, vec
        )

    return launch


def _aligned16(a) -> bool:
    """The device array's data starts on a 16-byte boundary (a fresh allocation does; a slice may not).
    The simulator's arrays have no address (its 16-byte loads read four elements): True."""
    cai = getattr(a, "__cuda_array_interface__", None)
    return cai is None or cai["data"][0] % 16 == 0


# sgemm_v4.py's kernel: 16-byte global loads, shared stores and result stores. ptxas (CUDA 13, sm_90,
# registers uncapped, no spill): 128x128 BK 8 with the k step written out, 153 registers (one block
# of 256 threads per SM); with a two-trip k loop, 125 (two blocks); capped at 128 it spills 76 bytes;
# 128x128 BK 16: 159; 128x64 BK 8: 151
V4_SHAPES = ((128, 8, 128, 8), (128, 8, None, 4), (128, 8, None, 8), (128, 16, None, 8), (64, 8, None, 8))
# the settings searched on the GPU at hand, the first the default: the six fastest of the 17 an H100
# timed (b0518.json, 3.28-4.25 ms at 4096^3), so a T4's search (about 12x slower) stays within its
# minute. Dropped there: the prefetching kernel at every width, k step and cap (5.05-8.63 ms) and the
# two-stage kernel's other three settings (4.30-4.88 ms).
PREFETCH_GRID = {
    f"16-byte loads, 128x{bn}, BK {bk}, {cap or 'no'} register cap, k unrolled by {u}": ("v4", bn, bk, cap, u)
    for bn, bk, cap, u in V4_SHAPES
}
# the two-stage kernel (sgemm_fast.py) at BK 8 only (at BK 16 its machine code needs 255 registers
# uncapped, and spills hundreds of bytes at 128)
PREFETCH_GRID["two-stage, 128x64, BK 8, no register cap"] = (64, 8, None, True)


def _block_cols(cfg) -> int:
    """The block tile's width of a PREFETCH_GRID setting."""
    return cfg[1] if cfg[0] == "v4" else cfg[0]


def _candidate(cfg):
    """The launcher for one PREFETCH_GRID setting."""
    return v4_launcher(*cfg[1:]) if cfg[0] == "v4" else prefetch_launcher(*cfg)


# FLOP per byte of global loads each variant's algorithm issues: 2 FLOPs per multiply-add; a
# bm x bn block tile loads bm + bn floats per k for bm * bn multiply-adds (naive: 1 x 1 "tile")
def intensity(bm: int, bn: int) -> float:
    return 2 * bm * bn / (4 * (bm + bn))


INTENSITY = {
    "naive (ch. 3)": intensity(1, 1),
    "tiled 16x16": intensity(16, 16),
    "tiled 32x32": intensity(32, 32),
    "dynamic shared, tile 32": intensity(32, 32),
    "register-tiled 64x64, 4x4/thread": intensity(64, 64),
    "register-tiled 128x128, 8x8/thread": intensity(128, 128),
    BEST: intensity(128, 128),
}


def benchmark(scale: float = 1.0) -> list:
    """Validate every variant on ragged shapes, then time it on square matrices against cuBLAS."""
    rng = np.random.default_rng(6)
    launchers = _launchers()
    candidates = {cfg: _candidate(cfg) for cfg in PREFETCH_GRID.values()}
    searched = [(f"{BEST} [{label}]", candidates[cfg]) for label, cfg in PREFETCH_GRID.items()]
    for rows, inner, cols in ((517, 389, 263), (128, 64, 256), (1, 1000, 3), (300, 7, 129)):
        m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
        n = rng.normal(0, 1, (inner, cols)).astype(np.float32)
        expected = spec_matmul(m, n, rows, inner, cols)
        dm, dn = cuda.to_device(m), cuda.to_device(n)
        for name, launch in launchers + searched:
            dp = cuda.to_device(np.full((rows, cols), np.nan, np.float32))
            launch(dp, dm, dn, rows, inner, cols)
            timing.validate(
                f"{name} ({rows}x{inner} @ {inner}x{cols})",
                dp.copy_to_host(),
                expected,
                rtol=1e-3,
                atol=1e-3 * math.sqrt(inner),
            )

    size = max(256, int(4096 * scale ** (1 / 3)) // 128 * 128)
    m = rng.normal(0, 1, (size, size)).astype(np.float32)
    n = rng.normal(0, 1, (size, size)).astype(np.float32)
    dm, dn, dp = cuda.to_device(m), cuda.to_device(n), cuda.device_array((size, size), np.float32)
    rows_out = []
    choice = tuning.tune(
        "ch05 prefetched",
        PREFETCH_GRID,
        # 4 batches of 10 launches per round (the search runs tuning.ROUNDS rounds of the 6 settings)
        lambda cfg: timing.time_gpu(lambda: candidates[cfg](dp, dm, dn, size, size, size), reps=4),
    )
    launchers = [(name, candidates[choice.config] if name == BEST else launch) for name, launch in launchers]
    for name, launch in launchers:
        slow = name.startswith("naive")
        seconds = timing.time_gpu(
            lambda f=launch: f(dp, dm, dn, size, size, size), warmup=1 if slow else 3, reps=5 if slow else 20
        )
        rows_out.append(
            timing.Measurement(
                name,
                seconds,
                bytes=3 * 4 * size * size,
                flops=2 * size**3,
                intensity=intensity(128, _block_cols(choice.config)) if name == BEST else INTENSITY[name],
                config=choice.label if name == BEST else "",
            )
        )
    # spot-check the big result of the last (best) variant on a few rows
    got = dp.copy_to_host()
    pick = rng.choice(size, 8, replace=False)
    expected = (m[pick].astype(np.float64) @ n).astype(np.float32)
    timing.validate(f"{BEST} ({size}^3, 8 rows)", got[pick], expected, rtol=1e-3, atol=1e-3 * math.sqrt(size))
    ceiling = timing.sgemm_ceiling(size)
    if ceiling is not None:
        ceiling.peer = True  # cuBLAS through cupy.matmul: the ceiling and what a user calls instead
        rows_out.append(ceiling)
    else:  # no CuPy: PyTorch's matmul is the same cuBLAS SGEMM (a peer, not judged as the ceiling)
        peer = timing.library_peer(
            "SGEMM",
            [timing.via("torch", "torch.matmul (cuBLAS SGEMM)", _peer_matmul, dm, dn)],
            bytes=3 * 4 * size * size,
            flops=2 * size**3,
            check=lambda got: timing.validate(
                "SGEMM peer", got[pick], expected, rtol=1e-3, atol=1e-3 * math.sqrt(size)
            ),
        )
        if peer is not None:
            rows_out.append(peer)
    rows_out.append(timing.copy_ceiling())  # the bandwidth roof of the roofline chart
    return rows_out


def _peer_matmul(xp, m, n):
    """What a user would call instead: the library's matrix product (cuBLAS on a GPU)."""
    return xp.matmul(m, n)
