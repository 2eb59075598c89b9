"""Where a launched rank is, written to a file per rank ($MP_DIST_STATE/rank<r>) before each call
that can wait: the launcher reads them at its timeout to name the ranks still waiting and where."""

from __future__ import annotations

import os
import time

from .comm import caller


def enter(rank: int, what: str) -> None:
    d = os.environ.get("MP_DIST_STATE")
    if d:
        with open(os.path.join(d, f"rank{rank}"), "w") as f:
            f.write(f"{time.time():.3f}\t{what} at {caller(3)}")


def leave(rank: int, what: str = "running") -> None:
    d = os.environ.get("MP_DIST_STATE")
    if d:
        with open(os.path.join(d, f"rank{rank}"), "w") as f:
            f.write(f"{time.time():.3f}\t{what}")


def read(directory: str, size: int) -> dict[int, str]:
    """{rank: what it was last doing} ('finished' for a rank that returned)."""
    out = {}
    for r in range(size):
        try:
            with open(os.path.join(directory, f"rank{r}")) as f:
                stamp, what = f.read().split("\t", 1)
            out[r] = f"{what} (for {time.time() - float(stamp):.0f} s)" if what != "finished" else what
        except (OSError, ValueError):
            out[r] = "not started (no state written)"
    return out
