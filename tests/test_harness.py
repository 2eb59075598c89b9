"""The harness itself: poisoning, fresh outputs, pristine inputs, budgets, verdict classes.

Puzzle-by-puzzle strictness lives in test_puzzles.py / test_strictness.py; this file
covers harness mechanisms those do not (coalescing budget, summary determinism, seeds).
"""

import types

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


# ---------------------------------------------------------------- bank conflicts, occupancy, choices

SIDE = 32
SIDE_PADDED = SIDE + 1


def _transpose_cases(rng):
    a = rng.uniform(-1, 1, (SIDE, SIDE)).astype(np.float32)
    return [Case(grid=1, block=(SIDE, SIDE), args={"out": np.empty_like(a), "a": a})]


WIDTH = SIDE


def _transpose(out, a):
    tile = cuda.shared.array((SIDE, WIDTH), np.float32)
    x, y = cuda.threadIdx.x, cuda.threadIdx.y
    tile[y, x] = a[y, x]
    cuda.syncthreads()
    out[y, x] = tile[x, y]  # down a column: 32 apart, one bank, unless the rows are padded


def _transposer(width):
    return cuda.jit(types.FunctionType(_transpose.__code__, {**globals(), "WIDTH": width}, "transpose"))


def test_bank_conflict_rule_names_the_line_the_array_and_the_view():
    from helpers.rules import max_bank_conflicts

    p = Puzzle(
        name="t_banks",
        title="t",
        statement="",
        outputs=("out",),
        spec=lambda a: a.T.copy(),
        cases=_transpose_cases,
        reference=_transposer(SIDE_PADDED),
        rules=(max_bank_conflicts(1),),
    )
    check.check(p, _transposer(SIDE_PADDED), seed=0, gpu=False)
    with pytest.raises(check.OverBudget) as info:
        check.check(p, _transposer(SIDE), seed=0, gpu=False)
    e = info.value
    assert (e.field, e.count, e.limit) == ("bank_conflicts", 32, 1)
    assert "shared `tile` needs 32 passes" in str(e) and "view='banks'" in str(e)
    assert "line " in str(e)


def test_t4_occupancy_names_the_resource_that_runs_out():
    from helpers.metrics import t4_occupancy

    assert t4_occupancy(128, 8 * 1024).fraction == 1.0  # 8 blocks of 4 warps
    o = t4_occupancy(64, 8 * 1024)
    assert (o.blocks_per_sm, o.fraction, o.limit) == (8, 0.5, "64 KiB of shared memory per SM")
    o = t4_occupancy(32)
    assert (o.blocks_per_sm, o.fraction, o.limit) == (16, 0.5, "16 blocks per SM")
    assert t4_occupancy(1024).limit == "1024 threads per SM" and t4_occupancy(1024).fraction == 1.0
    o = t4_occupancy(256, 0, registers=128)
    assert (o.blocks_per_sm, o.fraction, o.limit) == (2, 0.5, "65536 registers per SM")


BLOCK = 128  # the launch setting the learner chooses in the occupancy test below
STAGED = 2048


def _staged_cases(rng, BLOCK=BLOCK):
    a = rng.uniform(-1, 1, 3 * BLOCK - 5).astype(np.float32)
    return [Case(grid=3, block=BLOCK, args={"out": np.empty_like(a), "a": a, "size": a.size})]


def _staged(out, a, size):
    buf = cuda.shared.array(STAGED, np.float32)  # 8 KiB: eight blocks per SM
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + t
    if i < size:
        buf[t] = a[i]
        out[i] = buf[t] * 2


def _with_block(block):
    return cuda.jit(types.FunctionType(_staged.__code__, {**globals(), "BLOCK": block}, "staged"))


