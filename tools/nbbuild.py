"""Build the course notebooks from their sources.

    python -m tools.nbbuild           # rebuild notebooks/*.ipynb, notebooks/solutions/*.ipynb, README table,
                                      # and puzzles/mutant_kinds.json (what puzzles.summary() counts)
    python -m tools.nbbuild --check   # exit 1, listing every stale or orphaned file

A source `notebooks/src/NN_name.py` is a percent-format Python file:

    # %% [markdown]                 a markdown cell; its lines are comments: `# text`, `#` for a blank line
    # %%                            a code cell (may hold ### BEGIN SOLUTION / ### END SOLUTION blocks)
    # %% setup                      the standard first code cell (Colab install + helpers.setup())
    # %% [markdown] statement:NAME  `### <title>` + the puzzle's statement, then the lines below it
    # %% kernel:NAME                the puzzle's reference kernel (solutions) or its stub (exercises)
    # %% cpp:NAME                   the puzzle's CUDA C++ twin (puzzles/cpp/NAME.cu) and its check
    # %% [markdown] cpp-names       the table of Numba names and their C++ spellings, then the lines below
A directive ending in the word `solutions` makes a cell of the solution version only.

Every source starts with a title markdown cell (`# Title`) followed by `# %% setup`.
Two notebooks come out of each: the exercise version (solution blocks cut to
`# FILL ME IN`) and the solution version (markers removed). Outputs are empty
and cell ids are derived from the notebook name and cell number, so a rebuild
of an unchanged source gives byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat
from nbformat import v4

from helpers.puzzle import make_stub, strip_markers
from puzzles import cpp  # the C++ twins: their cells and the name table
from tools import mutant_kinds, release

# Where notebooks fetch the course and badges open it: [tool.massively-parallel] in pyproject.toml,
# re-pointed by `python -m tools.release point OWNER/NAME --ref REF`.
REPO_PATH, COURSE_REF = release.pointer()
REPO_URL = f"https://github.com/{REPO_PATH}"

ROOT = Path(__file__).resolve().parents[1]
README_START, README_END = "<!-- notebooks:start -->", "<!-- notebooks:end -->"


def setup_source(repo_url: str, ref: str) -> str:
    """The first code cell of every notebook (tests/test_release.py and .ci/colab_sim.py run it)."""
    return _SETUP_TEMPLATE.replace("@REPO_URL@", repo_url).replace("@COURSE_REF@", ref)


_SETUP_TEMPLATE = """\
# Setup: run this cell first. Locally it only imports the course. On Colab it fetches the
# course (pure Python, seconds) and uses Colab's own numba, numba-cuda and numpy: no restart.
import importlib.metadata
import json
import os
import subprocess
import sys

REPO_URL = "@REPO_URL@"
COURSE_REF = "@COURSE_REF@"
REPO_URL = os.environ.get("MP_COURSE_URL", REPO_URL)  # a mirror or a local copy


def _is_course(d):
    return all(os.path.isfile(os.path.join(d, *f)) for f in
               (("helpers", "environment.py"), ("puzzles", "__init__.py")))


def _find_course():
    \"\"\"The folder holding the course's helpers/ and puzzles/ (a learner's helpers.py is not it).\"\"\"
    d = os.getcwd()
    for _ in range(3):  # the checkout this notebook sits in, or an earlier clone
        for c in (d, os.path.join(d, "massively-parallel")):
            if _is_course(c):
                return c
        d = os.path.dirname(d)
    try:
        dist = importlib.metadata.distribution("massively-parallel")
    except importlib.metadata.PackageNotFoundError:
        return None
    url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
    for c in (str(dist.locate_file("")), url.removeprefix("file://")):
        if c and _is_course(c):
            return c
    return None


