"""Blocks that talk through global memory (`cross_block_races=False`): may this block read what
another block wrote into work memory (role "scratch")?

Blocks run one after another here, so a block that reads another's partial result finds it
written whenever the writer happened to run first; on a GPU the writer may not have finished. A
read is ordered after another block's write only through atomics: the writer stores, then does an
atomic (its ticket, its flag); a reader whose own atomic on that element came later has seen it.
Each block keeps a vector clock (block -> the last step of that block it has seen); an atomic on an
element joins the block's clock with the element's, both ways, then starts a new step of the block.
A plain read of scratch written by another block at a step this block has not seen is a race, on
every block order: the "last block" reduction with no ticket at all is caught even when the block
with the highest index happens to run last.
"""

from __future__ import annotations

from typing import Any

from .. import errors as E


class BlockOrder:
    def __init__(self) -> None:
        self.clocks: dict = {}  # block -> {block: the last step of it this block has seen}
        self.elements: dict = {}  # (array id, flat index) -> the clock atomics on it have published
        self.written: dict = {}  # (array id, flat index) -> (writer block, its step at the write)

    def _clock(self, b: int) -> dict:
        c = self.clocks.get(b)
        if c is None:
            c = self.clocks[b] = {b: 0}
        return c

    def atomic(self, b: int, aid: int, flat: int) -> None:
        mine = self._clock(b)
        at = self.elements.setdefault((aid, flat), {})
        for k, v in at.items():
            if mine.get(k, -1) < v:
                mine[k] = v
        at.update(mine)
        mine[b] += 1

    def grid_barrier(self) -> None:
        """cuda.cg.this_grid().sync(): every block has seen everything before it."""
        every: dict = {}
        for c in self.clocks.values():
            for k, v in c.items():
                every[k] = max(every.get(k, -1), v)
        for c in self.clocks.values():
            c.update(every)

    def wrote(self, b: int, aid: int, flat: int) -> None:
        self.written[(aid, flat)] = (b, self._clock(b)[b])

    def unseen_writer(self, b: int, aid: int, flat: int) -> int | None:
        """The other block whose write this block reads without any atomic ordering them, or None."""
        w = self.written.get((aid, flat))
        if w is None or w[0] == b or self._clock(b).get(w[0], -1) >= w[1]:
            return None
        return w[0]


def race(run: Any, st: Any, idx: Any, writer: int) -> E.SimulatorError:
    shown = ", ".join(map(str, idx)) if type(idx) is tuple else str(idx)
    return run.error(
        E.DataRace,
        f"data race on global array `{st.name}`[{shown}]: this thread reads it, and block "
        f"{run.bidx_of(writer)} wrote it, but nothing orders that write before this read. Blocks run in "
        f"any order: here block {run.bidx_of(writer)} happened to run first, on a GPU it may not have "
        "finished. A block may read another block's result only once an atomic tells it the result is "
        "there: the writer stores its part, then takes a ticket with cuda.atomic.add; the block that "
        "draws the last ticket knows every part is stored, and only it reads them.",
        array=st.name,
        index=idx,
    )