def test_choices_come_from_the_kernel_and_occupancy_is_checked_on_them():
    from helpers.rules import min_occupancy

    p = Puzzle(
        name="t_occupancy",
        title="t",
        statement="",
        outputs=("out",),
        spec=lambda a, size: a * 2,
        cases=_staged_cases,
        reference=cuda.jit(_staged),
        rules=(min_occupancy(1.0),),
        choices=("BLOCK",),
    )
    assert p.chosen(_with_block(256)) == {"BLOCK": 256}
    assert p.chosen(lambda out, a, size: None) == {"BLOCK": 128}  # not set: the reference's value
    for block in (128, 256):
        result = check.check(p, _with_block(block), seed=0, gpu=False)
        assert result.runs[0].case.block == block  # launched with the kernel's own BLOCK
    with pytest.raises(check.OverBudget) as info:
        check.check(p, _with_block(64), seed=0, gpu=False)
    e = info.value
    assert (e.field, e.count, e.limit) == ("occupancy", 0.5, 1.0)
    assert "blocks of 64 threads" in str(e) and "64 KiB of shared memory per SM" in str(e)
    assert "kernel[3, 64]" in str(e)


# ------------------------------------------------------------ issue 22 item 4: compute once


def test_spec_and_arguments_are_made_once_per_case_and_show_reads_the_record(monkeypatch):
    import dataclasses

    import puzzles
    from helpers import check as harness
    from helpers import runs

    p = puzzles.get("map")
    spec_calls, prepared = [], []

    def counting_spec(**kw):
        spec_calls.append(1)
        return p.spec(**kw)

    real_prepare = runs.prepare_args
    monkeypatch.setattr(harness, "prepare_args", lambda *a: prepared.append(1) or real_prepare(*a))
    counted = dataclasses.replace(p, spec=counting_spec)
    kept: list = []
    result = harness.check(counted, p.reference, seed=3, gpu=False, runs=kept)
    assert len(spec_calls) == len(prepared) == result.cases == len(kept)
    assert all(r.expected and r.wrong == {} for r in kept)


def test_a_failing_check_hands_over_its_records_and_show_frames_the_wrong_cells(monkeypatch):
    import puzzles
    from helpers import check as harness

    @cuda.jit
    def map_wrong_at_two(out, a):
        i = cuda.threadIdx.x
        out[i] = a[i] + (11 if i == 2 else 10)

    kept: list = []
    with pytest.raises(harness.WrongAnswer) as info:
        harness.check(puzzles.get("map"), map_wrong_at_two, seed=0, gpu=False, runs=kept)
    assert kept[-1] is info.value.run and kept[-1].wrong == {"out": [2]}
    with pytest.raises(harness.WrongAnswer):
        puzzles.check("map", map_wrong_at_two, seed=0)
    monkeypatch.setattr(harness, "expected", lambda *a: pytest.fail("show ran the spec again"))
    assert puzzles.wrong_cells(puzzles.last_run("map", map_wrong_at_two)) == {"out": [2]}


def test_check_py_is_split_and_keeps_its_public_names():
    from pathlib import Path

    import helpers.check as harness

    for name in (
        "check",
        "run_once",
        "run_case",
        "Result",
        "PuzzleFailure",
        "expect_failure",
        "CHECK_SECONDS",
        "compare",
        "expected",
        "prepare_args",
        "poison",
        "NotSolvedYet",
        "WrongAnswer",
        "OverBudget",
        "KernelDiagnosed",
        "CompileRejected",
        "InputModified",
        "GpuMismatch",
        "RunRecord",
    ):
        assert hasattr(harness, name), name
    helpers_dir = Path(harness.__file__).parent
    mine = (
        "check",
        "runs",
        "verdicts",
        "compare",
        "source",
        "orders",
        "float64",
        "puzzle",
        "ptx",
        "device",
        "advice",
    )
    files = [helpers_dir / f"{m}.py" for m in mine] + sorted((helpers_dir / "rules").glob("*.py"))
    long = [f.name for f in files if len(f.read_text().splitlines()) > 400]
    assert long == [], long


def test_per_thread_rule_values_are_computed_once_per_case(monkeypatch):
    """The maxima of a passing Result and the rules' own checks read one count per rule and case."""
    from helpers.sim.trace import Trace

    calls = []
    real = Trace.counts
    monkeypatch.setattr(Trace, "counts", lambda self, **kw: calls.append(kw) or real(self, **kw))
    p = puzzles.get("map")
    result = check.check(p, p.reference, seed=2, gpu=False)
    per_thread = [r for r in p.all_rules if r.per == "thread" and r.values is not None]
    assert len(calls) == len(per_thread) * result.cases
