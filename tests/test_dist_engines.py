"""helpers.dist beyond the exercises: the in-process checker's diagnostics on small programs (each
names rank, line and fix), bad input (a split that cannot be made, a missing engine, a call no
engine accepts, an endless loop), and the real MPI engine: the ring all-reduce against MPI's own
on 2 and 4 ranks (oversubscribed on CI's 2 cores) and a hung collective stopped at its timeout,
naming the rank still waiting. About 10 s, most of it the three mpirun launches."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import time

import numpy as np
import pytest

import helpers.dist as hd
from helpers.dist import missing, watchdog


def ring(comm, x):
    left, right = (comm.rank - 1) % comm.size, (comm.rank + 1) % comm.size
    got = np.empty_like(x)
    comm.sendrecv(x, right, got, left)
    return got


def test_sendrecv_ring_and_collectives_agree_with_numpy():
    xs = [np.arange(3, dtype=np.float64) + 10 * r for r in range(4)]
    assert [int(v[0]) for v in hd.run(ring, 4, [(x,) for x in xs])] == [30, 0, 10, 20]

    def colls(comm, x):
        total = comm.allreduce(x.copy())
        gathered = np.empty(x.size * comm.size, x.dtype)
        comm.allgather(x, gathered)
        part = np.empty(x.size // comm.size, x.dtype)
        comm.reduce_scatter(x, part, op="max")
        comm.barrier()
        return total, gathered, part

    xs = [np.random.default_rng(r).normal(size=8) for r in range(4)]
    for r, (total, gathered, part) in enumerate(hd.run(colls, 4, [(x,) for x in xs])):
        np.testing.assert_allclose(total, np.sum(xs, axis=0))
        np.testing.assert_array_equal(gathered, np.concatenate(xs))
        np.testing.assert_array_equal(part, np.max(xs, axis=0)[2 * r : 2 * r + 2])


def _diagnosis(fn, size=3, n=4):
    with pytest.raises(hd.CommError) as info:
        hd.run(fn, size, [(np.ones(n),) for _ in range(size)])
    return info.value


def test_deadlock_names_every_rank_the_cycle_and_the_fix():
    def sends_first(comm, x):
        comm.send(x, (comm.rank + 1) % comm.size)
        comm.recv(x, (comm.rank - 1) % comm.size)

    e = _diagnosis(sends_first)
    assert type(e) is hd.CommDeadlock
    text = str(e)
    assert all(f"rank {r} waits at line" in text for r in range(3)), text
    assert "comm.send(x, (comm.rank + 1) % comm.size)" in text and "0 -> 1 -> 2 -> 0" in text
    assert "sendrecv" in text  # the fix


def test_collective_on_some_ranks_only():
    def some(comm, x):
        if comm.rank:
            comm.allreduce(x)

    e = _diagnosis(some)
    assert type(e) is hd.CommDeadlock
    assert "rank 0 has returned" in str(e) and "until rank 0 calls it" in str(e)


def test_mismatched_counts_and_dtypes():
    def counts(comm, x):
        got = np.empty(x.size + comm.rank)
        comm.sendrecv(x, (comm.rank + 1) % comm.size, got, (comm.rank - 1) % comm.size)

    def dtypes(comm, x):
        got = np.empty(x.size, np.float32)
        comm.sendrecv(x, (comm.rank + 1) % comm.size, got, (comm.rank - 1) % comm.size)

    def collective(comm, x):
        comm.allreduce(x[: comm.rank + 1].copy())

    assert "expects 5 float64" in str(_diagnosis(counts))
    assert "expects 4 float32" in str(_diagnosis(dtypes))
    e = _diagnosis(collective)
    assert type(e) is hd.CountMismatch and "rank 1 calls allreduce on 2 float64" in str(e)


def test_buffer_in_use_and_request_never_waited():
    def read_early(comm, x):
        got = np.empty_like(x)
        req = comm.irecv(got, (comm.rank - 1) % comm.size)
        comm.send(x, (comm.rank + 1) % comm.size)
        x += got
        req.wait()

    def write_early(comm, x):
        got = np.empty_like(x)
        req = comm.isend(x, (comm.rank + 1) % comm.size)
        x[0] = 7
        comm.recv(got, (comm.rank - 1) % comm.size)
        req.wait()

    def never(comm, x):
        got = np.empty_like(x)
        comm.isend(x, (comm.rank + 1) % comm.size)
        comm.recv(got, (comm.rank - 1) % comm.size)

    e = _diagnosis(read_early)
    assert type(e) is hd.BufferInUse and "uses `got`" in str(e) and "`x += got`" in str(e)
    e = _diagnosis(write_early)
    assert type(e) is hd.BufferInUse and "`x[0] = 7`" in str(e)
    e = _diagnosis(never)
    assert type(e) is hd.RequestNotWaited and "comm.isend(x, (comm.rank + 1) % comm.size)" in str(e)


def test_reads_of_a_pending_receive_are_told_apart_by_index():
    """Only the elements the irecv covers count: a read of the other half of the array is fine."""

    def half(comm, x, which):
        t = np.zeros(2 * x.size)
        req = comm.irecv(t[: x.size], (comm.rank - 1) % comm.size)
        comm.send(x, (comm.rank + 1) % comm.size)
        t[x.size :] = t[x.size + which] + 1
        req.wait()
        return t

    out = hd.run(half, 2, [(np.ones(2), 0)] * 2)
    assert out[0].tolist() == [1.0, 1.0, 1.0, 1.0]
    with pytest.raises(hd.BufferInUse, match=r"uses `t\[x.size \+ which\]`"):
        hd.run(half, 2, [(np.ones(2), -2)] * 2)


def test_a_correct_nonblocking_program_passes():
    def fine(comm, x):
        got = np.empty_like(x)
        reqs = [comm.irecv(got, (comm.rank - 1) % comm.size), comm.isend(x, (comm.rank + 1) % comm.size)]
        y = x * 2  # reading a buffer being sent is allowed
        comm.waitall(reqs)
        return got + y

    out = hd.run(fine, 3, [(np.full(2, float(r)),) for r in range(3)])
    assert [float(o[0]) for o in out] == [2.0, 2.0, 5.0]


@pytest.mark.parametrize(
    "call,words",
    [
        ("comm.send(x, comm.size)", "does not exist"),
        ("comm.send(x, comm.rank)", "a message to itself"),
        ("comm.send([1.0, 2.0], (comm.rank + 1) % comm.size)", "must be an array"),
        ("comm.send(np.ones((3, 3))[:, 0], (comm.rank + 1) % comm.size)", "not contiguous"),
        ("comm.allreduce(x, op='mean')", "is not one of"),
    ],
)
def test_calls_no_engine_accepts(call, words, tmp_path, monkeypatch):
    src = tmp_path / "prog.py"
    src.write_text(f"import numpy as np\n\ndef prog(comm, x):\n    {call}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("prog", None)
    prog = __import__("prog").prog
    e = _diagnosis(prog, size=2)
    assert type(e) is hd.BadCall and words in str(e) and "rank 0, line 4" in str(e), str(e)


def test_endless_loop_ends_with_a_message():
    def spin(comm, x):
        while True:
            x += 1

    with pytest.raises(hd.DistTimeout, match="rank 0 still runs at line"):
        hd.run(spin, 2, [(np.ones(1),)] * 2, seconds=0.3)


def test_an_untraced_endless_loop_ends_too():
    """Where the learner's lines are not traced (here the rank switches the tracer off), the
    watchdog thread still ends the run, a little after the deadline."""

    def untraced(comm, x):
        sys.settrace(None)
        while True:
            x += 1

    t0 = time.monotonic()
    with pytest.raises(hd.DistTimeout, match="rank 0 still runs after 0.3 s: an endless loop"):
        hd.run(untraced, 2, [(np.ones(1),)] * 2, seconds=0.3)
    assert time.monotonic() - t0 < 0.3 + watchdog.GRACE + 3
    assert hd.run(lambda comm: comm.rank, 2, seconds=0.01) == [0, 1]  # the next run is not hit by it
    time.sleep(watchdog.GRACE + 0.1)  # nor is this line, after a short run's deadline would have passed


def test_an_exception_on_a_rank_names_rank_and_line():
    def bad(comm, x):
        if comm.rank == 1:
            x[10] = 1.0

    e = _diagnosis(bad)
    assert type(e) is hd.RankRaised and type(e.__cause__) is IndexError
    assert str(e).startswith("rank 1 of 3 raised IndexError at line") and "`x[10] = 1.0`" in str(e)


def test_any_callable_runs_and_its_exception_is_named():
    import functools

    def bad(comm, x, at):
        x[at] = 1.0

    e = _diagnosis(functools.partial(bad, at=10))
    assert type(e) is hd.RankRaised and "rank 0 of 3 raised IndexError" in str(e)


def test_a_split_that_cannot_be_made():
    assert hd.split(10, 4) == [(0, 3), (3, 6), (6, 8), (8, 10)]
    with pytest.raises(ValueError, match="3 elements cannot be split over 4 ranks.*at most 3 ranks"):
        hd.split(3, 4)
    with pytest.raises(ValueError, match="at least 2 each"):
        hd.split(5, 3, least=2)

    def ring_on_too_few(comm, x):
        hd.split(x.size, comm.size)

    e = _diagnosis(ring_on_too_few, size=4, n=3)
    assert type(e) is hd.RankRaised and "3 elements cannot be split over 4 ranks" in str(e)


def test_missing_engines_say_so_in_one_line(monkeypatch):
    real = importlib.util.find_spec
    gone = ("mpi4py", "cupy")
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n in gone else real(n, *a))
    for engine in ("mpi", "nccl"):
        why = missing(engine)
        assert why and "\n" not in why and "pip install" in why
        with pytest.raises(RuntimeError, match="unavailable"):
            from helpers.dist.launch import launch

            launch(2, "x:y", engine=engine)
    with pytest.raises(ValueError, match="unknown engine"):
        missing("gloo")


class _FakeCupy:
    """Just enough of CuPy for helpers.dist.pipelined on NumPy: streams and events that order
    nothing (everything here runs at once), so the in-process checker judges its messages."""

    class cuda:
        class Stream:
            null = None

            def __init__(self, non_blocking=False):
                pass

            def wait_event(self, e):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *a):
                pass

        class Event:
            def __init__(self, disable_timing=False):
                pass

            def record(self, stream=None):
                pass

    empty = staticmethod(np.empty)


_FakeCupy.cuda.Stream.null = _FakeCupy.cuda.Stream()


@pytest.mark.parametrize("pieces", [1, 3, 4])
def test_the_pipelined_ring_sums_with_matching_messages(pieces, monkeypatch):
    """The bench's pipelined ring (streams are NCCL's business; the pieces and their messages are
    checked here), uneven chunks included."""
    from helpers.dist.pipelined import ring_pipelined

    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy)
    for size, n in ((2, 7), (3, 10), (4, 23), (4, 4)):
        xs = [np.random.default_rng(r).normal(size=n) for r in range(size)]
        bufs = [x.copy() for x in xs]
        hd.run(lambda comm, b: ring_pipelined(comm, b, pieces), size, [(b,) for b in bufs])
        for b in bufs:
            np.testing.assert_allclose(b, np.sum(xs, axis=0))


# ---------------------------------------------------------------------------- the real MPI engine

MPI_MISSING = missing("mpi")
needs_mpi = pytest.mark.skipif(bool(MPI_MISSING), reason=MPI_MISSING or "")


EVERY_CALL = """
import numpy as np

