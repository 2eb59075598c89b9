"""PMPP chapters 2-5: every reference passes, every stub is unsolved, known-wrong kernels are rejected
for the right reason, and the CPU-side helpers (divergence paths, occupancy, specialisation) work."""
import math
import re

import numpy as np
import pytest
from numba import cuda, float32

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, OverBudget, WrongAnswer
from helpers.sim import errors
from puzzles.pmpp import ch02_vector_add as ch02
from puzzles.pmpp import ch03_grids as ch03
from puzzles.pmpp import ch04_architecture as ch04
from puzzles.pmpp import ch05_memory_tiling as ch05

MODULES = (ch02, ch03, ch04, ch05)
ALL = [p for m in MODULES for p in m.PUZZLES]
EXERCISES = [p for p in ALL if "### BEGIN SOLUTION" in p.source]
SEED = 11


def test_ladders_and_exercises():
    assert {p.chapter for p in ALL} == {"pmpp-02", "pmpp-03", "pmpp-04", "pmpp-05"}
    assert all(p.name.startswith("ch0") for p in ALL)
    # at least two exercises per notebook (ch 2+3 share one)
    by_notebook = {"02": 0, "03": 0, "04": 0}
    for p in EXERCISES:
        by_notebook[{"pmpp-02": "02", "pmpp-03": "02", "pmpp-04": "03", "pmpp-05": "04"}[p.chapter]] += 1
    assert min(by_notebook.values()) >= 2, by_notebook
    for p in ALL:
        assert puzzles.get(p.name) is p


@pytest.mark.parametrize("puzzle", ALL, ids=lambda p: p.name)
def test_cases_are_honest(puzzle):
    cases = puzzle.cases(np.random.default_rng(0))
    assert len(cases) >= 5
    inputs = [n for n in puzzle.signature if n not in puzzle.outputs]
    for case in cases:
        arrays = [case.args[n] for n in inputs if isinstance(case.args[n], np.ndarray)]
        for a in arrays:
            flat = a.ravel()
            assert flat.size < 2 or len(np.unique(flat)) > 1, "constant input"
            assert flat[0] != 0
        for i, a in enumerate(arrays):
            for b in arrays[i + 1:]:
                assert a.shape != b.shape or not np.array_equal(a, b)
    # some case has a partial block and some case several blocks
    def threads(c):
        return math.prod(c.block) if isinstance(c.block, tuple) else c.block

    def blocks(c):
        return math.prod(c.grid) if isinstance(c.grid, tuple) else c.grid
    assert any(blocks(c) > 1 for c in cases)
    sizes = [np.prod(case.args[puzzle.outputs[0]].shape) for case in cases]
    assert any(s % threads(c) for s, c in zip(sizes, cases))


# ---------------------------------------------------------------------------- known-wrong kernels

