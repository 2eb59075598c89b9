"""The harness itself: poisoning, fresh outputs, pristine inputs, budgets, verdict classes.

Puzzle-by-puzzle strictness lives in test_puzzles.py / test_strictness.py; this file
covers harness mechanisms those do not (coalescing budget, summary determinism, seeds).
"""

import numpy as np
import pytest
from numba import cuda

import puzzles
from helpers import check
from helpers.metrics import coalescing_by_line, ideal_sectors, sectors
from helpers.puzzle import Budget, Case, Puzzle


def test_sector_arithmetic():
    assert len(sectors(np.arange(32), 4)) == 4 and ideal_sectors(np.arange(32), 4) == 4
    assert len(sectors(np.arange(32) * 2, 4)) == 8  # stride 2: twice the sectors
    assert len(sectors(np.arange(32) * 32, 4)) == 32  # one sector per lane


@pytest.mark.parametrize("seed", range(6))
def test_coalescing_budget_rejects_the_naive_transpose(seed):
    naive = puzzles.get("ch06_transpose_naive").reference
    with pytest.raises(check.OverBudget) as e:
        puzzles.check("ch06_transpose_tiled", naive, seed=seed, gpu=False)
    assert e.value.field == "min_coalescing"
    assert "coalescing" in str(e.value) and "sectors" in str(e.value)
    for name in ("ch06_transpose_tiled", "ch06_transpose_coarse"):
        puzzles.check(name, puzzles.get(name).reference, seed=seed, gpu=False)


@cuda.jit
def _copy(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i]


@cuda.jit
def _copy_strided(out, a):
    i = cuda.grid(1)
    if i < a.size:
        j = (i * 32) % a.size + (i * 32) // a.size  # a permutation: neighbours 128 bytes apart
        out[j] = a[j]


def _copy_puzzle(budget):
    def cases(rng):
        return [
            Case(
                32, 32, {"out": np.zeros(1024, np.float32), "a": rng.standard_normal(1024).astype(np.float32)}
            )
            for _ in range(5)
        ]

    return Puzzle("copy", "Copy", "", ("out", "a"), ("out",), lambda a: a, cases, _copy, budget=budget)


def test_coalescing_of_a_known_pattern():
    p = _copy_puzzle(Budget(min_coalescing=0.9))
    launch, _ = check.run_case(p, _copy_strided, p.cases(np.random.default_rng(0))[0])
    eff = {arr: ideal / moved for (_, arr), (moved, ideal) in coalescing_by_line(launch.trace).items()}
    assert eff == {"a": 0.125, "out": 0.125}  # 32 lanes, 32 sectors, 4 needed
    check.check(p, _copy, seed=0, gpu=False)
    with pytest.raises(check.OverBudget):
        check.check(p, _copy_strided, seed=0, gpu=False)


def test_success_summary_is_deterministic_across_seeds():
    p = puzzles.get("pool")
    texts = {repr(check.check(p, p.reference, seed=s, gpu=False)) for s in range(4)}
    assert len(texts) == 1 and texts.pop().startswith("Passed: pool")


def test_failure_names_the_seed_that_repeats_it():
    @cuda.jit
    def off_by_one(out, a):
        i = cuda.threadIdx.x
        out[i] = a[i] + 11

    with pytest.raises(check.WrongAnswer) as e:
        puzzles.check("map", off_by_one, seed=1234, gpu=False)
    msg = str(e.value)
    assert "seed=1234" in msg and "expected" in msg and "puzzles.show('map', off_by_one" in msg


def test_outputs_are_fresh_and_poisoned_each_run():
    p = puzzles.get("map")
    case = p.cases(np.random.default_rng(0))[0]
    a1, _, out1, _ = check.prepare_args(p, case)
    a2, _, out2, _ = check.prepare_args(p, case)
    assert out1["out"] is not out2["out"] and np.isnan(out1["out"]).all()
    assert a1[1] is not case.args["a"]  # the kernel never sees the case's own input


def test_expect_failure_raises_when_nothing_fails():
    with pytest.raises(AssertionError, match="nothing failed"):
        check.expect_failure(check.WrongAnswer, lambda: None)
    with pytest.raises(AssertionError, match="expected WrongAnswer"):
        check.expect_failure(check.WrongAnswer, lambda: 1 / 0)
