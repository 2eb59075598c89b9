"""Block barriers (syncthreads and its predicate forms): release when every thread of the block
waits at the same one; otherwise the diagnosis of which threads went where."""

from __future__ import annotations

from typing import Any

from .. import errors as E
from ..messages import at_thread
from .threads import BAR, DONE, GRID, RUN, WARP, Thread


def resolve(run: Any, threads: list[Thread]) -> None:
    """Called when no thread of the block can run: release the barrier they all wait at, or raise."""
    # fast path: every thread waits at one syncthreads, reached through one call instruction
    w0 = threads[0].wait
    if threads[0].state == BAR:
        code, lasti = w0.frame.f_code, w0.frame.f_lasti
        for th in threads:
            f = th.wait.frame
            if th.state != BAR or f.f_lasti != lasti or f.f_code is not code:
                break
        else:
            if run.held and not run.coop:  # a thread held a diagnostic back, yet reached the barrier
                raise next(th.error for th in threads if th.error is not None)
            if w0.op == "syncthreads":  # plain barrier: no predicate to combine
                for th in threads:
                    th.result = None
                    th.state = RUN
                    th.epoch = e = th.epoch + 1
                    th.actor = (th.b, e, th.warp, th.wepoch, th.t)
            else:
                release(threads)
            return
    at = [th for th in threads if th.state == BAR]
    done = [th for th in threads if th.state == DONE]
    warp = [th for th in threads if th.state in (WARP, GRID)]  # waiting elsewhere
    failed = [th for th in done if th.killed]
    exited = [th for th in done if not th.killed]
    if at and not exited and not warp and failed and len({th.wait.site() for th in at}) == 1:
        # the only threads missing stopped on an error of their own before reaching the barrier
        raise failed[0].error
    failed = [th for th in threads if th.error is not None]
    if at and (exited or warp):
        raise divergence(run, at, exited, warp, failed)
    if not at:
        th = warp[0]
        raise at_thread(
            E.Deadlock,
            "threads wait at warp operations that can never complete "
            f"(thread {tuple(th.tidx)} at line {th.wait.line()[0]})",
            th,
            th.wait.frame,
        )
    sites: dict = {}
    for th in at:
        sites.setdefault(th.wait.site(), th)
    if len(sites) > 1:
        a, b = list(sites.values())[:2]
        (la, sa), (lb, sb) = a.wait.line(), b.wait.line()
        raise at_thread(
            E.BarrierDivergence,
            f"threads wait at different barriers: thread {tuple(a.tidx)} at line {la} (`{sa}`) and thread "
            f"{tuple(b.tidx)} at line {lb} (`{sb}`). In CUDA all threads of a block must meet at the same "
            "syncthreads; on a real GPU this deadlocks (the block hangs) or pairs the barriers up wrongly. "
            "Put one cuda.syncthreads() where every thread reaches it, outside the `if`.",
            a,
            a.wait.frame,
        )
    if run.held and not run.coop:
        raise next(th.error for th in threads if th.error is not None)
    release(at)


def divergence(
    run: Any, at: list[Thread], exited: list[Thread], warp: list[Thread], failed: list[Thread]
) -> E.SimulatorError:
    first = at[0]
    where = f"cuda.{first.wait.op}() was reached by {len(at)} thread(s) of the block, but "
    if exited:
        other = exited[0]
        quiet = [th for th in exited if not run.touched_since_barrier(th)]
        how = (
            f"{len(exited)} thread(s), e.g. thread {tuple(other.tidx)}, had already finished the "
            "kernel without reaching it"
        )
        if len(quiet) == len(exited):
            why = (
                ", without touching memory after skipping it. The CUDA Programming Guide makes a "
                "syncthreads that not every thread of the block reaches undefined behaviour: today's "
                "GPUs usually count exited threads as arrived, so this often works, but nothing "
                "guarantees it (older GPUs and other compilers hang or mis-pair barriers), and the "
                "checker rejects it. Fix: keep the barrier outside the `if`: guard the loads and "
                "stores with `if i < size:` and let every thread reach cuda.syncthreads(), instead of "
                "returning early."
            )
        else:
            why = (
                ", after touching memory past the point where the others wait. Every thread of a block "
                "must reach the same barrier: is it inside an `if` (like `if i < size`) or after an "
                "early return? Move it out of the branch; on a real GPU this hangs or gives wrong "
                "results."
            )
    else:
        other = warp[0]
        how = f"thread {tuple(other.tidx)} waits at cuda.{other.wait.op} on line {other.wait.line()[0]}"
        why = (
            ": they can never meet, so a real GPU deadlocks. Call the barrier where every thread of "
            "the block reaches it."
        )
    extra = ""
    if failed:
        extra = (
            f"\n(also found, probably a consequence: {type(failed[0].error).__name__} in thread "
            f"{tuple(failed[0].tidx)})"
        )
    err = at_thread(E.BarrierDivergence, where + how + why + extra, first, first.wait.frame)
    # who waited, who had exited, who waits elsewhere: the diagnostic picture draws them
    err.reached = [tuple(th.tidx) for th in at]
    err.exited = [tuple(th.tidx) for th in exited]
    err.elsewhere = [tuple(th.tidx) for th in warp]
    return err


def release(at: list[Thread]) -> None:
    op = at[0].wait.op
    preds = [th.wait.pred for th in at]
    r = None
    if op == "syncthreads_count":
        r = sum(preds)
    elif op == "syncthreads_and":
        r = int(all(preds))
    elif op == "syncthreads_or":
        r = int(any(preds))
    for th in at:
        th.result = r
        th.state = RUN
        th.epoch += 1
        th.actor = (th.b, th.epoch, th.warp, th.wepoch, th.t)
