"""A data race's message: what the two accesses were and the fix that fits them.

Three kinds of race want three different fixes: a read and a write in one barrier interval want a
barrier; two threads that each read an element, change it and write it back (`count[k] += 1`,
`slot = n[0]; n[0] = slot + 1`, test-then-set) lose updates, and want an atomic, which no barrier
gives; a plain store beside atomic updates of one element wants every update atomic.
"""

from __future__ import annotations

import linecache
import re
from typing import Any

from .. import errors as E
from ..messages import one_writer_text
from ..trace import READ, WRITE
from . import assemble

SCAN = 200_000  # trace records looked back through for the other thread's accesses (error path only)
RMW_LINES = 2  # a write back this many lines below the read still counts as the same update


def diagnose(
    run: Any, st: Any, flat: int, idx: Any, verb: str, other: tuple, other_verb: str
) -> E.SimulatorError:
    c = run.cur.actor
    both_write = verb != "reads" and other_verb != "read"
    atomic_beside_plain = ("atomic" in verb) != ("atomic" in other_verb) and "read" not in verb + other_verb
    lost = not atomic_beside_plain and _lost_update(run, st, flat, other, verb)
    where = "in the same barrier interval (no cuda.syncthreads() between them)"
    fix = "Put a cuda.syncthreads() between the two accesses, or give each thread its own element."
    if both_write and "atomic" not in verb + other_verb:
        # several writers of one element want one writer, not a barrier
        same_warp = other[0] == c[0] and other[2] == c[2]
        fix = one_writer_text(_kernel_text(run), same_warp)
    elif c[1] > 0 or other[1] > 0:  # the block already passed a barrier: one more is missing
        fix = (
            "Your kernel has cuda.syncthreads() already, but none between these two accesses: the "
            "step that overwrites values other threads still read (or reads values not yet "
            "written) needs its own barrier; in a loop over tiles or steps, often a second one at "
            "the end of each trip."
        )
    if other[0] != c[0]:
        where = "in another block"
        fix = (
            "Blocks cannot wait for each other inside a kernel and run in any order: give each "
            "element one owner block, or use cuda.atomic for accumulations."
        )
        if other[4] == c[4]:  # the same thread of two blocks
            if _uses_block(run):
                fix = (
                    "The same thread of two different blocks touched the same element, though the index "
                    "uses the block: two blocks' ranges overlap (check the block's offset and the size it "
                    "is multiplied by, and any wrap-around such as `% n`)."
                )
            else:
                fix = (
                    "The same thread of two different blocks touched the same element: the index "
                    "leaves out cuda.blockIdx (e.g. i = cuda.blockIdx.x * cuda.blockDim.x + "
                    "cuda.threadIdx.x), so every block works on the same elements."
                )
    elif other[2] == c[2] and other[1] == c[1]:
        fix += (
            " Lanes of one warp do not run in lockstep on Volta and later GPUs: cuda.syncwarp() orders them."
        )
    if lost:
        where = where.replace(" (no cuda.syncthreads() between them)", "")
        fix = (
            "Both threads read this element, change it and write it back (a read-modify-write such as "
            "`x[k] += v`, or `slot = n[0]; n[0] = slot + 1`): one update is lost, and no barrier fixes "
            "that, since the threads must not take turns but update it indivisibly. Use an atomic: "
            "cuda.atomic.add(array, index, v) to add (it returns the old value: a counter's slot of "
            "its own), cuda.atomic.max/min, or cuda.atomic.cas for test-then-set."
        )
    elif atomic_beside_plain:
        fix = (
            "One of the two updates is atomic and the other a plain store: an atomic is indivisible only "
            "against other atomics, so the plain store can wipe out the atomic update (or be wiped out). "
            "Make every update of this element atomic (cuda.atomic.add, cuda.atomic.exch, ...), or "
            "separate the plain store from the atomics with a barrier."
        )
    idx_s = ", ".join(map(str, idx)) if type(idx) is tuple else str(idx)
    msg = (
        f"data race on {st.space} array `{st.name}`[{idx_s}]: this thread {verb} it while "
        f"{run.who(other)} {other_verb} it {where}. The result depends on which thread runs "
        f"first; on a real GPU it changes from run to run. {fix}"
    )
    return run.error(E.DataRace, msg, array=st.name, index=idx)


def _lost_update(run: Any, st: Any, flat: int, other: tuple, verb: str) -> bool:
    """Did the other thread read this element and then write it back, and does this thread do the
    same (it reads it where the other read it, or it writes it having read it)?"""
    if "atomic" in verb:
        return False
    from ..messages import user_frame

    frame = user_frame()
    if not run.tracing:  # no trace to look in: judge by the line (`x[k] += v` reads and writes x[k])
        text = linecache.getline(frame.f_code.co_filename, frame.f_lineno) if frame else ""
        return bool(re.search(rf"\b{re.escape(st.name)}\s*\[.*\]\s*(\+|-|\*|/|//|%|\||&|\^|<<|>>)=", text))
    c = run.cur.actor
    rd, wr = 4 * st.aid + READ, 4 * st.aid + WRITE
    cache: dict = {}
    wrote_at = None  # (code, line) of the other thread's last write of the element
    read_lines = set()  # where it read the element just before that write: a read-modify-write
    mine_read = False
    rec = run.rec
    for r in reversed(rec[-SCAN:] if len(rec) > SCAN else rec):
        if r[2] != flat or r[1] not in (rd, wr):
            continue
        a = r[0]
        if a is other or a == other:
            at = (r[3], assemble.line_of(r[3], r[4], cache))
            if r[1] == wr:
                wrote_at = wrote_at or at
            elif wrote_at is not None and at[0] is wrote_at[0] and 0 <= wrote_at[1] - at[1] <= RMW_LINES:
                # read, then written back at the same line or just below (`x[k] += v`,
                # `slot = n[0]` then `n[0] = slot + 1`, `if f[0] == 0:` then `f[0] = 1`)
                read_lines.add(at)
        elif (a is c or a == c) and r[1] == rd:
            mine_read = True
    if not read_lines:
        return False
    if verb == "reads":
        return frame is not None and (frame.f_code, frame.f_lineno) in read_lines
    return mine_read


def _kernel_text(run: Any) -> str:
    """The text of the kernel and of the device function running now."""
    from ..messages import code_text, user_frame

    frame = user_frame()
    root = run.fn0.__code__
    if frame is None or frame.f_code is root:
        return code_text(root)
    return code_text(frame.f_code, root)


def _uses_block(run: Any) -> bool:
    """Does the kernel's own text index with the block (cuda.blockIdx, cuda.grid)?"""
    from ..messages import user_frame

    if user_frame() is None:
        return False
    return bool(re.search(r"blockIdx|\bgrid\s*\(|gridsize\s*\(", _kernel_text(run)))
