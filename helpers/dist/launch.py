"""Start real ranks: mpirun for MPI (oversubscribed: a 2-core CI runs 4 ranks), one process per GPU
for NCCL, every one with NCCL_NVLS_ENABLE=0 and a timeout. A rank still waiting at the timeout is
named with the call and line it waits in; no launch outlives its timeout (no hang in a notebook).

    python -m helpers.dist.launch -n 4 --engine mpi [--timeout 60] module:function [args...]
    helpers.dist.launch(4, "module:function", engine="mpi", timeout=60, args=())
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
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
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), ROOT, env.get("PYTHONPATH", "")) if p)
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


def launch(n: int, spec: str, *, engine: str = "mpi", timeout: float = 60.0, args=()) -> str:
    """Run `function(comm, *args)` of 'module:function' on n ranks of `engine`; its output (echoed
    as it comes). Raises RuntimeError when the engine is missing or a rank fails, DistTimeout naming
    the ranks still waiting at `timeout` seconds."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"-n must be a positive number of ranks, got {n!r}")
    why = missing(engine)
    if why:
        raise RuntimeError(why)
    if engine == "nccl" and gpus() < n:
        raise RuntimeError(
            f"NCCL engine: {n} ranks need {n} GPUs (one process per GPU); this machine has {gpus()}"
        )
    with tempfile.TemporaryDirectory(prefix="mp-dist-") as directory:
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
