"""What can go wrong between ranks, one class per kind; each message names the rank, the learner's
source line and the fix. The in-process checker raises them; `helpers.dist.check` wraps them in
the course's `KernelDiagnosed` verdict (its `.diagnostic`)."""

from __future__ import annotations


class CommError(Exception):
    """Base of the communication diagnostics."""


class CommDeadlock(CommError):
    """Every rank still running waits for another: send/recv ordering, a wrong neighbour, a
    collective not every rank calls."""


class CountMismatch(CommError):
    """A send and its receive (or the ranks of a collective) disagree on count or dtype."""


class BufferInUse(CommError):
    """A buffer was written (or, for a receive, read) before its non-blocking call was waited."""


class RequestNotWaited(CommError):
    """The function returned with a non-blocking request never waited."""


class BadCall(CommError):
    """A call no engine accepts: a rank out of range, sending to itself, a buffer that is not a
    contiguous array."""


class RankRaised(CommError):
    """The learner's code raised on one rank (an IndexError, a ValueError from `split`...);
    `__cause__` is the original exception."""


class DistTimeout(CommError):
    """Real engine: ranks still waiting at the launch's timeout (a hung collective or message)."""
