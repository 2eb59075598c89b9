"""Chapter 6's benchmark: the transposes at GPU tile sizes (and a batched GPU-only variant),
validated, tuned and timed against the copy ceiling and the library's transpose (GPU only).
"""

import math

import numpy as np
from numba import cuda, float32
from numba import uint64 as u

from helpers import timing, tuning
from helpers.timing import specialize

from .transpose import ROWS, TILE, TILE_P, transpose_coarse, transpose_naive, transpose_tiled


@cuda.jit
def transpose_batched(out, a, h, w):
    # transpose_coarse with every load of a thread issued before any is used: loads go to registers
    # first (clamped into the matrix, so no branch separates them), then to the tile. A thread then
    # waits one memory latency per tile, not one per element. Indices are cast to unsigned (u is
    # uint64): Numba wraps a signed index that could be negative (a[-1] is the last element, as in
    # Python) at a cost of a few integer instructions per access, and this kernel is short of those.
    tile = cuda.shared.array((TILE, TILE_P), float32)
    v = cuda.local.array(TILE, float32)  # only TILE // ROWS slots are used: registers after unrolling
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.x * TILE
    col0 = cuda.blockIdx.y * TILE
    c = min(col0 + tx, w - 1)
    for j in range(0, TILE, ROWS):
        v[j // ROWS] = a[u(min(row0 + ty + j, h - 1)), u(c)]
    for j in range(0, TILE, ROWS):
        tile[u(ty + j), u(tx)] = v[j // ROWS]
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        if col0 + ty + j < w and row0 + tx < h:
            out[u(col0 + ty + j), u(row0 + tx)] = tile[u(tx), u(ty + j)]


GPU_TILE, GPU_ROWS = 32, 8


def variants(tile=GPU_TILE, rows=GPU_ROWS):
    """name -> launch(out, a): the kernels with GPU tile sizes (one thread per element only where a
    tile x tile block fits)."""
    c = {"TILE": tile, "TILE_P": tile + 1, "ROWS": rows}
    naive, tiled, coarse, batched = (
        specialize(k, **c) for k in (transpose_naive, transpose_tiled, transpose_coarse, transpose_batched)
    )

    def launcher(kernel, block):
        def launch(out, a):
            h, w = a.shape
            kernel[(math.ceil(h / tile), math.ceil(w / tile)), block](out, a, h, w)

        return launch

    one_per_thread = {}
    if tile * tile <= 1024:  # a block of tile x tile threads must fit the 1024-thread limit
        one_per_thread = {
            "ch06_transpose_naive": launcher(naive, (tile, tile)),
            "ch06_transpose_tiled": launcher(tiled, (tile, tile)),
        }
    return {
        **one_per_thread,
        "ch06_transpose_coarse": launcher(coarse, (tile, rows)),
        "ch06_transpose_batched": launcher(batched, (tile, rows)),
    }


def validate_variants(shapes=((1000, 777), (33, 65)), configs=((32, 8), (16, 4)), seed=1):
    """Run every variant on fresh random data for several tile sizes; raise naming the first wrong one."""
    rng = np.random.default_rng(seed)
    for tile, rows in configs:
        for name, launch in variants(tile, rows).items():
            for h, w in shapes:
                a = rng.standard_normal((h, w)).astype(np.float32)
                d_out = cuda.device_array((w, h), np.float32)
                launch(d_out, cuda.to_device(a))
                timing.validate(f"{name} (TILE={tile}, ROWS={rows}, {h}x{w})", d_out.copy_to_host(), a.T)


TUNED = ("ch06_transpose_coarse", "ch06_transpose_batched")
TUNE_GRID = {f"TILE {t}, ROWS {r}": (t, r) for t, r in ((32, 4), (32, 8), (32, 16), (64, 8), (64, 16))}


def benchmark(scale: float = 1.0):
    """Naive vs corner-turned vs coarsened transpose of a 256 MiB matrix (at scale 1), plus the copy
    ceiling measured in the same run."""
    reason = timing.skip_reason()
    if reason:
        raise RuntimeError(reason)
    validate_variants(configs=(*TUNE_GRID.values(), (16, 4)))
    h = max(64, int(8192 * math.sqrt(scale)))
    w = h + 64  # not square, still a multiple of the tile
    host = np.random.default_rng(2).standard_normal((h, w)).astype(np.float32)
    a = cuda.to_device(host)
    out = cuda.device_array((w, h), np.float32)
    rows = [
        timing.Measurement(name, timing.time_gpu(lambda launch=launch: launch(out, a)), bytes=2 * h * w * 4)
        for name, launch in variants().items()
        if name not in TUNED
    ]
    # the coarsened kernels' tile and rows per thread, tuned on this GPU (cached per device)
    for name in TUNED:

        def measure(cfg, name=name):
            launch = variants(*cfg)[name]
            return timing.time_gpu(lambda: launch(out, a))

        choice, seconds = tuning.tuned_time(name, TUNE_GRID, measure)
        rows.append(timing.Measurement(name, seconds, bytes=2 * h * w * 4, config=choice.label))
    rows.append(timing.copy_ceiling(h * w * 4))
    peer = timing.library_peer(
        "transpose",
        [
            timing.via("cupy", "cupy transpose copy", _peer_transpose, a),
            timing.via("torch", "torch transpose copy", _peer_transpose, a),
        ],
        bytes=2 * h * w * 4,
        check=lambda got: timing.validate("transpose peer", got, host.T, rtol=0, atol=0),
    )
    if peer is not None:
        rows.append(peer)
    return rows


def _peer_transpose(xp, a):
    """What a user would call instead: a contiguous copy of the transposed view."""
    if hasattr(xp, "ascontiguousarray"):  # CuPy, NumPy
        return xp.ascontiguousarray(a.T)
    return a.t().contiguous()  # PyTorch


GOAL = {"ceiling": "copy", "fraction": 0.85, "best": "ch06_transpose_batched"}
