"""The exercises for many ranks (puzzles/dist/, checked on helpers.dist's in-process ranks), as
tests/test_exercises.py does for kernels: the reference passes on its seeds, the stub is
NotSolvedYet, every mutant (tests/mutants/dist/) is rejected for its stated reason on every seed,
every variant passes. Then the checker's own diagnostics, each named with rank, line and fix."""

from __future__ import annotations

import pytest
from support import controls

from helpers.check import KernelDiagnosed, NotSolvedYet, PuzzleFailure
from puzzles import dist

NAMES = dist.names()
CONTROLS = {n: controls(dist.module_of(n)) for n in NAMES}


def seeds(name):
    return tuple(CONTROLS[name].SEEDS.get(name, (0,)))


def stub(ex):
    """The learner's stub, compiled in a copy of its module's globals, as a notebook cell would."""
    import linecache
    import sys

    module = sys.modules[ex.reference.__module__]
    filename = f"<stub {ex.name}>"
    linecache.cache[filename] = (len(ex.stub), None, ex.stub.splitlines(keepends=True), filename)
    namespace = dict(vars(module))
    exec(compile(ex.stub, filename, "exec"), namespace)
    return namespace[ex.reference.__name__]


@pytest.mark.parametrize("name", NAMES)
def test_reference_passes(name):
    for seed in seeds(name):
        assert repr(dist.check(name, dist.get(name).reference, seed=seed)).startswith(f"Passed: {name}")


@pytest.mark.parametrize("name", NAMES)
def test_stub_is_not_solved(name):
    with pytest.raises(NotSolvedYet):
        dist.check(name, stub(dist.get(name)), seed=seeds(name)[0])


@pytest.mark.parametrize(
    "name,mutant,fn,exc,detail",
    [pytest.param(n, *m, id=f"{n}-{m[0]}") for n in NAMES for m in CONTROLS[n].MUTANTS.get(n, ())],
)
def test_mutant_is_rejected_for_the_right_reason(name, mutant, fn, exc, detail):
    for seed in seeds(name):
        with pytest.raises(PuzzleFailure) as info:
            dist.check(name, fn, seed=seed)
        got = info.value
        assert type(got) is exc, f"{mutant} (seed {seed}): {got}"
        if exc is KernelDiagnosed:
            assert type(got.diagnostic) is detail, f"{mutant} (seed {seed}): {got}"
        assert "rank " in str(got), f"{mutant}: the message names no rank: {got}"


@pytest.mark.parametrize(
    "name,variant,fn",
    [pytest.param(n, *v, id=f"{n}-{v[0]}") for n in NAMES for v in CONTROLS[n].VARIANTS.get(n, ())],
)
def test_correct_variant_passes(name, variant, fn):
    for seed in seeds(name):
        dist.check(name, fn, seed=seed)


def test_every_exercise_has_mutants_and_variants():
    for n in NAMES:
        assert len(CONTROLS[n].MUTANTS.get(n, ())) >= 2 and len(CONTROLS[n].VARIANTS.get(n, ())) >= 2, n
