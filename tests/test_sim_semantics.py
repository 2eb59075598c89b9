"""The simulator's two engines share one semantics (helpers/sim/semantics.py): the race rule, the
atomic table, the intrinsics and the step count exist once; the greenlet engine's inlined copies of
the race rule are held equal to it; the engines are peers under the dispatcher; lockstep reports to
the dispatcher with a typed Stop."""

import ast
import itertools
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from numba import cuda
from test_architecture import graph

from helpers import sim
from helpers.sim import errors as E
from helpers.sim import semantics
from helpers.sim.dispatch import Launch, _as_error
from helpers.sim.lockstep.stop import Stop
from helpers.sim.semantics import Actor, unordered

SIM = Path(__file__).resolve().parents[1] / "helpers" / "sim"

# every actor over two values per field: blocks, epochs, warps, warp epochs and threads that differ
ACTORS = [Actor(*f) for f in itertools.product((0, 1), repeat=5)]


def test_the_race_rule():
    """The rule in words: two threads of one block in one barrier interval race unless one warp's
    syncwarp separates them; two blocks race only when cross-block races are checked."""
    a = Actor(block=0, epoch=0, warp=0, warp_epoch=0, thread=0)
    assert not unordered(a, a, True)  # one thread is ordered with itself
    assert unordered(a, a._replace(thread=1), False)  # same warp, same interval
    assert not unordered(a, a._replace(thread=1, epoch=1), False)  # a barrier between them
    assert not unordered(a, a._replace(thread=1, warp_epoch=1), False)  # a syncwarp between them
    assert unordered(a, a._replace(thread=40, warp=1, warp_epoch=1), False)  # syncwarp of another warp
    assert unordered(a, a._replace(block=1), True) and not unordered(a, a._replace(block=1), False)


def _inline_copies():
    """Each `if` test in greenlet/memory.py that inlines the race rule for the last writer `w` and
    the current actor `c`, as a function of (w, c, cross_block)."""
    tree = ast.parse((SIM / "greenlet" / "memory.py").read_text())
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp)):
            continue
        src = ast.unparse(node.test)
        if "w is not c" in src and "c[4]" in src:
            code = compile(f"lambda w, c, st: {src}", "<inline>", "eval")
            found.append((src, eval(code)))  # noqa: S307 - the project's own source
    return found


def test_the_inlined_race_rule_equals_the_function():
    copies = _inline_copies()
    assert len(copies) == 2, [s for s, _ in copies]  # SimArray.__getitem__ and __setitem__
    for src, f in copies:
        for cross in (False, True):
            st = SimpleNamespace(cross_block=cross)
            assert f(None, ACTORS[0], st) is False  # no earlier writer
            for w, c in itertools.product(ACTORS, repeat=2):
                c = w if w == c else c  # one thread's own actor is the same object, as in a run
                assert bool(f(w, c, st)) == unordered(w, c, cross), (src, w, c, cross)


def test_the_rule_and_the_table_exist_once():
    """No engine restates the race rule or the atomic table (they import semantics')."""
    texts = {p.relative_to(SIM).as_posix(): p.read_text() for p in SIM.rglob("*.py")}
    restated = [
        name
        for name, text in texts.items()
        if name != "semantics.py"
        and (
            "def _unordered" in text
            or "def unordered" in text
            or "0 if old >= val else old + 1" in text
            or "val if cur == old else cur" in text
            or "def popc" in text
        )
    ]
    assert restated == []
    assert "semantics" in texts["lockstep/races.py"] and "semantics" in texts["greenlet/memory.py"]


def test_both_engines_use_the_one_atomic_table():
    from helpers.sim.greenlet.api import SimCuda
    from helpers.sim.lockstep.transform import _ATOMICS

    api = SimCuda(SimpleNamespace(blockdim=(1, 1, 1), griddim=(1, 1, 1)))
    assert set(vars(api.atomic)) == set(semantics.ATOMICS) | {"compare_and_swap"} == set(_ATOMICS)


@cuda.jit
def atomics(out, counts, flags):
    i = cuda.grid(1)
    if i < counts.size:
        cuda.atomic.add(out, 0, 1)
        cuda.atomic.max(out, 1, i)
        cuda.atomic.inc(counts, i % 4, 2)
        cuda.atomic.dec(counts, 4 + i % 4, 3)
        cuda.atomic.cas(flags, i % 2, 0, i + 1)


