"""`ruff check .` is clean and `ruff format --check .` finds nothing to change (rules, exclusions
and the format settings in pyproject.toml)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args):
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_clean():
    r = _ruff("check", "--no-cache", "--output-format=concise", ".")
    assert r.returncode == 0, f"ruff found problems (try `ruff check --fix .`):\n{r.stdout}{r.stderr}"


def test_ruff_format_clean():
    r = _ruff("format", "--check", "--no-cache", "--output-format=concise", ".")
    stale = [line.split(":", 1)[0] for line in r.stdout.splitlines() if "unformatted" in line]
    assert stale == [], "not formatted (run `ruff format` on them):\n" + "\n".join(stale)
    assert r.returncode in (0, 1), r.stderr


def test_the_format_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = {  'a':1 }\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--check",
            "--no-cache",
            "--output-format=concise",
            str(bad),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "bad.py" in r.stdout and "unformatted" in r.stdout
