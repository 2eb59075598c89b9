"""Warp operations: shuffles, votes, match, syncwarp and activemask complete when every lane of
their mask has arrived at the same call."""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from typing import Any

import numpy as np

from .. import errors as E
from .. import mma
from ..messages import at_thread
from ..trace import WARP_SIZE
from . import barriers
from .threads import BAR, DONE, GRID, RUN, WARP, Thread

VOTES = ("all_sync", "any_sync", "ballot_sync", "eq_sync")


def resolve_warps(run: Any) -> bool:
    """Complete every warp operation whose lanes have all arrived; True when one did."""
    progressed = False
    for lanes in run.warps:
        waiting = [th for th in lanes if th.state == WARP and th.wait.op == "activemask"]
        if waiting:  # lanes at one activemask call are the active ones there
            sites: dict = {}
            for th in waiting:
                sites.setdefault(th.wait.site(), []).append(th)
            for group in sites.values():
                m = sum(1 << g.lane for g in group)
                for g in group:
                    g.result, g.state = m, RUN
            progressed = run.warp_pending = True  # other lanes of this warp may still wait
            continue
        by_lane = {th.lane: th for th in lanes}
        for th in lanes:
            if th.state != WARP:
                continue
            op, mask, f0 = th.wait.op, th.wait.mask, th.wait.frame
            code, lasti = f0.f_code, f0.f_lasti
            site = None
            group = [by_lane[ln] for ln in range(WARP_SIZE) if (mask >> ln) & 1 and ln in by_lane]
            for g in group:
                w = g.wait
                if g.state == WARP and w.op == op and w.mask == mask:
                    f = w.frame
                    if f.f_lasti == lasti and f.f_code is code:  # the common case: one instruction
                        continue
                    site = site or th.wait.site()
                    if w.site() == site:
                        continue
                if g.state in (BAR, GRID) and _inside_if(w.frame) and not _inside_if(th.wait.frame):
                    # a lane waits at a barrier inside an `if` that the others of its warp never reach
                    # (a barrier inside `if lane == 0:`): the barrier's divergence is the cause, not the
                    # warp operation they wait at (a shuffle inside an `if` is the reverse: below)
                    block = run.threads
                    raise barriers.divergence(
                        run,
                        [x for x in block if x.state == g.state],
                        [],
                        [x for x in block if x.state in (WARP, BAR, GRID) and x.state != g.state],
                        [x for x in block if x.error is not None],
                    )
                if g.state == DONE:
                    why = "had already finished the kernel"
                elif g.state == BAR:
                    why = f"is waiting at cuda.{w.op}() on line {w.line()[0]}"
                else:
                    why = f"is waiting at {_name(w.op)} on line {w.line()[0]}"
                raise at_thread(
                    E.WarpDivergence,
                    f"{_name(op)} with mask {mask:#010x} needs every lane in the mask to reach it, but lane "
                    f"{g.lane} (thread {tuple(g.tidx)}) {why}: a real GPU hangs or returns garbage. "
                    + (
                        "Call warp operations where all lanes of the mask reach them, or pass the mask of "
                        "those that do (cuda.activemask())."
                        if op != mma.OP and not op.startswith("ldmatrix")
                        else f"{op} always takes the whole warp: call it where every lane reaches it, "
                        "outside any `if` or early `return` on the lane."
                    ),
                    th,
                    th.wait.frame,
                )
            complete(op, mask, group, by_lane, run.moves if run.tracing else None, len(run.rec))
            progressed = True
    return progressed


