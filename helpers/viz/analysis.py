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
    """What each thread of `block` read before each of its writes: EDGE_DTYPE rows, deduplicated.

    Data flow through registers is invisible to the trace, so this is a rule of thumb: a write
    (or atomic) is fed by the reads its thread made in the same barrier interval since its last
    write; those reads are used up. With no such read, a write to global memory is fed by every
    read still unused (a value accumulated in a register over several intervals, as in a tiled
    matmul); a shared write then has no edge, since it is as likely a constant (zero padding of
    a tile) as a value carried over a barrier.
    """
    drawn = {a.id for a in drawn_arrays(trace)}
    rows = trace.acc[(trace.acc["block"] == block) & np.isin(trace.acc["array"], list(drawn))]
    if len(rows) == 0:
        return np.zeros(0, EDGE_DTYPE)
    order = np.argsort(rows["thread"], kind="stable")  # keeps each thread's execution order
    rows = rows[order]
    shared = np.array([a.space == "shared" for a in trace.arrays])
    epoch_key = np.where(shared[rows["array"]], rows["epoch"], -1)
    out = set()
    pending: list = []
    current = None
    for r, ek in zip(rows.tolist(), epoch_key.tolist()):
        thread, arr, idx, kind, epoch = r[1], r[2], r[3], r[4], r[5]
        if thread != current:
            current, pending = thread, []
        if kind == READ:
            pending.append((arr, ek, idx, epoch))
            continue
        same = [p for p in pending if p[3] == epoch]
        feed = same or (pending if ek < 0 else [])
        for sa, se, si, _ in feed:
            out.add((thread, sa, se, si, arr, ek, idx))
        pending = [p for p in pending if p[3] != epoch] if same else ([] if ek < 0 else pending)
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
