"""The ring all-reduce with its additions hidden behind its transfers, on NCCL: each chunk cut into
pieces, the messages on one stream and the additions on another, ordered by events, so that while
piece j is added piece j + 1 is on the wire (what NCCL's own ring does inside one kernel). The
bandwidth bench's second ring row: the plain ring (the exercise's reference) leaves the GPU's
links idle during every addition; this one shows how much of that gap the overlap closes.

What it pays for that: `pieces` times the messages, each a separate NCCL launch with a fixed host
and GPU cost, and smaller messages, which NCCL's point-to-point moves at a lower rate (the table's
"chunk xchg" column). On 2 ranks there is one reduce step, so the additions it can hide are one
chunk's (~0.17 ms at 256 MiB on an H100) against 3 more messages' fixed cost: it is faster than
the plain ring only where that cost is small. The first H100 run (44% of NCCL at 256 MiB, 2.1 ms
even at 1 MiB) was bound by a per-call cost since removed (an open/write/close of the rank's state
file before every NCCL call: helpers/dist/state.py); the streams are also made once per Comm now."""

from __future__ import annotations

from .split import split


def _streams(comm):
    """The messages' stream and the additions', made once per Comm (a stream costs a driver call)."""
    import cupy

    made = getattr(comm, "_pipelined_streams", None)
    if made is None:
        made = comm._pipelined_streams = (
            cupy.cuda.Stream(non_blocking=True),
            cupy.cuda.Stream(non_blocking=True),
        )
    return made


def ring_pipelined(comm, buf, pieces: int = 4) -> None:
    """In-place sum over the ranks of a device array `buf` (NCCL engine only)."""
    import cupy

    size, rank = comm.size, comm.rank
    if size == 1:
        return
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    null = cupy.cuda.Stream.null
    wire, adds = _streams(comm)

    def event(stream):
        e = cupy.cuda.Event(disable_timing=True)
        e.record(stream)
        return e

    start = event(null)  # what was queued before (the data in buf) comes first
    wire.wait_event(start)
    adds.wait_event(start)
    before, comm.stream = comm.stream, wire
    try:
        widest = max(hi - lo for lo, hi in parts)
        cut = [(widest * j) // pieces for j in range(pieces + 1)]
        inbox = [[cupy.empty(cut[j + 1] - cut[j], buf.dtype) for j in range(pieces)] for _ in range(2)]
        added = [None] * pieces  # the event after piece j's last addition
        for step in range(size - 1):
            slo, shi = parts[(rank - step) % size]
            rlo, rhi = parts[(rank - step - 1) % size]
            for j in range(pieces):
                a, b = cut[j], cut[j + 1]
                s = buf[slo + min(a, shi - slo) : slo + min(b, shi - slo)]
                r = buf[rlo + min(a, rhi - rlo) : rlo + min(b, rhi - rlo)]
                box = inbox[step % 2][j][: r.size]
                if added[j] is not None:
                    wire.wait_event(added[j])  # the piece sent now is the one added last step
                comm.sendrecv(s, right, box, left)
                arrived = event(wire)
                adds.wait_event(arrived)
                with adds:
                    r += box
                added[j] = event(adds)
        for e in added:
            wire.wait_event(e)
        for step in range(size - 1):
            slo, shi = parts[(rank + 1 - step) % size]
            rlo, rhi = parts[(rank - step) % size]
            comm.sendrecv(buf[slo:shi], right, buf[rlo:rhi], left)
        null.wait_event(event(wire))  # later work on the default stream sees the sum
    finally:
        comm.stream = before
