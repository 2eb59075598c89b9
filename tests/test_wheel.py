"""The course installs without a checkout: the wheel holds everything a notebook needs.

Builds the wheel, installs it with --no-deps into a fresh venv that sees this interpreter's
packages (a .pth file: fast, and the deps are the tested ones), then runs one exercise
notebook and one solution notebook from a folder outside the checkout.
"""

import contextlib
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "02_pmpp_ch02_03_data_parallel"
CLEAN = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing from the checkout

RUN = r"""
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=300, kernel_name="mp-wheel", allow_errors=True).execute()
for cell in nb.cells:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            print("ERROR", out["ename"], out["evalue"][:200].replace("\n", " "))
        elif out.get("name") == "stdout" and ("COURSE_FILE" in out["text"] or "passed" in out["text"]):
            print(out["text"].strip())
"""


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    # setuptools builds in the checkout (build/, *.egg-info): under pytest-xdist two workers can run
    # this fixture at once, so the builds take turns (the lock sits beside every worker's temp dir)
    with open(tmp_path_factory.getbasetemp().parent / "wheel-build.lock", "w") as lock:
        with contextlib.suppress(ImportError):  # no fcntl (Windows): one build at a time anyway
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "-w",
                str(tmp / "dist"),
                str(ROOT),
            ],
            check=True,
        )
    (whl,) = (tmp / "dist").glob("massively_parallel-*.whl")
    venv.EnvBuilder(with_pip=False).create(tmp / "venv")
    py = tmp / "venv" / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", str(whl)],
        check=True,
        env=CLEAN,
    )  # before the .pth, so pip sees no other course
    # This interpreter's packages after the venv's own (a nested venv's --system-site-packages
    # would reach the base Python instead); only the course itself goes into the venv.
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "outer.pth").write_text(
        "\n".join(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))) + "\n"
    )
    # A kernel that runs this venv's Python, whatever "python3" means elsewhere on the machine.
    subprocess.run(
        [str(py), "-m", "ipykernel", "install", "--prefix", str(tmp / "venv"), "--name", "mp-wheel"],
        check=True,
        capture_output=True,
    )
    return whl, py, tmp


def test_wheel_holds_every_module_of_helpers_and_puzzles(wheel_venv):
    whl, _, _ = wheel_venv
    names = set(zipfile.ZipFile(whl).namelist())
    for pkg in ("helpers", "puzzles"):
        for f in (ROOT / pkg).rglob("*.py"):
            assert str(f.relative_to(ROOT)) in names, f"{f.relative_to(ROOT)} missing from {whl.name}"
    assert "puzzles/mutant_kinds.json" in names, "the summary's mutant counts (python -m tools.nbbuild)"
    assert "puzzles/llm/training/data/shakespeare.txt" in names, "the training text (package-data)"
    assert not [n for n in names if n.startswith(("tools/", "tests/"))], (
        "tools and tests stay in the checkout"
    )


@pytest.mark.parametrize("version", ["exercise", "solution"])
def test_notebook_runs_from_the_installed_wheel(wheel_venv, version):
    _, py, tmp = wheel_venv
    work = tmp / f"outside-{version}"
    work.mkdir()
    src = ROOT / "notebooks" / ("solutions" if version == "solution" else "") / f"{NOTEBOOK}.ipynb"
    shutil.copy(src, work / "nb.ipynb")
    (work / "helpers.py").write_text("raise SystemExit('a learner helpers.py was imported')\n")
    import nbformat

    nb = nbformat.read(work / "nb.ipynb", as_version=4)
    nb.cells[1].source += "\nprint('COURSE_FILE', helpers.__file__)"
    nbformat.write(nb, work / "nb.ipynb")
    (work / "run.py").write_text(RUN)
    env = dict(CLEAN)
    env.update(MPLBACKEND="Agg", MP_COURSE_URL=f"file://{tmp}/no-clone-expected")
    done = subprocess.run(
        [str(py), "run.py", "nb.ipynb"], cwd=work, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    course = next(ln for ln in lines if ln.startswith("COURSE_FILE")).split()[1]
    assert course.startswith(str(tmp / "venv")), f"the course came from {course}, not the wheel"
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    if version == "solution":
        assert errors == []
        # the last cell's summary counts the known-wrong kernels from the wheel's own data file
        assert any("known-wrong kernels" in ln for ln in lines), lines[-5:]
    else:
        assert errors and all(ln.startswith("ERROR NotSolvedYet") for ln in errors), errors
