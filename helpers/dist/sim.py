"""The in-process checker: `size` ranks of the learner's function in this process, one greenlet
each, scheduled deterministically (rank order, a rank runs until it must wait). The verdict engine,
never the real one: it is strict where engines are lenient (a send returns only once received, as
MPI does for any message too big to buffer and NCCL always does) and names the rank, the line and
the fix for a deadlock, a count or dtype mismatch, a buffer used before its request completed
(`watch.py`), a request never waited."""

from __future__ import annotations

import linecache
import time
from collections import deque

import greenlet
import numpy as np

from .comm import NUMPY_OPS, Comm, Request, Where, caller, poison
from .errors import BadCall, CommDeadlock, CommError, CountMismatch, DistTimeout, RankRaised, RequestNotWaited
from .watch import Watch
from .watchdog import Expired, Watchdog

SECONDS = 10.0  # one run's deadline (a learner's endless loop ends with a message, not a hang)


class Op:
    """One posted point-to-point call."""

    def __init__(self, kind: str, rank: int, peer: int, buf: np.ndarray, where: Where, blocking: bool):
        self.kind, self.rank, self.peer, self.buf = kind, rank, peer, buf
        self.where, self.blocking = where, blocking
        self.payload = buf.copy() if kind == "send" else None  # a send's data as posted
        self.partner: Op | None = None
        self.done = False

    def describe(self) -> str:
        if self.kind == "send":
            return f"send of {self.buf.size} {self.buf.dtype} to rank {self.peer}"
        return f"receive of {self.buf.size} {self.buf.dtype} from rank {self.peer}"


class SimRequest(Request):
    def __init__(self, comm: SimComm, op: Op):
        self.comm, self.op = comm, op

    def wait(self) -> None:
        self.comm.world.wait(self.op, caller(2))


class SimComm(Comm):
    engine = "sim"

    def __init__(self, world: World, rank: int):
        self.world, self.rank, self.size = world, rank, world.size

    def _post(self, kind: str, buf, peer: int, blocking: bool) -> Op:
        peer = self._peer(peer, "destination" if kind == "send" else "source")
        buf = self._buffer(buf)
        if not isinstance(buf, np.ndarray):
            raise BadCall(f"rank {self.rank}, {caller(2)}: the in-process ranks take NumPy arrays")
        op = Op(kind, self.rank, peer, buf, caller(3), blocking)
        if kind == "recv":
            poison(buf)
            op.payload = buf.copy()  # what the buffer holds until the message lands (watch.py)
        self.world.post(op)
        return op

    def send(self, buf, dest: int) -> None:
        op = self._post("send", buf, dest, True)
        self.world.wait(op, op.where)

    def recv(self, buf, source: int) -> None:
        op = self._post("recv", buf, source, True)
        self.world.wait(op, op.where)

    def isend(self, buf, dest: int) -> SimRequest:
        return SimRequest(self, self._post("send", buf, dest, False))

    def irecv(self, buf, source: int) -> SimRequest:
        return SimRequest(self, self._post("recv", buf, source, False))

    def sendrecv(self, sendbuf, dest: int, recvbuf, source: int) -> None:
        r = self._post("recv", recvbuf, source, False)
        s = self._post("send", sendbuf, dest, False)
        self.world.wait(r, r.where)
        self.world.wait(s, s.where)

    def _collective(self, kind: str, sendbuf, recvbuf, op: str = "sum"):
        sendbuf = self._buffer(sendbuf, "send buffer")
        if recvbuf is not None:
            recvbuf = self._buffer(recvbuf, "receive buffer")
        return self.world.collective(self.rank, kind, sendbuf, recvbuf, self._op(op), caller(3))

    def allreduce(self, sendbuf, recvbuf=None, op: str = "sum"):
        return self._collective("allreduce", sendbuf, recvbuf, op)

    def allgather(self, sendbuf, recvbuf):
        return self._collective("allgather", sendbuf, recvbuf)

    def reduce_scatter(self, sendbuf, recvbuf, op: str = "sum"):
        return self._collective("reduce_scatter", sendbuf, recvbuf, op)

    def barrier(self) -> None:
        self._collective("barrier", np.zeros(0, np.int8), None)