from puzzles.dist.allreduce import against_engine


def every_call(comm):
    r, p = comm.rank, comm.size
    right, left = (r + 1) % p, (r - 1) % p
    x = np.arange(6, dtype=np.float32) + 10 * r
    got = np.empty_like(x)
    if r % 2 == 0:
        comm.send(x, right)
        comm.recv(got, left)
    else:
        comm.recv(got, left)
        comm.send(x, right)
    assert got[0] == 10 * left
    reqs = [comm.irecv(got, left), comm.isend(x + 1, right)]
    comm.waitall(reqs)
    assert got[0] == 10 * left + 1
    comm.sendrecv(x, right, got, left)
    assert got[0] == 10 * left
    total = comm.allreduce(x.copy())
    assert np.allclose(total, np.arange(6) * p + 10 * sum(range(p)))
    out = np.empty_like(x)
    comm.allreduce(x, out, op="max")
    assert np.allclose(out, np.arange(6) + 10 * (p - 1))
    gathered = np.empty(6 * p, np.float32)
    comm.allgather(x, gathered)
    assert np.allclose(gathered, np.concatenate([np.arange(6) + 10 * q for q in range(p)]))
    part = np.empty(2, np.float32)
    comm.reduce_scatter(np.full(2 * p, r + 1.0, np.float32), part)
    assert np.allclose(part, p * (p + 1) / 2)
    comm.barrier()
    if r == 0:
        print(f"every call OK on {p} ranks")
    against_engine(comm, "1001", "3")
