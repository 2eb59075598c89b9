"""The GPU side of a C++ check: the runs go to a child process (`helpers.cpp.driver`), alone or under
compute-sanitizer (memcheck: out-of-bounds accesses; racecheck: shared-memory races), with a
deadline, and its report comes back as the course's diagnostics.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..sim import errors

SECONDS = 120  # a child's deadline: a kernel that never ends is stopped, not waited for


def sanitizer() -> str | None:
    """The compute-sanitizer executable: on PATH, in the CUDA toolkit, or in a pip wheel; or None."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for home in filter(None, homes):
        exe = Path(home, "bin", "compute-sanitizer")
        if exe.exists():
            return str(exe)
    try:
        import nvidia

        for root in map(Path, nvidia.__path__):
            for exe in root.glob("*/compute-sanitizer/compute-sanitizer"):
                return str(exe)
    except ImportError:
        pass
    return None


NO_SANITIZER = (
    "compute-sanitizer was not found (CUDA toolkit's bin/), so out-of-bounds accesses and races "
    "were not looked for; the Numba twin on the simulator checks both."
)


@dataclass
class ChildResult:
    result: dict | None  # what helpers.cpp.driver.run_job returned, None if the child died
    report: str  # the sanitizer's report ("" when none ran or it found nothing)
    why: str = ""  # why there is no result: a deadline, a crash
    summary: str = ""  # the sanitizer's own summary lines ("RACECHECK SUMMARY: 0 hazards displayed ...")


def run(job: dict, tool: str | None = None, seconds: float = SECONDS, options: tuple = ()) -> ChildResult:
    """Run `job` in a child process, under compute-sanitizer's `tool` when given (with `options`,
    e.g. ("--racecheck-report", "hazard"))."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryDirectory(prefix="mp-cpp-") as tmp:
        job_path, result_path = Path(tmp, "job.pkl"), Path(tmp, "result.pkl")
        job_path.write_bytes(pickle.dumps(job))
        cmd = [sys.executable, "-m", "helpers.cpp.driver", str(job_path), str(result_path)]
        if tool:
            cmd = [sanitizer(), "--tool", tool, "--print-limit", "4", *options, *cmd]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds, env=env)
        except subprocess.TimeoutExpired:
            return ChildResult(
                None,
                "",
                f"the kernel had not finished after {seconds:g} s and was stopped: a loop that never "
                "ends, or threads waiting for something (a barrier, a flag) that never comes",
            )
        result = pickle.loads(result_path.read_bytes()) if result_path.exists() else None
        why = (
            "" if result else f"the child process died (exit {done.returncode}): {done.stderr.strip()[-800:]}"
        )
        said = done.stdout + done.stderr
        summary = "; ".join(
            ln.strip("= ").strip() for ln in said.splitlines() if ln.startswith("=") and "SUMMARY" in ln
        )
        return ChildResult(result, _errors_of(said) if tool else "", why, summary if tool else "")


def _errors_of(output: str) -> str:
    """The sanitizer's error records (its '=========' lines), without the banner and the summary."""
    keep = []
    for line in output.splitlines():
        if not line.startswith("========="):
            continue
        body = line[len("=========") :].rstrip()
        if not body.strip():
            keep.append("")  # the blank line between two records
            continue
        if "COMPUTE-SANITIZER" in body or "ERROR SUMMARY" in body:
            continue
        if "RACECHECK SUMMARY" in body or body.strip().startswith("Saved host backtrace"):
            continue
        keep.append(body)
    records = "\n".join(keep).strip("\n").split("\n\n")
    # an API call's error code (the child reports its own; libraries probe for entry points) is not
    # the kernel's fault: only errors found in the kernel count
    api = ("Program hit", "on CUDA API call", "Target application returned")
    # and only records about the kernel (its file or a thread): a tool's own warning is no verdict
    ours = [r for r in records if "kernel.cu" in r or "by thread" in r or "thread (" in r]
    return "\n\n".join(r for r in ours if not any(a in r for a in api))


_AT = re.compile(r"kernel\.cu:(\d+)")
_THREAD = re.compile(r"(?:Read|Write) Thread \((\d+),\s*(\d+),\s*(\d+)\)")
_BLOCK = re.compile(r"in block \((\d+),\s*(\d+),\s*(\d+)\)")
_WHO = re.compile(r"thread \((\d+),\s*(\d+),\s*(\d+)\) in block \((\d+),\s*(\d+),\s*(\d+)\)")


def diagnostic(report: str, tool: str, say_line) -> errors.SimulatorError:
    """The course's diagnostic for a sanitizer report: OutOfBounds (memcheck), DataRace (racecheck),
    with the first error's line (written by `say_line(n)`), thread and block."""
    first = report.strip().split("\n\n")[0]
    head = first.strip().splitlines()[0].strip() if first.strip() else "an error"
    lines = sorted({int(n) for n in _AT.findall(first)})
    who = _WHO.search(first)
    # racecheck's hazard listing: "... detected at __shared__ 0x8 in block (1, 0, 0) :", then
    # "Read Thread (3, 1, 0) at ..." and "Write Thread (3, 5, 0) at ..."
    listed, in_block = _THREAD.search(first), _BLOCK.search(first)
    parts = [f"compute-sanitizer ({tool}) on the real GPU: {head}"]
    if lines:
        parts.append("at " + "; and ".join(say_line(n) for n in lines))
    if who:
        t, b = tuple(map(int, who.groups()[:3])), tuple(map(int, who.groups()[3:]))
        parts.append(f"by thread {t} of block {b}")
    elif listed and in_block:
        t, b = tuple(map(int, listed.groups())), tuple(map(int, in_block.groups()))
        parts.append(f"by thread {t} (and others) of block {b}")
    else:
        t = b = None
    cls = errors.DataRace if tool == "racecheck" else errors.OutOfBounds
    if tool == "racecheck":
        fix = (
            "Two threads touched one shared-memory element with no __syncthreads() between them, at "
            "least one writing: put a barrier between the write and the read."
        )
    else:
        fix = "An index past the end of an array (or before its start): guard it with the size."
    trimmed = "\n".join("    " + ln.strip() for ln in report.strip().splitlines()[:12])
    message = "\n".join([" ".join(parts) + ".", fix, "The sanitizer's report:", trimmed])
    return cls(message, block=b, thread=t, line=lines[0] if lines else None)
