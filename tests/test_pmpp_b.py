"""PMPP chapters 6-9: every reference passes, every stub is NotSolvedYet, known-wrong kernels are
rejected for the right reason, and the GPU benchmark code is right (run on the simulator with the
GPU tile sizes)."""
import importlib

import pytest
from numba import cuda, float32, int32

import puzzles
from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim.errors import DataRace, UninitializedRead
from puzzles.pmpp.ch06_performance import ROWS, TILE, TILE_P
from puzzles.pmpp.ch07_convolution import FILTER, FW, IN_TILE, OUT_TILE, R
from puzzles.pmpp.ch07_convolution import TILE as TILE7
from puzzles.pmpp.ch08_stencil import C0, CXM, CXP, CYM, CYP, CZM, CZP, Z_STEPS
from puzzles.pmpp.ch08_stencil import IN_TILE as S_IN
from puzzles.pmpp.ch08_stencil import OUT_TILE as S_OUT
from puzzles.pmpp.ch09_histogram import BIN_WIDTH, NUM_BINS

MODULES = ["pmpp.ch06_performance", "pmpp.ch07_convolution", "pmpp.ch08_stencil", "pmpp.ch09_histogram"]

NAMES = [p.name for m in MODULES for p in importlib.import_module(f"puzzles.{m}").PUZZLES]
EXERCISES = [n for n in NAMES if "### BEGIN SOLUTION" in puzzles.get(n).source]


def test_ladders_complete():
    assert len(NAMES) == 19
    for m in MODULES:
        mod = importlib.import_module(f"puzzles.{m}")
        ex = [p for p in mod.PUZZLES if p.name in EXERCISES]
        assert len(ex) >= 2, f"{m}: only {len(ex)} exercises"
        if mod.GOAL is not None:
            assert mod.GOAL["best"] in [p.name for p in mod.PUZZLES]
            assert mod.GOAL["ceiling"] == "copy" and 0 < mod.GOAL["fraction"] <= 1


def rejects(name, kernel, exc, diagnostic=None):
    with pytest.raises(exc) as info:
        puzzles.check(name, kernel, seed=5)
    if diagnostic is not None:
        assert isinstance(info.value.diagnostic, diagnostic), repr(info.value.diagnostic)
    return info.value


# ---------------------------------------------------------------------------- ch06


