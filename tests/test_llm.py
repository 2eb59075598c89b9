"""The transformer-kernels track (puzzles/llm/), what tests/test_exercises.py does not cover: every
exercise has >= 5 mutants and >= 2 variants; the cases reach the edges; the softmax spec's masked
rows; the tolerances are the derived ones; the two-stage parameter gradient is deterministic; the
attention traffic formulas agree with the simulator's trace; the GPT-2 block matches NumPy (and its
check catches a wrong attention); fusion moves fewer bytes; `python -m tools.bench` finds the
track and judges its goals against a peer ceiling; the notebooks' `import *` hands out no kernel.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import controls

import puzzles
from helpers import sim
from helpers.puzzle import Puzzle
from helpers.timing import Measurement
from puzzles.llm import attention as la
from puzzles.llm import gpt2_block as gb
from puzzles.llm import small_ops as llm2
from puzzles.llm import softmax_layernorm as llm1

ROOT = Path(__file__).resolve().parents[1]
MODULES = (llm1, llm2, la, gb)  # packages: one op file per ladder, the puzzles in the op files


def chapter_puzzles(m) -> list[Puzzle]:
    return [puzzles.get(n) for n in puzzles.names(m.CHAPTER)]


ALL = [p for m in MODULES for p in chapter_puzzles(m)]
EXERCISES = [p for p in ALL if p.stub != p.source]


def _controls(p: Puzzle):
    return controls(puzzles.module_of(p.name))


# ---------------------------------------------------------------- the track's own standards


@pytest.mark.parametrize("p", EXERCISES, ids=lambda p: p.name)
def test_exercise_has_five_mutants_and_two_variants(p):
    c = _controls(p)
    mutants, variants = c.MUTANTS.get(p.name, []), c.VARIANTS.get(p.name, [])
    assert len(mutants) >= 5 and len(variants) >= 2, p.name
    assert len({m[0] for m in mutants}) == len(mutants), f"{p.name}: two mutants share a name"


def test_control_counts():
    """No mutant or variant the track was written with has gone (modules 1-2: 84 and 28; 3-4: 31 and 10)."""
    counts = [controls(mod) for mod in sorted({puzzles.module_of(p.name) for p in ALL})]
    assert sum(len(v) for c in counts for v in c.MUTANTS.values()) >= 84 + 31
    assert sum(len(v) for c in counts for v in c.VARIANTS.values()) >= 28 + 10


def test_names_prefixed_and_enough_exercises():
    for m in MODULES:
        tag = m.CHAPTER.replace("-", "")
        mine = chapter_puzzles(m)
        assert all(p.name.startswith(tag + "_") for p in mine), m.__name__
        assert all(puzzles.module_of(p.name).startswith(m.__name__ + ".") for p in mine), m.__name__
        assert sum(p.stub != p.source for p in mine) >= 2, m.__name__


@pytest.mark.parametrize("p", chapter_puzzles(llm1) + chapter_puzzles(llm2), ids=lambda p: p.name)
def test_row_and_elementwise_puzzles_have_five_cases(p):
    for seed in (0, 1, 2):
        assert len(p.cases(np.random.default_rng(seed))) >= 5, p.name


@pytest.mark.parametrize("m", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_star_import_gives_constants_only(m):
    """`from puzzles.llm.<module> import *` in a notebook must not hand out a kernel (a solution)."""
    assert m.__all__, m.__name__
    for name in m.__all__:
        value = getattr(m, name)
        assert isinstance(value, (int, float, np.floating, np.integer)), f"{m.__name__}.{name}"


# ---------------------------------------------------------------- softmax and norms


def test_softmax_spec_edges():
    x = np.array([[-np.inf, -np.inf], [1e4, 1e4 - 1], [-np.inf, 0.0]], np.float32)
    y = llm1.softmax_spec(x, 3, 2)
    e = np.exp(-1.0)
    assert np.array_equal(y[0], [0, 0]) and np.allclose(y[1], [1 / (1 + e), e / (1 + e)])
    assert np.array_equal(y[2], [0, 1])


def test_tolerances_are_the_derived_ones():
    assert llm1.SOFTMAX_RTOL == (llm1.SOFTMAX_MAX_COLS + 110) * 2.0**-24
    assert 1e-5 < llm1.SOFTMAX_RTOL < 3e-5 and llm1.NORM_ATOL < 3e-3
    for p in chapter_puzzles(llm1):
        assert (p.rtol, p.atol) in [(llm1.SOFTMAX_RTOL, llm1.SOFTMAX_ATOL), (llm1.NORM_RTOL, llm1.NORM_ATOL)]


def test_norm_cases_cover_the_edges():
    rng = np.random.default_rng(5)
    for p in chapter_puzzles(llm1):
        cases = p.cases(rng)
        cols = [c.args["cols"] for c in cases]
        rows = [c.args["rows"] for c in cases]
        assert 1 in cols and 1 in rows, p.name
        assert any(c % 32 for c in cols if c > 32), p.name


def test_param_partials_then_column_sum_is_deterministic():
    """Stage 1 + stage 2 give the same bits whatever order the blocks run in; atomics do not have to."""
    rng = np.random.default_rng(0)
    rows, cols, chunk = 23, 40, 4
    x = rng.normal(0, 1, (rows, cols)).astype(np.float32)
    mu, rs = llm1.saved_stats(x)
    dout = rng.normal(0, 1, (rows, cols)).astype(np.float32)
    chunks = (rows + chunk - 1) // chunk
    results = []
    for seed in (0, 1, 2):
        dw_part = np.zeros((chunks, cols), np.float32)
        db_part = np.zeros((chunks, cols), np.float32)
        sim.launch(
            llm1.layernorm_param_partials,
            (2, chunks),
            32,
            [dw_part, db_part, dout, x, mu, rs, rows, cols, chunk],
            block_order="shuffle",
            seed=seed,
        )
        dw = np.zeros(cols, np.float32)
        sim.launch(llm1.column_sum, 2, 32, [dw, dw_part, chunks, cols], block_order="shuffle", seed=seed)
        results.append(dw)
    _, want, _ = llm1.layernorm_backward_ref(dout, x, mu, rs, np.ones(cols, np.float32))
    assert np.allclose(results[0], want, rtol=llm1.NORM_RTOL, atol=llm1.NORM_ATOL)
    assert all(np.array_equal(results[0], r) for r in results[1:])


# ---------------------------------------------------------------- attention


def test_attention_cases_cover_the_edges():
    """One token, one head, head dim 1, sequences straddling the tiles, causal and not, large logits."""
    for seed in range(10):
        cases = la.flash_cases(np.random.default_rng(seed))
        shapes = [c.args["q"].shape for c in cases]
        assert any(t == 1 for _, t, _ in shapes) and any(bh == 1 for bh, _, _ in shapes)
        assert any(d == 1 for _, _, d in shapes) and any(d == la.MAX_D for _, _, d in shapes)
        assert any(t % la.BC and t > la.BR for _, t, _ in shapes)
        assert {c.args["causal"] for c in cases} == {0, 1}
        big = max(np.abs(la.scores_spec(c.args["q"], c.args["k"], 0)).max() for c in cases)
        assert big > 88.7  # exp of it overflows float32: the max subtraction is tested
        for c in cases:
            assert np.unique(c.args["v"]).size == c.args["v"].size


def test_spec_agrees_with_the_naive_pipeline(sim_engine):
    rng = np.random.default_rng(5)
    q, k, v = la._qkv(rng, 2, 13, 5, big=True)
    out = np.zeros_like(q)
    la.attention_naive(out, q, k, v, 1)
    np.testing.assert_allclose(out, la.attention_spec(q, k, v, 1), rtol=la._TOL["rtol"], atol=la._TOL["atol"])


def test_traffic_formulas_match_the_trace():
    counts = la.counted_accesses(t=19, d=6, causal=0)
    for version, (reads, writes) in counts.items():
        f = la.traffic(1, 19, 6, version)
        assert (f["reads"], f["writes"]) == (reads, writes), version
    assert la.traffic(96, 1024, 64, "flash")["bytes"] * 5 < la.traffic(96, 1024, 64, "naive")["bytes"]


def test_tiled_constants_match_the_module():
    consts = la.tiled_constants(la.TX, la.TY, la.RM, la.RN, la.MAX_D)
    assert all(getattr(la, name) == value for name, value in consts.items())


# ---------------------------------------------------------------- the GPT-2 block


def test_block_matches_numpy_both_ways(sim_engine):
    rng = np.random.default_rng(11)
    B, T, C, NH = 2, 6, 16, 2
    params = gb.random_block_params(rng, C)
    x = rng.normal(0, 1, (B, T, C)).astype(np.float32)
    truth = gb.block_ref(x, params, NH)
    tol = gb.block_tolerance(x, params, NH)
    assert tol < 1e-4
    for fused in (False, True):
        err = np.abs(gb.gpt2_block(x, params, NH, fused) - truth).max()
        assert err <= tol, (fused, err, tol)


def test_block_validation_catches_a_wrong_attention(sim_engine):
    """The block's check must be able to fail: a leaking causal mask (finite, plausible numbers) and a
    mask off by one (NaN in the first row) inside it are both caught, op by op and fused."""
    from mutants.llm.attention.flash import flash_no_rescale
    from mutants.llm.attention.naive import scores_causal_off_by_one, scores_mask_zero

    rng = np.random.default_rng(12)
    B, T, C, NH = 1, 9, 16, 2
    params = gb.random_block_params(rng, C)
    x = rng.normal(0, 1, (B, T, C)).astype(np.float32)
    truth, tol = gb.block_ref(x, params, NH), gb.block_tolerance(x, params, NH)
    for swap in ({"attn_scores": scores_mask_zero}, {"attn_scores": scores_causal_off_by_one}):
        err = np.abs(gb.gpt2_block(x, params, NH, fused=False, kernels=swap) - truth).max()
        assert not err <= tol, (swap, err)
    # the one-thread-per-query flash kernel with its rescale forgotten, in place of the tiled one
    plan = gb.block_plan(B, T, C, NH, True, att_kernel=flash_no_rescale, att_block=(la.BR,), fb_r=la.BR)
    bufs = gb.block_buffers(x, params, NH, True)
    gb.run_block(plan, bufs)
    assert not np.abs(bufs["out"].reshape(B, T, C) - truth).max() <= tol


def test_fusion_moves_fewer_bytes():
    x = np.zeros((2, 9, 16), np.float32)
    params = gb.random_block_params(np.random.default_rng(0), 16)
    total = {}
    for fused in (False, True):
        plan = gb.block_plan(2, 9, 16, 2, fused)
        total[fused] = sum(b for _, b in gb.plan_bytes(plan, gb.block_buffers(x, params, 2, fused)))
    assert total[True] < total[False]


# ---------------------------------------------------------------- python -m tools.bench


def test_bench_finds_the_track():
    from tools.bench import chapter_modules

    assert [t for t, _ in chapter_modules({"llm1", "llm2", "llm3", "llm4"})] == [
        "llm1",
        "llm2",
        "llm3",
        "llm4",
    ]
    assert [m for _, m in chapter_modules({"llm3", "ch10"})][-1] is la.bench  # where GOAL lives
    assert all(t.startswith("ch") for t, _ in chapter_modules({"ch10"}))
    for m in MODULES:
        assert callable(m.benchmark) and m.GOAL["best"]
    assert llm1.GOAL["ceiling"] == llm2.GOAL["ceiling"] == "copy"


def test_goal_row_against_a_peer_ceiling():
    """Attention is judged against torch's SDPA and the fused block against the op-by-op one: rows the
    benchmarks mark as the ceiling, in FLOP/s, beside a byte-rate copy ceiling."""
    from tools.bench import goal_row

    rows = [
        Measurement("device copy (ceiling)", 1.0, bytes=10**12, ceiling=True),
        Measurement("torch SDPA (FP32)", 1.0, flops=1000, ceiling=True),
        Measurement("llm3_attn_flash_tiled", 1.0, flops=520),
    ]
    row = goal_row("llm3", la, rows)
    assert row[1] == "llm3_attn_flash_tiled" and row[4] == "52.0%" and row[-1] == "yes"
    rows[2] = Measurement("llm3_attn_flash_tiled", 1.0, flops=400)
    assert goal_row("llm3", la, rows)[-1] == "NO"
    assert goal_row("llm3", la, [rows[0], rows[2]])[-1] == "?"  # torch absent: no FLOP/s ceiling
    block = [
        Measurement("device copy (ceiling)", 1.0, bytes=10**12, ceiling=True),
        Measurement("block, op by op", 1.0, flops=100, ceiling=True),
        Measurement("block, fused", 1.0, flops=160),
    ]
    assert goal_row("llm4", gb, block)[4] == "160.0%" and goal_row("llm4", gb, block)[-1] == "yes"


def test_bench_script_skips_without_gpu():
    env = dict(os.environ, MP_ENGINE="sim", PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-m", "tools.bench", "--only", "llm1", "--only", "llm3"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and "skipped" in lines[0], r.stdout
