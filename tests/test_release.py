"""One place names the course's repository and ref; every badge and setup cell agrees with it;
the setup cell finds the real course (not a learner's helpers.py) and fails in plain words."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import nbbuild, release

ROOT = Path(__file__).resolve().parents[1]


def test_every_badge_and_setup_cell_agrees_with_pyproject():
    assert release.disagreements(ROOT) == []
    repo, ref = release.pointer(ROOT)
    assert (nbbuild.REPO_URL, nbbuild.COURSE_REF) == (f"https://github.com/{repo}", ref)


@pytest.fixture
def copy(tmp_path, monkeypatch):
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, tmp_path / f)
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    for name in ("REPO_PATH", "REPO_URL", "COURSE_REF", "SETUP_SOURCE"):
        monkeypatch.setattr(nbbuild, name, getattr(nbbuild, name))
    return tmp_path


def test_point_repoints_everything_and_check_sees_a_stray_link(copy):
    old_repo, _ = release.pointer(copy)
    changed = release.point("a-learner/my-fork", "main", root=copy)
    assert release.pointer(copy) == ("a-learner/my-fork", "main")
    assert "README.md" in changed and len([c for c in changed if c.endswith(".ipynb")]) >= 2
    assert release.disagreements(copy) == []
    for path in release.generated_files(copy):
        text = path.read_text()
        assert "a-learner/my-fork" in text and old_repo not in text, path
    readme = copy / "README.md"
    readme.write_text(
        readme.read_text() + "\n[old](https://colab.research.google.com/github/"
        f"{old_repo}/blob/v0.1.0/notebooks/01_x.ipynb)\n"
    )
    assert release.disagreements(copy) == [f"README.md: links {old_repo}@v0.1.0"]


def test_release_ref_must_match_version(copy):
    release.set_pointer("a-learner/my-fork", "v9.9.9", copy)
    assert any("is not 'v' + version" in b for b in release.disagreements(copy))
    with pytest.raises(ValueError):
        release.set_pointer("not a repo", "main", copy)


def setup_cell_run(tmp_path, url, *python_flags):
    """Run the setup cell as a fresh kernel would, in an empty working folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["MP_COURSE_URL"], env["MPLBACKEND"] = url, "Agg"
    (tmp_path / "cell.py").write_text(nbbuild.SETUP_SOURCE + "\nprint('COURSE', helpers.__file__)\n")
    return subprocess.run(
        [sys.executable, *python_flags, "cell.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_unreachable_repository_prints_a_paragraph_not_a_traceback(tmp_path):
    # -S: no site-packages, so no installed course is found and the cell must fetch it.
    done = setup_cell_run(tmp_path, f"file://{tmp_path}/no-such-repo", "-S")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(
        f"Could not fetch the course from file://{tmp_path}/no-such-repo at {nbbuild.COURSE_REF}"
    )
    assert "Check that the repository and the tag or branch exist" in done.stderr
    assert "upload the course" in done.stderr and len(done.stderr.splitlines()) == 2


@pytest.fixture
def served(tmp_path):
    """This checkout's HEAD as a repository with the notebooks' ref, as GitHub would serve it."""
    bare = tmp_path / "served.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(ROOT), str(bare)], check=True)
    subprocess.run(
        ["git", "tag", "-f", nbbuild.COURSE_REF, "HEAD"], cwd=bare, check=True, capture_output=True
    )
    return bare


def test_a_learners_helpers_py_is_not_taken_for_the_course(tmp_path, served):
    work = tmp_path / "content"
    work.mkdir()
    (work / "helpers.py").write_text("raise SystemExit('the learner helpers.py was imported')\n")
    done = setup_cell_run(work, f"file://{served}")
    assert done.returncode == 0, done.stderr
    course = done.stdout.split("COURSE ")[-1].strip()
    assert course.endswith(os.path.join("helpers", "__init__.py"))
    assert "Kernels launched with" in done.stdout and "Restart" not in done.stdout


def test_setup_cell_finds_the_checkout_it_sits_in_and_clones_nothing(tmp_path):
    stub = {
        "helpers/__init__.py": "def setup():\n    print('CHECKOUT SETUP')\n",
        "helpers/environment.py": "def prepare():\n    pass\n",
        "puzzles/__init__.py": "",
    }
    for f, text in stub.items():
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(text)
    here = tmp_path / "notebooks" / "solutions"
    here.mkdir(parents=True)
    (here / "helpers.py").write_text("raise SystemExit('the learner helpers.py was imported')\n")
    done = setup_cell_run(here, f"file://{tmp_path}/no-clone-expected", "-S")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["CHECKOUT", "SETUP", "COURSE", str(tmp_path / "helpers" / "__init__.py")]
    assert not (here / "massively-parallel").exists()
