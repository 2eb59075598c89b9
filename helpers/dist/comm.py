"""What every engine's Comm shares: argument checks (a rank in range, a contiguous array), the
learner's source line of a call, and the reduction ops. Engines subclass `Comm`."""

from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass

import numpy as np

from .errors import BadCall

OPS = ("sum", "prod", "max", "min")
NUMPY_OPS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Where:
    """A line of the learner's code: file, line number, the line's text."""

    filename: str
    lineno: int
    text: str

    def __str__(self) -> str:
        return f"line {self.lineno} (`{self.text}`)" if self.text else f"line {self.lineno}"


def caller(skip_frames: int = 1) -> Where:
    """The first frame outside helpers/dist: the learner's line that made the call."""
    f = sys._getframe(skip_frames)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == HERE:
        f = f.f_back
    if f is None:
        return Where("?", 0, "")
    text = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return Where(f.f_code.co_filename, f.f_lineno, text)


def poison(buf: np.ndarray) -> None:
    """What a receive buffer holds until its message arrives: NaN, or the dtype's smallest value."""
    if buf.dtype.kind in "fc":
        buf[...] = np.nan
    elif buf.dtype.kind in "iu":
        buf[...] = np.iinfo(buf.dtype).min
    elif buf.dtype.kind == "b":
        buf[...] = True


def nbytes_of(buf) -> int:
    return int(buf.size) * np.dtype(buf.dtype).itemsize


def contiguous(buf) -> bool:
    """C-contiguous, for NumPy, CuPy and Numba device arrays alike."""
    flags = getattr(buf, "flags", None)
    if hasattr(flags, "c_contiguous"):
        return bool(flags.c_contiguous)
    if hasattr(buf, "is_c_contiguous"):
        return bool(buf.is_c_contiguous())
    if isinstance(flags, dict) and "C_CONTIGUOUS" in flags:
        return bool(flags["C_CONTIGUOUS"])
    return True


class Request:
    """A non-blocking call's handle: `wait()` until it completed."""

    def wait(self) -> None:
        raise NotImplementedError


class Comm:
    """The course's communicator; see the contract in helpers/dist/__init__.py."""

    engine = "?"
    rank = 0
    size = 1
    xp = np
    stream = None  # NCCL: the CUDA stream its calls go on (None: the default stream); unused elsewhere

    # --- argument checks every engine makes, so the learner's mistake reads the same everywhere
    def _peer(self, peer, what: str) -> int:
        if not isinstance(peer, (int, np.integer)) or isinstance(peer, bool):
            raise BadCall(
                f"rank {self.rank}, {caller(3)}: the {what} rank must be an int, got {type(peer).__name__}"
            )
        if not 0 <= peer < self.size:
            raise BadCall(
                f"rank {self.rank}, {caller(3)}: {what} rank {peer} does not exist "
                f"(ranks are 0..{self.size - 1}). "
                "Wrap the neighbour around with `% comm.size`."
            )
        if peer == self.rank:
            raise BadCall(
                f"rank {self.rank}, {caller(3)}: a message to itself (rank {peer}). A ring's neighbours "
                "are (rank + 1) % size and (rank - 1) % size; with one rank there is nothing to send."
            )
        return int(peer)

    def _buffer(self, buf, what: str = "buffer"):
        ok = hasattr(buf, "dtype") and hasattr(buf, "shape")
        if not ok:
            raise BadCall(
                f"rank {self.rank}, {caller(3)}: the {what} must be an array, got {type(buf).__name__}. "
                "Messages carry arrays (np.array(...) / a device array), not lists or scalars."
            )
        if not contiguous(buf):
            raise BadCall(
                f"rank {self.rank}, {caller(3)}: the {what} is not contiguous (a strided view such as a "
                "column of a 2-D array). Engines send contiguous memory: copy it first "
                "(np.ascontiguousarray) or slice along the last axis."
            )
        return buf

    def _op(self, op: str) -> str:
        if op not in OPS:
            raise BadCall(f"rank {self.rank}, {caller(3)}: op {op!r} is not one of {', '.join(OPS)}")
        return op

    # --- what every engine builds from its own calls
    def waitall(self, requests) -> None:
        for r in requests:
            r.wait()

    def sendrecv(self, sendbuf, dest: int, recvbuf, source: int) -> None:
        reqs = [self.irecv(recvbuf, source), self.isend(sendbuf, dest)]
        self.waitall(reqs)
