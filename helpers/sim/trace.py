"""The trace: every memory access a simulated launch made, as plain NumPy data.

Recording and drawing are separate (the triton-viz split): the simulator
fills a `Trace`, the harness and the visualizers only read it.

`Trace.acc` is a structured array with one row per access, in execution order:

    block   int32  linear block id   bx + by*gx + bz*gx*gy
    thread  int32  linear thread id  tx + ty*Bx + tz*Bx*By  (warp = thread // 32)
    array   int16  index into `Trace.arrays`
    index   int64  flat C-order element index into that array
    kind    int8   READ, WRITE or ATOMIC
    epoch   int32  barrier interval: how many syncthreads the thread had passed
    site    int32  index into `Trace.sites` (one per access instruction)
    occ     int32  how many times this thread had already executed this site in
                   this epoch
    issue   int32  which instruction the block issued (the lockstep engine, which
                   runs a warp's lanes together, knows it); -1 where the engine does
                   not (greenlet runs threads one by one)

Lanes of one warp executed an access together, as one warp instruction, when they
share `issue` (where known) or else (epoch, site, occ). The two differ in divergent
loops: when lanes run different numbers of trips, the n-th execution of a site is a
different instruction for different lanes.

`Trace.moves` (MOVE_DTYPE) records the values that travelled between lanes through
warp shuffles: one row per receiving lane, so that a picture can draw what fed a write.

Shared arrays have one `ArrayInfo` per declaration and one copy per block (the
`block` column says which); local arrays one copy per thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

READ, WRITE, ATOMIC = 0, 1, 2
SECTOR_BYTES = 32  # global memory moves in 32-byte sectors
KIND_NAMES = ("read", "write", "atomic")
WARP_SIZE = 32

ACCESS_DTYPE = np.dtype(
    [
        ("block", "i4"),
        ("thread", "i4"),
        ("array", "i2"),
        ("index", "i8"),
        ("kind", "i1"),
        ("epoch", "i4"),
        ("site", "i4"),
        ("occ", "i4"),
        ("issue", "i4"),
    ]
)

MOVE_DTYPE = np.dtype(
    [
        ("block", "i4"),
        ("thread", "i4"),  # the lane that received the value (linear thread id)
        ("src", "i4"),  # the lane whose value it received
        ("epoch", "i4"),
        ("before", "i4"),  # how many trace rows of `thread` came before the shuffle
        ("round", "i4"),  # how many shuffles `thread` had received before this one
    ]
)


def moves_table(acc: np.ndarray, position: np.ndarray, moves, nthreads: int) -> np.ndarray:
    """MOVE_DTYPE rows from an engine's raw shuffle records (block, epoch, thread, src, pos), `pos`
    counted in the engine's own order of `position` (one value per acc row, ascending per thread):
    `before` becomes the number of the thread's rows before the shuffle, the same in every engine.
    A record's thread and src may be arrays (a shuffle's lanes at once): it stands for one row a lane."""
    moves = list(moves)
    if moves and isinstance(moves[0][2], np.ndarray):  # lockstep: a record per shuffle, lanes as arrays
        parts = [np.broadcast_arrays(*(np.asarray(f, np.int64) for f in m)) for m in moves]
        raw = np.stack([np.concatenate([p[k].ravel() for p in parts]) for k in range(5)], axis=1)
    else:  # greenlet: a record per lane
        raw = np.array(moves, np.int64).reshape(-1, 5)
    out = np.zeros(len(raw), MOVE_DTYPE)
    if not len(raw):
        return out
    span = int(max(position.max(initial=0), raw[:, 4].max())) + 1
    who = acc["block"].astype(np.int64) * nthreads + acc["thread"]
    keys = np.sort(who * span + position)
    mine = raw[:, 0] * nthreads + raw[:, 2]
    out["before"] = np.searchsorted(keys, mine * span + raw[:, 4]) - np.searchsorted(keys, mine * span)
    for k, f in enumerate(("block", "epoch", "thread", "src")):
        out[f] = raw[:, k]
    order = np.argsort(mine, kind="stable")  # records are in time order: a thread's k-th is its round k
    m = mine[order]
    first = np.maximum.accumulate(np.where(np.r_[True, m[1:] != m[:-1]], np.arange(len(m)), 0))
    out["round"][order] = np.arange(len(m)) - first
    return out


@dataclass(frozen=True)
class ArrayInfo:
    id: int
    name: str  # parameter name, or the variable a shared/local array was assigned to
    space: str  # "global" | "shared" | "local" | "const"
    shape: tuple
    dtype: np.dtype
    role: str = ""  # for globals: "in", "out", "inout" or "scratch" as the caller declared; else ""

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.itemsize


@dataclass(frozen=True)
class Site:
    id: int
    filename: str
    lineno: int
    text: str  # the source line, stripped


@dataclass(frozen=True)
class WarpAccess:
    """Lanes of one warp that executed one access instruction together."""

    block: int
    warp: int
    epoch: int
    site: int
    array: int
    kind: int
    lanes: np.ndarray  # lane ids, ascending
    indices: np.ndarray  # flat element index per lane


@dataclass(frozen=True)
class WarpGroups:
    """Trace rows sorted so that each warp instruction's lanes are consecutive: instruction k is
    `rows[starts[k]:ends[k]]`, lanes ascending."""

    rows: np.ndarray  # ACCESS_DTYPE rows
    warp: np.ndarray  # the warp of each row
    starts: np.ndarray
    ends: np.ndarray

    @property
    def group(self) -> np.ndarray:
        """The instruction number of each row."""
        return np.repeat(np.arange(len(self.starts)), self.ends - self.starts)

    def first(self, field: str) -> np.ndarray:
        """`field` of each instruction (the same on all its lanes: block, epoch, site, array, kind)."""
        return self.rows[field][self.starts]

    def accesses(self) -> list[WarpAccess]:
        r = self.rows
        return [
            WarpAccess(
                int(r["block"][s]),
                int(self.warp[s]),
                int(r["epoch"][s]),
                int(r["site"][s]),
                int(r["array"][s]),
                int(r["kind"][s]),
                (r["thread"][s:e] % WARP_SIZE).astype(np.int32),
                r["index"][s:e].copy(),
            )
            for s, e in zip(self.starts.tolist(), self.ends.tolist())
        ]


@dataclass
class Trace:
    grid: tuple  # (gx, gy, gz)
    block: tuple  # (bx, by, bz)
    arrays: list[ArrayInfo]
    sites: list[Site]
    acc: np.ndarray  # ACCESS_DTYPE rows
    before: dict = field(default_factory=dict)  # global array name -> contents before the launch
    after: dict = field(default_factory=dict)  # global array name -> contents after the launch
    moves: np.ndarray = field(default_factory=lambda: np.zeros(0, MOVE_DTYPE))  # shuffles (MOVE_DTYPE)

    @property
    def nblocks(self) -> int:
        return int(np.prod(self.grid))

    @property
    def nthreads(self) -> int:
        return int(np.prod(self.block))

    def array(self, name: str) -> ArrayInfo:
        for a in self.arrays:
            if a.name == name:
                return a
        raise KeyError(f"no array named {name!r} in this trace; have {[a.name for a in self.arrays]}")

    def block_index(self, linear: int) -> tuple:
        gx, gy, _ = self.grid
        return (linear % gx, (linear // gx) % gy, linear // (gx * gy))

    def thread_index(self, linear: int) -> tuple:
        bx, by, _ = self.block
        return (linear % bx, (linear // bx) % by, linear // (bx * by))

    def select(self, *, array=None, space=None, kind=None, block=None) -> np.ndarray:
        """Rows matching every filter given (array by name or id, space by name)."""
        m = np.ones(len(self.acc), bool)
        if array is not None:
            aid = self.array(array).id if isinstance(array, str) else array
            m &= self.acc["array"] == aid
        if space is not None:
            ids = [a.id for a in self.arrays if a.space == space]
            m &= np.isin(self.acc["array"], ids)
        if kind is not None:
            m &= np.isin(self.acc["kind"], np.atleast_1d(kind))
        if block is not None:
            m &= self.acc["block"] == block
        return self.acc[m]

    def counts(self, *, space="global", kind=READ, array=None) -> np.ndarray:
        """Per-thread access counts, shape (nblocks, nthreads)."""
        rows = self.select(space=space, kind=kind, array=array)
        out = np.zeros(self.nblocks * self.nthreads, np.int64)
        np.add.at(out, rows["block"].astype(np.int64) * self.nthreads + rows["thread"], 1)
        return out.reshape(self.nblocks, self.nthreads)

    def heatmap(self, name: str, kind=None) -> np.ndarray:
        """Accesses per element of one array (all blocks/threads), shaped like the array."""
        info = self.array(name)
        rows = self.select(array=info.id, kind=kind)
        size = int(np.prod(info.shape, dtype=np.int64))
        return np.bincount(rows["index"], minlength=size)[:size].reshape(info.shape)

    def warp_groups(self, *, space="global", kind=None) -> WarpGroups:
        """The rows of `space` (and `kind`) sorted into warp instructions (see the module docstring)."""
        rows = self.select(space=space, kind=kind)
        if len(rows) == 0:
            empty = np.zeros(0, np.int64)
            return WarpGroups(rows, empty, empty, empty)
        warp = rows["thread"] // WARP_SIZE
        known = rows["issue"] >= 0  # the instruction issued, where the engine knows it
        occ = np.where(known, -1, rows["occ"])
        order = np.lexsort(
            (
                rows["thread"],
                rows["issue"],
                occ,
                rows["site"],
                rows["epoch"],
                warp,
                rows["block"],
                rows["array"],
                rows["kind"],
            )
        )
        r, w, o = rows[order], warp[order], occ[order]
        key = np.stack([r["block"], w, r["epoch"], r["site"], o, r["issue"], r["array"], r["kind"]], axis=1)
        starts = np.flatnonzero(np.r_[True, np.any(key[1:] != key[:-1], axis=1)])
        return WarpGroups(r, w, starts, np.r_[starts[1:], len(r)])

    def warp_accesses(self, *, space="global", kind=None) -> list[WarpAccess]:
        """Group accesses into warp instructions (see the module docstring)."""
        return self.warp_groups(space=space, kind=kind).accesses()
