"""The 14 GPU puzzles: registered in order, enough mutants and variants, and the cases follow the
course's conventions. (References, stubs, mutants, variants and views: tests/test_exercises.py.)"""

import numpy as np
import pytest
from support import controls

import puzzles
from helpers.check import run_case
from helpers.puzzle import BEGIN, END

NAMES = [
    "map",
    "zip",
    "guard",
    "map_2d",
    "broadcast",
    "blocks",
    "blocks_2d",
    "shared",
    "pool",
    "dot",
    "conv",
    "prefix_sum",
    "axis_sum",
    "matmul",
]


def test_the_fourteen_are_registered_in_order():
    assert puzzles.names("puzzles") == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_at_least_five_cases(name):
    assert len(puzzles.get(name).cases(np.random.default_rng(0))) >= 5


@pytest.mark.parametrize("name", NAMES)
def test_enough_mutants_and_variants(name):
    c = controls(puzzles.module_of(name))
    assert len(c.MUTANTS[name]) >= 5
    assert len(c.VARIANTS[name]) >= 2
    assert len({m[0] for m in c.MUTANTS[name]}) == len(c.MUTANTS[name])


# ---------------------------------------------------------------- the cases themselves


def _inputs(p, case):
    return {k: v for k, v in case.args.items() if isinstance(v, np.ndarray) and k not in p.outputs}


def _threads(block):
    return int(np.prod(block))


@pytest.mark.parametrize("name", NAMES)
def test_cases_are_random_and_unpredictable(name):
    p = puzzles.get(name)
    cases = p.cases(np.random.default_rng(0))
    assert len(cases) >= 5
    for case in cases:
        ins = _inputs(p, case)
        assert ins
        for arr_name, x in ins.items():
            flat = x.ravel().astype(np.float64)
            assert x.dtype == np.float32
            assert flat[0] != 0, f"{arr_name} is zero at index 0"
            if flat.size > 1:
                assert not np.all(flat == flat[0]), f"{arr_name} is constant"
                assert not np.array_equal(flat, np.arange(flat.size)), f"{arr_name} is arange"
                assert np.any(flat != np.round(flat)), f"{arr_name} holds only integers"
        allv = np.concatenate([x.ravel() for x in ins.values()])
        if allv.size >= 4:
            assert (allv < 0).any() and (allv > 0).any(), "inputs should have both signs"
        arrays = list(ins.values())
        for i, x in enumerate(arrays):
            for y in arrays[i + 1 :]:
                if x.size > 1 and x.shape == y.shape:
                    assert not np.array_equal(x, y)
                if x.ndim == 2 and x.shape == y.T.shape and x.size > 1:
                    assert not np.array_equal(x, y.T)
    # a different seed gives different data
    again = p.cases(np.random.default_rng(1))
    first = next(iter(_inputs(p, cases[0]).values()))
    assert not np.array_equal(first, next(iter(_inputs(p, again[0]).values())))


@pytest.mark.parametrize("name", NAMES)
def test_cases_vary_the_launch(name):
    p = puzzles.get(name)
    cases = p.cases(np.random.default_rng(0))
    shapes = [next(iter(_inputs(p, c).values())).shape for c in cases]
    assert len(set(shapes)) >= 3, "sizes should change from case to case"
    grids = [int(np.prod(c.grid)) for c in cases]
    if max(grids) > 1:  # a puzzle with blocks: several blocks, partial last blocks, a single one too
        assert any(g >= 2 for g in grids)
        n = [c.args.get("size", c.args.get("a_size")) for c in cases]
        bx = [c.block if isinstance(c.block, int) else c.block[0] for c in cases]
        assert any(s % b for s, b in zip(n, bx)), "some size should not be a multiple of the block"


def test_specific_case_rules():
    rng = np.random.default_rng
    for c in puzzles.get("guard").cases(rng(0)):
        assert _threads(c.block) > c.args["size"]
    for name in ("map_2d", "broadcast"):
        for c in puzzles.get(name).cases(rng(0)):
            assert min(c.block) > c.args["size"]
        assert any(c.block[0] != c.block[1] for c in puzzles.get(name).cases(rng(0)))
    for c in puzzles.get("blocks").cases(rng(0)):
        assert c.grid * c.block >= c.args["size"] > (c.grid - 1) * c.block
    assert any(c.block[0] != c.block[1] for c in puzzles.get("blocks_2d").cases(rng(0)))
    assert any(c.args["a"].shape[0] != c.args["a"].shape[1] for c in puzzles.get("axis_sum").cases(rng(0)))
    conv = puzzles.get("conv").cases(rng(0))
    assert len({c.args["b_size"] for c in conv}) >= 3
    assert all(np.all(c.args["b"] != 0) for c in conv)
    mm = puzzles.get("matmul").cases(rng(0))
    assert mm[0].grid == (1, 1) and any(np.prod(c.grid) >= 4 and c.args["size"] % 8 for c in mm)
    assert len({c.args["a"].size for c in puzzles.get("map").cases(rng(0))}) >= 5


# ---------------------------------------------------------------- statements, hints, budgets


@pytest.mark.parametrize("name", NAMES)
def test_statement_and_hints(name):
    p = puzzles.get(name)
    assert p.chapter == "puzzles" and p.title.startswith("Puzzle")
    assert len(p.statement) > 150
    assert len(p.hints) >= 3
    solution = p.source.split(BEGIN, 1)[1].split(END, 1)[0]
    # lines that compute something (the barrier itself is taught in the statements)
    lines = [
        ln.strip()
        for ln in solution.splitlines()
        if len(ln.strip()) > 12 and ln.strip() != "cuda.syncthreads()"
    ]
    for h in p.hints:
        for ln in lines:
            assert ln not in h, f"hint gives away `{ln}`"
    assert "Hint 3" in p.hint(3)


@pytest.mark.parametrize("name", NAMES)
def test_budgets_are_tight_for_the_reference(name):
    """Every limit is exactly what the reference needs on some case: no slack to hide a worse kernel."""
    p = puzzles.get(name)
    fields = {
        "global_reads": ("global", 0),
        "global_writes": ("global", 1),
        "shared_reads": ("shared", 0),
        "shared_writes": ("shared", 1),
    }
    assert p.budget.global_reads is not None and p.budget.global_writes is not None
    hit = {f: False for f in fields}
    hit["shared_bytes"] = False
    for case in p.cases(np.random.default_rng(0)):
        launch = run_case(p, p.reference, case)[0]
        for f, (space, kind) in fields.items():
            limit = getattr(p.budget, f)
            if limit is None:
                continue
            limit = limit(case) if callable(limit) else limit
            m = int(launch.trace.counts(space=space, kind=kind).max())
            assert m <= limit
            hit[f] |= m == limit
        if p.budget.shared_bytes is not None:
            assert launch.shared_bytes <= p.budget.shared_bytes
            hit["shared_bytes"] |= launch.shared_bytes == p.budget.shared_bytes
    for f in hit:
        if getattr(p.budget, f) is not None:
            assert hit[f], f"{f} budget is looser than the reference needs"
