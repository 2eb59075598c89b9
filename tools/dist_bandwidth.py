"""All-reduce bus bandwidth against message size: NCCL's own all-reduce and the course's ring
all-reduce (the reference solution of puzzles/dist/allreduce.py, on NCCL point-to-point), one
process per GPU. The goal: the ring reaches at least 80% of NCCL's bus bandwidth at 256 MiB.

    python -m tools.dist_bandwidth -n 4                     # 4 GPUs, NCCL, a table on stdout
    python -m tools.dist_bandwidth -n 2 --json bw2.json     # and the rows as JSON
    python -m tools.dist_bandwidth -n 2 --engine mpi --sizes 1,4   # CPU ranks (a smoke test)

Runs unattended: fewer GPUs than ranks, or no NCCL, prints one line ("skipped: ...") and exits 2;
a wrong ring raises before anything is timed; a rank that hangs is stopped at --timeout, named
(exit 124)."""

from __future__ import annotations

import argparse
import json
import sys

GOAL_MIB, GOAL = 256, 0.8


def rank_main(comm, sizes: str = "1,4,16,64,256,1024", path: str = "") -> None:
    """On every launched rank: measure; rank 0 prints the table (and writes the JSON)."""
    from helpers.dist.bandwidth import measure, table
    from puzzles.dist.allreduce import ring_allreduce

    extra = {}
    if comm.engine == "nccl":
        from helpers.dist.pipelined import ring_pipelined

        extra["pipelined"] = ring_pipelined  # the ring with its additions overlapped with transfers
    mibs = tuple(float(s) if "." in s else int(s) for s in sizes.split(","))
    rows = measure(comm, ring_allreduce, mibs, extra=extra)
    if comm.rank:
        return
    device = "cpu"
    info = {}
    if comm.engine == "nccl":
        import cupy

        device = cupy.cuda.runtime.getDeviceProperties(comm.device)["name"].decode()
        info["nccl_version"] = comm.nccl.get_version()
    print(f"device: {device}; ranks: {comm.size}; engine: {comm.engine} {info}")
    print(table(rows, comm.engine, comm.size))
    goal = next((r for r in rows if r["mib"] == GOAL_MIB), None)
    if goal:
        met = goal["ring_vs_engine"] >= GOAL
        pipe = goal.get("pipelined_vs_engine")
        piped = f" (pipelined ring: {pipe:.1%})" if pipe is not None else ""
        print(
            f"goal: ring >= {GOAL:.0%} of {comm.engine}'s bus bandwidth at {GOAL_MIB} MiB: "
            f"{goal['ring_vs_engine']:.1%} -> {'met' if met else 'NOT met'}" + piped
        )
    if path:
        with open(path, "w") as f:
            head = {"device": device, "ranks": comm.size, "engine": comm.engine, **info}
            json.dump({**head, "rows": rows}, f, indent=1)
        print(f"wrote {path}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.dist_bandwidth", description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=0, help="ranks (default: every GPU here)")
    ap.add_argument("--engine", choices=("nccl", "mpi"), default="nccl")
    ap.add_argument("--sizes", default="1,4,16,64,256,1024", help="MiB of float32, comma-separated")
    ap.add_argument("--json", default="", help="also write the rows here")
    ap.add_argument("--timeout", type=float, default=540.0)
    a = ap.parse_args(argv)
    from helpers.dist.errors import DistTimeout
    from helpers.dist.launch import launch
    from helpers.dist.missing import gpus, missing

    why = missing(a.engine)
    n = a.n or (gpus() if a.engine == "nccl" else 2)
    if not why and a.engine == "nccl" and (n < 2 or gpus() < n):
        why = f"NCCL bandwidth needs at least 2 GPUs and one per rank: {gpus()} here, {n} asked"
    if why:
        print(f"skipped: {why}")
        return 2
    try:
        args = (a.sizes, a.json)
        launch(n, "tools.dist_bandwidth:rank_main", engine=a.engine, timeout=a.timeout, args=args)
    except DistTimeout as e:
        print(f"DistTimeout: {e}", file=sys.stderr)
        return 124
    except RuntimeError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
