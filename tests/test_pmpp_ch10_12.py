"""PMPP chapters 10-12 (reduction, scan, merge) and the run-all benchmark script.

Every variant passes the strict harness; every exercise stub raises NotSolvedYet; each exercise
rejects at least two known-wrong kernels for the right reason; the host-side hierarchical scan
is right on the simulator; the benchmark kernels (the same code recompiled with GPU-sized
constants by helpers.timing.specialize) are right on the simulator at small sizes; and
`python -m tools.bench` skips cleanly without a GPU.
"""

import inspect
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from mutants.pmpp.ch11_scan.single_pass import domino_static
from numba import cuda

import puzzles
from helpers import sim
from helpers.check import KernelDiagnosed
from helpers.sim.errors import (
    Deadlock,
)
from helpers.timing import specialize
from puzzles.pmpp import ch10_reduction as ch10
from puzzles.pmpp import ch11_scan as ch11
from puzzles.pmpp import ch12_merge as ch12

ROOT = Path(__file__).resolve().parents[1]
MODULES = (ch10, ch11, ch12)


def _puzzles(package):
    """The puzzles of a chapter package (its op files'), in registry order."""
    inside = package.__name__ + "."
    return [puzzles.get(n) for n in puzzles.names() if puzzles.module_of(n).startswith(inside)]


ALL = [p for m in MODULES for p in _puzzles(m)]
EXERCISES = [p for p in ALL if p.stub != p.source]
SEED = 3

TPB = ch10.TPB
SEGMENT = ch10.SEGMENT
FULL_MASK = 0xFFFFFFFF
TILE = ch12.TILE


# ---------------------------------------------------------------- every variant, every stub


def test_each_notebook_has_two_exercises():
    for m in MODULES:
        assert sum(p.stub != p.source for p in _puzzles(m)) >= 2, m.__name__
        assert all(p.chapter == m.CHAPTER and p.name.startswith("ch") for p in _puzzles(m))


# ---------------------------------------------------------------- known-wrong kernels: ch10


# (the wrong shuffle kernels keep the given grid-stride loop and change what follows it)


# ---------------------------------------------------------------- known-wrong kernels: ch11


def test_domino_with_block_index_never_finishes(monkeypatch):
    """Waiting on blockIdx.x - 1 when blocks start in another order: on a GPU a hang once blocks
    outnumber the slots; in the simulator (blocks in shuffled order) a Deadlock: the
    spinning block waits on a flag no running thread will ever set."""
    monkeypatch.setattr(sim.config, "timeout", 3)
    with pytest.raises(KernelDiagnosed) as info:
        puzzles.check("ch11_domino", domino_static, seed=SEED)
    assert isinstance(info.value.diagnostic, Deadlock)


# ---------------------------------------------------------------- known-wrong kernels: ch12


# no barrier: the next round's loads overwrite tiles that slower threads still read


# ---------------------------------------------------------------- composed and GPU-sized kernels, simulated


def test_hierarchical_scan_on_simulator(sim_engine):
    from helpers import timing

    rng = np.random.default_rng(5)
    for n in (7, 300, 16 * 16 * 2 + 5):  # one level, two levels, three levels
        a = rng.uniform(-2, 2, n).astype(np.float32)
        got = ch11.hierarchical_scan(a).copy_to_host()
        timing.validate(
            f"hierarchical_scan n={n}", got, np.cumsum(a.astype(np.float64)), rtol=1e-5, atol=1e-4
        )


def _run(kernel, grid, block, args, **kw):
    sim.launch(kernel, grid, block, args, trace=False, block_order="shuffle", seed=1, **kw)


