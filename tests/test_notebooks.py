"""The generated notebooks: current, runnable, and strict where they should be.

(a) every generated file matches what `python -m tools.nbbuild` would write;
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

from tools import nbbuild

ROOT = Path(__file__).resolve().parents[1]
STEMS = [p.stem for p in nbbuild.sources(ROOT)]
CELL_TIMEOUT = 120
# A notebook is meant to run in well under 40 s on the simulator; this catches runaways.
NOTEBOOK_BUDGET_S = float(os.environ.get("MP_NOTEBOOK_BUDGET_S", 120))
NBVAL_OPT_OUTS = ("raises-exception", "nbval-skip", "nbval-raises-exception")


def test_generated_files_are_current():
    bad = nbbuild.stale(ROOT)
    assert not bad, "stale: " + ", ".join(bad) + "\nrun `python -m tools.nbbuild` and commit the result"


def _mentions(source, *names):
    return any(re.search(rf"(?<![\w.]){re.escape(n)}\b|[\"']{re.escape(n)}[\"']", source) for n in names)


def exercise_problems(nb, cells) -> list:
    """What is wrong with an executed exercise notebook `nb`, built from source `cells`.

    The only cells allowed to raise are check cells (`check(` in them) raising NotSolvedYet,
    and every stubbed kernel must have such a check cell after it: an untouched stub that
    passes, or fails some other way, gives the answer away or does not run.
    """
    problems, raised = [], set()
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else ():
            if out.output_type != "error":
                continue
            if out.ename == "NotSolvedYet" and "check(" in cell.source:
                raised.add(i)
            else:
                problems.append(f"cell {i} raised {out.ename}: {out.evalue}\n    {cell.source[:300]}")
    shown = [c for c in cells if not c.solutions_only]  # the exercise version's cells, in order
    for k, c in enumerate(shown):
        if c.kind != "kernel" or "# FILL ME IN" not in nb.cells[k].source:
            continue
        fn = re.search(r"def\s+(\w+)", nb.cells[k].source).group(1)
        if not any(j > k and _mentions(nb.cells[j].source, c.arg, fn) for j in raised):
            problems.append(
                f"the stub of {c.arg!r} (cell {k}, {fn}) has no check cell that raised NotSolvedYet"
            )
    return problems


@pytest.mark.parametrize("stem", STEMS)
def test_exercise_notebook_runs(stem):
    from nbclient import NotebookClient

    path = ROOT / "notebooks" / f"{stem}.ipynb"
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        startup_timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    print(f"{stem}: {elapsed:.1f} s")
    cells = nbbuild.parse((ROOT / "notebooks" / "src" / f"{stem}.py").read_text(), stem)
    problems = exercise_problems(nb, cells)
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
    assert elapsed < NOTEBOOK_BUDGET_S, f"{path.name} took {elapsed:.0f} s (budget {NOTEBOOK_BUDGET_S:.0f} s)"


def _executed(check_error=("NotSolvedYet", "check('demo', demo_kernel)"), extra_error=None):
    """A tiny executed exercise notebook and its source cells, without running a kernel."""
    from nbformat import v4

    src = (
        "# %% [markdown]\n# # T\n# %% setup\n# %% kernel:demo\n"
        "# %%\nx = 1\n# %%\ncheck('demo', demo_kernel)\n"
    )
    cells = nbbuild.parse(src)
    nb = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# T"),
            v4.new_code_cell("import helpers"),
            v4.new_code_cell("def demo_kernel(out, a):\n    # FILL ME IN (roughly 1 line)\n    pass"),
            v4.new_code_cell("x = 1"),
            v4.new_code_cell(check_error[1] if check_error else "check(1)"),
        ]
    )
    if check_error:
        nb.cells[4].outputs = [v4.new_output("error", ename=check_error[0], evalue="", traceback=[])]
    if extra_error:
        nb.cells[3].outputs = [v4.new_output("error", ename=extra_error, evalue="", traceback=[])]
    return nb, cells


def test_exercise_rules_accept_a_stub_whose_check_says_not_solved():
    assert exercise_problems(*_executed()) == []
    assert exercise_problems(*_executed(check_error=("NotSolvedYet", 'puzzles.check("demo", k)'))) == []


@pytest.mark.parametrize(
    "kw, expect",
    [
        ({"check_error": ("WrongAnswer", "check('demo', demo_kernel)")}, "cell 4 raised WrongAnswer"),
        ({"check_error": None}, "the stub of 'demo' (cell 2, demo_kernel) has no check cell"),
        ({"check_error": ("NotSolvedYet", "check('other', other_kernel)")}, "has no check cell"),
        ({"extra_error": "NameError"}, "cell 3 raised NameError"),
        ({"extra_error": "NotSolvedYet"}, "cell 3 raised NotSolvedYet"),  # not a check cell
    ],
)
def test_exercise_rules_reject(kw, expect):
    problems = exercise_problems(*_executed(**kw))
    assert any(expect in p for p in problems), problems


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


def test_parallel_run_keeps_each_notebook_on_one_worker(tmp_path):
    """With -n 2, nbval cells that depend on earlier cells pass, and a raising cell fails."""
    import shutil
    import subprocess
    import sys

    from nbformat import v4

    for f in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / f, tmp_path / f)
    (tmp_path / "tests").mkdir()
    plain = "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
    (tmp_path / "tests" / "test_plain.py").write_text(plain)
    sols = tmp_path / "notebooks" / "solutions"
    sols.mkdir(parents=True)
    chain = ["import os\npid = os.getpid()", "n = 1", "n += 1\nassert pid == os.getpid()", "assert n == 2"]
    notebooks = {"a": chain, "b": chain, "c": ["x = 1", "raise ValueError('a failing solution cell')"]}
    for name, cells in notebooks.items():
        nb = v4.new_notebook(cells=[v4.new_code_cell(c) for c in cells])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, sols / f"{name}.ipynb")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = r.stdout.strip().splitlines()[-1]
    assert "1 failed, 11 passed" in summary, r.stdout[-3000:]
    assert "FAILED notebooks/solutions/c.ipynb::Cell 1" in r.stdout


def test_what_shares_work_runs_on_one_worker():
    """The scheduler's units (conftest.scope_of): a notebook's cells, a puzzle's per-puzzle tests in
    both files, the tests of a file with an expensive module fixture; any other test alone."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    root = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root)
    scope = root.scope_of
    nb = "notebooks/solutions/01_gpu_puzzles.ipynb"
    assert scope(f"{nb}::Cell 0") == scope(f"{nb}::Cell 7") != scope("notebooks/solutions/02_x.ipynb::Cell 0")
    dot = scope("tests/test_exercises.py::test_reference_passes[dot]")
    assert dot == scope("tests/test_engines_agree.py::test_greenlet_and_auto_agree[dot]")
    assert dot == scope("tests/test_exercises.py::test_mutant_is_rejected_for_the_right_reason[dot-no_guard]")
    assert dot != scope("tests/test_exercises.py::test_reference_passes[map]")
    for file in root.ONE_WORKER:
        assert scope(f"{file}::test_a") == scope(f"{file}::test_b[greenlet-map]"), file
        assert 'scope="module"' in (ROOT / file).read_text(), f"{file} has no module fixture to share"
    assert scope("tests/test_sim.py::test_a[auto]") != scope("tests/test_sim.py::test_b[auto]")
