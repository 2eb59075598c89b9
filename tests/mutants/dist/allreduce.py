"""Known-wrong and correct ring all-reduces for puzzles/dist/allreduce.py (format: tests/mutants/common.py;
`detail` is the helpers.dist.errors class of a KernelDiagnosed's `.diagnostic`)."""

from helpers.check import KernelDiagnosed, WrongAnswer
from helpers.dist import BufferInUse, CommDeadlock, CountMismatch, RequestNotWaited, split


def send_then_recv(comm, buf):
    """Every rank sends before it receives: each waits for its right neighbour, a cycle."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        comm.send(buf[lo:hi], right)
        comm.recv(incoming, left)
        buf[rlo:rhi] += incoming
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        comm.send(buf[lo:hi], right)
        comm.recv(buf[rlo:rhi], left)


def receive_from_the_right(comm, buf):
    """Sends right and receives from the right too: no rank sends to its right neighbour's left."""
    size, rank = comm.size, comm.rank
    right = (rank + 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        comm.sendrecv(buf[lo:hi], right, incoming, right)
        buf[rlo:rhi] += incoming
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        comm.sendrecv(buf[lo:hi], right, buf[rlo:rhi], right)


def off_by_one_chunk(comm, buf):
    """Adds the incoming chunk into the chunk it sent, not the one it came for."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        incoming = comm.xp.empty(hi - lo, buf.dtype)
        comm.sendrecv(buf[lo:hi], right, incoming, left)
        buf[lo:hi] += incoming
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        comm.sendrecv(buf[lo:hi], right, buf[rlo:rhi], left)


def add_before_wait(comm, buf):
    """Adds the incoming chunk before its irecv was waited: it reads the buffer before the data."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        r = comm.irecv(incoming, left)
        s = comm.isend(buf[lo:hi], right)
        buf[rlo:rhi] += incoming
        comm.waitall([r, s])
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        comm.sendrecv(buf[lo:hi], right, buf[rlo:rhi], left)


def one_staging_buffer(comm, buf):
    """Copies each outgoing chunk into one staging buffer and isends it, waiting only at the end:
    the next step overwrites the buffer while the engine may still be sending it."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    stage = comm.xp.empty(max(hi - lo for lo, hi in parts), buf.dtype)
    sends = []
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        stage[: hi - lo] = buf[lo:hi]
        sends.append(comm.isend(stage[: hi - lo], right))
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        comm.recv(incoming, left)
        buf[rlo:rhi] += incoming
    comm.waitall(sends)
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        comm.sendrecv(buf[lo:hi], right, buf[rlo:rhi], left)


def send_never_waited(comm, buf):
    """All-gather with isend and a blocking recv, the isend's request dropped."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        comm.sendrecv(buf[lo:hi], right, incoming, left)
        buf[rlo:rhi] += incoming
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        comm.isend(buf[lo:hi], right)
        comm.recv(buf[rlo:rhi], left)


def sized_by_the_sent_chunk(comm, buf):
    """Sizes the receive buffer from the chunk it sends: wrong wherever chunks differ in length."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(hi - lo, buf.dtype)
        comm.sendrecv(buf[lo:hi], right, incoming, left)
        buf[rlo : rlo + incoming.size] += incoming[: rhi - rlo]
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        comm.sendrecv(buf[lo:hi], right, buf[rlo:rhi], left)


def no_all_gather(comm, buf):
    """Stops after the reduce-scatter: each rank holds the full sum of one chunk only."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        comm.sendrecv(buf[lo:hi], right, incoming, left)
        buf[rlo:rhi] += incoming


# ---------------------------------------------------------------------------- correct variants


def leftward_ring(comm, buf):
    """The ring the other way round: send left, receive from the right, chunks in the other order."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank + step) % size]
        rlo, rhi = parts[(rank + step + 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        comm.sendrecv(buf[lo:hi], left, incoming, right)
        buf[rlo:rhi] += incoming
    for step in range(size - 1):
        lo, hi = parts[(rank - 1 + step) % size]
        rlo, rhi = parts[(rank + step) % size]
        comm.sendrecv(buf[lo:hi], left, buf[rlo:rhi], right)


def nonblocking_pairs(comm, buf):
    """irecv and isend each step, both waited before the chunk is touched."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        reqs = [comm.irecv(incoming, left), comm.isend(buf[lo:hi], right)]
        comm.waitall(reqs)
        buf[rlo:rhi] += incoming
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        r = comm.irecv(buf[rlo:rhi], left)
        s = comm.isend(buf[lo:hi], right)
        s.wait()
        r.wait()


def even_ranks_send_first(comm, buf):
    """Blocking calls only, ordered so that no cycle of sends forms: even ranks send first, odd ones
    receive first; with an odd rank count rank 0 receives first too (its left neighbour is even)."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)
    send_first = rank % 2 == 0 and rank != 0 if size % 2 else rank % 2 == 0

    def exchange(out, into):
        if send_first:
            comm.send(out, right)
            comm.recv(into, left)
        else:
            comm.recv(into, left)
            comm.send(out, right)

    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        exchange(buf[lo:hi], incoming)
        buf[rlo:rhi] += incoming
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        exchange(buf[lo:hi], buf[rlo:rhi])


MUTANTS = {
    "ring_allreduce": [
        ("send_then_recv", send_then_recv, KernelDiagnosed, CommDeadlock),
        ("receive_from_the_right", receive_from_the_right, KernelDiagnosed, CommDeadlock),
        ("off_by_one_chunk", off_by_one_chunk, WrongAnswer, None),
        ("add_before_wait", add_before_wait, KernelDiagnosed, BufferInUse),
        ("one_staging_buffer", one_staging_buffer, KernelDiagnosed, BufferInUse),
        ("send_never_waited", send_never_waited, KernelDiagnosed, RequestNotWaited),
        ("sized_by_the_sent_chunk", sized_by_the_sent_chunk, KernelDiagnosed, CountMismatch),
        ("no_all_gather", no_all_gather, WrongAnswer, None),
    ]
}
VARIANTS = {
    "ring_allreduce": [
        ("leftward_ring", leftward_ring),
        ("nonblocking_pairs", nonblocking_pairs),
        ("even_ranks_send_first", even_ranks_send_first),
    ]
}
SEEDS = {"ring_allreduce": (0, 1, 2)}
