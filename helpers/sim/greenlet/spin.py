"""Spin-waits: a thread that only re-reads (or atomically tries) a few addresses whose values do not
change. Every CHECK steps the running thread is looked at; stuck on two looks in a row, it yields to
the others (state SPIN, remembering the addresses and the values it saw). Once all the others are
finished or blocked, a spinning thread whose addresses still hold those values would do the same
again forever: nothing is left to change them. A thread that re-reads (or polls with an atomic that
changes nothing) ends the launch in Deadlock: it waits for a write that never comes. One that
retries a cas whose expected value is stale ends it in Runaway: its loop never ends. Either names the
thread, the line and the address (on a GPU the kernel hangs). Needs the trace's records, so only
traced launches are checked this way."""

from __future__ import annotations

import itertools
import linecache
from typing import Any

import numpy as np

from .. import errors as E
from ..messages import diagnostic
from ..semantics import SPIN_CHECK
from ..trace import ATOMIC, WRITE
from . import assemble
from .threads import BAR, DONE, SPIN, Thread

CHECK = SPIN_CHECK  # steps between looks (semantics.py: the step count both engines keep)
# while a thread spins, every EARLY steps an uncounted look at the running thread: one that touches
# only what a spinning thread watches, still holding what it saw, spins too (many threads often spin
# on one flag: each would otherwise take two looks, 2 * CHECK steps, to be seen)
EARLY = 512


def _probe(run: Any, records: int) -> tuple | None:
    """(block, thread, addresses, their values now) when the running thread made each of the last
    `records` accesses, none a write, to at most 8 addresses; else None."""
    tail = run.rec[-records:]
    if len(tail) < records:
        return None
    me = run.cur
    addrs = set()
    for a, ak, flat, _, _ in tail:
        if ak & 3 == WRITE or a[4] != me.t or a[0] != me.b:
            return None
        addrs.add((ak >> 2, flat))
        if len(addrs) > 8:
            return None
    return (me.b, me.t, frozenset(addrs), _values(run, addrs))


def _values(run: Any, addrs) -> tuple:
    return tuple(run.storages[aid].data[flat].item() for aid, flat in sorted(addrs))


def looks_stuck(run: Any) -> bool:
    """Has the running thread only re-read (or atomically tried) a few addresses whose values stayed
    the same, over two looks CHECK steps apart?"""
    probe = _probe(run, CHECK // 2)
    if probe is None:
        return False
    last, run.spin_probe = run.spin_probe, probe
    return probe == last


def spins_like_another(run: Any) -> bool:
    """Has the running thread, over its last EARLY // 2 accesses, only touched (without writing) the
    addresses a spinning thread watches, which still hold the values it saw?"""
    probe = _probe(run, EARLY // 2)
    if probe is None or probe[2:] not in run.spin_like:
        return False
    run.spin_probe = probe
    return True


def anything_changed(run: Any, spinning: list[Thread]) -> bool:
    """Does an address a spinning thread watches hold another value than the one it saw?"""
    for th in spinning:
        _, _, addrs, seen = th.result
        if _values(run, addrs) != seen:
            return True
    return False


def stuck(run: Any, spinning: list[Thread]) -> E.SimulatorError:
    """The verdict on threads that spin on values nothing will change: Deadlock for a thread that
    re-reads, Runaway for one that retries an atomic (its own tries change nothing)."""
    th = spinning[0]
    # its last accesses (one trip of the loop at least): the atomic it retries is the line to fix
    mine = list(itertools.islice((r for r in reversed(run.rec) if r[0][4] == th.t and r[0][0] == th.b), 16))
    a, ak, flat, code, lasti = next((r for r in mine if r[1] & 3 == ATOMIC), mine[0])
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
    where = dict(block=th.bidx, thread=th.tidx, line=line, source=src, array=info.name, index=idx)
    if ak & 3 == ATOMIC and "cas(" in src:
        value = run.storages[ak >> 2].data[flat].item()
        return diagnostic(
            E.Runaway,
            f"this loop never ends: the thread retries an atomic on {info.space} array `{info.name}`"
            f"[{idx_s}], which holds {value!r} try after try, and its tries change nothing ({state}; no "
            "thread of the blocks that ran before changes it either). A cuda.atomic.cas that fails "
            "fails again with the same expected value: take the value cas returns as the next one "
            "to expect. On a GPU this kernel hangs.",
            **where,
        )
    msg = (
        f"deadlock: this thread spins re-reading {info.space} array `{info.name}`[{idx_s}]"
        f"{' (with an atomic that changes nothing)' if ak & 3 == ATOMIC else ''}, waiting "
        f"for it to change, but nothing can change it any more: {state}, and no thread of the "
        "blocks that ran before wrote it. Blocks cannot wait for each other (they run in any order "
        "and need not be resident together) and a flag nobody sets is never set: on a GPU this "
        "kernel hangs. Restructure so no thread waits for another block (split the kernel in two "
        "launches, or use atomics to let the last block finish the work)."
    )
    return diagnostic(E.Deadlock, msg, **where)
