"""`ruff check .` is clean (rules and exclusions in pyproject.toml)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_clean():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format=concise", "."],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, f"ruff found problems (try `ruff check --fix .`):\n{r.stdout}{r.stderr}"