@pytest.mark.parametrize("engine", ("greenlet", "lockstep"))
def test_the_atomic_table_is_what_the_engines_do(engine):
    out, counts, flags = np.zeros(2, np.int32), np.zeros(8, np.int32), np.zeros(2, np.int32)
    r = sim.launch(atomics, 1, 8, (out, counts, flags), engine=engine)
    assert r.engine == engine
    # thread order (lockstep applies deferred atomics thread-major, as the greenlet engine)
    want_counts, want_flags = np.zeros(8, np.int64), np.zeros(2, np.int64)
    for i in range(8):
        want_counts[i % 4] = semantics.ATOMICS["inc"](want_counts[i % 4], 2)
        want_counts[4 + i % 4] = semantics.ATOMICS["dec"](want_counts[4 + i % 4], 3)
        want_flags[i % 2] = semantics.ATOMICS["cas"](want_flags[i % 2], 0, i + 1)
    assert out.tolist() == [8, 7]
    assert counts.tolist() == want_counts.tolist() and flags.tolist() == want_flags.tolist()


def test_engines_are_peers_under_the_dispatcher():
    g = graph()
    sim_mods = [m for m in g if m.startswith("helpers.sim.")]

    def engine_of(m):
        for e in ("greenlet", "lockstep"):
            if m == f"helpers.sim.{e}" or m.startswith(f"helpers.sim.{e}."):
                return e
        return None

    wrong = []
    for m in sim_mods:
        mine = engine_of(m)
        for t in g[m]:
            theirs = engine_of(t)
            if theirs and mine and theirs != mine:
                wrong.append(f"{m} imports {t}: the engines are peers")
            if theirs and not mine and m not in ("helpers.sim.dispatch", "helpers.sim.speed"):
                wrong.append(f"{m} (shared) imports {t} (an engine): only the dispatcher may")
            if t == "helpers.sim.dispatch" and m != "helpers.sim":
                wrong.append(f"{m} imports the dispatcher, which sits above it")
    assert wrong == []
    assert {"helpers.sim.greenlet.scheduler", "helpers.sim.lockstep.run"} <= g["helpers.sim.dispatch"]


def test_long_files_say_why():
    """No file of the simulator over 400 lines without a one-line reason at its top."""
    long = []
    for p in sorted(SIM.rglob("*.py")):
        lines = p.read_text().splitlines()
        if len(lines) > 400 and not lines[0].startswith("# Over 400 lines: "):
            long.append(f"{p.relative_to(SIM)} ({len(lines)} lines)")
    assert long == []


def test_stop_is_typed():
    s = Stop.diagnostic(E.KernelException, "math.exp raised OverflowError in a thread")
    assert (s.kind, s.cls, s.text) == (
        "diagnostic",
        E.KernelException,
        "math.exp raised OverflowError in a thread",
    )
    assert str(s) == "diagnostic: math.exp raised OverflowError in a thread (KernelException)"
    err = _as_error(s)
    assert type(err) is E.KernelException and "math.exp raised OverflowError" in str(err)
    assert type(_as_error(Stop.runaway("a loop ran on"))) is E.Runaway
    u = _as_error(Stop.unsupported("print"))
    assert type(u) is E.Unsupported and "lockstep cannot run this kernel: print" in str(u)
    assert str(Stop.unsupported("print")) == "unsupported: print"


@cuda.jit
def prints(out):
    i = cuda.grid(1)
    if i < out.size:
        print(i)
        out[i] = i


def test_the_dispatcher_returns_a_launch(capsys):
    out = np.zeros(4, np.float32)
    r = sim.launch(prints, 1, 4, (out,))
    assert isinstance(r, Launch) and r.engine == "greenlet" and r.fallback.startswith("unsupported: print")
    with pytest.raises(E.Unsupported, match="lockstep cannot run this kernel: print"):
        sim.launch(prints, 1, 4, (out,), engine="lockstep")


def test_step_count_with_looks():
    """The greenlet engine's count adds one step per look for a spin-wait, every SPIN_CHECK steps."""
    c = semantics.SPIN_CHECK
    big = 10**9
    assert semantics.greenlet_steps(0, big) == 0
    assert semantics.greenlet_steps(c, big) == c
    assert semantics.greenlet_steps(c + 1, big) == c + 2
    assert semantics.greenlet_steps(3 * c, big) == 3 * c + 2
