"""Simulated threads, launch dimensions, and what a blocked thread waits for."""

from __future__ import annotations

import bisect
import dis
from types import CodeType, FrameType
from typing import Any

from ..messages import source_at
from ..semantics import Dim3
from ..trace import WARP_SIZE

# thread states (SPIN: re-reading memory that nothing changes; `result` holds what it watches then)
RUN, BAR, WARP, DONE, SPIN, GRID = 0, 1, 2, 3, 4, 5  # GRID: at cuda.cg.this_grid().sync()


class Wait:
    """What a blocked thread waits at. One per thread, refilled in place at every wait (cheaper
    than a new object per barrier on the hot path).

    op:    "syncthreads", "syncthreads_count", ..., or a warp operation ("shfl_down_sync", ...)
    frame: the kernel frame that called it (its line, and its instruction as the barrier's identity)
    pred:  a barrier's predicate (syncthreads_count/and/or), else None
    mask:  a warp operation's member mask
    value: the value a lane contributes to a warp operation
    arg:   a shuffle's lane/delta/lane mask"""

    __slots__ = ("op", "frame", "pred", "mask", "value", "arg")

    def __init__(self) -> None:
        self.op = self.frame = self.pred = self.value = self.arg = None
        self.mask = 0

    def line(self) -> tuple[int | None, str]:
        """(line number, text) where the thread waits."""
        return source_at(self.frame)

    def site(self) -> tuple[CodeType, int]:
        """The instruction waited at, as one key however Python reports the call."""
        f = self.frame
        return canon_site(f.f_code, f.f_lasti)


class Thread:
    __slots__ = (
        "b",
        "t",
        "tidx",
        "bidx",
        "warp",
        "lane",
        "epoch",
        "wepoch",
        "actor",
        "g",
        "state",
        "wait",
        "result",
        "local",
        "error",
        "killed",
    )

    def __init__(self, b: int, t: int, tidx: Dim3, bidx: Dim3, wait: Wait | None = None) -> None:
        self.b, self.t, self.tidx, self.bidx = b, t, tidx, bidx
        self.warp, self.lane = divmod(t, WARP_SIZE)
        self.epoch = self.wepoch = 0
        # who made an access, for the race check and the trace: ordered by barrier and warp epochs
        self.actor = (b, 0, self.warp, 0, t)  # an Actor as a plain tuple: see semantics.Actor
        self.state = RUN
        self.wait = wait or Wait()  # blocks that run one after another reuse one set of records
        self.result: Any = None
        self.local: dict = {}
        self.error: Exception | None = None  # a diagnostic held back (see Run.fail)
        self.killed = False  # the thread stopped at that diagnostic

    def advance(self, barrier: bool) -> None:
        if barrier:
            self.epoch += 1
        else:
            self.wepoch += 1
        self.actor = (self.b, self.epoch, self.warp, self.wepoch, self.t)


_CANON: dict = {}
_OFFSETS: dict = {}


def canon_site(code: CodeType, lasti: int) -> tuple[CodeType, int]:
    """(code, offset of the instruction that owns `lasti`). Python 3.11+ reports a call made from a
    specialised instruction (e.g. BINARY_SUBSCR_GETITEM) at the end of its inline cache instead of
    at the instruction, so one access instruction would otherwise show up as two sites."""
    r = _CANON.get((code, lasti))
    if r is None:
        offs = _OFFSETS.get(code)
        if offs is None:
            offs = _OFFSETS[code] = [i.offset for i in dis.get_instructions(code)]
        r = _CANON[code, lasti] = (code, offs[bisect.bisect_right(offs, lasti) - 1])
    return r


def frame_site(frame: FrameType) -> tuple[CodeType, int]:
    return canon_site(frame.f_code, frame.f_lasti)
