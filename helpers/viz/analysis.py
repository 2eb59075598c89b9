"""What the access map needs beside the metrics: names of threads and blocks, read -> write edges,
writers per cell, sampling. Pure functions of a `Trace` (no drawing here).

Counts, coalescing and bank conflicts are `helpers.metrics` (re-exported here for the views); the
limits they are held to are `helpers.rules`.
"""

from __future__ import annotations

import numpy as np

from helpers.metrics import (  # noqa: F401  (the numbers the views draw; helpers.metrics computes them)
    BANK_BYTES,
    NUM_BANKS,
    BankConflict,
    Coalescing,
    SiteSummary,
    bank_conflicts,
    bank_conflicts_by_site,
    bank_words,
    banks,
    block_atomics,
    coalescing,
    coalescing_by_site,
    conflict_degree,
    ideal_sectors,
    line_of,
    sectors,
    shared_bytes,
    thread_counts,
)
from helpers.sim.trace import ATOMIC, READ, SECTOR_BYTES, WRITE, Trace  # noqa: F401


def thread_name(trace: Trace, t: int) -> str:
    """A thread as a learner indexes it: "3" in a 1-D block, "(3,1)" in 2-D."""
    x, y, z = trace.thread_index(t)
    if trace.block[1] == 1 and trace.block[2] == 1:
        return f"{x}"
    return f"({x},{y})" if trace.block[2] == 1 else f"({x},{y},{z})"


def block_name(trace: Trace, b: int) -> str:
    """ "block 2" in a 1-D grid, "block (2,1)" in 2-D."""
    x, y, z = trace.block_index(b)
    if trace.grid[1] == 1 and trace.grid[2] == 1:
        return f"block {x}"
    return f"block ({x},{y})" if trace.grid[2] == 1 else f"block ({x},{y},{z})"


# ---------------------------------------------------------------- access map edges

EDGE_DTYPE = np.dtype(
    [
        ("thread", "i4"),
        ("src_array", "i2"),
        ("src_epoch", "i4"),
        ("src_index", "i8"),
        ("dst_array", "i2"),
        ("dst_epoch", "i4"),
        ("dst_index", "i8"),
    ]
)


def drawn_arrays(trace: Trace) -> list:
    """Arrays the access map draws: global, constant and shared (local arrays are private scratch)."""
    return [a for a in trace.arrays if a.space in ("global", "shared", "const")]


def node_epoch(trace: Trace, array_id: int, epoch: int) -> int:
    """Shared arrays get one copy per barrier interval; everything else a single copy (-1)."""
    return int(epoch) if trace.arrays[array_id].space == "shared" else -1


def edges(trace: Trace, block: int) -> np.ndarray:
    """What fed each write of `block`'s threads: EDGE_DTYPE rows, deduplicated.

    Data flow through registers is invisible to the trace, so this is a rule of thumb: a write
    (or atomic) is fed by the reads its thread made in the same barrier interval since its last
    write, and by those that reached it through warp shuffles (`Trace.moves`: a lane that receives
    a shuffled value receives what fed it, so a warp reduction's write is fed by every lane's read);
    those reads are used up. With no such read, a write to global memory is fed by every read still
    unused (a value accumulated in a register over several intervals, as in a tiled matmul); a
    shared write then has no edge, since it is as likely a constant (zero padding of a tile) as a
    value carried over a barrier. Values passed through shared memory show as two steps: a thread's
    write to the shared cell, and the read of that cell that fed another thread's write.
    """
    drawn = {a.id for a in drawn_arrays(trace)}
    rows = trace.acc[trace.acc["block"] == block]
    if not np.isin(rows["array"], list(drawn)).any():
        return np.zeros(0, EDGE_DTYPE)
    rows = rows[np.argsort(rows["thread"], kind="stable")]  # keeps each thread's execution order
    shared = np.array([a.space == "shared" for a in trace.arrays])
    epoch_key = np.where(shared[rows["array"]], rows["epoch"], -1)
    threads, starts = np.unique(rows["thread"], return_index=True)
    start_of = dict(zip(threads.tolist(), starts.tolist()))
    end_of = dict(zip(threads.tolist(), np.r_[starts[1:], len(rows)].tolist()))
    listed, keys = rows.tolist(), epoch_key.tolist()
    out: set = set()
    pending: dict = {}  # thread -> reads not yet used by a write: (array, epoch key, index, epoch)
    cursor = dict(start_of)

    def advance(thread: int, upto: int) -> None:
        """Play `thread`'s rows up to its `upto`-th (all of them when upto is None)."""
        k, end = cursor.get(thread), end_of.get(thread)
        if k is None:
            return
        stop = end if upto is None else min(end, start_of[thread] + upto)
        mine = pending.setdefault(thread, set())
        for i in range(k, stop):
            r, ek = listed[i], keys[i]
            arr, idx, kind, epoch = r[2], r[3], r[4], r[5]
            if arr not in drawn:
                continue
            if kind == READ:
                mine.add((arr, ek, idx, epoch))
                continue
            same = {p for p in mine if p[3] == epoch}
            for sa, se, si, _ in same or (mine if ek < 0 else ()):
                out.add((thread, sa, se, si, arr, ek, idx))
            if same:
                mine -= same
            elif ek < 0:
                mine.clear()
        cursor[thread] = max(k, stop)

    moves = trace.moves[trace.moves["block"] == block]
    for rnd in np.unique(moves["round"]).tolist():
        now = moves[moves["round"] == rnd]
        for t, before in zip(now["thread"].tolist(), now["before"].tolist()):
            advance(t, before)
        got = {s: set(pending.get(s, ())) for s in set(now["src"].tolist())}
        for t, src in zip(now["thread"].tolist(), now["src"].tolist()):
            if src != t:
                pending.setdefault(t, set()).update(got[src])
    for t in threads.tolist():
        advance(t, None)
    return np.array(sorted(out), EDGE_DTYPE)


def writers(trace: Trace, block: int | None = None) -> dict:
    """{(array id, epoch key, flat index): sorted tuple of writer thread ids} for writes and atomics."""
    rows = trace.select(kind=[WRITE, ATOMIC], block=block)
    found: dict = {}
    for b, t, arr, idx, ep in zip(
        rows["block"].tolist(),
        rows["thread"].tolist(),
        rows["array"].tolist(),
        rows["index"].tolist(),
        rows["epoch"].tolist(),
    ):
        key = (arr, node_epoch(trace, arr, ep), idx)
        found.setdefault(key, set()).add(t if block is not None else (b, t))
    return {k: tuple(sorted(v)) for k, v in found.items()}


def shared_epochs(trace: Trace, blocks) -> dict:
    """{shared array id: sorted barrier intervals in which any of `blocks` touched it}."""
    rows = trace.acc[np.isin(trace.acc["block"], list(blocks))]
    out = {}
    for a in trace.arrays:
        if a.space == "shared":
            out[a.id] = sorted(set(rows["epoch"][rows["array"] == a.id].tolist()))
    return out


def sample(n: int, limit: int, must=()) -> list:
    """At most `limit` of range(n), evenly spread, always including `must` (deterministic)."""
    if n <= limit:
        return list(range(n))
    must = [m for m in must if 0 <= m < n][:limit]
    rest = limit - len(must)
    picked = set(must)
    if rest > 0:
        picked |= set(np.linspace(0, n - 1, rest).round().astype(int).tolist())
    extra = (i for i in range(n) if i not in picked)
    while len(picked) < limit:  # rounding can merge two picks
        picked.add(next(extra))
    return sorted(picked)
