"""Each launch's GPU time in a training step (the table of `python -m tools.train --profile`), and the
checks that say whether those times are real.

The method. A kernel holds the GPU (it spins until the host sets a flag in device memory, by a copy
on a side stream that the held one does not block); the host queues the whole step behind it, an
event before and after every launch, on the launches' stream; then it sets the flag. The GPU runs
the queued work back to back, so each event pair spans its kernel and not the host's launch gap
before it. Without the hold, a step of small kernels on a launch-bound host is timed by the host:
each pair measures how long the next launch call took.

What breaks the method, and what catches it (the table says "unreliable" and why):
  - the step waits for the GPU somewhere (a copy from pageable host memory on the default stream, a
    read back, a synchronising call): the host stalls behind the hold, the hold ends, and the rest
    of the step is timed by the host (the profile before this module did so: the step began with
    the batch's copy from a NumPy array, so every kernel showed its launch call's 40-230 us).
    Caught: the event recorded after the hold has completed by the time the host has queued the
    step (`held` is False). A hold that ends early (its spin limit) is caught the same way.
  - events on another stream than the launches: they complete when the host records them. Caught:
    the events' span of the step exceeds the host clock from releasing the hold to the GPU going idle.
  - the per-launch events add more than MARGIN to the kernels' time: caught by comparing the sum of
    the pairs with a second queued step that has only one pair of events around it.

    measure(driver, step)   -> Measured: rows (name, GPU ms, host ms), wall ms, the checks, verdict

`driver` is NumbaDriver on a GPU or the simulator (no hold there: simulated times, not a
measurement), or a fake with a clock in the tests. `step(timer)` issues one step's launches, each
through `timer.time(name, launch)`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numba import cuda

MARGIN = 0.25  # sum of per-launch pairs vs the whole step's pair, and that pair vs the host's clock
SLACK_MS = 0.05  # the host's clock from release to idle also pays the flag's poll and the sync return
EMPTY_PAIRS = 32  # event pairs around nothing: what one pair adds to a kernel's time
SPIN_LIMIT = 4_000_000  # about 4 s at ~1 us a poll: a hold whose release never comes cannot hang


@cuda.jit
def wait_for_flag(flag, limit):
    # holds the GPU until flag[0] != 0 (device memory the host sets by a copy on a side stream) or
    # `limit` polls have passed; the read is an atomic, so it goes to L2 every time (a plain load in
    # a loop may be served from a stale L1 line, or hoisted out of the loop, and spin forever)
    if cuda.grid(1) == 0:
        n = 0
        while n < limit and cuda.atomic.add(flag, 0, 0) == 0:
            cuda.nanosleep(500)
            n += 1


def _side_stream():
    """A non-blocking stream: a copy on it runs while the default stream is held (a stream made by
    cuda.stream() waits behind the legacy default stream, so the release would never arrive)."""
    from puzzles.llm.training.graph import _driver, _ok

    d = _driver()
    cuda.current_context()
    raw = _ok(d.cuStreamCreate(int(d.CUstream_flags.CU_STREAM_NON_BLOCKING)), "cuStreamCreate")
    stream = cuda.external_stream(int(raw))
    stream._raw = raw  # the driver handle lives as long as Numba's wrapper
    return stream


class NumbaDriver:
    """Events, the hold and synchronisation on the step's stream (None: the default stream)."""

    def __init__(self, stream=None, can_hold: bool = True):
        self.stream = stream if stream is not None else 0
        self.can_hold = can_hold
        if can_hold:
            self._flag = cuda.to_device(np.zeros(1, np.int32))
            self._zero, self._one = cuda.pinned_array(1, np.int32), cuda.pinned_array(1, np.int32)
            self._zero[0], self._one[0] = 0, 1
            self._side = _side_stream()

    def event(self):
        return cuda.event()

    def record(self, ev):
        ev.record(self.stream)

    def done(self, ev) -> bool:
        return bool(ev.query())

    def elapsed_ms(self, a, b) -> float:
        return float(cuda.event_elapsed_time(a, b))

    def synchronize(self):
        cuda.synchronize()

    def hold(self):
        self._flag.copy_to_device(self._zero, stream=self.stream)  # ordered before the wait, async
        k = wait_for_flag[(1,), (1,)] if self.stream == 0 else wait_for_flag[(1,), (1,), self.stream]
        k(self._flag, SPIN_LIMIT)

    def release(self):
        self._flag.copy_to_device(self._one, stream=self._side)

    def clock(self) -> float:
        return time.perf_counter()