def test_specialized_reductions_on_simulator():
    rng = np.random.default_rng(6)
    a = rng.integers(-8, 9, 777).astype(np.float32)
    want = a.sum(dtype=np.float64)
    for kern, per_block, tpb in [
        (specialize(ch10.reduce_segmented, TPB=32), 64, 32),
        (specialize(ch10.reduce_coarsened, TPB=32, COARSE=3), 192, 32),
    ]:
        out = np.zeros(1, np.float32)
        _run(kern, (len(a) + per_block - 1) // per_block, tpb, [out, a, len(a)])
        assert out[0] == want
    out = np.zeros(1, np.float32)
    _run(specialize(ch10.reduce_shuffle, COARSE=4), 3, 64, [out, a, len(a)])
    assert out[0] == want


def test_specialized_scans_on_simulator(sim_engine):
    rng = np.random.default_rng(7)
    n = 1000
    a = rng.integers(-8, 9, n).astype(np.float32)
    want = np.cumsum(a, dtype=np.float64)
    scan, add = specialize(ch11.scan_blocks, TPB=32), specialize(ch11.add_block_sums, TPB=32)
    got = ch11.hierarchical_scan(a, scan, add, 32).copy_to_host()
    assert np.array_equal(got, want)
    tpb, items = 64, 4
    kern = specialize(ch11.lookback_scan, ITEMS=items, LB_TPB=tpb, LB_TILE=tpb * items)
    nb = (n + tpb * items - 1) // (tpb * items)
    out = np.full(n, np.nan, np.float32)
    scratch = [np.zeros(nb, np.int32), np.zeros((nb, 2), np.float32), np.zeros(1, np.int32)]
    _run(kern, nb, tpb, [out, *scratch, a, n], cross_block_races=False)
    assert np.array_equal(out, want)
    # the raked look-back (GPU only): a tile of 64 x 4 = 256, so the last of 4 tiles is partial
    raked = specialize(ch11.lookback_raked, ITEMS=4, LB_TPB=64, LB_TILE=256, RAKED_BUF=264)
    out = np.full(n, np.nan, np.float32)
    scratch = [np.zeros(4, np.int32), np.zeros((4, 2), np.float32), np.zeros(1, np.int32)]
    _run(raked, 4, 64, [out, *scratch, a, n], cross_block_races=False)
    assert np.array_equal(out, want)


def test_specialized_merges_on_simulator():
    rng = np.random.default_rng(8)
    a, b = ch12._merge_inputs(rng, 150, 201)
    want = ch12.merge_spec(a, b, 150, 201)
    for kern in (
        specialize(ch12.merge_tiled, [ch12.co_rank, ch12.merge_sequential], TILE=40),
        specialize(
            ch12.merge_circular,
            [ch12.co_rank, ch12.co_rank_circular, ch12.merge_sequential_circular],
            TILE=40,
        ),
    ):
        c = np.full(351, np.nan, np.float32)
        _run(kern, 3, 16, [c, a, b, 150, 201])
        assert np.array_equal(c, want)
    # the partitioned merge (GPU only): tiles of 16 x 5 = 80 outputs, the last one partial
    part, merge, tile, tpb = ch12._partitioned_kernels(16, 5)
    bounds = np.zeros(351 // tile + 2, np.int32)
    c = np.full(351, np.nan, np.float32)
    _run(part, 1, 128, [bounds, a, b, 150, 201])
    _run(merge, len(bounds) - 1, tpb, [c, a, b, 150, 201, bounds])
    assert np.array_equal(c, want)


# ---------------------------------------------------------------- tools.bench


def test_goals_declared():
    # the performance issue's targets, each judged on a variant the chapter's benchmark times
    assert ch10.GOAL == {"ceiling": "copy", "fraction": 0.95, "best": "ch10_reduce_shuffle"}
    assert ch11.GOAL == {"ceiling": "copy", "fraction": 0.85, "best": "ch11_lookback_fast", "peer": 1.0}
    assert ch12.GOAL == {"ceiling": "copy", "fraction": 0.5, "best": "ch12_merge_partitioned_u32"}
    # GPU-only variants: a kernel of that name in the chapter, timed under the name the goal judges
    assert callable(ch12.merge_partitioned) and "ch12_merge_partitioned" in inspect.getsource(ch12.bench)
    assert callable(ch12.partitioned32.merge_partitioned_u32)
    assert "ch12_merge_partitioned_u32" in inspect.getsource(ch12.bench)
    assert '"ch11_lookback_fast"' in inspect.getsource(ch11.bench)


def test_goal_row_arithmetic():
    from helpers.timing import Measurement
    from tools.bench import goal_row

    rows = [
        Measurement("copy", 1.0, bytes=1000, ceiling=True),
        Measurement("ch10_reduce_shuffle", 1.0, bytes=960),
    ]
    row = goal_row("ch10", ch10, rows)
    assert row[1] == "ch10_reduce_shuffle" and row[4] == "96.0%" and row[-1] == "yes"
    rows[1] = Measurement("ch10_reduce_shuffle", 1.0, bytes=500)
    assert goal_row("ch10", ch10, rows)[-1] == "NO"
    assert goal_row("chXX", types.SimpleNamespace(GOAL=None), rows)[-2] == "no goal"
    assert goal_row("ch10", ch10, rows[1:])[-1] == "?"  # no ceiling measured: reported, not fatal


def test_chapter_modules_found():
    from tools.bench import chapter_modules

    tags = [t for t, _ in chapter_modules({"ch10", "ch11", "ch12"})]
    assert tags == ["ch10", "ch11", "ch12"]


def test_bench_script_skips_without_gpu():
    env = dict(os.environ, MP_ENGINE="sim", PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-m", "tools.bench", "--only", "ch10"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and "skipped" in lines[0], r.stdout


@pytest.mark.skipif(not os.environ.get("MP_SIM_BENCH"), reason="slow (about a minute): set MP_SIM_BENCH=1")
@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_benchmark_code_path_on_simulator(module, sim_engine, monkeypatch, tmp_path):
    """Each benchmark() end to end, tiny scale, timing faked: the validation of the GPU-sized kernels
    runs for real on the simulator, so a GPU run does not find a slip in the benchmark code."""

    from helpers import timing

    monkeypatch.setattr(timing, "time_gpu", lambda fn, **kw: (fn(), 1e-3)[1])
    monkeypatch.setattr(
        timing,
        "copy_ceiling",
        lambda nbytes=1 << 30: timing.Measurement("copy", 1e-3, bytes=2 * nbytes, ceiling=True),
    )
    monkeypatch.setattr(cuda, "get_current_device", lambda: types.SimpleNamespace(MULTIPROCESSOR_COUNT=1))
    # direct launches cannot say cross_block_races=False; the single-pass scans need it
    launch = sim.launch
    monkeypatch.setattr(sim, "launch", lambda *a, **k: launch(*a, **{**k, "cross_block_races": False}))
    monkeypatch.setenv("MP_TUNING_CACHE", str(tmp_path / "tuning.json"))  # never the user's cache
    rows = module.benchmark(scale=1e-4)
    names = {r.name for r in rows if not r.ceiling}
    # no CuPy/PyTorch on the simulator: no peer row; the tuned variants say what they ran with
    assert not any(r.peer for r in rows)
    if module is not ch12:
        assert any(r.config for r in rows)
    assert sum(r.ceiling for r in rows) == 1 and len(names) >= 3
    assert all(r.bytes > 0 and r.name.startswith(("ch1", "copy")) for r in rows)
    if module.GOAL:
        assert module.GOAL["best"] in names