def complete(
    op: str, mask: int, group: list[Thread], by_lane: dict, moves: list | None = None, pos: int = 0
) -> None:
    """`moves` (when tracing) receives (block, epoch, thread, src thread, pos) per lane a shuffle fed,
    `pos` being the number of trace records made so far."""
    vals = {g.lane: g.wait.value for g in group}
    if op == mma.OP:
        if len(group) < WARP_SIZE:  # lanes that do not exist: a block of fewer than 32 threads
            why = mma.missing_lanes(list(vals), len(by_lane))
            raise at_thread(E.WarpDivergence, why, group[0], group[0].wait.frame)
        d = mma.warp_product(vals)
        for g in group:
            g.result = d[g.lane]
    elif op.startswith("ldmatrix"):
        if len(group) < WARP_SIZE:
            why = (
                f"{op} is one instruction for a whole warp (lanes give row addresses, every lane "
                f"receives a part), but this block has only {len(by_lane)} threads in this warp: "
                "launch a multiple of 32 threads per block."
            )
            raise at_thread(E.WarpDivergence, why, group[0], group[0].wait.frame)
        count = int(op.split("_x")[1][0])
        d = mma.ldmatrix_scatter(vals, count, op.endswith("trans"))
        for g in group:
            g.result = d[g.lane]
    elif op == "syncwarp":
        for g in group:
            g.result = None
            g.advance(barrier=False)
    elif op in VOTES:
        preds = [vals[ln] for ln in sorted(vals)]
        # types as numba-cuda gives them: votes are booleans, a ballot is a signed int32
        if op == "all_sync":
            r = all(preds)
        elif op == "any_sync":
            r = any(preds)
        elif op == "eq_sync":
            r = all(p == preds[0] for p in preds)
        else:
            r = _i32(sum(1 << ln for ln, p in vals.items() if p))
        for g in group:
            g.result = r
    elif op == "match_any_sync":
        # each lane gets the mask of the lanes (in `mask`) holding a value equal to its own
        for g in group:
            g.result = _i32(sum(1 << ln for ln, v in vals.items() if v == vals[g.lane]))
    elif op == "match_all_sync":
        # (mask, pred) as numba-cuda returns it: the whole mask and True when all values are equal
        same = all(v == vals[group[0].lane] for v in vals.values())
        r = (_i32(mask if same else 0), same)
        for g in group:
            g.result = r
    else:
        for g in group:
            arg = int(g.wait.arg)
            if op == "shfl_sync":
                src = arg % WARP_SIZE
            elif op == "shfl_up_sync":
                src = g.lane - arg if g.lane - arg >= 0 else g.lane
            elif op == "shfl_down_sync":
                src = g.lane + arg if g.lane + arg < WARP_SIZE else g.lane
            else:
                src = g.lane ^ arg
                src = src if src < WARP_SIZE else g.lane
            if src not in vals:
                state = "does not exist in this block" if src not in by_lane else "is not in the mask"
                raise at_thread(
                    E.WarpDivergence,
                    f"cuda.{op} in lane {g.lane} reads the value of lane {src}, which {state} "
                    f"(mask {mask:#010x}): on a real GPU the result is undefined.",
                    g,
                    g.wait.frame,
                )
            g.result = vals[src]
            if moves is not None:
                moves.append((g.b, g.epoch, g.t, by_lane[src].t, pos))
    for g in group:
        g.state = RUN


def _name(op: str) -> str:
    """A warp operation as the learner wrote it: cuda.shfl_sync, or the course's mma_m16n8k8."""
    return op if op == mma.OP or op.startswith("ldmatrix") else f"cuda.{op}"


def _i32(bits: int) -> np.int32:
    """A lane mask typed as numba-cuda types it: a signed 32-bit integer."""
    return np.uint32(bits & 0xFFFFFFFF).view(np.int32)


@functools.lru_cache(maxsize=256)
def _if_lines(code: Any) -> frozenset:
    """The lines of `code`'s function that lie inside an `if` (or a ternary) of that function."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    lines: set = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            for part in node.body + node.orelse:
                lines.update(range(part.lineno, (part.end_lineno or part.lineno) + 1))
        elif isinstance(node, ast.IfExp):
            for part in (node.body, node.orelse):
                lines.update(range(part.lineno, (part.end_lineno or part.lineno) + 1))
    return frozenset(code.co_firstlineno + n - 1 for n in lines)


def _inside_if(frame: Any) -> bool:
    """Is the call `frame` stands at inside an `if` of its function?"""
    return frame is not None and frame.f_lineno in _if_lines(frame.f_code)
