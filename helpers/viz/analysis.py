"""The numbers behind the pictures, as pure functions of a `Trace` (no drawing here).

Everything the views show is computed here first, so it can be tested on its own:
per-thread counts against a budget, read -> write edges for the access map,
32-byte sectors per warp access (coalescing) and shared-memory bank conflicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.sim.trace import (  # noqa: F401  (sectors, ideal_sectors: part of this module's API)
    ATOMIC,
    READ,
    SECTOR_BYTES,
    WRITE,
    Trace,
    WarpAccess,
    ideal_sectors,
    sectors,
)

NUM_BANKS = 32  # shared memory: 32 banks, each 4 bytes wide
BANK_BYTES = 4

COUNT_KEYS = ("global_reads", "global_writes", "shared_reads", "shared_writes")
COUNT_LABELS = {
    "global_reads": "global reads",
    "global_writes": "global writes",
    "shared_reads": "shared reads",
    "shared_writes": "shared writes",
    "global_atomics_per_block": "global atomics per block",
    "shared_bytes": "shared bytes per block",
}


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


# ---------------------------------------------------------------- counts vs budget


def thread_counts(trace: Trace) -> dict:
    """Per-thread counts, each shaped (nblocks, nthreads). Atomics count as neither reads nor writes."""
    return {
        "global_reads": trace.counts(space="global", kind=READ),
        "global_writes": trace.counts(space="global", kind=WRITE),
        "shared_reads": trace.counts(space="shared", kind=READ),
        "shared_writes": trace.counts(space="shared", kind=WRITE),
    }


def block_atomics(trace: Trace) -> np.ndarray:
    """Global atomics issued by each block, shape (nblocks,)."""
    return trace.counts(space="global", kind=ATOMIC).sum(axis=1)


def shared_bytes(trace: Trace) -> int:
    """Shared memory one block declared (every shared array of the trace, static and dynamic)."""
    return sum(a.nbytes for a in trace.arrays if a.space == "shared")


def resolve_budget(budget, case=None) -> dict:
    """A `helpers.puzzle.Budget` (limits may be functions of the case) as {key: int}; None entries dropped."""
    if budget is None:
        return {}
    if isinstance(budget, dict):
        items = budget.items()
    else:
        items = ((k, getattr(budget, k)) for k in budget.__dataclass_fields__)
    out = {}
    for k, v in items:
        if callable(v):
            v = v(case)
        if v is not None:
            out[k] = int(v)
    return out


@dataclass(frozen=True)
class Overage:
    """The worst offender of one budget."""

    key: str
    block: int  # linear block id
    thread: int  # linear thread id (-1 for per-block budgets)
    value: int
    limit: int


def over_budget(counts: dict, limits: dict) -> dict:
    """{key: boolean mask shaped like counts[key]} of threads over their limit (keys with a limit only)."""
    return {k: counts[k] > limits[k] for k in counts if k in limits}


def worst_overages(trace: Trace, limits: dict) -> list:
    """One `Overage` per broken budget: the thread (or block) furthest over it, ties to the lowest id."""
    found = []
    counts = thread_counts(trace)
    for k, mask in over_budget(counts, limits).items():
        if mask.any():
            flat = int(np.argmax(counts[k]))
            b, t = divmod(flat, trace.nthreads)
            found.append(Overage(k, b, t, int(counts[k][b, t]), limits[k]))
    if "global_atomics_per_block" in limits:
        per_block = block_atomics(trace)
        if per_block.size and per_block.max() > limits["global_atomics_per_block"]:
            b = int(np.argmax(per_block))
            found.append(
                Overage(
                    "global_atomics_per_block", b, -1, int(per_block[b]), limits["global_atomics_per_block"]
                )
            )
    if "shared_bytes" in limits and shared_bytes(trace) > limits["shared_bytes"]:
        found.append(Overage("shared_bytes", 0, -1, shared_bytes(trace), limits["shared_bytes"]))
    return found


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


# ---------------------------------------------------------------- coalescing


@dataclass(frozen=True)
class Coalescing:
    """One warp-level global access: sectors it moved vs the fewest it could have."""

    access: WarpAccess
    sectors: int
    ideal: int

    @property
    def efficiency(self) -> float:
        return self.ideal / self.sectors if self.sectors else 1.0


def coalescing(trace: Trace) -> list:
    """A `Coalescing` per warp-level global access, in `Trace.warp_accesses` order."""
    out = []
    for w in trace.warp_accesses(space="global"):
        size = trace.arrays[w.array].itemsize
        out.append(Coalescing(w, len(sectors(w.indices, size)), ideal_sectors(w.indices, size)))
    return out


@dataclass(frozen=True)
class SiteSummary:
    """All warp accesses of one source line to one array of one kind, added up."""

    site: int  # the first site of that line (for its text)
    array: int
    kind: int
    count: int  # warp instructions
    total: int  # sectors moved (coalescing) or passes (banks)
    ideal: int  # the fewest possible
    worst: int  # worst single instruction: sectors, or conflict degree

    @property
    def efficiency(self) -> float:
        return self.ideal / self.total if self.total else 1.0


def line_of(trace: Trace, site: int) -> tuple:
    """(filename, line number) of a site: one source line may hold several access instructions."""
    s = trace.sites[site] if 0 <= site < len(trace.sites) else None
    return (s.filename, s.lineno) if s else ("", site)


def _by_site(trace, items, value, ideal, worst) -> list:
    groups: dict = {}
    for it in items:
        w = it.access
        groups.setdefault((line_of(trace, w.site), w.array, w.kind), []).append(it)
    out = [
        SiteSummary(
            min(i.access.site for i in g),
            a,
            k,
            len(g),
            sum(value(i) for i in g),
            sum(ideal(i) for i in g),
            max(worst(i) for i in g),
        )
        for (_, a, k), g in groups.items()
    ]
    return sorted(out, key=lambda s: (line_of(trace, s.site), s.kind, s.array))


def coalescing_by_site(trace: Trace) -> list:
    """One `SiteSummary` per (source line, array, read/write): sectors moved vs ideal."""
    return _by_site(trace, coalescing(trace), lambda c: c.sectors, lambda c: c.ideal, lambda c: c.sectors)


# ---------------------------------------------------------------- shared-memory banks


def bank_words(indices, itemsize: int) -> np.ndarray:
    """The 4-byte word each element starts in (element index * itemsize // 4)."""
    return np.asarray(indices, np.int64) * itemsize // BANK_BYTES


def banks(indices, itemsize: int) -> np.ndarray:
    """Bank of each lane's element: (index * itemsize // 4) % 32."""
    return bank_words(indices, itemsize) % NUM_BANKS


def conflict_degree(indices, itemsize: int) -> int:
    """Passes the warp access needs: the most distinct words any one bank must deliver.

    Lanes reading the same word share one delivery (broadcast), so 1 means conflict-free.
    """
    words = np.unique(bank_words(indices, itemsize))
    if words.size == 0:
        return 0
    return int(np.bincount(words % NUM_BANKS, minlength=NUM_BANKS).max())


@dataclass(frozen=True)
class BankConflict:
    """One warp-level shared access with its bank conflict degree."""

    access: WarpAccess
    degree: int  # passes needed (1 = conflict-free)
    banks: np.ndarray  # bank per lane, aligned with access.lanes


def bank_conflicts(trace: Trace) -> list:
    """A `BankConflict` per warp-level shared access, in `Trace.warp_accesses` order."""
    out = []
    for w in trace.warp_accesses(space="shared"):
        size = trace.arrays[w.array].itemsize
        out.append(BankConflict(w, conflict_degree(w.indices, size), banks(w.indices, size)))
    return out


def bank_conflicts_by_site(trace: Trace) -> list:
    """One `SiteSummary` per (source line, shared array, kind): passes needed vs one pass each."""
    return _by_site(trace, bank_conflicts(trace), lambda b: b.degree, lambda b: 1, lambda b: b.degree)
