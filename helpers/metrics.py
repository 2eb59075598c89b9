"""Numbers computed from a trace: per-thread counts, coalescing per source line, bank conflicts,
paths per warp; and a T4's occupancy for a block shape. Pure functions of a
`helpers.sim.trace.Trace`, no drawing and no verdicts: the rules (helpers.rules) turn them into
checks, the views (helpers.viz) into pictures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from helpers.sim.occupancy import T4_BLOCKS_PER_SM, T4_SHARED_PER_SM, T4_THREADS_PER_SM
from helpers.sim.trace import ATOMIC, READ, SECTOR_BYTES, WARP_SIZE, WRITE, Trace, WarpAccess, WarpGroups

NUM_BANKS = 32  # shared memory: 32 banks, each 4 bytes wide
BANK_BYTES = 4

# ---------------------------------------------------------------- counts


def thread_counts(trace: Trace) -> dict[str, np.ndarray]:
    """Per-thread counts, each shaped (nblocks, nthreads). Atomics count as neither reads nor writes."""
    return {
        "global_reads": trace.counts(space="global", kind=READ),
        "global_writes": trace.counts(space="global", kind=WRITE),
        "shared_reads": trace.counts(space="shared", kind=READ),
        "shared_writes": trace.counts(space="shared", kind=WRITE),
    }


def block_atomics(trace: Trace) -> np.ndarray:
    """Global atomics issued by each block, shape (nblocks,)."""
    rows = trace.select(space="global", kind=ATOMIC)
    return np.bincount(rows["block"], minlength=trace.nblocks)


def shared_bytes(trace: Trace) -> int:
    """Shared memory one block declared (every shared array of the trace, static and dynamic)."""
    return sum(a.nbytes for a in trace.arrays if a.space == "shared")


# ---------------------------------------------------------------- coalescing


def sectors(indices, itemsize: int) -> np.ndarray:
    """The distinct 32-byte sectors that elements `indices` of an array (32-byte aligned) fall in."""
    idx = np.asarray(indices, np.int64)
    first = idx * itemsize // SECTOR_BYTES
    last = (idx * itemsize + itemsize - 1) // SECTOR_BYTES
    return np.unique(np.concatenate([first, last]))


def ideal_sectors(indices, itemsize: int) -> int:
    """The fewest sectors that could carry the distinct elements requested."""
    n = len(np.unique(np.asarray(indices)))
    return -(-n * itemsize // SECTOR_BYTES)


@dataclass(frozen=True)
class Coalescing:
    """One warp-level global access: sectors it moved vs the fewest it could have."""

    access: WarpAccess
    sectors: int
    ideal: int

    @property
    def efficiency(self) -> float:
        return self.ideal / self.sectors if self.sectors else 1.0


def _distinct(group: np.ndarray, values: np.ndarray, ngroups: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (group, value) pairs, sorted: their groups and values."""
    if len(values) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    low = int(values.min())
    span = int(values.max()) - low + 1
    pairs = np.unique(group.astype(np.int64) * span + (values - low))
    return pairs // span, pairs % span + low


def _sizes(trace: Trace, g: WarpGroups) -> np.ndarray:
    """The itemsize of each row's array."""
    return np.array([a.itemsize for a in trace.arrays], np.int64)[g.rows["array"]]