_root = _find_course()
if _root is None:  # a fresh Colab runtime: fetch the course, nothing else
    _root = os.path.abspath("massively-parallel")
    _git = subprocess.run(["git", "clone", "--quiet", "--depth", "1", "--branch", COURSE_REF,
                           REPO_URL, _root], capture_output=True, text=True)
    if _git.returncode != 0 or not _is_course(_root):
        _why = (_git.stderr.strip().splitlines() or ["the clone holds no course"])[-1]
        raise SystemExit(
            f"Could not fetch the course from {REPO_URL} at {COURSE_REF} ({_why}).\\n"
            "Check that the repository and the tag or branch exist (open the address in a browser), "
            "or point this cell at a fork: edit REPO_URL and COURSE_REF above. Or upload the course: "
            "put its folder, named massively-parallel, next to this notebook (Colab: Files pane). "
            "Then run this cell again.")
for _m in [m for m in sys.modules if m.split(".")[0] in ("helpers", "puzzles")]:
    if not (getattr(sys.modules[_m], "__file__", None) or "").startswith(_root):
        del sys.modules[_m]  # not the course's: a learner's own helpers.py, say
if sys.path[0] != _root:
    sys.path.insert(0, _root)

import helpers  # noqa: E402
from helpers import environment  # noqa: E402

