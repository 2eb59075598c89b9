"""What the standard count rules tell a learner: the generic advice per kind of access, the advice
when every value read was a different one, and one thread's accesses broken down per array."""

from __future__ import annotations

import numpy as np

from helpers.sim.trace import READ

ADVICE = {
    "global_reads": "Global memory is the slow part: load each value once (into a register or shared "
    "memory) and reuse it.",
    "global_writes": "Write each output element once, from one thread, after the result is complete.",
    "shared_reads": "Read fewer shared values per thread: share the work among the block's threads, each "
    "reading only what its own step needs.",
    "shared_writes": "Write fewer shared values per thread.",
}


def per_array(trace, space, kind, blk, thr) -> tuple[str, bool]:
    """What one thread's accesses of one kind were, per array: how many, at how many distinct
    elements, and per output element it wrote."""
    ids = [a.id for a in trace.arrays if a.space == space]
    acc = trace.acc
    mine = acc[
        (acc["block"] == blk) & (acc["thread"] == thr) & np.isin(acc["array"], ids) & (acc["kind"] == kind)
    ]
    out_ids = [a.id for a in trace.arrays if a.space == "global"]
    wrote = int(
        (
            (acc["block"] == blk)
            & (acc["thread"] == thr)
            & np.isin(acc["array"], out_ids)
            & (acc["kind"] != READ)
        ).sum()
    )
    parts, repeated = [], False
    for aid in np.unique(mine["array"]):
        rows = mine[mine["array"] == aid]
        distinct = len(np.unique(rows["index"]))
        repeated |= distinct < len(rows)
        per = f", {len(rows) / wrote:.3g} per output element it wrote" if wrote and kind == READ else ""
        again = f", each about {len(rows) / distinct:.2g} times" if distinct < len(rows) else ", each once"
        parts.append(
            f"`{trace.arrays[int(aid)].name}` {len(rows)} times ({distinct} distinct "
            f"element{'s' if distinct != 1 else ''}{again}{per})"
        )
    return ("; ".join(parts), repeated)


# advice when every value read was a different one: reusing them would not help
SHARE = {
    "global_reads": "Every value it read was a different one, so reuse will not help: it reads more than "
    "its share. Give the work to more threads (each its own part), or stop as soon as the answer is known.",
    "shared_reads": "Every value it read was a different one: it does more than its share of the block's "
    "work. Split the reads evenly across the block's threads.",
}