def _sectors_and_ideal(trace: Trace, g: WarpGroups) -> tuple[np.ndarray, np.ndarray]:
    """Per warp instruction of `g`: the sectors it moved (`sectors` of its indices) and the fewest it
    could have (`ideal_sectors`), computed for all instructions at once."""
    n = len(g.starts)
    size, idx, group = _sizes(trace, g), g.rows["index"].astype(np.int64), g.group
    first, last = idx * size // SECTOR_BYTES, (idx * size + size - 1) // SECTOR_BYTES
    moved = np.bincount(_distinct(np.r_[group, group], np.r_[first, last], n)[0], minlength=n)
    elements = np.bincount(_distinct(group, idx, n)[0], minlength=n)
    return moved, -(-elements * size[g.starts] // SECTOR_BYTES)


def coalescing(trace: Trace) -> list[Coalescing]:
    """A `Coalescing` per warp-level global access, in `Trace.warp_accesses` order."""
    g = trace.warp_groups(space="global")
    moved, ideal = _sectors_and_ideal(trace, g)
    return [Coalescing(w, m, i) for w, m, i in zip(g.accesses(), moved.tolist(), ideal.tolist())]


def coalescing_by_line(trace: Trace) -> dict[tuple[int, str], tuple[int, int]]:
    """(source line, array name) -> (sectors moved, fewest possible) over all warp-level global accesses."""
    g = trace.warp_groups(space="global")
    moved, ideal = _sectors_and_ideal(trace, g)
    names = sorted({a.name for a in trace.arrays})  # arrays of one name add up together
    name = np.array([names.index(a.name) for a in trace.arrays], np.int64)[g.first("array")]
    line = np.array([s.lineno for s in trace.sites], np.int64)[g.first("site")]
    keys, which = np.unique(line * len(names) + name, return_inverse=True)
    return {
        (k // len(names), names[k % len(names)]): (int(m), int(i))
        for k, m, i in zip(
            keys.tolist(), np.bincount(which, moved).tolist(), np.bincount(which, ideal).tolist()
        )
    }


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


def line_of(trace: Trace, site: int) -> tuple[str, int]:
    """(filename, line number) of a site: one source line may hold several access instructions."""
    s = trace.sites[site] if 0 <= site < len(trace.sites) else None
    return (s.filename, s.lineno) if s else ("", site)


def _by_site(trace: Trace, g: WarpGroups, value, ideal, worst) -> list[SiteSummary]:
    """A SiteSummary per (source line, array, kind) of the instructions of `g`, given each
    instruction's value, ideal and worst."""
    if len(g.starts) == 0:
        return []
    site, array, kind = (g.first(f).astype(np.int64) for f in ("site", "array", "kind"))
    sites, at = np.unique(site, return_inverse=True)
    lines = [line_of(trace, s) for s in sites.tolist()]
    rank = {k: r for r, k in enumerate(sorted(set(lines)))}
    line = np.array([rank[k] for k in lines], np.int64)[at]
    _, first, which = np.unique(
        (line * len(trace.arrays) + array) * 3 + kind, return_index=True, return_inverse=True
    )
    n = len(first)
    low, high = np.full(n, site.max()), np.zeros(n, np.int64)
    np.minimum.at(low, which, site)
    np.maximum.at(high, which, worst)
    out = [
        SiteSummary(*map(int, row))
        for row in zip(
            low.tolist(),
            array[first].tolist(),
            kind[first].tolist(),
            np.bincount(which).tolist(),
            np.bincount(which, value).tolist(),
            np.bincount(which, ideal).tolist(),
            high.tolist(),
        )
    ]
    return sorted(out, key=lambda s: (line_of(trace, s.site), s.kind, s.array))


def coalescing_by_site(trace: Trace) -> list[SiteSummary]:
    """One `SiteSummary` per (source line, array, read/write): sectors moved vs ideal."""
    g = trace.warp_groups(space="global")
    moved, ideal = _sectors_and_ideal(trace, g)
    return _by_site(trace, g, moved, ideal, moved)


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


def _degrees(trace: Trace, g: WarpGroups) -> np.ndarray:
    """`conflict_degree` of every warp instruction of `g` at once."""
    n = len(g.starts)
    group, words = _distinct(g.group, g.rows["index"].astype(np.int64) * _sizes(trace, g) // BANK_BYTES, n)
    per_bank = np.bincount(group * NUM_BANKS + words % NUM_BANKS, minlength=n * NUM_BANKS)
    return per_bank.reshape(n, NUM_BANKS).max(axis=1, initial=0)


@dataclass(frozen=True)
class BankConflict:
    """One warp-level shared access with its bank conflict degree."""

    access: WarpAccess
    degree: int  # passes needed (1 = conflict-free)
    banks: np.ndarray  # bank per lane, aligned with access.lanes


def bank_conflicts(trace: Trace) -> list[BankConflict]:
    """A `BankConflict` per warp-level shared access, in `Trace.warp_accesses` order."""
    g = trace.warp_groups(space="shared")
    out = []
    for w, d in zip(g.accesses(), _degrees(trace, g).tolist()):
        out.append(BankConflict(w, d, banks(w.indices, trace.arrays[w.array].itemsize)))
    return out


def bank_conflicts_by_site(trace: Trace) -> list[SiteSummary]:
    """One `SiteSummary` per (source line, shared array, kind): passes needed vs one pass each."""
    g = trace.warp_groups(space="shared")
    degree = _degrees(trace, g)
    return _by_site(trace, g, degree, np.ones_like(degree), degree)


# ---------------------------------------------------------------- paths per warp


def _site_sets(threads: np.ndarray, sites: np.ndarray) -> tuple[np.ndarray, list]:
    """The distinct threads among the rows, and the set of sites each touched (as the bytes of its
    sorted site ids: equal sets give equal keys)."""
    if len(threads) == 0:
        return np.zeros(0, np.int64), []
    nsites = int(sites.max()) + 1
    pairs = np.unique(threads.astype(np.int64) * nsites + sites)  # sorted by thread, then site
    who, where = pairs // nsites, pairs % nsites
    starts = np.flatnonzero(np.r_[True, who[1:] != who[:-1]])
    ends = np.r_[starts[1:], len(who)]
    return who[starts], [where[a:b].tobytes() for a, b in zip(starts.tolist(), ends.tolist())]


def paths_per_warp(trace: Trace) -> np.ndarray:
    """Distinct paths per warp, shape (blocks, warps per block).

    A lane's path is the set of access instructions (source sites) it executed. Lanes that touched
    no memory at all (threads past the end of the data) are left out: they idle, they do not add a
    path of their own.
    """
    nwarps = math.ceil(trace.nthreads / WARP_SIZE)
    result = np.zeros((trace.nblocks, nwarps), np.int64)
    acc = trace.acc
    if len(acc) == 0:
        return result
    threads, paths = _site_sets(acc["block"].astype(np.int64) * trace.nthreads + acc["thread"], acc["site"])
    per_warp: dict = {}
    for k, path in zip(threads.tolist(), paths):
        block, thread = divmod(k, trace.nthreads)
        per_warp.setdefault((block, thread // WARP_SIZE), set()).add(path)
    for (block, w), distinct in per_warp.items():
        result[block, w] = len(distinct)
    return result


def lane_paths(trace: Trace, block: int = 0) -> np.ndarray:
    """Path number of every thread of one block, shape (warps, 32); -1 for idle or absent lanes."""
    nwarps = math.ceil(trace.nthreads / WARP_SIZE)
    grid = -np.ones((nwarps, WARP_SIZE), np.int64)
    rows = trace.select(block=block)
    ids: dict = {}
    for t, path in zip(*_site_sets(rows["thread"], rows["site"])):
        t = int(t)
        grid[t // WARP_SIZE, t % WARP_SIZE] = ids.setdefault(path, len(ids))
    return grid


# ---------------------------------------------------------------- occupancy on a T4

T4_REGISTERS_PER_SM = 65536  # 32-bit registers (Turing, compute capability 7.5)
T4_WARPS_PER_SM = T4_THREADS_PER_SM // WARP_SIZE


@dataclass(frozen=True)
class Occupancy:
    """How many blocks of one shape a T4 SM holds at once, and which resource runs out first."""

    blocks_per_sm: int
    warps_per_block: int
    limits: dict  # resource -> the blocks per SM it alone would allow

    @property
    def limit(self) -> str:
        """The resource that caps the blocks per SM (the first named, on a tie)."""
        return min(self.limits, key=self.limits.get)

    @property
    def fraction(self) -> float:
        """Resident warps over the most an SM holds (32 on a T4)."""
        return self.blocks_per_sm * self.warps_per_block / T4_WARPS_PER_SM


def t4_occupancy(threads: int, shared_bytes: int = 0, registers: int = 32) -> Occupancy:
    """Occupancy of blocks of `threads` threads, each block using `shared_bytes` of shared memory
    (static + dynamic) and each thread `registers` registers (an assumption: the compiler decides;
    register allocation granularity is left out)."""
    warps = -(-threads // WARP_SIZE)
    limits = {
        f"{T4_BLOCKS_PER_SM} blocks per SM": T4_BLOCKS_PER_SM,
        f"{T4_THREADS_PER_SM} threads per SM": T4_WARPS_PER_SM // warps,
        f"{T4_REGISTERS_PER_SM} registers per SM": T4_REGISTERS_PER_SM // (registers * warps * WARP_SIZE),
    }
    if shared_bytes:
        limits[f"{T4_SHARED_PER_SM // 1024} KiB of shared memory per SM"] = T4_SHARED_PER_SM // shared_bytes
    return Occupancy(min(limits.values()), warps, limits)
