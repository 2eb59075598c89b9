"""Where a launched rank is, written to a file per rank ($MP_DIST_STATE/rank<r>) before each call
that can wait: the launcher reads them at its timeout to name the ranks still waiting and where.

The file is opened once per rank and each call overwrites one fixed-size record with a single
pwrite: an open/write/close per call cost ~0.2 ms on the lent GPU machines, more than a 1 MiB NCCL
message, and showed up as a per-message floor in the bandwidth and scaling tables."""

from __future__ import annotations

import os
import time

from .comm import caller

RECORD = 1024  # bytes per record: a longer one is cut, a shorter one padded with spaces
_FILES: dict[str, int] = {}  # path -> the fd this process writes it through


def _write(rank: int, text: str) -> None:
    d = os.environ.get("MP_DIST_STATE")
    if not d:
        return
    path = os.path.join(d, f"rank{rank}")
    fd = _FILES.get(path)
    if fd is None:
        fd = _FILES[path] = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    data = text.encode("utf-8", "replace")[:RECORD]
    os.pwrite(fd, data.ljust(RECORD), 0)


def enter(rank: int, what: str) -> None:
    _write(rank, f"{time.time():.3f}\t{what} at {caller(3)}")


def leave(rank: int, what: str = "running") -> None:
    _write(rank, f"{time.time():.3f}\t{what}")


def read(directory: str, size: int) -> dict[int, str]:
    """{rank: what it was last doing} ('finished' for a rank that returned)."""
    out = {}
    for r in range(size):
        try:
            with open(os.path.join(directory, f"rank{r}"), encoding="utf-8", errors="replace") as f:
                stamp, what = f.read().rstrip(" \0").split("\t", 1)
            out[r] = f"{what} (for {time.time() - float(stamp):.0f} s)" if what != "finished" else what
        except (OSError, ValueError):
            out[r] = "not started (no state written)"
    return out
