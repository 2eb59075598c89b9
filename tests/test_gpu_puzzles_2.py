"""GPU Puzzles II (puzzles/gpu_puzzles_2), beyond what tests/test_exercises.py checks for every
puzzle: fifteen puzzles in notebook order, at least five mutants and two variants each, hints that
do not give a solution line away, random cases of several shapes, and the occupancy puzzle's block
size taken from the learner's kernel."""

import numpy as np
import pytest
from support import controls

import puzzles
from helpers.check import OverBudget, check
from helpers.puzzle import BEGIN, END

CHAPTER = "puzzles-2"
NAMES = puzzles.names(CHAPTER)


def test_fifteen_puzzles_in_notebook_order():
    assert len(NAMES) == 15, NAMES
    modules = [puzzles.module_of(n) for n in NAMES]
    assert modules == sorted(modules) and all(m.startswith("puzzles.gpu_puzzles_2.q") for m in modules)


@pytest.mark.parametrize("name", NAMES)
def test_enough_mutants_variants_and_hints(name):
    p = puzzles.get(name)
    c = controls(puzzles.module_of(name))
    assert len(c.MUTANTS[name]) >= 5 and len(c.VARIANTS[name]) >= 2
    assert len({m[0] for m in c.MUTANTS[name]}) == len(c.MUTANTS[name])
    assert p.title.startswith("Puzzle II.") and len(p.hints) >= 3 and len(p.statement) > 150
    solution = p.source.split(BEGIN, 1)[1].split(END, 1)[0]
    for h in p.hints:
        for ln in solution.splitlines():
            ln = ln.strip()
            assert len(ln) <= 12 or ln not in h, f"hint gives away `{ln}`"


@pytest.mark.parametrize("name", NAMES)
def test_cases_are_random_and_vary(name):
    p = puzzles.get(name)
    a, b = p.cases(np.random.default_rng(0)), p.cases(np.random.default_rng(1))
    assert len(a) >= 5
    inputs = [k for k in p.signature if k not in p.outputs and k not in p.scratch]
    first = [a[0].args[k] for k in inputs if isinstance(a[0].args[k], np.ndarray)][0]
    again = [b[0].args[k] for k in inputs if isinstance(b[0].args[k], np.ndarray)][0]
    assert not np.array_equal(first, again)
    shapes = {
        tuple(np.shape(v))
        for c in a
        for k, v in c.args.items()
        if isinstance(v, np.ndarray) and k not in p.outputs and k not in p.scratch
    }
    assert len(shapes) >= 3


def test_occupancy_launches_with_the_learner_s_block():
    p = puzzles.get("occupancy")
    c = controls(puzzles.module_of("occupancy"))
    kernels = dict(c.VARIANTS["occupancy"]) | {m[0]: m[1] for m in c.MUTANTS["occupancy"]}
    result = check(p, kernels["block_of_256"], seed=0, gpu=False)
    assert {r.case.block for r in result.runs} == {256}
    with pytest.raises(OverBudget, match=r"blocks of 64 threads using 8192 bytes.*64 KiB of shared memory"):
        check(p, kernels["block_of_64"], seed=0, gpu=False)


# ---------------------------------------------------------------------------- issue 23, on every seed

# (puzzle, mutant): the known-wrong kernels added for issue 23, each rejected for its registered
# reason on seeds 0-9 (their puzzles' SEEDS run only 0-2): an earlier batch's counts erased by a
# kernel that clears `out` (class 2: `out` starts non-zero), a contiguous chunk per thread where the
# statement asks for a grid-stride loop (class 5), a last-block reduction with no ticket (class 4)
ISSUE_23 = [
    ("histogram", "clears_out_first"),
    ("match_any", "clears_out_first"),
    ("occupancy", "clears_out_first"),
    ("occupancy", "contiguous_keys"),
    ("occupancy", "contiguous_keys_1024"),
    ("grid_sync", "contiguous_chunks"),
    ("last_block", "every_block_adds_up"),
]


@pytest.mark.parametrize("name,mutant", ISSUE_23, ids=[f"{n}-{m}" for n, m in ISSUE_23])
def test_issue_23_mutants_fail_on_every_seed(name, mutant):
    from helpers.check import KernelDiagnosed

    entry = next(m for m in controls(puzzles.module_of(name)).MUTANTS[name] if m[0] == mutant)
    _, kernel, exc, detail = entry
    for seed in range(10):
        with pytest.raises(exc) as info:
            check(puzzles.get(name), kernel, seed=seed, gpu=False)
        assert type(info.value) is exc, f"{mutant} (seed {seed}): {info.value}"
        if exc is KernelDiagnosed:
            allowed = detail if isinstance(detail, tuple) else (detail,)
            assert type(info.value.diagnostic) in allowed, f"{mutant} (seed {seed}): {info.value}"
        elif exc is OverBudget:
            assert info.value.field == detail, f"{mutant} (seed {seed}): {info.value}"


@pytest.mark.parametrize("name", ["histogram", "match_any", "occupancy"])
def test_histograms_add_to_earlier_counts(name):
    """`out` starts at earlier batches' counts (never all zero), and the truth is those plus this
    launch's: a kernel that writes its counts with `=`, or clears `out`, cannot pass by luck."""
    p = puzzles.get(name)
    assert p.accumulate == ("out",) and not p.zeroed
    for case in p.cases(np.random.default_rng(0)):
        start = case.args["out"]
        assert start.min() > 0
        keys = case.args["keys"]
        want = p.spec(out=start.copy(), keys=keys, size=keys.size)
        assert np.array_equal(want - start, np.bincount(keys, minlength=start.size))
