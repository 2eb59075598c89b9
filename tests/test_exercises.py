"""Every registered puzzle, one way: the reference passes on its seeds, the stub is NotSolvedYet,
each mutant in its module's mutants file (tests/mutants/<subpackage>/<module>.py) is rejected for
its stated reason on every seed, each variant passes, and each view renders to a Figure."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from support import controls, stub_kernel  # noqa: E402

import puzzles  # noqa: E402
from helpers import viz  # noqa: E402
from helpers.check import KernelDiagnosed, NotSolvedYet, OverBudget, check, run_once  # noqa: E402
from helpers.puzzle import BEGIN, END  # noqa: E402

NAMES = puzzles.names()
CONTROLS = {n: controls(puzzles.module_of(n)) for n in NAMES}
# puzzles whose modules have no mutants file yet keep their chapter tests' seed
DEFAULT_SEEDS = {"puzzles.pmpp.ch0": (11,), "puzzles.pmpp.ch1": (3,)}
for _m in ("ch06", "ch07", "ch08", "ch09"):
    DEFAULT_SEEDS[f"puzzles.pmpp.{_m}"] = (3,)


def seeds(name: str) -> tuple:
    c = CONTROLS[name]
    if name in c.SEEDS:
        return tuple(c.SEEDS[name])
    mod = puzzles.module_of(name)
    return next((s for prefix, s in DEFAULT_SEEDS.items() if mod.startswith(prefix)), (0,))


def assert_rejected(name: str, mutant: str, kernel, exc, detail, seed: int) -> None:
    with pytest.raises(exc) as info:
        check(puzzles.get(name), kernel, seed=seed, gpu=False)
    assert type(info.value) is exc, f"{mutant} (seed {seed}): {info.value}"
    if exc is KernelDiagnosed:
        allowed = detail if isinstance(detail, tuple) else (detail,)
        assert type(info.value.diagnostic) in allowed, f"{mutant} (seed {seed}): {info.value}"
    elif exc is OverBudget:
        assert info.value.field == detail, f"{mutant} (seed {seed}): {info.value}"


@pytest.mark.parametrize("name", NAMES)
def test_reference_passes(name):
    for seed in seeds(name):
        result = check(puzzles.get(name), puzzles.get(name).reference, seed=seed, gpu=False)
        assert repr(result).startswith(f"Passed: {name}") and len(result.runs) == result.cases


@pytest.mark.parametrize("name", [n for n in NAMES if BEGIN in puzzles.get(n).source])
def test_stub_is_not_solved(name):
    p = puzzles.get(name)
    assert "FILL ME IN" in p.stub and BEGIN not in p.stub and END not in p.stub
    with pytest.raises(NotSolvedYet):
        check(p, stub_kernel(p), seed=seeds(name)[0], gpu=False)


@pytest.mark.parametrize(
    "name,mutant,kernel,exc,detail",
    [pytest.param(n, *m, id=f"{n}-{m[0]}") for n in NAMES for m in CONTROLS[n].MUTANTS.get(n, ())],
)
def test_mutant_is_rejected_for_the_right_reason(name, mutant, kernel, exc, detail):
    for seed in seeds(name):
        assert_rejected(name, mutant, kernel, exc, detail, seed)


@pytest.mark.parametrize(
    "name,variant,kernel",
    [pytest.param(n, *v, id=f"{n}-{v[0]}") for n in NAMES for v in CONTROLS[n].VARIANTS.get(n, ())],
)
def test_correct_variant_passes(name, variant, kernel):
    for seed in seeds(name):
        check(puzzles.get(name), kernel, seed=seed, gpu=False)


@pytest.mark.parametrize("name", [n for n in NAMES if BEGIN in puzzles.get(n).source])
def test_every_exercise_with_a_mutants_file_has_two_mutants(name):
    c = CONTROLS[name]
    if not (c.MUTANTS or c.VARIANTS):
        pytest.skip(f"{puzzles.module_of(name)}: mutants still in its chapter test file")
    assert len(c.MUTANTS.get(name, ())) >= 2, name


def test_mutants_files_name_registered_puzzles():
    for n, c in CONTROLS.items():
        for key in (*c.MUTANTS, *c.VARIANTS, *c.SEEDS):
            assert puzzles.module_of(key) == puzzles.module_of(n), f"{key} is not in {puzzles.module_of(n)}"


@pytest.mark.parametrize("name", NAMES)
def test_every_view_renders(name):
    p = puzzles.get(name)
    run = run_once(p, p.reference)  # one simulation, every view drawn from it
    for view in viz.VIEWS:
        fig = viz.draw(run, view)
        assert isinstance(fig, matplotlib.figure.Figure) and fig.get_suptitle()
