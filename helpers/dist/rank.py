"""One launched rank: `python -m helpers.dist.rank --engine mpi|nccl module:function [args...]`
(the launcher runs it; it builds the engine's Comm and calls function(comm, *args))."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback

from . import state
from .current import world


def target(spec: str):
    """'module:function' -> the function, or an error naming what is missing."""
    module, _, name = spec.partition(":")
    if not name:
        raise SystemExit(f"expected module:function, got {spec!r}")
    fn = getattr(importlib.import_module(module), name, None)
    if fn is None:
        raise SystemExit(f"module {module} has no function {name!r}")
    return fn


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers.dist.rank")
    ap.add_argument("--engine", choices=("mpi", "nccl"), required=True)
    ap.add_argument("target")
    ap.add_argument("args", nargs="*")
    a = ap.parse_args(argv)
    os.environ["MP_DIST_ENGINE"] = a.engine
    fn = target(a.target)
    comm = world()
    state.leave(comm.rank)
    try:
        fn(comm, *a.args)
        if hasattr(comm, "close"):
            comm.close()
    except BaseException:
        sys.stdout.flush()
        print(f"[rank {comm.rank}] failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        state.leave(comm.rank, "failed")
        if a.engine == "mpi":
            comm.comm.Abort(1)  # the other ranks would wait for this one forever
        return 1
    state.leave(comm.rank, "finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
