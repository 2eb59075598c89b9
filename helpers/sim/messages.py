"""Diagnostics in one shape: "block (x, y, z), thread (x, y, z), line N: `source`" then the why.

Every simulator error is built here, so the header reads the same whichever check found it.
"""

from __future__ import annotations

import linecache
import re
import sys
from types import FrameType, TracebackType
from typing import Any

from . import errors as E

SIM_PREFIX = __name__.rsplit(".", 1)[0]


def _is_sim(frame: FrameType) -> bool:
    return frame.f_globals.get("__name__", "").startswith(SIM_PREFIX)


def user_frame() -> FrameType | None:
    """The innermost frame on the stack that is not the simulator's: the learner's line."""
    f = sys._getframe(1)
    while f is not None and _is_sim(f):
        f = f.f_back
    return f


def learner_frame() -> FrameType | None:
    """The innermost frame that is neither the simulator's nor the course's intrinsics
    (helpers/tensor_cores.py): the learner's line that called mma_m16n8k8 or dp4a."""
    f = sys._getframe(1)
    while f is not None and (_is_sim(f) or f.f_globals.get("__name__") == "helpers.tensor_cores"):
        f = f.f_back
    return f


def _library_dirs() -> tuple[str, ...]:
    import os

    import greenlet
    import numpy

    return tuple(os.path.dirname(m.__file__) for m in (os, numpy, greenlet))


_LIBRARIES: tuple[str, ...] = ()


def kernel_frame(tb: TracebackType | None) -> tuple[FrameType | None, int | None]:
    """The innermost (frame, line) of a traceback that is neither the simulator's nor a library's
    (NumPy, the standard library): the learner's line, wherever the exception landed."""
    global _LIBRARIES
    _LIBRARIES = _LIBRARIES or _library_dirs()
    frame = line = None
    while tb is not None:
        if not _is_sim(tb.tb_frame) and not tb.tb_frame.f_code.co_filename.startswith(_LIBRARIES):
            frame, line = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    return frame, line


def source_at(frame: FrameType | None, line: int | None = None) -> tuple[int | None, str]:
    """(line number, stripped text) of `frame` (at `line` when given)."""
    if frame is None:
        return None, ""
    line = frame.f_lineno if line is None else line
    return line, linecache.getline(frame.f_code.co_filename, line).strip()


def header(block: Any = None, thread: Any = None, line: int | None = None, source: str = "") -> str:
    """The first line of every diagnostic."""
    parts = []
    if block is not None:
        parts.append(f"block {tuple(block)}")
    if thread is not None:
        parts.append(f"thread {tuple(thread)}")
    if line is not None:
        parts.append(f"line {line}: `{source}`")
    return ", ".join(parts)


def diagnostic(
    cls: type[E.SimulatorError],
    msg: str,
    *,
    block: Any = None,
    thread: Any = None,
    line: int | None = None,
    source: str = "",
    array: str | None = None,
    index: Any = None,
) -> E.SimulatorError:
    """`cls` with the standard header above `msg` and its fields set."""
    head = header(block, thread, line, source)
    block = None if block is None else tuple(block)
    thread = None if thread is None else tuple(thread)
    return cls(
        f"{head}\n{msg}" if head else msg,
        block=block,
        thread=thread,
        line=line,
        source=source,
        array=array,
        index=index,
    )


def at_thread(
    cls: type[E.SimulatorError], msg: str, th: Any, frame: FrameType | None = None, **fields: Any
) -> E.SimulatorError:
    """A diagnostic about simulated thread `th` (anything with .bidx and .tidx) at `frame`'s line."""
    line, src = source_at(frame)
    return diagnostic(cls, msg, block=th and th.bidx, thread=th and th.tidx, line=line, source=src, **fields)


def runaway_text(limit: int) -> str:
    """Why a launch ran out of its step budget (both engines count steps the same way)."""
    return (
        f"the kernel made more than {limit:,} memory accesses and barriers, this launch's step budget "
        "(scaled to its number of threads, far more than the puzzle needs): most likely a loop that never "
        "ends (a loop variable not advanced, a stride of 0, a bound that is not the data's size?). If it "
        "really needs more, raise helpers.sim.config.steps_per_thread."
    )


def scratch_text(name: str, index: str) -> str:
    """Why a read of work memory (role "scratch") that no thread has written is wrong."""
    return (
        f"read `{name}`[{index}] but no thread had written it yet: `{name}` is work memory, which starts "
        "as garbage (as cuda.device_array gives it), so this value is whatever memory held. Blocks run "
        "in any order, and one may run before the blocks whose results it reads: a block may read "
        "another block's part only once it knows that block is done (the last block to take a ticket "
        "from cuda.atomic.add knows every other block has finished), or in a second launch."
    )


def code_text(*codes: Any) -> str:
    """The source text of each code object (a kernel, a device function it called), joined."""
    text = ""
    for code in codes:
        last = max((ln for _, _, ln in code.co_lines() if ln), default=code.co_firstlineno)
        text += "".join(linecache.getline(code.co_filename, n) for n in range(code.co_firstlineno, last + 1))
    return text


# a kernel organised by warps: a lane or warp index taken from the thread index
_BY_WARPS = re.compile(r"laneid|(//|%)\s*(32\b|[\w.]*warp)|&\s*31\b|>>\s*5\b", re.IGNORECASE)


def one_writer_text(text: str, same_warp: bool) -> str:
    """The fix when several threads plainly write one element: one writer. Where the writers are lanes
    of one warp in a kernel organised by warps (`% 32`, `// 32`, laneid), that writer is lane 0 of the
    warp: thread 0 of the block would leave every other warp's element unwritten."""
    if same_warp and _BY_WARPS.search(text):
        who = "lane 0 of the warp write it (under `if lane == 0:`, lane being cuda.threadIdx.x % 32"
    else:
        who = "one thread write it (e.g. under `if cuda.threadIdx.x == 0:`"
    return (
        f"Several threads write this one element: let {who}, once the value is complete), or, if each "
        "adds its share, use cuda.atomic.add."
    )


_INTERNAL = (
    ("'SimArray'", "device array"),
    ("SimArray", "device array"),
    ("'SimCuda'", "cuda"),
    ("SimCuda", "cuda"),
    ("'_Namespace'", "cuda namespace"),
    ("_Namespace", "cuda namespace"),
    ("'GridGroup'", "grid group"),
    ("'DeviceArray'", "device array"),
)


def plain_words(text: str) -> str:
    """A Python error message about the simulator's own objects, in the words a kernel uses."""
    for internal, plain in _INTERNAL:
        text = text.replace(internal, plain)
    return text