class World:
    """The ranks, their posted calls and the scheduler."""

    def __init__(self, size: int, seconds: float = SECONDS):
        self.size = size
        self.queues: dict[tuple, dict[str, deque]] = {}  # (src, dst) -> {"send": ops, "recv": ops}
        self.unwaited: list[list[Op]] = [[] for _ in range(size)]  # non-blocking ops not yet waited
        self.waiting: dict[int, tuple] = {}  # rank -> (ready(), what it waits for, Where, peers)
        self.finished: set[int] = set()
        self.calls: list[list] = []  # collective number -> [call per rank, or None]
        self.count = [0] * size  # collectives each rank has called
        self.sent = [0] * size  # bytes each rank sent point to point
        self.current = 0
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds

    # --- point to point
    def post(self, op: Op) -> None:
        src, dst = (op.rank, op.peer) if op.kind == "send" else (op.peer, op.rank)
        q = self.queues.setdefault((src, dst), {"send": deque(), "recv": deque()})
        q[op.kind].append(op)
        if op.kind == "send":
            self.sent[op.rank] += op.buf.nbytes
        if not op.blocking:
            self.unwaited[op.rank].append(op)
        while q["send"] and q["recv"]:
            s, r = q["send"].popleft(), q["recv"].popleft()
            if s.buf.size != r.buf.size or s.buf.dtype != r.buf.dtype:
                raise CountMismatch(
                    f"rank {s.rank} sends {s.buf.size} {s.buf.dtype} to rank {r.rank} at {s.where}, but the "
                    f"receive it meets on rank {r.rank} at {r.where} expects {r.buf.size} {r.buf.dtype}. "
                    "A send and its receive must agree on count and dtype (messages between two ranks "
                    "match in the order they were posted): size both buffers from the same chunk bounds."
                )
            s.partner, r.partner = r, s

    def wait(self, op: Op, where: Where) -> None:
        if op.done:
            return
        self.block(op.rank, lambda: op.partner is not None, op, where, (op.peer,))
        if op.kind == "recv":
            self.watch.complete(op, where)
            np.copyto(op.buf, op.partner.payload)  # the sender's payload: its data as posted
        else:
            self.watch.complete(op, where)
        op.done = True
        if op in self.unwaited[op.rank]:
            self.unwaited[op.rank].remove(op)

    # --- collectives: the last rank to arrive computes every rank's result
    def collective(self, rank: int, kind: str, sendbuf, recvbuf, op: str, where: Where):
        n = self.count[rank]
        self.count[rank] += 1
        while len(self.calls) <= n:
            self.calls.append([None] * self.size)
        calls = self.calls[n]
        calls[rank] = (kind, sendbuf, recvbuf, op, where)
        if all(c is not None for c in calls):
            self._finish(n, calls)
        self.block(rank, lambda: calls[0] == "done", (kind, n), where, ())
        return sendbuf if recvbuf is None else recvbuf

    def _finish(self, n: int, calls: list) -> None:
        first = calls[0]
        for r, (kind, sb, _, op, where) in enumerate(calls):
            same = (kind, sb.size, sb.dtype, op) == (first[0], first[1].size, first[1].dtype, first[3])
            if not same:
                raise CountMismatch(
                    f"collective #{n}: rank 0 calls {first[0]} on {first[1].size} {first[1].dtype} "
                    f"(op {first[3]}) at {first[4]}, rank {r} calls {kind} on {sb.size} {sb.dtype} (op {op}) "
                    f"at {where}. Every rank calls the same collectives, in the same order, with the same "
                    "count, dtype and op."
                )
        kind, op = first[0], first[3]
        sends = [c[1] for c in calls]
        if kind == "allreduce":
            total = sends[0].copy()
            for s in sends[1:]:
                NUMPY_OPS[op](total, s, out=total)
            for sb, rb in ((c[1], c[2]) for c in calls):
                self._into(rb if rb is not None else sb, total, kind, calls)
        elif kind == "allgather":
            total = np.concatenate([s.ravel() for s in sends])
            for c in calls:
                self._into(c[2], total, kind, calls)
        elif kind == "reduce_scatter":
            total = sends[0].ravel().copy()
            for s in sends[1:]:
                NUMPY_OPS[op](total, s.ravel(), out=total)
            parts = np.array_split(total, self.size)
            for r, c in enumerate(calls):
                if total.size % self.size:
                    raise CountMismatch(
                        f"rank {r} at {c[4]}: reduce_scatter of {total.size} elements over {self.size} "
                        "ranks: the send buffer must hold size * len(recvbuf) elements."
                    )
                self._into(c[2], parts[r], kind, calls)
        calls[0] = "done"

    def _into(self, rb, value, kind: str, calls: list) -> None:
        if rb is None or rb.size != value.size:
            raise CountMismatch(
                f"{kind}: a receive buffer holds {None if rb is None else rb.size} elements, the result "
                f"{value.size} (allgather: size * len(sendbuf); reduce_scatter: len(sendbuf) // size)."
            )
        np.copyto(rb.reshape(-1), value.reshape(-1).astype(rb.dtype, copy=False))

    # --- scheduling
    def block(self, rank: int, ready, what, where: Where, peers: tuple) -> None:
        while not ready():
            self.waiting[rank] = (ready, what, where, peers)
            self.main.switch()
        self.waiting.pop(rank, None)

    def tick(self, where_text) -> None:
        """Called on the learner's lines: the run's deadline."""
        if time.monotonic() > self.deadline:
            raise DistTimeout(
                f"rank {self.current} still runs at {where_text} after {self.seconds:.0f} s: an endless "
                "loop? (No message is pending: this rank never reaches its next call.)"
            )

    def run(self, fn, args: list) -> list:
        self.main = greenlet.getcurrent()
        comms = [SimComm(self, r) for r in range(self.size)]
        self.watch = Watch(self, fn)
        results = [None] * self.size

        def body(r):
            out = fn(comms[r], *args[r]) if isinstance(args[r], (tuple, list)) else fn(comms[r], **args[r])
            self.watch.leave(r)
            if self.unwaited[r]:
                op = self.unwaited[r][0]
                raise RequestNotWaited(
                    f"rank {r} returned with its non-blocking {op.describe()} (posted at {op.where}) never "
                    "waited. Until wait() returns, the engine may still read or write that buffer, and "
                    "a request never waited leaks. Keep the request and call req.wait() (or "
                    "comm.waitall([...])) before using the buffer or returning."
                )
            return out

        lets = [greenlet.greenlet(body, parent=self.main) for _ in range(self.size)]
        try:
            with Watchdog(self.seconds), self.watch:
                self._schedule(lets, results, fn)
        except Expired:
            raise DistTimeout(
                f"rank {self.current} still runs after {self.seconds:g} s: an endless loop? (Its lines "
                "were not traced, so the line is unknown; no message is pending.)"
            ) from None
        return results

    def _schedule(self, lets: list, results: list, fn) -> None:
        """Switch to each rank that can go on, until all finish (CommDeadlock when none can)."""
        while len(self.finished) < self.size:
            progressed = False
            for r in range(self.size):
                if r in self.finished:
                    continue
                w = self.waiting.get(r)
                if w is not None and not w[0]():
                    continue
                self.current = r
                try:
                    value = lets[r].switch(r) if not lets[r] else lets[r].switch()
                except CommError:
                    raise
                except Exception as e:
                    raise RankRaised(self.raised(r, e, fn)) from e
                if lets[r].dead:
                    results[r] = value
                    self.finished.add(r)
                progressed = True
            if not progressed:
                raise CommDeadlock(self.deadlock_text())

    def raised(self, r: int, e: Exception, fn) -> str:
        """The learner's exception said with its rank and line (the deepest frame of fn's file)."""
        where, tb = None, e.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_filename == self.watch.filename:
                text = linecache.getline(code.co_filename, tb.tb_lineno).strip()
                where = Where(code.co_filename, tb.tb_lineno, text)
            tb = tb.tb_next
        at = f" at {where}" if where else ""
        return f"rank {r} of {self.size} raised {type(e).__name__}{at}: {e}"

    def deadlock_text(self) -> str:
        from .deadlock import describe

        return describe(self)


def run(fn, size: int, args=None, *, seconds: float = SECONDS) -> list:
    """Run `fn(comm, *args[r])` (or `**args[r]` for a dict) on `size` in-process ranks; the list of
    its return values per rank. Raises the CommError the run hit first."""
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"a run needs at least 1 rank, got {size!r}")
    args = [()] * size if args is None else list(args)
    if len(args) != size:
        raise ValueError(f"args holds {len(args)} ranks' arguments for {size} ranks")
    return World(size, seconds).run(fn, args)
