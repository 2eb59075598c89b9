"""Spin-waits: a thread that only re-reads (or atomically tries) a few addresses whose values do not
change. Every CHECK steps the running thread is looked at; stuck on two looks in a row, it yields to
the others (state SPIN); if none of them writes anything before all are finished or blocked, nothing
ever will, and the launch ends in Deadlock naming the thread, the line and the address (on a GPU
the kernel hangs). Needs the trace's records, so only traced launches are checked this way."""

from __future__ import annotations

import linecache
from typing import Any

import numpy as np

from .. import errors as E
from ..messages import diagnostic
from ..semantics import SPIN_CHECK
from ..trace import WRITE
from . import assemble
from .threads import BAR, DONE, SPIN, Thread

CHECK = SPIN_CHECK  # steps between looks (semantics.py: the step count both engines keep)


def looks_stuck(run: Any) -> bool:
    """Has the running thread only re-read (or atomically tried) a few addresses whose values stayed
    the same, over two looks CHECK steps apart?"""
    tail = run.rec[-(CHECK // 2) :]
    if len(tail) < CHECK // 2:
        return False
    me = run.cur
    addrs = set()
    for a, ak, flat, _, _ in tail:
        if ak & 3 == WRITE or a[4] != me.t or a[0] != me.b:
            return False
        addrs.add((ak >> 2, flat))
        if len(addrs) > 8:
            return False
    probe = (
        me.b,
        me.t,
        frozenset(addrs),
        tuple(run.storages[aid].data[flat].item() for aid, flat in sorted(addrs)),
    )
    last, run.spin_probe = run.spin_probe, probe
    return probe == last


def deadlock(run: Any, spinning: list[Thread]) -> E.SimulatorError:
    th = spinning[0]
    a, ak, flat, code, lasti = next(r for r in reversed(run.rec) if r[0][4] == th.t and r[0][0] == th.b)
    info = run.arrays[ak >> 2]
    idx = tuple(int(i) for i in np.unravel_index(flat, info.shape)) if info.shape else (flat,)
    idx_s = ", ".join(map(str, idx))
    line = assemble.line_of(code, lasti)
    src = linecache.getline(code.co_filename, line).strip()
    others = [o for o in run.threads if o.state not in (DONE, SPIN)]
    state = (
        "every other thread of the block has finished or waits at a barrier"
        if not spinning[1:]
        else f"{len(spinning)} threads spin so, and the others have finished or wait at a barrier"
    )
    if others and others[0].state == BAR:
        state += f" (thread {tuple(others[0].tidx)} at line {others[0].wait.line()[0]})"
    msg = (
        f"deadlock: this thread spins re-reading {info.space} array `{info.name}`[{idx_s}], waiting "
        f"for it to change, but nothing can change it any more: {state}, and no thread of the "
        "blocks that ran before wrote it. Blocks cannot wait for each other (they run in any order "
        "and need not be resident together) and a flag nobody sets is never set: on a GPU this "
        "kernel hangs. Restructure so no thread waits for another block (split the kernel in two "
        "launches, or use atomics to let the last block finish the work)."
    )
    return diagnostic(
        E.Deadlock, msg, block=th.bidx, thread=th.tidx, line=line, source=src, array=info.name, index=idx
    )
