"""Adding an exercise is writing two files: its op file and its mutants file. A throwaway op file in a
temporary chapter package is registered, listed, checked (reference, stub, mutant, variant), shown,
counted by the summary and built into a notebook."""

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
    """tmp/tmp_exercises/extra/tmp_twice.py (an op file in the chapter package `extra`) and
    tmp/tmp_mutants/extra/tmp_twice.py, both importable, the first on the registry's search path."""
    for pkg, text in (("tmp_exercises", MODULE), ("tmp_mutants", MUTANTS)):
        d = tmp_path / pkg / "extra"
        d.mkdir(parents=True)
        (tmp_path / pkg / "__init__.py").write_text("")
        (d / "__init__.py").write_text('"""A throwaway chapter: tmp_twice.py doubles."""\nCHAPTER = "tmp"\n')
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


def test_a_throwaway_exercise_is_counted_and_built_into_a_notebook(throwaway, tmp_path, monkeypatch):
    """The summary counts its mutant (the table tools.nbbuild builds from the mutants files), and the
    notebook builder makes its statement and kernel cells: the stub for learners, the reference in
    the solutions."""
    import nbformat

    from tools import mutant_kinds, nbbuild

    table = mutant_kinds.kinds(tmp_path, "tmp_mutants")
    assert table == {"tmp_twice": ["over budget: global reads"]}
    monkeypatch.setattr(puzzles, "_KINDS", dict(table))
    monkeypatch.setattr(puzzles, "_PASSED", set())
    puzzles.check("tmp_twice", puzzles.get("tmp_twice").reference, seed=0, gpu=False)
    text = puzzles.summary_text("tmp")
    assert "1 of 1 puzzles passed: tmp_twice" in text
    assert "rejects the 1 known-wrong kernels" in text and "over budget: global reads (1)" in text

    course = tmp_path / "course"
    (course / "notebooks" / "src").mkdir(parents=True)
    (course / "notebooks" / "src" / "01_tmp.py").write_text(
        "# %% [markdown]\n# # Twice\n# %% setup\n# %% [markdown] statement:tmp_twice\n# %% kernel:tmp_twice\n"
        "# %%\npuzzles.check('tmp_twice', twice_kernel)\n"
    )
    assert nbbuild.build(course) == ["notebooks/01_tmp.ipynb", "notebooks/solutions/01_tmp.ipynb"]
    learner, solution = (nbformat.read(p, as_version=4) for p in nbbuild.notebook_paths(course, "01_tmp"))
    assert learner.cells[2].source == "### Twice\n\nDouble it." == solution.cells[2].source
    assert "# FILL ME IN" in learner.cells[3].source and "2 * a[i]" not in learner.cells[3].source
    assert "out[i] = 2 * a[i]" in solution.cells[3].source and "BEGIN" not in solution.cells[3].source