@cuda.jit
def transpose_no_barrier(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    if col0 + ty < w and row0 + tx < h:
        out[col0 + ty, row0 + tx] = tile[tx, ty]


@cuda.jit
def transpose_one_guard(out, a, h, w):
    # guards the store with the load's bounds: reads tile cells nobody loaded at the edges
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    if row0 + ty < h and col0 + tx < w:
        tile[ty, tx] = a[row0 + ty, col0 + tx]
    cuda.syncthreads()
    if row0 + ty < h and col0 + tx < w:
        out[col0 + tx, row0 + ty] = tile[tx, ty]


@cuda.jit
def transpose_coarse_wrong_step(out, a, h, w):
    tile = cuda.shared.array((TILE, TILE_P), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row0, col0 = cuda.blockIdx.x * TILE, cuda.blockIdx.y * TILE
    for j in range(TILE // ROWS):               # j should step by ROWS
        if row0 + ty + j < h and col0 + tx < w:
            tile[ty + j, tx] = a[row0 + ty + j, col0 + tx]
    cuda.syncthreads()
    for j in range(TILE // ROWS):
        if col0 + ty + j < w and row0 + tx < h:
            out[col0 + ty + j, row0 + tx] = tile[tx, ty + j]


def test_ch06_wrong():
    e = rejects("ch06_transpose_tiled", transpose_no_barrier, KernelDiagnosed)
    assert isinstance(e.diagnostic, (DataRace, UninitializedRead))
    rejects("ch06_transpose_tiled", transpose_one_guard, KernelDiagnosed)
    # the tiled kernel with ROWS-thread blocks covers only ROWS rows of each tile
    from puzzles.pmpp.ch06_performance import transpose_tiled
    rejects("ch06_transpose_coarse", transpose_tiled, KernelDiagnosed, UninitializedRead)
    e = rejects("ch06_transpose_coarse", transpose_coarse_wrong_step, KernelDiagnosed)
    assert isinstance(e.diagnostic, (DataRace, UninitializedRead))


# ---------------------------------------------------------------------------- ch07


@cuda.jit
def conv_in_no_ghost(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * OUT_TILE + tx - R
    row = cuda.blockIdx.y * OUT_TILE + ty - R
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc


@cuda.jit
def conv_in_no_halo(out, a, h, w):
    # steps blocks by IN_TILE instead of OUT_TILE: outputs between the tiles are never written
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * IN_TILE + tx - R
    row = cuda.blockIdx.y * IN_TILE + ty - R
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    else:
        tile[ty, tx] = 0.0
    cuda.syncthreads()
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc


@cuda.jit
def conv_in_no_barrier(out, a, h, w):
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * OUT_TILE + tx - R
    row = cuda.blockIdx.y * OUT_TILE + ty - R
    if 0 <= row < h and 0 <= col < w:
        tile[ty, tx] = a[row, col]
    else:
        tile[ty, tx] = 0.0
    if R <= tx < IN_TILE - R and R <= ty < IN_TILE - R and row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                acc += f[i, j] * tile[ty - R + i, tx - R + j]
        out[row, col] = acc


@cuda.jit
def conv_cached_halo_zero(out, a, h, w):
    # treats every tap outside the tile as a ghost cell
    f = cuda.const.array_like(FILTER)
    tile = cuda.shared.array((TILE7, TILE7), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE7 + tx
    row = cuda.blockIdx.y * TILE7 + ty
    if row < h and col < w:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    if row < h and col < w:
        acc = float32(0.0)
        for i in range(FW):
            for j in range(FW):
                ti, tj = ty - R + i, tx - R + j
                if 0 <= ti < TILE7 and 0 <= tj < TILE7 and row - R + i < h and col - R + j < w:
                    acc += f[i, j] * tile[ti, tj]
        out[row, col] = acc


def test_ch07_wrong():
    from puzzles.pmpp.ch07_convolution import conv2d_const
    rejects("ch07_conv2d_tiled_in", conv_in_no_ghost, KernelDiagnosed, UninitializedRead)
    rejects("ch07_conv2d_tiled_in", conv_in_no_halo, WrongAnswer)
    e = rejects("ch07_conv2d_tiled_in", conv_in_no_barrier, KernelDiagnosed)
    assert isinstance(e.diagnostic, (DataRace, UninitializedRead))
    rejects("ch07_conv2d_tiled_cached", conv_cached_halo_zero, WrongAnswer)
    # right answer, but every tap from global memory: the budget says so
    e = rejects("ch07_conv2d_tiled_cached", conv2d_const, OverBudget)
    assert e.field == "global_reads"
    rejects("ch07_conv2d_tiled_in", conv2d_const, OverBudget)


# ---------------------------------------------------------------------------- ch08


@cuda.jit
def stencil_shared_no_barrier(out, a, nz, ny, nx):
    tile = cuda.shared.array((S_IN, S_IN, S_IN), float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    x = cuda.blockIdx.x * S_OUT + tx - 1
    y = cuda.blockIdx.y * S_OUT + ty - 1
    z = cuda.blockIdx.z * S_OUT + tz - 1
    if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
        tile[tz, ty, tx] = a[z, y, x]
    inner = 1 <= tx <= S_OUT and 1 <= ty <= S_OUT and 1 <= tz <= S_OUT
    if inner and z < nz and y < ny and x < nx:
        if 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
            out[z, y, x] = (C0 * tile[tz, ty, tx]
                            + CXM * tile[tz, ty, tx - 1] + CXP * tile[tz, ty, tx + 1]
                            + CYM * tile[tz, ty - 1, tx] + CYP * tile[tz, ty + 1, tx]
                            + CZM * tile[tz - 1, ty, tx] + CZP * tile[tz + 1, ty, tx])
        else:
            out[z, y, x] = tile[tz, ty, tx]


@cuda.jit
def stencil_shared_interior_only(out, a, nz, ny, nx):
    tile = cuda.shared.array((S_IN, S_IN, S_IN), float32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    x = cuda.blockIdx.x * S_OUT + tx - 1
    y = cuda.blockIdx.y * S_OUT + ty - 1
    z = cuda.blockIdx.z * S_OUT + tz - 1
    if 0 <= z < nz and 0 <= y < ny and 0 <= x < nx:
        tile[tz, ty, tx] = a[z, y, x]
    cuda.syncthreads()
    inner = 1 <= tx <= S_OUT and 1 <= ty <= S_OUT and 1 <= tz <= S_OUT
    if inner and 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
        out[z, y, x] = (C0 * tile[tz, ty, tx]
                        + CXM * tile[tz, ty, tx - 1] + CXP * tile[tz, ty, tx + 1]
                        + CYM * tile[tz, ty - 1, tx] + CYP * tile[tz, ty + 1, tx]
                        + CZM * tile[tz - 1, ty, tx] + CZP * tile[tz + 1, ty, tx])


@cuda.jit
def stencil_register_one_barrier(out, a, nz, ny, nx):
    here_s = cuda.shared.array((S_IN, S_IN), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * S_OUT + tx - 1
    y = cuda.blockIdx.y * S_OUT + ty - 1
    z0 = cuda.blockIdx.z * Z_STEPS
    in_plane = 0 <= y < ny and 0 <= x < nx
    owner = 1 <= tx <= S_OUT and 1 <= ty <= S_OUT and y < ny and x < nx
    below = float32(0.0)
    here = float32(0.0)
    above = float32(0.0)
    if in_plane and z0 >= 1:
        below = a[z0 - 1, y, x]
    if in_plane:
        here = a[z0, y, x]
        here_s[ty, tx] = here
    for z in range(z0, min(z0 + Z_STEPS, nz)):
        if in_plane and z + 1 < nz:
            above = a[z + 1, y, x]
        cuda.syncthreads()
        if owner:
            if 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
                out[z, y, x] = (C0 * here
                                + CXM * here_s[ty, tx - 1] + CXP * here_s[ty, tx + 1]
                                + CYM * here_s[ty - 1, tx] + CYP * here_s[ty + 1, tx]
                                + CZM * below + CZP * above)
            else:
                out[z, y, x] = here
        below = here               # no barrier: the next plane overwrites here_s under the readers
        here = above
        if in_plane and z + 1 < nz:
            here_s[ty, tx] = here


def test_ch08_wrong():
    from puzzles.pmpp.ch08_stencil import stencil_basic, stencil_coarse
    e = rejects("ch08_stencil_shared", stencil_shared_no_barrier, KernelDiagnosed)
    assert isinstance(e.diagnostic, (DataRace, UninitializedRead))
    rejects("ch08_stencil_shared", stencil_shared_interior_only, WrongAnswer)
    rejects("ch08_stencil_register", stencil_register_one_barrier, KernelDiagnosed, DataRace)
    # three shared planes: right answer, three times the shared memory
    e = rejects("ch08_stencil_register", stencil_coarse, OverBudget)
    assert e.field == "shared_bytes" or e.field == "shared_reads"
    # right answer (the blocks cover the grid), but seven global reads per thread
    e = rejects("ch08_stencil_shared", stencil_basic, OverBudget)
    assert e.field == "global_reads"


# ---------------------------------------------------------------------------- ch09


@cuda.jit
def hist_shared_not_atomic(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    if i < n:
        hist_s[data[i] // BIN_WIDTH] += 1
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_flush_not_atomic(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist[b] += hist_s[b]


@cuda.jit
def hist_no_zeroing(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_no_flush_barrier(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    if i < n:
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_block_stride(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), n, cuda.blockDim.x):     # every block walks the whole tail
        cuda.atomic.add(hist_s, data[i] // BIN_WIDTH, 1)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_aggregated_no_last_run(hist, data, n):
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    prev = -1
    run = 0
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b = data[i] // BIN_WIDTH
        if b == prev:
            run += 1
        else:
            if run > 0:
                cuda.atomic.add(hist_s, prev, run)
            prev = b
            run = 1
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


@cuda.jit
def hist_aggregated_new_bin(hist, data, n):
    # flushes the finished run into the new bin instead of its own
    hist_s = cuda.shared.array(NUM_BINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        hist_s[b] = 0
    cuda.syncthreads()
    prev = -1
    run = 0
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b = data[i] // BIN_WIDTH
        if b == prev:
            run += 1
        else:
            if run > 0:
                cuda.atomic.add(hist_s, b, run)
            prev = b
            run = 1
    if run > 0:
        cuda.atomic.add(hist_s, prev, run)
    cuda.syncthreads()
    for b in range(t, NUM_BINS, cuda.blockDim.x):
        if hist_s[b] > 0:
            cuda.atomic.add(hist, b, hist_s[b])


def test_ch09_wrong():
    from puzzles.pmpp.ch09_histogram import hist_atomic, hist_private_shared
    rejects("ch09_hist_private_shared", hist_shared_not_atomic, KernelDiagnosed, DataRace)
    rejects("ch09_hist_private_shared", hist_flush_not_atomic, KernelDiagnosed, DataRace)
    rejects("ch09_hist_private_shared", hist_no_zeroing, KernelDiagnosed, UninitializedRead)
    e = rejects("ch09_hist_private_shared", hist_no_flush_barrier, KernelDiagnosed)
    assert isinstance(e.diagnostic, (DataRace, UninitializedRead))
    # right counts, but one global atomic per element: the budget is NUM_BINS per block
    e = rejects("ch09_hist_private_shared", hist_atomic, OverBudget)
    assert e.field == "global_atomics_per_block"
    rejects("ch09_hist_coarse_interleaved", hist_block_stride, WrongAnswer)
    rejects("ch09_hist_coarse_interleaved", hist_private_shared, WrongAnswer)   # no loop: misses data
    rejects("ch09_hist_aggregated", hist_aggregated_no_last_run, WrongAnswer)
    rejects("ch09_hist_aggregated", hist_aggregated_new_bin, WrongAnswer)


# ---------------------------------------------------------------------------- GPU code, on the simulator


def test_benchmark_variants_on_sim(sim_engine):
    """The GPU versions (32-wide tiles, specialised constants, GPU launch shapes) compute the right thing."""
    from puzzles.pmpp import ch06_performance as c6
    from puzzles.pmpp import ch07_convolution as c7
    from puzzles.pmpp import ch08_stencil as c8
    from puzzles.pmpp import ch09_histogram as c9
    c6.validate_variants(shapes=((37, 45),), configs=((32, 8), (16, 4)))
    c7.validate_variants(shapes=((37, 45),))
    c8.validate_variants(shapes=((7, 31, 33),))
    c9.validate_variants(sizes=(5003,), block=64, blocks=5)


def test_benchmark_without_gpu():
    from helpers import timing
    if timing.skip_reason() is None:
        pytest.skip("a GPU is present: the benchmark is run by puzzles.bench instead")
    for m in MODULES:
        with pytest.raises(RuntimeError, match="timing skipped"):
            importlib.import_module(f"puzzles.{m}").benchmark(scale=0.01)


def test_validation_catches_wrong_variant(sim_engine):
    """The validation step names a broken variant."""
    from puzzles.pmpp import ch09_histogram as c9
    real = c9.variants

    def broken(block=64, blocks=None):
        v = real(block, blocks)
        v["ch09_hist_unrolled"] = (lambda hist, priv, data: None, False)
        return v
    c9.variants = broken
    try:
        with pytest.raises(AssertionError, match="ch09_hist_unrolled"):
            c9.validate_variants(sizes=(999,), block=64, blocks=3)
    finally:
        c9.variants = real
