"""PMPP chapters 2-5: every reference passes, every stub is unsolved, known-wrong kernels are rejected
for the right reason, and the CPU-side helpers (divergence paths, occupancy, specialisation) work."""

import math
import re

import numpy as np
import pytest
from numba import cuda

import puzzles
from helpers import timing
from helpers.check import OverBudget
from puzzles.pmpp import ch02_vector_add as ch02
from puzzles.pmpp import ch03_grids as ch03
from puzzles.pmpp import ch04_architecture as ch04
from puzzles.pmpp import ch05_memory_tiling as ch05

MODULES = (ch02, ch03, ch04, ch05)
ALL = [puzzles.get(n) for m in MODULES for n in puzzles.names(m.CHAPTER)]  # every op file's rungs
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
            for b in arrays[i + 1 :]:
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


TILE = ch05.TILE


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
    o = ch04.occupancy(256, 128, 0)  # 128 regs * 256 threads = 32K: two blocks
    assert (o["blocks/SM"], o["limit"]) == (2, "registers")
    o = ch04.occupancy(128, 32, 48 * 1024)  # 228 KiB / 48 KiB = 4 blocks
    assert (o["blocks/SM"], o["limit"]) == (4, "shared memory")
    o = ch04.occupancy(32, 16, 0)  # tiny blocks: the 32-block limit bites
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
    assert re.search(r"\.shared .*\[4224\]", ptx)  # m tile: 8 x (128 + 4 padding) floats
    tiled32 = ch05.specialize(ch05.tiled_matmul_kernel, TILE=32)
    ptx, _ = cuda.compile_ptx(tiled32.py_func, sig, cc=(7, 5))
    assert re.search(r"\.shared .*\[4096\]", ptx)  # 32 * 32 * 4 bytes per tile
    assert ch05.TILE == 8  # the module's own kernel is untouched


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


def test_two_stage_sgemm_matches_numpy_on_the_simulator(sim_engine):
    """sgemm_fast.py's kernel (the benchmark's other SGEMM candidate) at small tiles: ragged shapes
    take the bounds-tested loads, shapes of whole tiles the unchecked ones; both against float64."""
    from puzzles.pmpp.ch05_memory_tiling import sgemm_fast as f

    c = f.fast_constants(32, 32, 8, 4, 4)
    k = ch05.specialize(f.prefetch2_matmul_kernel, (f._k1, f._k4, f._fetch), **c)
    rng = np.random.default_rng(5)
    for rows, inner, cols in ((64, 32, 64), (37, 9, 41), (5, 3, 3), (70, 40, 33)):
        m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
        n = rng.normal(0, 1, (inner, cols)).astype(np.float32)
        dp = cuda.to_device(np.full((rows, cols), np.nan, np.float32))
        grid = (math.ceil(cols / 32), math.ceil(rows / 32))
        k[grid, (c["TX"], c["TY"])](
            dp, cuda.to_device(m.ravel()), cuda.to_device(n.ravel()), rows, inner, cols
        )
        np.testing.assert_allclose(dp.copy_to_host(), m.astype(np.float64) @ n, rtol=1e-4, atol=1e-4)
    with pytest.raises(AssertionError, match="multiple of 4"):
        f.fast_constants(128, 128, 6, 8, 8)


def test_two_stage_sgemm_is_unrolled_and_stays_in_registers():
    """At the benchmark's tiles: the k loop unrolled by 4 (4 x 64 multiply-adds fed by 16-byte shared
    reads), nothing in local memory, no float64."""
    from numba import types

    from puzzles.pmpp.ch05_memory_tiling import sgemm_fast as f

    flat, arr = types.float32[::1], types.float32[:, :]
    sig = (arr, flat, flat, types.int64, types.int64, types.int64)
    big = ch05.specialize(
        f.prefetch2_matmul_kernel, (f._k1, f._k4, f._fetch), **f.fast_constants(128, 128, 8, 8, 8)
    )
    ptx, _ = cuda.compile_ptx(big.py_func, sig, cc=(9, 0))
    assert ptx.count("fma.rn.f32") >= 256 and ptx.count("ld.shared.v4.f32") >= 16
    assert "ld.local" not in ptx and ".f64" not in ptx and "ld.shared.f32" not in ptx


def test_v4_sgemm_matches_numpy_on_the_simulator(sim_engine):
    """sgemm_v4.py's kernel (16-byte loads, a benchmark candidate) at small tiles through its
    launcher's logic: shapes of whole tiles with inner and cols multiples of 4 take the 16-byte path,
    ragged ones and unaligned widths the bounds-tested scalar loads; all against float64."""
    from puzzles.pmpp.ch05_memory_tiling import sgemm_v4 as v

    c = v.v4_constants(32, 32, 8, 4, 4)
    k = ch05.specialize(v.v4_matmul_kernel, (v._fetch, v._k1, v._k4, v._k8), **c)
    rng = np.random.default_rng(7)
    for rows, inner, cols, vec in ((64, 32, 64, 1), (70, 44, 36, 1), (37, 9, 41, 0), (64, 16, 64, 0)):
        m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
        n = rng.normal(0, 1, (inner, cols)).astype(np.float32)
        dp = cuda.to_device(np.full(rows * cols, np.nan, np.float32))
        grid = (math.ceil(cols / 32), math.ceil(rows / 32))
        k[grid, (c["TX"], c["TY"])](
            dp, cuda.to_device(m.ravel()), cuda.to_device(n.ravel()), rows, inner, cols, vec
        )
        got = dp.copy_to_host().reshape(rows, cols)
        np.testing.assert_allclose(got, m.astype(np.float64) @ n, rtol=1e-4, atol=1e-4)
    with pytest.raises(AssertionError, match="multiple of the unrolling"):
        v.v4_constants(128, 128, 6, 8, 8)


