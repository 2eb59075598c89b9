"""The generated notebooks: current, runnable, and strict where they should be.

(a) every generated file matches what `python -m helpers.nbbuild` would write;
(b) each exercise notebook runs top to bottom on this machine, and the only
    cells that raise are check cells of unsolved stubs, raising NotSolvedYet;
(c) the solution notebooks are run by nbval (pyproject testpaths, --nbval-lax)
    where any raising cell fails; nothing in them may switch that off.
"""
import os
import re
import time
import tomllib
from pathlib import Path

import nbformat
import pytest

from helpers import nbbuild

ROOT = Path(__file__).resolve().parents[1]
STEMS = [p.stem for p in nbbuild.sources(ROOT)]
CELL_TIMEOUT = 120
# A notebook is meant to run in well under 40 s on the simulator; this catches runaways.
NOTEBOOK_BUDGET_S = float(os.environ.get("MP_NOTEBOOK_BUDGET_S", 120))
NBVAL_OPT_OUTS = ("raises-exception", "nbval-skip", "nbval-raises-exception")


def test_generated_files_are_current():
    bad = nbbuild.stale(ROOT)
    assert not bad, "stale: " + ", ".join(bad) + "\nrun `python -m helpers.nbbuild` and commit the result"


def _errors(nb):
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            for out in cell.get("outputs", []):
                if out.output_type == "error":
                    yield i, cell, out


def _mentions(source, *names):
    return any(re.search(rf"(?<![\w.]){re.escape(n)}\b|[\"']{re.escape(n)}[\"']", source) for n in names)


@pytest.mark.parametrize("stem", STEMS)
def test_exercise_notebook_runs(stem):
    from nbclient import NotebookClient

    path = ROOT / "notebooks" / f"{stem}.ipynb"
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, startup_timeout=120, kernel_name="python3",
                            allow_errors=True, resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    print(f"{stem}: {elapsed:.1f} s")

    bad = []
    raised = set()
    for i, cell, out in _errors(nb):
        if out.ename == "NotSolvedYet" and "check(" in cell.source:
            raised.add(i)
        else:
            bad.append(f"cell {i} raised {out.ename}: {out.evalue}\n    {cell.source[:300]}")
    assert not bad, f"{path.name}: only check cells of unsolved stubs may raise (NotSolvedYet):\n" + \
        "\n".join(bad)

    # Each stub's check cell must say NotSolvedYet: an untouched stub that passes or fails
    # differently means the stub gives the answer away or does not run.
    cells = nbbuild.parse((ROOT / "notebooks" / "src" / f"{stem}.py").read_text(), stem)
    for k, c in enumerate(cells):
        if c.kind != "kernel" or "# FILL ME IN" not in nb.cells[k].source:
            continue
        fn = re.search(r"def\s+(\w+)", nb.cells[k].source).group(1)
        hits = [j for j in raised if j > k and _mentions(nb.cells[j].source, c.arg, fn)]
        assert hits, (f"{path.name}: the stub of {c.arg!r} (cell {k}, {fn}) has no check cell "
                      "that raised NotSolvedYet")
    assert elapsed < NOTEBOOK_BUDGET_S, f"{path.name} took {elapsed:.0f} s (budget {NOTEBOOK_BUDGET_S:.0f} s)"


@pytest.mark.parametrize("stem", STEMS)
def test_no_cell_opts_out_of_nbval(stem):
    """nbval passes a raises-exception cell whether or not it raises, and skips nbval-skip cells."""
    for path in nbbuild.notebook_paths(ROOT, stem):
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            tags = set(cell.metadata.get("tags", ()))
            assert not tags & set(NBVAL_OPT_OUTS), f"{path.name} cell {i} has tags {sorted(tags)}"
            assert "NBVAL_" not in cell.source, f"{path.name} cell {i} has an nbval comment marker"


def test_pytest_runs_the_solution_notebooks():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "notebooks/solutions" in cfg["testpaths"]
    assert "--nbval-lax" in cfg["addopts"].split()