"""


@needs_mpi
def test_every_call_and_the_ring_on_4_mpi_ranks(tmp_path, monkeypatch):
    """Every call of the contract, then the reference ring against MPI's all-reduce on the same data."""
    (tmp_path / "mpi_program.py").write_text(EVERY_CALL)
    monkeypatch.chdir(tmp_path)
    from helpers.dist.launch import launch

    out = launch(4, "mpi_program:every_call", engine="mpi", timeout=60)
    assert "every call OK on 4 ranks" in out and "matches the mpi engine's allreduce on 4 ranks" in out


@needs_mpi
def test_a_function_defined_here_runs_on_2_mpi_ranks():
    """A function that lives in no module the ranks can import (a notebook cell's) goes by source:
    a correct variant of the ring, against MPI's all-reduce."""
    from helpers.dist.launch import launch

    def leftward(comm, buf):  # the mutants file's leftward_ring, written here as in a notebook
        size, rank = comm.size, comm.rank
        right, left = (rank + 1) % size, (rank - 1) % size
        parts = split(buf.size, size)  # noqa: F821 (the shipped module imports it)
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

    target = "puzzles.dist.allreduce:against_engine"
    out = launch(2, target, engine="mpi", timeout=60, args=(1001, 3, "mp_cell:leftward"), ship=[leftward])
    assert "matches the mpi engine's allreduce on 2 ranks" in out