class LaunchTimer:
    """What Launches._go calls for every launch while a profile runs."""

    def __init__(self, driver, per_launch: bool = True):
        self.d, self.per_launch, self.rows = driver, per_launch, []

    def time(self, name: str, launch):
        if not self.per_launch:
            launch()
            return
        e0, e1 = self.d.event(), self.d.event()
        self.d.record(e0)
        t0 = self.d.clock()
        launch()
        host = self.d.clock() - t0
        self.d.record(e1)
        self.rows.append((name, e0, e1, host * 1e3))


@dataclass
class Measured:
    rows: list  # (kernel name, GPU ms, host ms of its launch call), in launch order
    wall_ms: float  # the step run as usual (nothing held), launch calls and GPU together
    held: bool | None = None  # the hold outlasted the queuing in both held passes (None: no hold)
    step_ms: float | None = None  # the whole step queued behind the hold, one pair of events around it
    drain_ms: float | None = None  # host clock from releasing that step to the GPU going idle
    pair_ms: float = 0.0  # what an event pair around nothing measured, taken off every row
    problems: list = field(default_factory=list)

    @property
    def gpu_ms(self) -> float:
        return sum(r[1] for r in self.rows)

    @property
    def reliable(self) -> bool:
        return self.held is True and not self.problems

    def sanity(self) -> str:
        """The line the profile prints under its table."""
        if self.held is None:
            return "GPU times: simulated (no hold on the simulator): a test of the path, not a measurement"
        head = (
            f"check: kernels sum {self.gpu_ms:.3f} ms; the whole step, queued, one event pair: "
            f"{self.step_ms:.3f} ms; host clock from release to idle: {self.drain_ms:.3f} ms; "
            f"{self.pair_ms * 1e3:.1f} us per event pair taken off each kernel "
            f"(want within {MARGIN:.0%})"
        )
        if self.reliable:
            return head + ": the GPU times are reliable"
        return head + ": the GPU ms column is UNRELIABLE: " + "; ".join(self.problems)


def _queued(d, issue):
    """Run `issue()` with the GPU held; (held, host ms from release to idle)."""
    d.synchronize()
    d.hold()
    after = d.event()
    d.record(after)
    try:
        issue()
        held = not d.done(after)  # still pending: the GPU had not passed the hold when queuing ended
    finally:
        t0 = d.clock()
        d.release()
        d.synchronize()
    return held, (d.clock() - t0) * 1e3


def measure(d, step) -> Measured:
    # 1. host times: the step as it runs normally, each launch call timed
    first = LaunchTimer(d)
    d.synchronize()
    t0 = d.clock()
    step(first)
    d.synchronize()
    wall = (d.clock() - t0) * 1e3
    hosts = [r[3] for r in first.rows]
    # 2. GPU times: the same launches queued behind the hold
    timer = LaunchTimer(d)
    if not getattr(d, "can_hold", True):
        step(timer)
        d.synchronize()
        rows = [(n, d.elapsed_ms(a, b), h) for (n, a, b, _), h in zip(timer.rows, hosts)]
        return Measured(rows, wall)
    held1, _ = _queued(d, lambda: step(timer))
    names = [r[0] for r in first.rows]
    if [r[0] for r in timer.rows] != names:
        raise RuntimeError("the profiled step launched other kernels the second time: cannot pair them")
    # an event pair costs the GPU a little even around nothing (on an H100 it inflated 82 launches'
    # sum by about a third): measured behind the hold and taken off each kernel's time
    empty = LaunchTimer(d)
    _queued(d, lambda: [empty.time("empty", lambda: None) for _ in range(EMPTY_PAIRS)])
    pair_ms = float(np.median([d.elapsed_ms(a, b) for _, a, b, _ in empty.rows]))
    rows = [(n, max(0.0, d.elapsed_ms(a, b) - pair_ms), h) for (n, a, b, _), h in zip(timer.rows, hosts)]
    # 3. the whole step queued behind the hold, one pair of events around it
    whole = LaunchTimer(d, per_launch=False)
    s0, s1 = d.event(), d.event()
    held2, drain = _queued(d, lambda: (d.record(s0), step(whole), d.record(s1)))
    m = Measured(
        rows, wall, held=held1 and held2, step_ms=d.elapsed_ms(s0, s1), drain_ms=drain, pair_ms=pair_ms
    )
    if not m.held:
        m.problems.append(
            "the hold ended before the host had queued the step (something in the step waits for the "
            "GPU, or the hold gave up): the pairs timed the host's launch gaps"
        )
    if abs(m.gpu_ms - m.step_ms) > MARGIN * m.step_ms:
        m.problems.append(f"kernels sum {m.gpu_ms:.3f} ms against the whole step's {m.step_ms:.3f} ms")
    if m.step_ms > (1 + MARGIN) * m.drain_ms + SLACK_MS:
        m.problems.append(
            f"the events span {m.step_ms:.3f} ms but the GPU went idle {m.drain_ms:.3f} ms after the "
            "release: events and launches are not on one stream"
        )
    return m
