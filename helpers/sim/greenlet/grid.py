"""Cooperative groups' grid-wide barrier, `cuda.cg.this_grid().sync()`.

A kernel that uses it runs its blocks concurrently: each block's scheduler is a greenlet that parks
when all of its threads wait at the grid barrier; when every block has parked, the barrier releases
and global memory's race state is cleared (everything before the barrier is ordered before
everything after it, in every block).

On a GPU a grid barrier needs every block resident at once (a cooperative launch refuses a larger
grid). The simulator's rule, for the course's reference GPU, a T4 (40 SMs, Turing: at most 16
blocks, 1024 threads and 64 KiB of shared memory per SM; registers not counted):
blocks per SM = min(16, 1024 // threads per block (rounded up to whole warps),
64 KiB // shared bytes per block), and the grid may have at most 40 x that many blocks.
"""

from __future__ import annotations

from typing import Any

from .. import errors as E
from ..kernel import uses_grid_sync  # noqa: F401 - the scheduler asks it here
from ..messages import at_thread
from ..occupancy import T4_SMS, max_resident_blocks
from .threads import DONE, GRID, Thread


def check_residency(run: Any, th: Thread, frame: Any) -> None:
    nblocks = len(run.order)
    nthreads = len(run.threads)
    shared = run.spaces.static_shared_max + run.opts.shared_bytes
    most = max_resident_blocks(nthreads, shared)
    if nblocks > most:
        raise at_thread(
            E.LaunchError,
            f"cuda.cg.this_grid().sync() needs every block of the grid resident at once, but {nblocks} "
            f"blocks of {nthreads} threads and {shared} bytes of shared memory do not fit: a T4 (40 SMs) "
            f"holds at most {most} such blocks ({most // T4_SMS} per SM). A cooperative launch of this "
            "grid fails on a GPU. Use fewer blocks (loop over the data with a grid-stride loop) or "
            "smaller ones.",
            th,
            frame,
        )


class GridGroup:
    """What `cuda.cg.this_grid()` returns inside a kernel."""

    __slots__ = ("_run",)

    def __init__(self, run: Any) -> None:
        self._run = run

    def sync(self) -> None:
        import sys

        self._run.grid_sync(sys._getframe(1))


def release(run: Any, parked: dict) -> None:
    """Every block waits at the grid barrier: let them all go on."""
    if run.hb is not None:
        run.hb.grid_barrier()
    for st in run.storages.values():
        if st.space == "global":
            st.acc.clear()  # the barrier orders every earlier access before every later one
    for state in parked.values():
        for th in state["threads"]:
            if th.state == GRID:
                th.result = None
                th.state = 0
                th.advance(barrier=True)


def unfinished(run: Any, finished: list[int], parked: dict) -> E.SimulatorError:
    b = finished[0]
    waiting = next(iter(parked.values()))["threads"]
    th = next(t for t in waiting if t.state == GRID)
    return at_thread(
        E.BarrierDivergence,
        f"block {run.bidx_of(b)} finished the kernel without reaching cuda.cg.this_grid().sync(), which "
        f"the other blocks wait at: every thread of the grid must reach a grid barrier; on a GPU the "
        "waiting blocks hang. Call it where every thread of every block reaches it, outside any `if` "
        "(a cuda.syncthreads() would not do: it orders one block only)." + _consequence(run),
        th,
        th.wait.frame,
    )


def _consequence(run: Any) -> str:
    """The first error held back while the grid barrier was pending: most likely its consequence."""
    if not run.grid_held:
        return ""
    err = run.grid_held[0]
    where = f"block {err.block}, thread {err.thread}"
    return f"\n(also found, probably a consequence: {type(err).__name__} in {where})"


def partial_block(run: Any, threads: list[Thread]) -> E.SimulatorError:
    at = next(t for t in threads if t.state == GRID)
    missing = [t for t in threads if t.state == DONE]
    if all(t.killed for t in missing):  # they stopped on an error of their own before the barrier
        return missing[0].error
    gone = next(t for t in missing if not t.killed)
    return at_thread(
        E.BarrierDivergence,
        f"cuda.cg.this_grid().sync() was reached by some threads of the block, but thread "
        f"{tuple(gone.tidx)} had already finished the kernel without reaching it: every thread of the "
        "grid must reach a grid barrier; on a GPU the grid hangs. Keep the barrier outside the `if`."
        + _consequence(run),
        at,
        at.wait.frame,
    )