@needs_mpi
def test_a_hung_collective_times_out_naming_the_waiting_rank(tmp_path, monkeypatch):
    (tmp_path / "hung.py").write_text(
        textwrap.dedent(
            """
            def only_rank_0(comm):
                if comm.rank == 0:
                    comm.barrier()
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    from helpers.dist.launch import launch

    with pytest.raises(hd.DistTimeout) as info:
        launch(2, "hung:only_rank_0", engine="mpi", timeout=4)
    text = str(info.value)
    assert "rank 0: barrier at line 4 (`comm.barrier()`)" in text and "rank 1" not in text.split("still")[1]


# A traced call after a simulator wall-clock timeout (the clock's exception is asynchronous). This
# spun forever on CPython 3.11 while the clock withdrew it with PyThreadState_SetAsyncExc(id, NULL):
# see helpers/sim/greenlet/wallclock.py. Each runs in a subprocess with its own end, so a hang fails.
AFTER_A_TIMEOUT = """
import faulthandler, sys
import numpy as np, greenlet
from numba import cuda
from helpers import sim

@cuda.jit
def spin(out, forever):
    x = 0
    while forever or x < 3:
        x += 1
    out[cuda.grid(1)] = x

try:
    sim.launch(spin, 1, 4, (np.zeros(16, np.float32), True), timeout=0.3, engine="greenlet")
except sim.Runaway as e:
    print("timed out:", "0.3 s" in str(e))
faulthandler.dump_traceback_later(3, exit=True)  # the hang, if it comes, ends the process
sys.settrace(lambda frame, event, arg: None)
def plain():
    return "called"
print(plain(), greenlet.greenlet(lambda: "switched").switch())
"""


def test_a_traced_greenlet_after_a_simulator_timeout_runs():
    import subprocess

    done = subprocess.run([sys.executable, "-c", AFTER_A_TIMEOUT], capture_output=True, text=True, timeout=60)
    assert "timed out: True" in done.stdout and "called switched" in done.stdout, done.stderr[-500:]


# What a learner does in one notebook: a runaway kernel stopped by the wall clock, then dist
# exercises checked in the same process, each with its own verdict (the watch's tracer included).
LEARNER_AFTER_A_TIMEOUT = """
import faulthandler, sys
faulthandler.dump_traceback_later(30, exit=True)
sys.path.insert(0, sys.argv[1])  # tests/: the known-wrong ring
from numba import cuda
import puzzles
from helpers import sim
from helpers.check import KernelDiagnosed
from mutants.dist.allreduce import add_before_wait, send_then_recv
from puzzles.dist.allreduce import ring_allreduce

@cuda.jit
def map_kernel(out, a):
    i = cuda.threadIdx.x
    x = 0
    while x >= 0:
        x = x + 1 - 1
    out[i] = a[i] + 10

sim.config.engine, sim.config.timeout = "greenlet", 0.5  # only the wall clock stops this loop
try:
    puzzles.check("map", map_kernel, seed=0)
except KernelDiagnosed as e:
    print("map:", type(e.diagnostic).__name__, "ran for more than 0.5 s" in str(e))
sim.config.engine, sim.config.timeout = "auto", 10.0
print(repr(puzzles.check("ring_allreduce", ring_allreduce, seed=0)).split(",")[0])
for wrong in (add_before_wait, send_then_recv):
    try:
        puzzles.check("ring_allreduce", wrong, seed=0)
    except KernelDiagnosed as e:
        print("ring:", type(e.diagnostic).__name__)
"""


def test_a_learner_checks_a_dist_exercise_after_a_runaway_kernel():
    import subprocess
    from pathlib import Path

    tests = str(Path(__file__).resolve().parent)
    run = [sys.executable, "-c", LEARNER_AFTER_A_TIMEOUT, tests]
    done = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == [
        "map: Runaway True",
        "Passed: ring_allreduce",
        "ring: BufferInUse",
        "ring: CommDeadlock",
    ], done.stdout + done.stderr[-800:]
