"""A launch's wall-clock limit on the greenlet engine. The kernel runs as plain Python in the
launching thread, so nothing but an asynchronous exception can stop an endless loop in it: a timer
thread raises `Timeout` there (PyThreadState_SetAsyncExc). Stopping the clock leaves the process as
it was before the launch: no exception pending, the eval breaker clear, a fired timer's thread
ended (an unfired one can no longer fire, and ends by itself).

Why a fired clock's exception is withdrawn by delivering a private one, not by
PyThreadState_SetAsyncExc(thread, NULL): on CPython 3.11 that call raises the interpreter's
"asynchronous exception pending" flag while leaving nothing to deliver, and only a delivery lowers
the flag. It then stays up for the life of the process, and every function entered under
sys.settrace (the many-ranks checker's watch, a debugger, coverage) re-checks it forever: the
notebook hangs at the next traced call. 3.12 and 3.13 (checked) run that call; this way is right
on every version."""

from __future__ import annotations

import ctypes
import threading

_SET_ASYNC_EXC = ctypes.pythonapi.PyThreadState_SetAsyncExc


class Timeout(BaseException):
    """Delivered asynchronously by the clock; the scheduler turns it into Runaway."""


class _Withdrawn(BaseException):
    """Takes the place of an undelivered Timeout, and is caught right here."""


def _withdraw(thread: int) -> None:
    """Replace whatever is pending for `thread` (the calling one) by _Withdrawn, and take it."""
    try:
        _SET_ASYNC_EXC(ctypes.c_ulong(thread), ctypes.py_object(_Withdrawn))
        for _ in range(1000):  # a loop's back edge checks for pending exceptions: it lands here
            pass
    except _Withdrawn:
        return
    _SET_ASYNC_EXC(ctypes.c_ulong(thread), None)  # not delivered (no interpreter seen does this)


class WallClock:
    """start() before the run, stop() first thing after it (any number of times: a Timeout that
    lands inside stop() leaves it for the caller's `except Timeout`, which calls stop() again)."""

    def __init__(self, seconds: float | None):
        self.thread = threading.get_ident()
        self.lock = threading.Lock()
        self.fired = self.stopped = self.clear = False
        self.timer = threading.Timer(seconds, self._fire) if seconds else None
        if self.timer:
            self.timer.daemon = True

    def start(self) -> None:
        if self.timer:
            self.timer.start()

    def _fire(self) -> None:
        with self.lock:
            if not self.stopped:
                self.fired = True
                _SET_ASYNC_EXC(ctypes.c_ulong(self.thread), ctypes.py_object(Timeout))

    def stop(self) -> None:
        if self.timer is None or self.clear:
            return
        with self.lock:  # from here on the clock cannot fire
            self.stopped = True
        self.timer.cancel()  # an unfired timer thread ends by itself (joining it costs 0.5 ms a launch)
        if self.fired:
            self.timer.join()  # it has fired: gone before the launch reports
            _withdraw(self.thread)
        self.clear = True
