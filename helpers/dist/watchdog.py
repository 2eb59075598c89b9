"""A run's hard deadline, kept by a timer signal. The in-process ranks stop an endless loop on the
learner's traced lines (World.tick), those of the checked function's own file; where the loop is
not traced (in a helper from another notebook cell, which is another file; in a library; another
tool took the tracer) this still ends the run: SIGALRM's handler raises `Expired` in
whichever rank is running, and World.run turns it into a DistTimeout. Signals reach only the main
thread (where notebook cells and pytest run); elsewhere the traced deadline is the only one."""

from __future__ import annotations

import signal
import threading

GRACE = 2.0  # seconds after the traced deadline: the traced path, which names the line, comes first


class Expired(BaseException):
    """The hard deadline passed (BaseException: a learner's `except Exception` cannot swallow it)."""


def _expire(signum, frame):
    raise Expired


class Watchdog:
    def __init__(self, seconds: float):
        self.seconds = seconds + GRACE
        self.armed = False

    def __enter__(self):
        usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        if usable and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0):  # never take another's timer
            self.before = signal.signal(signal.SIGALRM, _expire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.before)
            self.armed = False
