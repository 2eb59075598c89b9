"""The notebook source format and builder (tools.nbbuild), on a throwaway course in a temp dir."""

import json
import re
import tomllib
from pathlib import Path

import nbformat
import pytest

from helpers.puzzle import Puzzle
from tools import nbbuild

ROOT = Path(__file__).resolve().parents[1]


def demo_kernel(out, a):
    i = 0  # stands in for cuda.threadIdx.x; nbbuild only reads the source
    ### BEGIN SOLUTION
    out[i] = a[i] + 10
    ### END SOLUTION


DEMO = Puzzle(
    name="demo",
    title="Demo: add ten",
    statement="Add 10 to each element of `a`.",
    signature=("out", "a"),
    outputs=("out",),
    spec=lambda a: a + 10,
    cases=lambda rng: [],
    reference=demo_kernel,
)

SOURCE = """\
# %% [markdown]
# # Demo course
#
# A *tiny* notebook.

# %% setup

# %% [markdown] statement:demo
# Think about threads.

# %%
TPB = 8

# %% kernel:demo

# %%
x = 1
### BEGIN SOLUTION
x = 2
y = 3
### END SOLUTION
print(x)

# %%

# %% [markdown]
# The end.
"""

README = f"# Course\n\nintro\n\n{nbbuild.README_START}\nold table\n{nbbuild.README_END}\n\nmore\n"


def lookup(name):
    return {"demo": DEMO}[name]


@pytest.fixture
def course(tmp_path):
    (tmp_path / "notebooks" / "src").mkdir(parents=True)
    (tmp_path / "notebooks" / "src" / "01_demo.py").write_text(SOURCE)
    (tmp_path / "README.md").write_text(README)
    return tmp_path


def read(path):
    return nbformat.reads(path.read_text(), as_version=4)


def test_build_writes_both_variants_and_readme(course):
    changed = nbbuild.build(course, lookup)
    assert sorted(changed) == ["README.md", "notebooks/01_demo.ipynb", "notebooks/solutions/01_demo.ipynb"]
    learner, solution = nbbuild.notebook_paths(course, "01_demo")
    for path in (learner, solution):
        nb = read(path)
        nbformat.validate(nb)
        assert nb.nbformat == 4
        assert nb.metadata.kernelspec.name == "python3"
        # Cells: title, setup, statement, TPB, kernel, code, closing markdown (the empty cell is dropped).
        assert [c.cell_type for c in nb.cells] == [
            "markdown",
            "code",
            "markdown",
            "code",
            "code",
            "code",
            "markdown",
        ]
        for c in nb.cells:
            if c.cell_type == "code":
                assert c.outputs == [] and c.execution_count is None
        assert nb.cells[0].source.startswith("# Demo course\n\nA *tiny* notebook.")
        assert nb.cells[1].source == nbbuild.SETUP_SOURCE
        assert nb.cells[2].source == (
            "### Demo: add ten\n\nAdd 10 to each element of `a`.\n\nThink about threads."
        )
        assert nb.cells[3].source == "TPB = 8"
        assert nb.cells[6].source == "The end."
        assert "BEGIN SOLUTION" not in path.read_text() and "END SOLUTION" not in path.read_text()
    ln, sn = read(learner), read(solution)
    assert "Exercise version" in ln.cells[0].source and "Solution version" not in ln.cells[0].source
    assert "Solution version" in sn.cells[0].source and "Exercise version" not in sn.cells[0].source
    # Kernel cell: reference without markers vs stub.
    assert sn.cells[4].source.startswith("def demo_kernel(out, a):")
    assert "out[i] = a[i] + 10" in sn.cells[4].source
    assert "out[i] = a[i] + 10" not in ln.cells[4].source
    assert "# FILL ME IN (roughly 1 line)" in ln.cells[4].source
    assert "i = 0" in ln.cells[4].source  # code outside the markers stays
    # Plain code cell with markers.
    assert sn.cells[5].source == "x = 1\nx = 2\ny = 3\nprint(x)"
    assert ln.cells[5].source == "x = 1\n# FILL ME IN (roughly 2 lines)\nprint(x)"
    # Same cell ids in both variants, derived from name + position.
    assert [c.id for c in ln.cells] == [c.id for c in sn.cells]
    assert len({c.id for c in ln.cells}) == len(ln.cells)


def test_readme_table(course):
    nbbuild.build(course, lookup)
    text = (course / "README.md").read_text()
    assert "old table" not in text
    assert text.startswith("# Course\n\nintro\n\n") and text.endswith(f"{nbbuild.README_END}\n\nmore\n")
    row = next(line for line in text.splitlines() if "01_demo" in line)
    assert "Demo course" in row
    assert nbbuild.colab_url("notebooks/01_demo.ipynb") in row
    assert nbbuild.colab_url("notebooks/solutions/01_demo.ipynb") in row


def test_deterministic(course):
    nbbuild.build(course, lookup)
    learner, solution = nbbuild.notebook_paths(course, "01_demo")
    first = (learner.read_bytes(), solution.read_bytes())
    learner.unlink()
    solution.unlink()
    nbbuild.build(course, lookup)
    assert (learner.read_bytes(), solution.read_bytes()) == first
    assert nbbuild.build(course, lookup) == []