environment.prepare()  # CPU-only Colab: adds numba-cuda's compiler if it can without a restart
helpers.setup()"""

SETUP_SOURCE = setup_source(REPO_URL, COURSE_REF)


class FormatError(ValueError):
    """A notebook source breaks the percent format; the message names file and line."""


@dataclass
class SourceCell:
    kind: str  # "markdown" | "code" | "setup" | "statement" | "kernel" | "cpp" | "cpp-names"
    text: str  # markdown text or code, as written in the source
    arg: str = ""  # the puzzle name for "statement" / "kernel" / "cpp"
    line: int = 0  # 1-based line of the directive
    solutions_only: bool = False  # the directive ended with `solutions`


_DIRECTIVE = re.compile(r"^# %%(.*)$")


def parse(text: str, filename: str = "<source>") -> list:
    """Split a source into `SourceCell`s; empty plain code cells are dropped."""
    cells: list = []
    current = None
    current_only = False
    body: list = []

    def close():
        if current is None:
            return
        kind, arg, line = current
        only = bool(current_only)
        if kind in ("markdown", "statement", "cpp-names"):
            out = []
            for i, raw in enumerate(body):
                s = raw.rstrip()
                if not s:
                    continue  # blank lines only separate; `#` is a blank markdown line
                if s == "#" or s.startswith("# "):
                    out.append(s[2:])
                else:
                    raise FormatError(
                        f"{filename}:{line + 1 + i}: markdown lines must be comments "
                        f"('# text' or '#'), got {s!r}"
                    )
            cells.append(SourceCell(kind, "\n".join(out).strip("\n"), arg, line, only))
        else:
            code = "\n".join(body).strip("\n")
            if kind in ("setup", "kernel", "cpp") and code.strip():
                raise FormatError(
                    f"{filename}:{line}: '# %% {kind}' cells are generated; "
                    "put code in a separate '# %%' cell"
                )
            if kind != "code" or code.strip():
                cells.append(SourceCell(kind, code, arg, line, only))

    for n, raw in enumerate(text.splitlines(), 1):
        m = _DIRECTIVE.match(raw)
        if not m:
            if current is None and raw.strip():
                raise FormatError(f"{filename}:{n}: text before the first '# %%' cell")
            body.append(raw)
            continue
        close()
        body = []
        rest = m.group(1).strip()
        words = rest.split()
        current_only = bool(words) and words[-1] == "solutions"
        words = words[:-1] if current_only else words
        rest = " ".join(words)
        if rest == "":
            current = ("code", "", n)
        elif rest == "setup":
            current = ("setup", "", n)
        elif rest == "[markdown]":
            current = ("markdown", "", n)
        elif len(words) == 2 and words[0] == "[markdown]" and words[1].startswith("statement:"):
            current = ("statement", words[1][len("statement:") :], n)
        elif len(words) == 1 and words[0].startswith("kernel:"):
            current = ("kernel", words[0][len("kernel:") :], n)
        elif len(words) == 1 and words[0].startswith("cpp:"):
            current = ("cpp", words[0][len("cpp:") :], n)
        elif words == ["[markdown]", "cpp-names"]:
            current = ("cpp-names", "", n)
        else:
            raise FormatError(f"{filename}:{n}: unknown cell directive {raw!r}")
        if current[0] in ("statement", "kernel", "cpp") and not current[1]:
            raise FormatError(f"{filename}:{n}: {current[0]}: needs a puzzle name")
    close()

    kinds = [c.kind for c in cells]
    if not cells or cells[0].kind != "markdown" or not cells[0].text.startswith("# "):
        raise FormatError(f"{filename}: must start with a title markdown cell ('# Title')")
    if kinds[1:2] != ["setup"] or kinds.count("setup") != 1:
        raise FormatError(f"{filename}: the title cell must be followed by the one '# %% setup' cell")
    return cells


def title(cells: list) -> str:
    return cells[0].text.splitlines()[0][2:].strip()


def colab_url(path: str) -> str:
    """Open-in-Colab address of a repository file at COURSE_REF."""
    return f"https://colab.research.google.com/github/{REPO_PATH}/blob/{COURSE_REF}/{path}"


def _note(stem: str, solutions: bool) -> str:
    if solutions:
        return (
            f"> **Solution version**: every kernel is filled in and every check passes. "
            f"The exercise version is [`notebooks/{stem}.ipynb`]"
            f"({colab_url(f'notebooks/{stem}.ipynb')})."
        )
    return (
        f"> **Exercise version**: fill in each `# FILL ME IN` block. Its check cell raises "
        f"`NotSolvedYet` until you do, and names what is wrong until the kernel is right. "
        f"Solutions: [`notebooks/solutions/{stem}.ipynb`]"
        f"({colab_url(f'notebooks/solutions/{stem}.ipynb')})."
    )


def _kernel_source(puzzle) -> str:
    return textwrap.dedent(puzzle.source)


def _cell_id(stem: str, index: int) -> str:
    return hashlib.sha1(f"{stem}/{index}".encode()).hexdigest()[:12]


def _default_lookup(name: str):
    """A kernel puzzle by name, else an exercise for many ranks (puzzles.dist: same source and statement)."""
    import puzzles
    from puzzles import dist

    return dist.get(name) if name in dist.names() else puzzles.get(name)


def render(cells: list, stem: str, solutions: bool, lookup: Callable = None) -> str:
    """The notebook JSON (with trailing newline) for one variant of parsed `cells`."""
    lookup = lookup or _default_lookup
    nb = v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "accelerator": "GPU",  # Colab asks for a GPU runtime (the free T4)
        "colab": {"gpuType": "T4", "provenance": []},
    }
    for i, c in enumerate(cells):
        cid = _cell_id(stem, i)
        if c.solutions_only and not solutions:
            continue
        if c.kind in ("markdown", "cpp-names"):  # the name table: a markdown cell that starts with it
            if c.kind == "cpp-names":
                c = SourceCell("markdown", cpp.names_table() + (f"\n\n{c.text}" if c.text else ""))
            text = c.text + ("\n\n" + _note(stem, solutions) if i == 0 else "")
            nb.cells.append(v4.new_markdown_cell(text, id=cid))
            continue
        if c.kind == "statement":
            p = lookup(c.arg)
            text = f"### {p.title}\n\n{p.statement.strip()}" + (f"\n\n{c.text}" if c.text else "")
            nb.cells.append(v4.new_markdown_cell(text, id=cid))
            continue
        if c.kind == "setup":
            code = SETUP_SOURCE
        elif c.kind == "kernel":
            src = _kernel_source(lookup(c.arg))
            code = strip_markers(src) if solutions else make_stub(src)
        elif c.kind == "cpp":
            code = cpp.cell(c.arg, solutions)
        else:
            code = strip_markers(c.text) if solutions else make_stub(c.text)
        nb.cells.append(v4.new_code_cell(code.rstrip("\n"), id=cid))
    nbformat.validate(nb)
    return nbformat.writes(nb, version=4) + "\n"


def notebook_paths(root: Path, stem: str) -> tuple:
    return root / "notebooks" / f"{stem}.ipynb", root / "notebooks" / "solutions" / f"{stem}.ipynb"


def sources(root: Path) -> list:
    return sorted((root / "notebooks" / "src").glob("[0-9]*.py"))


def readme_table(rows: list) -> str:
    """rows: (stem, title). Markdown table with Colab badges."""
    badge = "https://colab.research.google.com/assets/colab-badge.svg"
    lines = ["| # | notebook | topic | exercises | solutions |", "|---|---|---|---|---|"]
    for stem, topic in rows:
        num = stem.split("_", 1)[0]
        ex = f"[![Open In Colab]({badge})]({colab_url(f'notebooks/{stem}.ipynb')})"
        sol = f"[![Open In Colab]({badge})]({colab_url(f'notebooks/solutions/{stem}.ipynb')})"
        lines.append(f"| {num} | [`{stem}`](notebooks/{stem}.ipynb) | {topic} | {ex} | {sol} |")
    if not rows:
        lines.append("| | (no notebooks yet) | | | |")
    return "\n".join(lines)


def _with_table(readme: str, table: str, path: Path) -> str:
    a, b = readme.find(README_START), readme.find(README_END)
    if a < 0 or b < a:
        raise FormatError(f"{path}: needs the markers {README_START} and {README_END}")
    return readme[: a + len(README_START)] + "\n" + table + "\n" + readme[b:]


def expected(root: Path = ROOT, lookup: Callable = None) -> dict:
    """Every generated file -> its text. Notebooks whose source is gone map to None."""
    want: dict = {}
    rows = []
    for src in sources(root):
        stem = src.stem
        cells = parse(src.read_text(), str(src.relative_to(root)))
        rows.append((stem, title(cells)))
        learner, solution = notebook_paths(root, stem)
        want[learner] = render(cells, stem, solutions=False, lookup=lookup)
        want[solution] = render(cells, stem, solutions=True, lookup=lookup)
    for d in (root / "notebooks", root / "notebooks" / "solutions"):
        for nb in sorted(d.glob("*.ipynb")):
            want.setdefault(nb, None)
    readme = root / "README.md"
    if readme.exists():
        want[readme] = _with_table(readme.read_text(), readme_table(rows), readme)
    # a checkout (not the tests and notebooks copied beside an installed wheel): the summary's data
    if (root / "puzzles").is_dir() and (root / "tests" / "mutants").is_dir():
        want[root / mutant_kinds.FILE] = mutant_kinds.text(root)
    return want


def stale(root: Path = ROOT, lookup: Callable = None) -> list:
    """Paths (relative to root) that a rebuild would change, add or delete."""
    out = []
    for path, text in expected(root, lookup).items():
        have = path.read_text() if path.exists() else None
        if have != text:
            out.append(str(path.relative_to(root)))
    return out


def build(root: Path = ROOT, lookup: Callable = None) -> list:
    """Write every generated file; delete notebooks whose source is gone. Returns what changed."""
    changed = []
    for path, text in expected(root, lookup).items():
        have = path.read_text() if path.exists() else None
        if have == text:
            continue
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        changed.append(str(path.relative_to(root)))
    return changed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.nbbuild", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="list stale files and exit 1 if any")
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if root != ROOT:  # another tree (a fork being re-pointed): its own pointer, for this run of the CLI
        global REPO_PATH, COURSE_REF, REPO_URL, SETUP_SOURCE
        REPO_PATH, COURSE_REF = release.pointer(root)
        REPO_URL = f"https://github.com/{REPO_PATH}"
        SETUP_SOURCE = setup_source(REPO_URL, COURSE_REF)
    if args.check:
        bad = stale(root)
        for p in bad:
            print(f"stale: {p}")
        if bad:
            print("run `python -m tools.nbbuild` and commit the result")
            return 1
        print("notebooks up to date")
        return 0
    for p in build(root):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
