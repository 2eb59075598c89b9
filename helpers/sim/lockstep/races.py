"""Race checks over a barrier interval, vectorised: every access of the interval is logged as
(flat index, lanes, kind, warp epochs); at the barrier one pass finds elements that two threads
touched with at least one write (atomic pairs aside): semantics.unordered and semantics.conflict,
the rule the greenlet engine applies access by access.
Global arrays also keep, per element, the last block that read, wrote or atomically updated it,
for races between blocks."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..semantics import Actor, conflict, unordered
from ..trace import ATOMIC, READ, WARP_SIZE, WRITE


def check_interval(st: Any, n: int, wepoch: np.ndarray | None, report: Callable) -> None:
    """Races among this interval's accesses to storage `st` (then clears its log)."""
    log = list(st.log)
    st.log.clear()  # in place: aliasing views of dynamic shared memory share one log
    if not any(e[2] != READ for e in log):
        return
    flats = np.concatenate([np.broadcast_to(e[0], (len(e[1]),)) for e in log])
    lanes = np.concatenate([e[1] for e in log])
    kinds = np.concatenate([np.full(len(e[1]), e[2], np.int8) for e in log])
    # one owner per written element: a second writer, or a reader other than the owner, conflicts
    w = kinds != READ
    owner = st.scratch
    if owner is None:
        owner = st.scratch = np.full(st.size, -1, np.int64)
    wf, wl = flats[w], lanes[w]
    owner[wf] = wl
    suspicious = bool((owner[wf] != wl).any())
    if not suspicious:
        ro = owner[flats[~w]]
        suspicious = bool(((ro != -1) & (ro != lanes[~w])).any())
    owner[wf] = -1
    if not suspicious:
        return
    wep = None
    if any(e[3] is not None for e in log):
        wep = np.concatenate([np.zeros(len(e[1]), np.int64) if e[3] is None else e[3] for e in log])
    sites = np.concatenate([np.full(len(e[1]), e[4], np.int64) for e in log])
    _exact(flats, lanes, kinds, wep, sites, report)


def _exact(flats, lanes, kinds, wepoch, sites, report) -> None:
    """The exact rule, element by element, where the quick pass saw two threads (all in one block
    and one barrier interval: the actors differ in warp, warp epoch and thread)."""
    order = np.lexsort((lanes, flats))
    f, ln, k, sites = flats[order], lanes[order], kinds[order], sites[order]
    if wepoch is not None:
        wepoch = wepoch[order]
    starts = np.flatnonzero(np.r_[True, f[1:] != f[:-1]])
    ends = np.r_[starts[1:], len(f)]
    for s, e in zip(starts.tolist(), ends.tolist()):
        if e - s < 2 or ln[s] == ln[e - 1]:
            continue
        gk, gl = k[s:e], ln[s:e]
        if not (gk != READ).any():
            continue
        for i in range(e - s):
            for j in range(i + 1, e - s):
                a, b = int(gl[i]), int(gl[j])
                if not conflict(int(gk[i]), int(gk[j])):
                    continue
                wa, wb = (0, 0) if wepoch is None else (int(wepoch[s + i]), int(wepoch[s + j]))
                if not unordered(
                    Actor(0, 0, a // WARP_SIZE, wa, a), Actor(0, 0, b // WARP_SIZE, wb, b), False
                ):
                    continue
                report(int(f[s]), a, b, int(gk[i]), int(gk[j]), int(sites[s + j]))
                return


def check_blocks(st: Any, b: int, accesses: list, report: Callable) -> None:
    """Races between this block's accesses to global storage `st` and earlier blocks' (called with
    cross-block races on: semantics.unordered of two blocks' actors is then always true, so every
    conflicting pair of accesses from another block is a race)."""
    if not accesses:
        return
    if st.xb is None:
        st.xb = np.full((3, st.size), -1, np.int64)  # last reader, plain writer, atomic updater
    xb = st.xb
    for kind in (READ, WRITE, ATOMIC):
        parts = [np.atleast_1d(a[0]) for a in accesses if a[2] == kind]
        if not parts:
            continue
        site = next(a[4] for a in accesses if a[2] == kind)
        f = np.unique(np.concatenate(parts))
        for o in (o for o in (READ, WRITE, ATOMIC) if conflict(kind, o)):
            prev = xb[o, f]
            hit = (prev != -1) & (prev != b)
            if hit.any():
                i = int(np.flatnonzero(hit)[0])
                report(int(f[i]), int(prev[i]), kind, o, site)
                return
    for kind in (READ, WRITE, ATOMIC):
        parts = [np.atleast_1d(a[0]) for a in accesses if a[2] == kind]
        if parts:
            xb[kind, np.concatenate(parts)] = b