def test_check_finds_stale_and_orphaned_files(course):
    assert nbbuild.stale(course, lookup) == [
        "notebooks/01_demo.ipynb",
        "notebooks/solutions/01_demo.ipynb",
        "README.md",
    ]
    nbbuild.build(course, lookup)
    assert nbbuild.stale(course, lookup) == []
    src = course / "notebooks" / "src" / "01_demo.py"
    src.write_text(src.read_text().replace("TPB = 8", "TPB = 16"))
    assert nbbuild.stale(course, lookup) == ["notebooks/01_demo.ipynb", "notebooks/solutions/01_demo.ipynb"]
    nbbuild.build(course, lookup)
    # A hand edit of a generated notebook is stale too.
    learner, _ = nbbuild.notebook_paths(course, "01_demo")
    nb = json.loads(learner.read_text())
    nb["cells"][3]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "hi\n"}]
    learner.write_text(json.dumps(nb))
    assert nbbuild.stale(course, lookup) == ["notebooks/01_demo.ipynb"]
    nbbuild.build(course, lookup)
    # A notebook whose source is gone is stale, and the rebuild removes it.
    orphan = course / "notebooks" / "solutions" / "99_gone.ipynb"
    orphan.write_text("{}")
    assert nbbuild.stale(course, lookup) == ["notebooks/solutions/99_gone.ipynb"]
    nbbuild.build(course, lookup)
    assert not orphan.exists()


def test_main_check_exit_code(course, capsys, monkeypatch):
    monkeypatch.setattr(nbbuild, "_default_lookup", lookup)
    assert nbbuild.main(["--check", "--root", str(course)]) == 1
    assert "stale: notebooks/01_demo.ipynb" in capsys.readouterr().out
    assert nbbuild.main(["--root", str(course)]) == 0
    assert nbbuild.main(["--check", "--root", str(course)]) == 0


@pytest.mark.parametrize(
    "bad, message",
    [
        ("x = 1\n# %% [markdown]\n# # T\n# %% setup\n", "text before the first"),
        ("# %% [markdown]\n# # T\n# %% setup\n# %% [markdown]\nnot a comment\n", "lines must be comments"),
        ("# %% [markdown]\n# # T\n# %% setup\n# %% kernels:demo\n", "unknown cell directive"),
        ("# %% [markdown]\n# # T\n# %% setup\n# %% kernel:\n", "needs a puzzle name"),
        ("# %% [markdown]\n# # T\n# %% setup\n# %% kernel:demo\nx = 1\n", "are generated"),
        ("# %% [markdown]\n# # T\n# %% setup\nimport os\n", "are generated"),
        ("# %% [markdown]\n# no title\n# %% setup\n", "title markdown cell"),
        ("# %% setup\n# %% [markdown]\n# # T\n", "title markdown cell"),
        ("# %% [markdown]\n# # T\n# %%\nx = 1\n", "followed by the one '# %% setup'"),
        ("# %% [markdown]\n# # T\n# %% setup\n# %% setup\n", "followed by the one '# %% setup'"),
    ],
)
def test_format_errors_name_the_problem(bad, message):
    with pytest.raises(nbbuild.FormatError, match=re.escape(message)):
        nbbuild.parse(bad, "src.py")


def test_format_error_names_file_and_line():
    with pytest.raises(nbbuild.FormatError, match=r"^src\.py:4: unknown cell directive"):
        nbbuild.parse("# %% [markdown]\n# # T\n# %% setup\n# %% foo\n", "src.py")


def test_setup_cell_is_plain_python():
    compile(nbbuild.SETUP_SOURCE, "<setup>", "exec")
    assert not re.search(r"^\s*[!%]", nbbuild.SETUP_SOURCE, re.M), "no shell or magic lines"
    assert f'REPO_URL = "{nbbuild.REPO_URL}"' in nbbuild.SETUP_SOURCE
    assert f'COURSE_REF = "{nbbuild.COURSE_REF}"' in nbbuild.SETUP_SOURCE


def test_course_ref_matches_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert nbbuild.COURSE_REF == "v" + version


def test_runtime_requirements_are_part_of_requirements():
    req = (ROOT / "requirements.txt").read_text().splitlines()
    assert "-r requirements-runtime.txt" in req
    assert req[-1] == "-e ."
    for f in ("requirements.txt", "requirements-runtime.txt"):
        for line in (ROOT / f).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith("-"):
                assert "==" in line, f"{f}: {line} is not pinned exactly"


def test_solution_only_cells_and_cpp_twins():
    """`solutions` after a directive keeps the cell out of the exercise version; `cpp:NAME` is the C++
    twin with its check (stub in the exercise, solution in the solution version); `cpp-names` the
    table of Numba names and their C++ spellings."""
    source = (
        "# %% [markdown]\n# # T\n\n# %% setup\n\n# %% [markdown] solutions\n# Only there.\n\n"
        "# %% solutions\nx = 1\n\n# %% [markdown] cpp-names\n# After the table.\n\n# %% cpp:map\n\n"
        "# %% cpp:ch02_vecadd solutions\n"
    )
    cells = nbbuild.parse(source, "src.py")
    learner = nbformat.reads(nbbuild.render(cells, "t", solutions=False), as_version=4)
    solution = nbformat.reads(nbbuild.render(cells, "t", solutions=True), as_version=4)
    assert len(solution.cells) == len(learner.cells) + 3
    table = learner.cells[2].source
    assert (
        "`__syncthreads();`" in table
        and "`atomicAdd(&out[0], v)`" in table
        and table.endswith("After the table.")
    )
    assert (
        "// FILL ME IN" in learner.cells[3].source and 'cpp.check("map", map_cpp)' in learner.cells[3].source
    )
    assert (
        "out[i] = a[i] + 10.0f;" in solution.cells[5].source
        and "BEGIN SOLUTION" not in solution.cells[5].source
    )
    assert 'cpp.check("ch02_vecadd", ch02_vecadd_cpp)' in solution.cells[6].source
    with pytest.raises(nbbuild.FormatError, match="cpp: needs a puzzle name"):
        nbbuild.parse("# %% [markdown]\n# # T\n# %% setup\n# %% cpp:\n", "src.py")