@pytest.mark.parametrize("cc, unroll", [((7, 5), 4), ((9, 0), 8)])
def test_v4_sgemm_issues_16_byte_loads_and_stays_in_registers(cc, unroll):
    """At the benchmark's tiles (128x128, BK 8, 8x8 per thread; the k loop unrolled by 4 for the T4's
    target, a quicker compile, by 8 for the H100's): global loads, the n tile's shared stores, the
    shared reads and the result's stores are 16 bytes wide; nothing in local memory."""
    from numba import types

    from helpers.ptx import _device_functions_without_gpu
    from puzzles.pmpp.ch05_memory_tiling import sgemm_v4 as v

    flat = types.float32[::1]
    sig = (flat, flat, flat, types.int64, types.int64, types.int64, types.int64)
    big = ch05.specialize(
        v.v4_matmul_kernel, (v._fetch, v._k1, v._k4, v._k8), **v.v4_constants(128, 128, 8, 8, 8, unroll)
    )
    with _device_functions_without_gpu(cc):
        ptx, _ = cuda.compile_ptx(big.py_func, sig, cc=cc)
    assert ptx.count("ld.global.v4.f32") >= 2 and ptx.count("st.shared.v4.f32") >= 1
    assert ptx.count("ld.shared.v4.f32") >= 16 and ptx.count("st.global.v4.f32") >= 16
    assert ptx.count("fma.rn.f32") >= 64 * unroll  # the k values written out per trip of the loop
    assert (
        "ld.local" not in ptx and "st.local" not in ptx and ".f64" not in ptx and "ld.shared.f32" not in ptx
    )


def test_regtile_constants_reject_uneven_loads():
    with pytest.raises(AssertionError, match="whole shares"):
        ch05.regtile_constants(128, 128, 3, 8, 8)


# ---------------------------------------------------------------------------- benchmarks


def test_goals():
    # the performance issue's targets: vector add and grayscale near the copy, SGEMM near cuBLAS
    assert ch02.GOAL == {"ceiling": "copy", "fraction": 0.9, "best": ch02.BEST}
    assert ch03.GOAL == {"ceiling": "copy", "fraction": 0.8, "best": "grayscale"}
    assert ch05.GOAL == {"ceiling": "sgemm", "fraction": 0.7, "best": ch05.BEST}
    assert ch04.GOAL is None


def test_transfer_table_format():
    rows = [
        {"n": 1024, "MiB": 0.01, "h2d": 20e-6, "kernel": 8e-6, "d2h": 15e-6, "gpu_total": 43e-6, "cpu": 1e-6},
        {
            "n": 1 << 24,
            "MiB": 192.0,
            "h2d": 20e-3,
            "kernel": 0.2e-3,
            "d2h": 10e-3,
            "gpu_total": 30.2e-3,
            "cpu": 40e-3,
        },
    ]
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


@cuda.jit
def _copy_skipping_last(dst, src):
    i = cuda.grid(1)
    while i < src.shape[0] - 1:
        dst[i] = src[i]
        i += cuda.gridsize(1)


def test_numba_copy_rows_validate_before_timing(sim_engine, monkeypatch):
    """The "copy in Numba" rows (4- and 8-byte loads) copy exactly, and a copy that misses an element
    is stopped by the validation, naming the row, before anything is timed."""
    timed = []
    monkeypatch.setattr(timing, "time_gpu", lambda fn, **kw: (timed.append(fn()), 1e-3)[1])
    monkeypatch.setattr(ch02.bench, "_sm_count", lambda: 1)
    rows = ch02.numba_copy_rows(4096)
    assert [r.name for r in rows] == ["copy in Numba, 4-byte loads", "copy in Numba, 8-byte loads"]
    assert all(r.bytes == 2 * 4096 for r in rows) and len(timed) == 2
    monkeypatch.setattr(ch02.bench, "copy_kernel", _copy_skipping_last)
    timed.clear()
    with pytest.raises(AssertionError, match="copy in Numba, 4-byte loads"):
        ch02.numba_copy_rows(4096)
    assert not timed


def test_grid_stride_chunks_rejected_on_every_seed():
    """A contiguous chunk per thread (uncoalesced) fails the grid-stride rung on seeds 0-9, with the
    grid-stride advice (issue 23 class 5)."""
    from mutants.pmpp.ch02_vector_add.vecadd import vecadd_contiguous_chunks

    for seed in range(10):
        with pytest.raises(OverBudget) as info:
            puzzles.check("ch02_vecadd_grid_stride", vecadd_contiguous_chunks, seed=seed, gpu=False)
        assert info.value.field == "min_coalescing" and "grid-stride loop" in str(info.value), seed
