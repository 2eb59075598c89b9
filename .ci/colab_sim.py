"""Simulate a fresh Colab runtime: an empty folder, a Python with Colab's packages, no course.

    python .ci/colab_sim.py PYTHON [--colab]

Serves this checkout's HEAD as a git repository tagged with the notebooks' ref, runs the
notebooks' setup cell there with PYTHON (in one process, as a kernel would), then checks
the first puzzle. Prints the setup time, what the clone and pip added on disk, whether a
restart was asked for, and the time to a checked first puzzle. `--colab` sets
COLAB_RELEASE_TAG, as Colab does, so a CPU runtime installs the compile check.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools import nbbuild  # noqa: E402

RUN = r"""
import json, os, sys, time, io, contextlib, site
t0 = time.time()
setup = json.load(open("setup.json"))
sp = site.getsitepackages()[0]
before = sum(f.stat().st_size for f in __import__("pathlib").Path(sp).rglob("*") if f.is_file())
out = io.StringIO()
with contextlib.redirect_stdout(out):
    exec(compile(setup, "<setup>", "exec"), {"__name__": "__main__"})
t1 = time.time()
after = sum(f.stat().st_size for f in __import__("pathlib").Path(sp).rglob("*") if f.is_file())
import puzzles
p = puzzles.get("map")
puzzles.check("map", p.reference)
t2 = time.time()
clone = sum(f.stat().st_size for f in __import__("pathlib").Path("massively-parallel").rglob("*")
            if f.is_file()) if os.path.isdir("massively-parallel") else 0
print(json.dumps({"setup_s": round(t1 - t0, 2), "first_check_s": round(t2 - t0, 2),
                  "clone_bytes": clone, "site_packages_added_bytes": after - before,
                  "restart_asked": "Restart" in out.getvalue(), "setup_output": out.getvalue()}))
"""


def main() -> int:
    python = sys.argv[1]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    if "--colab" in sys.argv:
        env["COLAB_RELEASE_TAG"] = "simulated"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        served = tmp / "served.git"
        subprocess.run(["git", "clone", "--quiet", "--bare", str(ROOT), str(served)], check=True)
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        subprocess.run(
            ["git", "tag", "-f", nbbuild.COURSE_REF, head], cwd=served, check=True, capture_output=True
        )
        env["MP_COURSE_URL"] = f"file://{served}"
        work = tmp / "content"  # Colab's working folder
        work.mkdir()
        (work / "setup.json").write_text(json.dumps(nbbuild.SETUP_SOURCE))
        (work / "run.py").write_text(RUN)
        t = time.time()
        done = subprocess.run([python, "run.py"], cwd=work, env=env, capture_output=True, text=True)
        wall = time.time() - t
        if done.returncode:
            print(done.stdout, done.stderr)
            return 1
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result["wall_s_incl_interpreter"] = round(wall, 2)
        print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
