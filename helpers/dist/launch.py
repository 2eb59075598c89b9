"""Start real ranks: mpirun for MPI (oversubscribed: a 2-core CI runs 4 ranks), one process per GPU
for NCCL, every one with NCCL_NVLS_ENABLE=0 and a timeout. A rank still waiting at the timeout is
named with the call and line it waits in; no launch outlives its timeout (no hang in a notebook).

    python -m helpers.dist.launch -n 4 --engine mpi [--timeout 60] module:function [args...]
    helpers.dist.launch(4, "module:function", engine="mpi", timeout=60, args=())
"""

from __future__ import annotations

import argparse
import inspect
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from . import state
from .errors import DistTimeout
from .missing import gpus, missing, mpirun

__all__ = ["launch"]

ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding helpers/


def _env(directory: str, engine: str) -> dict:
    env = dict(os.environ)
    env.update(
        MP_DIST_STATE=directory,
        MP_DIST_ENGINE=engine,
        NCCL_NVLS_ENABLE="0",  # NVLink multicast off: unsupported on the lent machines
        OMPI_ALLOW_RUN_AS_ROOT="1",  # Colab and containers run as root
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        PYTHONUNBUFFERED="1",
    )
    paths = (directory, os.getcwd(), ROOT, env.get("PYTHONPATH", ""))  # directory: shipped functions
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def _commands(n: int, engine: str, spec: str, args) -> list[list[str]]:
    rank = [sys.executable, "-m", "helpers.dist.rank", "--engine", engine, spec, *map(str, args)]
    if engine == "mpi":
        return [[mpirun(), "-n", str(n), "--oversubscribe", "--bind-to", "none", *rank]]
    return [rank for _ in range(n)]


def _echo(proc, prefix: str, sink: list) -> threading.Thread:
    def pump():
        for line in proc.stdout:
            sink.append(prefix + line)
            print(prefix + line, end="", flush=True)

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return t


def _stop(procs) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    end = time.monotonic() + 3
    for p in procs:
        try:
            p.wait(max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def _ship(directory: str, functions) -> None:
    """Functions defined in a notebook (or anywhere) go to the ranks as source: module `mp_cell`,
    after `import numpy as np`, `from helpers.dist import split` and a star import of each one's
    own module where the ranks can import it."""
    head = ["import numpy as np", "from helpers.dist import split"]
    for fn in functions:
        if fn.__module__ not in ("__main__", "builtins"):
            head.append(f"try:\n    from {fn.__module__} import *\nexcept ImportError:\n    pass")
    body = [textwrap.dedent(inspect.getsource(fn)) for fn in functions]
    with open(os.path.join(directory, "mp_cell.py"), "w") as f:
        f.write("\n".join(head) + "\n\n\n" + "\n\n".join(body))


def launch(n: int, spec, *, engine: str = "mpi", timeout: float = 60.0, args=(), ship=()) -> str:
    """Run `function(comm, *args)` of 'module:function' on n ranks of `engine`; its output (echoed
    as it comes). `spec` may be the function itself and `ship` more functions: their source goes to
    the ranks as module `mp_cell` (a notebook's functions; `mp_cell:name` names one in `args`).
    Raises RuntimeError when the engine is missing or a rank fails, DistTimeout naming the ranks
    still waiting at `timeout` seconds."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"-n must be a positive number of ranks, got {n!r}")
    if engine not in ("mpi", "nccl"):
        why = f"launch starts real engines, 'mpi' or 'nccl' (got {engine!r})"
        raise ValueError(f"{why}; in-process ranks: helpers.dist.run")
    why = missing(engine)
    if why:
        raise RuntimeError(why)
    if engine == "nccl" and gpus() < n:
        raise RuntimeError(
            f"NCCL engine: {n} ranks need {n} GPUs (one process per GPU); this machine has {gpus()}"
        )
    with tempfile.TemporaryDirectory(prefix="mp-dist-") as directory:
        functions = [*ship, *([spec] if callable(spec) else [])]
        if functions:
            _ship(directory, functions)
            spec = f"mp_cell:{spec.__name__}" if callable(spec) else spec
        env = _env(directory, engine)
        procs, out, pumps = [], [], []
        for r, cmd in enumerate(_commands(n, engine, spec, args)):
            e = dict(env, MP_DIST_RANK=str(r), MP_DIST_SIZE=str(n)) if engine == "nccl" else env
            pipe = dict(stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            p = subprocess.Popen(cmd, env=e, start_new_session=True, **pipe)
            procs.append(p)
            pumps.append(_echo(p, f"[rank {r}] " if engine == "nccl" else "", out))
        end = time.monotonic() + timeout
        try:
            while any(p.poll() is None for p in procs):
                failed = [p for p in procs if p.poll() not in (None, 0)]
                if failed or time.monotonic() > end:
                    break
                time.sleep(0.05)
            where = state.read(directory, n)
            running = any(p.poll() is None for p in procs)
            timed_out = running and not any(p.poll() not in (None, 0) for p in procs)
        finally:
            _stop(procs)
            for t in pumps:
                t.join(2)
    text = "".join(out)
    if timed_out:
        waiting = {r: w for r, w in where.items() if w not in ("finished",)}
        raise DistTimeout(
            f"{engine} launch of {spec} on {n} ranks timed out after {timeout:.0f} s; ranks still running: "
            + "; ".join(f"rank {r}: {w}" for r, w in waiting.items())
            + ". A collective or message that some rank never reaches waits forever: run the same "
            "function with helpers.dist.run(...) (in-process ranks) to see which call is missing."
        )
    codes = [p.returncode for p in procs]
    if any(codes):
        head = f"{engine} launch of {spec} on {n} ranks failed (exit codes {codes})"
        raise RuntimeError(f"{head}:\n{text[-3000:]}")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers.dist.launch", description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, required=True, help="number of ranks")
    ap.add_argument("--engine", choices=("mpi", "nccl"), default="mpi")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before the ranks are stopped")
    ap.add_argument("target", help="module:function, called as function(comm, *args) on every rank")
    ap.add_argument("args", nargs="*")
    a = ap.parse_args(argv)
    try:
        launch(a.n, a.target, engine=a.engine, timeout=a.timeout, args=a.args)
    except DistTimeout as e:
        print(f"DistTimeout: {e}", file=sys.stderr)
        return 124
    except (RuntimeError, ValueError) as e:
        print(str(e).splitlines()[0] if "exit codes" in str(e) else str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
