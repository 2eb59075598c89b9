"""Lockstep's diagnostics in the standard shape (block, thread, line, array, index), as a mixin of
its `Run`: runaways, races within a block and across blocks, and every other class by name."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import errors as E
from ..messages import (
    code_text,
    diagnostic,
    kernel_frame,
    one_writer_text,
    runaway_text,
    scratch_text,
    source_at,
    user_frame,
)
from ..trace import ATOMIC, READ, WARP_SIZE, WRITE
from .memory import LArray, Storage, words
from .stop import Stop
from .transform import site_info
from .values import V


class Reports:
    def runaway(self) -> E.SimulatorError:
        return self.diag("Runaway", runaway_text(self.opts.max_steps))

    def endless(self, trips: int) -> E.SimulatorError:
        """A loop that took `trips` trips touching no memory, meeting no barrier or warp operation:
        nothing another thread does can end it, so it never ends. Final: the greenlet engine could
        only wait for the wall clock, so "auto" reports this one as it is."""
        lane = int(self.ctl.act[0]) if self.ctl.live else None
        line, src = source_at(user_frame())
        err = diagnostic(
            E.Runaway,
            f"this loop ran {trips:,} trips without reading or writing memory or meeting a barrier: "
            "nothing another thread does can change what its condition tests, so it never ends (is its "
            "loop variable advanced, in the right direction?).",
            block=self._bidx(self.b),
            thread=None if lane is None else self._tidx(lane),
            line=line,
            source=src,
        )
        err.final = True
        return err

    def _race_in_block(self, st: Storage):
        def report(flat, a, b, ka, kb, site):
            self._order_matters()
            where = _unravel(flat, st.shape)
            shown = ", ".join(map(str, where))
            verbs = {READ: "read", WRITE: "wrote", ATOMIC: "atomically updated"}
            fix = "Put a cuda.syncthreads() between the two accesses, or give each thread its own element."
            if ka == kb == WRITE:  # several writers of one element want one writer, not a barrier
                fix = one_writer_text(code_text(self.fn0.__code__), a // WARP_SIZE == b // WARP_SIZE)
            raise self.diag(
                "DataRace",
                f"data race on {st.space} array `{st.name}`[{shown}]: this thread {verbs[kb]} it while "
                f"thread {self._tidx(a)} of block {self._bidx(self.b)} {verbs[ka]} it in the same barrier "
                f"interval (no cuda.syncthreads() between them). The result depends on which thread runs "
                f"first. {fix}",
                array=st.name,
                index=where[0] if len(where) == 1 else where,
                lane=b,
                site=site,
            )

        return report

    def _tidx(self, t: int) -> tuple:
        bx, by, _ = self.blockdim
        return (t % bx, (t // bx) % by, t // (bx * by))

    def _bidx(self, b: int) -> tuple:
        gx, gy, _ = self.griddim
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def _order_matters(self) -> None:
        if not self.opts.races:
            raise Stop.unsupported(
                "accesses whose order matters (races are off: the reference engine's thread order decides)"
            )

    def diag(
        self,
        cls: str,
        why: str | None,
        arr: Any = None,
        idx: Any = None,
        *,
        array: str | None = None,
        index: Any = None,
        lane: int | None = None,
        site: int | None = None,
        tb: Any = None,
    ) -> E.SimulatorError:
        """A diagnostic in the standard shape (raised by the caller): block, thread, line, array, index.
        `tb`: the traceback of an exception the kernel raised, for its line."""
        klass = getattr(E, cls)
        ctl = self.ctl
        name = array
        if arr is not None:
            name = arr.st.name
            comps = idx[0] if len(idx) == 1 and type(idx[0]) is tuple else idx
            if lane is None and ctl.live:
                lane = int(self._bad_lane(arr, comps, cls))
            index = tuple(_at_lane(i, lane) for i in comps)
            shown = ", ".join(map(str, index))
            if len(index) == 1 and cls != "OutOfBounds":
                index = index[0]  # as the kernel wrote it, as the greenlet engine reports it
            space = words(arr.st.space)
            if why is None:
                why = {
                    "OutOfBounds": "is out of bounds: "
                    + (
                        "a negative index: Python and Numba silently wrap it to the end of the array, real "
                        "CUDA reads or writes memory before the array (garbage or a crash)"
                        if any(
                            type(v) is int and v < 0 for v in (index if type(index) is tuple else (index,))
                        )
                        else f"past the end (shape {tuple(arr.shape)}): a real GPU does no bounds check and "
                        "would silently read garbage or overwrite another array. Is a guard missing?"
                    ),
                    "UninitializedRead": {
                        "shared": "was read but no thread of this block had written it yet; a real GPU "
                        "returns whatever an earlier kernel left in shared memory.",
                        "local": "was read but this thread had not written it yet; a real GPU returns "
                        "whatever was in the register or stack slot.",
                    }.get(
                        arr.st.space,
                        "was read but no thread had written it yet (outputs start as garbage: the checker "
                        "fills them with NaN); a real GPU returns whatever was in that memory.",
                    )
                    + " Is a barrier or an initialising write missing?",
                    "ReadOnlyWrite": "was written, but it is an input (or a constant): the kernel must not "
                    "change it (the checker compares against the original values)",
                }.get(cls, "")
            why = f"index [{shown}] into {space} `{name}` {why}"
            if cls == "UninitializedRead" and self.arrays[arr.st.aid].role == "scratch":
                why = scratch_text(name, shown)
            site = self.site if site is None else site
        if lane is None and ctl.live:
            lane = int(ctl.act[0])
        if site is not None:
            info = site_info(site)
            line, src = info.lineno, info.text
        elif tb is not None:
            line, src = source_at(*kernel_frame(tb))
        else:
            line, src = source_at(user_frame())
        return diagnostic(
            klass,
            f"{why} (found by the lockstep engine; engine='greenlet' gives the reference report)",
            block=self._bidx(self.b),
            thread=None if lane is None or lane < 0 else self._tidx(lane),
            line=line,
            source=src,
            array=name,
            index=index,
        )

    def _bad_lane(self, arr: LArray, idx: tuple, cls: str) -> int:
        ctl = self.ctl
        st = arr.st
        if cls == "UninitializedRead" and st.init is not None:
            flat = arr._flat(tuple(idx), "read")
            flat = np.broadcast_to(np.asarray(flat, np.int64), (self.n,))
            phys = np.arange(self.n) * st.size + flat if st.local else flat
            bad = ctl.m & ~st.init[np.where(ctl.m, phys, 0)]
            if bad.any():
                return int(np.flatnonzero(bad)[0])
        if cls == "OutOfBounds":
            bad = np.zeros(self.n, bool)
            for k, i in enumerate(idx):
                if type(i) is V and k < arr.ndim:
                    bad |= (i.a < 0) | (i.a >= arr.shape[k])
            bad &= ctl.m
            if bad.any():
                return int(np.flatnonzero(bad)[0])
        return int(ctl.act[0])

    def _race_across(self, st: Storage):
        def report(flat, other, kind, okind, site):
            where = _unravel(flat, st.shape)
            shown = ", ".join(map(str, where))
            raise self.diag(
                "DataRace",
                f"data race on global array `{st.name}`[{shown}]: block {self._bidx(self.b)} and block "
                f"{self._bidx(other)} both touched it, at least one writing: in another block, and blocks "
                "run in any order. Give each element one owner block, or use cuda.atomic for accumulations.",
                array=st.name,
                index=where[0] if len(where) == 1 else where,
                site=site,
                lane=-1,
            )

        return report


def _unravel(flat: int, shape: tuple) -> tuple:
    if not shape:
        return (flat,)
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _at_lane(i: Any, lane: int | None) -> Any:
    if type(i) is V:
        return int(i.a[lane]) if lane is not None else "per-thread"
    try:
        return int(i)
    except (TypeError, ValueError):
        return i