@cuda.jit
def vecadd_no_loop(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + b[i]


@cuda.jit
def vecadd_block_stride(out, a, b, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:            # stride of one block: neighbouring blocks redo each other's elements
        out[i] = a[i] + b[i]
        i += cuda.blockDim.x


@cuda.jit
def blur_no_edge_check(out, img, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < height and col < width:
        total = float32(0)
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                total += img[row + dr, col + dc]
        out[row, col] = total / 9


@cuda.jit
def blur_divide_by_nine(out, img, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < height and col < width:
        total = float32(0)
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                r = row + dr
                c = col + dc
                if r >= 0 and r < height and c >= 0 and c < width:
                    total += img[r, c]
        out[row, col] = total / 9


@cuda.jit
def blur_no_guard(out, img, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    total = float32(0)
    count = 0
    for dr in range(-1, 2):
        for dc in range(-1, 2):
            r = row + dr
            c = col + dc
            if r >= 0 and r < height and c >= 0 and c < width:
                total += img[r, c]
                count += 1
    out[row, col] = total / max(count, 1)


@cuda.jit
def matmul_swapped(p, m, n, rows, inner, cols):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < rows and col < cols:
        acc = float32(0)
        for k in range(inner):
            acc += m[k, row] * n[col, k]
        p[row, col] = acc


@cuda.jit
def matmul_no_guard(p, m, n, rows, inner, cols):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    acc = float32(0)
    for k in range(inner):
        acc += m[row, k] * n[k, col]
    p[row, col] = acc


@cuda.jit
def warp_lane_column_major(warp, lane, height, width, block_w, block_h):
    row = cuda.blockIdx.y * block_h + cuda.threadIdx.y
    col = cuda.blockIdx.x * block_w + cuda.threadIdx.x
    t = cuda.threadIdx.x * block_h + cuda.threadIdx.y
    per_block = (block_w * block_h + 31) // 32
    if row < height and col < width:
        warp[row, col] = (cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x) * per_block + t // 32
        lane[row, col] = t % 32


@cuda.jit
def warp_lane_floor(warp, lane, height, width, block_w, block_h):
    row = cuda.blockIdx.y * block_h + cuda.threadIdx.y
    col = cuda.blockIdx.x * block_w + cuda.threadIdx.x
    t = cuda.threadIdx.y * block_w + cuda.threadIdx.x
    per_block = block_w * block_h // 32         # forgets the partly filled last warp
    if row < height and col < width:
        warp[row, col] = (cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x) * per_block + t // 32
        lane[row, col] = t % 32


@cuda.jit
def uniform_no_pair_offset(out, a, n):
    t = cuda.threadIdx.x
    w = t // 32
    i = cuda.blockIdx.x * cuda.blockDim.x + 2 * (t % 32) + w % 2
    if i < n:
        x = a[i]
        if w % 2 == 0:
            out[i] = x * x
        else:
            out[i] = 1 - x


TILE = ch05.TILE


@cuda.jit
def tiled_no_edge_check(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0)
    for t in range((inner + TILE - 1) // TILE):
        m_tile[ty, tx] = m[row, t * TILE + tx]
        n_tile[ty, tx] = n[t * TILE + ty, col]
        cuda.syncthreads()
        for kk in range(TILE):
            acc += m_tile[ty, kk] * n_tile[kk, tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def tiled_one_barrier(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0)
    for t in range((inner + TILE - 1) // TILE):
        k = t * TILE + tx
        m_tile[ty, tx] = m[row, k] if row < rows and k < inner else 0
        k = t * TILE + ty
        n_tile[ty, tx] = n[k, col] if k < inner and col < cols else 0
        cuda.syncthreads()
        for kk in range(TILE):
            acc += m_tile[ty, kk] * n_tile[kk, tx]
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def tiled_barrier_in_branch(p, m, n, rows, inner, cols):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    if row < rows and col < cols:
        acc = float32(0)
        for t in range((inner + TILE - 1) // TILE):
            k = t * TILE + tx
            m_tile[ty, tx] = m[row, k] if k < inner else 0
            k = t * TILE + ty
            n_tile[ty, tx] = n[k, col] if k < inner else 0
            cuda.syncthreads()
            for kk in range(TILE):
                acc += m_tile[ty, kk] * n_tile[kk, tx]
            cuda.syncthreads()
        p[row, col] = acc


@cuda.jit
def dynamic_overlapping_tiles(p, m, n, rows, inner, cols, tile):
    smem = cuda.shared.array(0, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * tile + ty
    col = cuda.blockIdx.x * tile + tx
    acc = float32(0)
    for t in range((inner + tile - 1) // tile):
        k = t * tile + tx
        smem[ty * tile + tx] = m[row, k] if row < rows and k < inner else 0
        k = t * tile + ty
        smem[tile + ty * tile + tx] = n[k, col] if k < inner and col < cols else 0   # should be tile*tile
        cuda.syncthreads()
        for kk in range(tile):
            acc += smem[ty * tile + kk] * smem[tile + kk * tile + tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        p[row, col] = acc


@cuda.jit
def dynamic_ignores_launch(p, m, n, rows, inner, cols, tile):
    m_tile = cuda.shared.array((8, 8), float32)      # fixed size, whatever the launch provides
    n_tile = cuda.shared.array((8, 8), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * tile + ty
    col = cuda.blockIdx.x * tile + tx
    acc = float32(0)
    for t in range((inner + tile - 1) // tile):
        k = t * tile + tx
        m_tile[ty, tx] = m[row, k] if row < rows and k < inner else 0
        k = t * tile + ty
        n_tile[ty, tx] = n[k, col] if k < inner and col < cols else 0
        cuda.syncthreads()
        for kk in range(tile):
            acc += m_tile[ty, kk] * n_tile[kk, tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        p[row, col] = acc


WRONG = [
    ("ch02_vecadd_grid_stride", vecadd_no_loop, WrongAnswer, None),
    ("ch02_vecadd_grid_stride", vecadd_block_stride, KernelDiagnosed, errors.DataRace),
    ("ch03_blur", blur_no_edge_check, KernelDiagnosed, errors.OutOfBounds),
    ("ch03_blur", blur_divide_by_nine, WrongAnswer, None),
    ("ch03_blur", blur_no_guard, KernelDiagnosed, errors.OutOfBounds),
    ("ch03_matmul", matmul_swapped, KernelDiagnosed, errors.OutOfBounds),
    ("ch03_matmul", matmul_no_guard, KernelDiagnosed, errors.OutOfBounds),
    ("ch04_warp_lane", warp_lane_column_major, WrongAnswer, None),
    ("ch04_warp_lane", warp_lane_floor, WrongAnswer, None),
    ("ch04_warp_uniform", ch04.parity_branch_kernel, OverBudget, None),
    ("ch04_warp_uniform", uniform_no_pair_offset, KernelDiagnosed, errors.DataRace),
    ("ch05_matmul_tiled", ch03.matmul_kernel, OverBudget, None),
    ("ch05_matmul_tiled", tiled_no_edge_check, KernelDiagnosed, errors.OutOfBounds),
    ("ch05_matmul_tiled", tiled_one_barrier, KernelDiagnosed, errors.DataRace),
    ("ch05_matmul_tiled", tiled_barrier_in_branch, KernelDiagnosed, errors.BarrierDivergence),
    ("ch05_matmul_dynamic", dynamic_overlapping_tiles, KernelDiagnosed, errors.DataRace),
    ("ch05_matmul_dynamic", dynamic_ignores_launch, OverBudget, None),
]


@pytest.mark.parametrize("name,kernel,exc,diag", WRONG, ids=lambda x: getattr(x, "__name__", x))
def test_wrong_kernel_rejected(name, kernel, exc, diag):
    with pytest.raises(exc) as info:
        puzzles.check(name, kernel, seed=SEED)
    assert type(info.value) is exc
    if diag is not None:
        assert isinstance(info.value.diagnostic, diag), type(info.value.diagnostic)


def test_every_exercise_has_two_wrong_kernels():
    counts = {p.name: sum(1 for w in WRONG if w[0] == p.name) for p in EXERCISES}
    assert min(counts.values()) >= 2, counts


def test_over_budget_names_the_cause():
    with pytest.raises(OverBudget, match="global"):
        puzzles.check("ch05_matmul_tiled", ch03.matmul_kernel, seed=SEED)
    with pytest.raises(OverBudget, match="2 different paths"):
        puzzles.check("ch04_warp_uniform", ch04.parity_branch_kernel, seed=SEED)


# ---------------------------------------------------------------------------- chapter 4 helpers

def _trace(name, kernel, case=0):
    from helpers.check import run_case
    p = puzzles.get(name)
    launch, _ = run_case(p, kernel, p.cases(np.random.default_rng(0))[case], trace=True)
    return launch.trace


def test_paths_per_warp_sees_divergence():
    divergent = ch04.paths_per_warp(_trace("ch04_parity_branch", ch04.parity_branch_kernel))
    uniform = ch04.paths_per_warp(_trace("ch04_warp_uniform", ch04.warp_uniform_kernel))
    assert divergent.max() == 2 and (divergent[divergent > 0] == 2).all()
    assert uniform.max() == 1
    grid = ch04.lane_paths(_trace("ch04_parity_branch", ch04.parity_branch_kernel))
    assert grid.shape == (2, 32)
    assert set(np.unique(grid[0])) == {0, 1} and (grid[0, ::2] != grid[0, 1::2]).all()


def test_paths_view():
    fig = puzzles.show("ch04_parity_branch", ch04.parity_branch_kernel, view="paths", seed=0)
    assert "paths per warp [2, 2]" in fig.get_suptitle().replace("\n", " ")


def test_occupancy_arithmetic():
    o = ch04.occupancy(256, 32, 0)
    assert (o["blocks/SM"], o["warps/SM"], o["occupancy"]) == (8, 64, 1.0)
    o = ch04.occupancy(256, 128, 0)              # 128 regs * 256 threads = 32K: two blocks
    assert (o["blocks/SM"], o["limit"]) == (2, "registers")
    o = ch04.occupancy(128, 32, 48 * 1024)       # 228 KiB / 48 KiB = 4 blocks
    assert (o["blocks/SM"], o["limit"]) == (4, "shared memory")
    o = ch04.occupancy(32, 16, 0)                # tiny blocks: the 32-block limit bites
    assert (o["blocks/SM"], o["occupancy"], o["limit"]) == (32, 0.5, "blocks")
    o = ch04.occupancy(1024, 32, 0, gpu="T4 (sm_75)")
    assert (o["blocks/SM"], o["occupancy"]) == (1, 1.0)
    text = ch04.occupancy_table([(256, 32, 0), (256, 128, 0)])
    assert len(text.splitlines()) == 3 and "registers" in text


# ---------------------------------------------------------------------------- chapter 5 specialisation

def test_specialize_recompiles_with_new_constants():
    from numba import types
    arr = types.float32[:, :]
    sig = (arr, arr, arr, types.int64, types.int64, types.int64)
    big = ch05.specialize(ch05.regtile_matmul_kernel, **ch05.regtile_constants(128, 128, 8, 8, 8))
    ptx, _ = cuda.compile_ptx(big.py_func, sig, cc=(7, 5))
    # the 8x8 accumulator lives in registers: no local memory, 64 multiply-adds per k step
    assert "ld.local" not in ptx and "st.local" not in ptx
    assert ptx.count("fma.rn.f32") >= 64
    assert re.search(r"\.shared .*\[4224\]", ptx)       # m tile: 8 x (128 + 4 padding) floats
    tiled32 = ch05.specialize(ch05.tiled_matmul_kernel, TILE=32)
    ptx, _ = cuda.compile_ptx(tiled32.py_func, sig, cc=(7, 5))
    assert re.search(r"\.shared .*\[4096\]", ptx)       # 32 * 32 * 4 bytes per tile
    assert ch05.TILE == 8                               # the module's own kernel is untouched


def test_prefetch_kernel_uses_128_bit_shared_loads():
    from numba import types
    arr = types.float32[:, :]
    sig = (arr, arr, arr, types.int64, types.int64, types.int64)
    big = ch05.specialize(ch05.prefetch_matmul_kernel, **ch05.regtile_constants(128, 128, 8, 8, 8))
    ptx, _ = cuda.compile_ptx(big.py_func, sig, cc=(9, 0))
    # per k step: 2 + 2 vector reads of the tiles feed 64 multiply-adds; nothing in local memory, no f64
    assert ptx.count("ld.shared.v4.f32") >= 4 and "ld.shared.f32" not in ptx
    assert "ld.local" not in ptx and ".f64" not in ptx
    assert ptx.count("fma.rn.f32") >= 64
    capped = ch05.specialize(ch05.prefetch_matmul_kernel, jit_options={"max_registers": 128})
    assert capped.targetoptions["max_registers"] == 128


def test_regtile_constants_reject_uneven_loads():
    with pytest.raises(AssertionError, match="whole shares"):
        ch05.regtile_constants(128, 128, 3, 8, 8)


# ---------------------------------------------------------------------------- benchmarks

def test_goals():
    assert ch02.GOAL == {"ceiling": "copy", "fraction": 0.8, "best": ch02.BEST}
    assert ch05.GOAL == {"ceiling": "sgemm", "fraction": 0.4, "best": ch05.BEST}
    assert ch03.GOAL is None and ch04.GOAL is None


def test_transfer_table_format():
    rows = [{"n": 1024, "MiB": 0.01, "h2d": 20e-6, "kernel": 8e-6, "d2h": 15e-6, "gpu_total": 43e-6,
             "cpu": 1e-6},
            {"n": 1 << 24, "MiB": 192.0, "h2d": 20e-3, "kernel": 0.2e-3, "d2h": 10e-3, "gpu_total": 30.2e-3,
             "cpu": 40e-3}]
    lines = ch02.transfer_table(rows).splitlines()
    assert lines[1].split()[-1] == "CPU" and lines[2].split()[-1] == "GPU"
    assert "43.0" in lines[1]


@pytest.mark.skipif(timing.skip_reason() is None, reason="a GPU is present")
@pytest.mark.parametrize("fn", [ch02.transfer_study, ch04.device_query])
def test_gpu_only_helpers_refuse_cleanly(fn):
    with pytest.raises(RuntimeError, match="skipped"):
        fn()


@pytest.mark.skipif(timing.skip_reason() is not None, reason="needs a CUDA GPU")
@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_benchmark_small_scale(module):
    rows = module.benchmark(scale=1 / 64)
    assert rows and all(r.seconds > 0 for r in rows)
    if module.GOAL:
        assert any(r.name == module.GOAL["best"] for r in rows)
