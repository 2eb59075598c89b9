"""Adding an exercise is writing two files: its module and its mutants file. A throwaway exercise
in temporary packages is registered, listed, checked (reference, stub, mutant) and shown."""

from __future__ import annotations

import sys
import textwrap

import matplotlib
import pytest

matplotlib.use("Agg")

from support import controls, stub_kernel  # noqa: E402

import puzzles  # noqa: E402
from helpers.check import NotSolvedYet, OverBudget, check  # noqa: E402

MODULE = '''
"""A throwaway exercise: out[i] = 2 * a[i]."""
import numpy as np
from numba import cuda

from helpers.puzzle import Budget, Case, Puzzle


@cuda.jit
def twice_kernel(out, a, n):
    i = cuda.grid(1)
    ### BEGIN SOLUTION
    if i < n:
        out[i] = 2 * a[i]
    ### END SOLUTION


def cases(rng):
    out = []
    for n in (1, 31, 32, 33, 70):
        a = rng.normal(size=n).astype(np.float32)
        out.append(Case((n + 31) // 32, 32, {"out": np.empty(n, np.float32), "a": a, "n": n}))
    return out


PUZZLES = [Puzzle(name="tmp_twice", title="Twice", statement="Double it.", outputs=("out",),
                  spec=lambda a, n: 2 * a, cases=cases, reference=twice_kernel,
                  budget=Budget(global_reads=1, global_writes=1), chapter="tmp")]
'''

MUTANTS = """
from numba import cuda

from helpers.check import OverBudget


@cuda.jit
def twice_reads_twice(out, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + a[i]


@cuda.jit
def twice_plus(out, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] * 2.0


MUTANTS = {"tmp_twice": [("reads_twice", twice_reads_twice, OverBudget, "global_reads")]}
VARIANTS = {"tmp_twice": [("times_two_float", twice_plus)]}
"""


@pytest.fixture
def throwaway(tmp_path, monkeypatch):
    """tmp/tmp_exercises/extra/tmp_twice.py and tmp/tmp_mutants/extra/tmp_twice.py, both importable,
    the first on the registry's search path."""
    for pkg, text in (("tmp_exercises", MODULE), ("tmp_mutants", MUTANTS)):
        d = tmp_path / pkg / "extra"
        d.mkdir(parents=True)
        (tmp_path / pkg / "__init__.py").write_text("")
        (d / "__init__.py").write_text("")
        (d / "tmp_twice.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(puzzles, "SEARCH", [*puzzles.SEARCH, "tmp_exercises"])
    puzzles.reload()
    yield
    puzzles.reload()
    for name in [m for m in sys.modules if m.startswith(("tmp_exercises", "tmp_mutants"))]:
        del sys.modules[name]


def test_a_throwaway_exercise_is_listed_checked_and_shown(throwaway):
    assert "tmp_twice" in puzzles.names() and puzzles.names("tmp") == ["tmp_twice"]
    assert puzzles.module_of("tmp_twice") == "tmp_exercises.extra.tmp_twice"
    p = puzzles.get("tmp_twice")
    assert p.signature == ("out", "a", "n")  # read from the reference kernel
    result = puzzles.check("tmp_twice", p.reference, seed=0, gpu=False)
    assert result.cases == 5
    fig = puzzles.show("tmp_twice", p.reference, view="counts")  # drawn from the check's run
    assert "Twice" in fig.get_suptitle()
    with pytest.raises(NotSolvedYet):
        check(p, stub_kernel(p), seed=0, gpu=False)
    c = controls(puzzles.module_of("tmp_twice"), package="tmp_mutants")
    ((label, kernel, exc, detail),) = c.MUTANTS["tmp_twice"]
    with pytest.raises(exc) as info:
        puzzles.check("tmp_twice", kernel, seed=0, gpu=False)
    assert exc is OverBudget and info.value.field == detail
    for _, kernel in c.VARIANTS["tmp_twice"]:
        puzzles.check("tmp_twice", kernel, seed=0, gpu=False)


def test_without_the_search_path_it_is_not_there():
    puzzles.reload()
    assert "tmp_twice" not in puzzles.names()


def test_show_reuses_the_run_check_made(throwaway, monkeypatch):
    from helpers import check as harness

    p = puzzles.get("tmp_twice")
    puzzles.check("tmp_twice", p.reference, seed=4, gpu=False)
    monkeypatch.setattr(harness, "run_once", lambda *a, **k: pytest.fail("show ran the kernel again"))
    puzzles.show("tmp_twice", p.reference, case=3)
    with pytest.raises(OverBudget) as info:
        c = controls(puzzles.module_of("tmp_twice"), package="tmp_mutants")
        puzzles.check("tmp_twice", c.MUTANTS["tmp_twice"][0][1], seed=4, gpu=False)
    assert info.value.run.case_index == 0 and info.value.run.trace is not None
    puzzles.show("tmp_twice", c.MUTANTS["tmp_twice"][0][1], view="counts")  # the failing run, not a new one
