"""Notebook 13 (the machine), beyond what tests/test_exercises.py checks for its exercise: the GPU
kernels the timings use, checked on the simulator; the CPU timings validated and sized; the stream
timeline on the simulator engine (numba.cuda's streams and events are the simulator's there); and
the GPU functions' skip on a machine without one."""

import numpy as np
import pytest

from helpers import sim, timing
from puzzles.machine import measure

# ---------------------------------------------------------------- the timing kernels, on the simulator


def test_sum_kernel_on_the_simulator():
    rng = np.random.default_rng(0)
    for n, grid, block in ((1, 1, 32), (100, 2, 64), (333, 3, 96)):
        x = rng.uniform(-1, 1, n).astype(np.float32)
        out = np.zeros(1, np.float32)
        sim.launch(
            measure.sum_kernel, grid, block, (out, x, n), roles={"out": "inout", "x": "in"}, trace=False
        )
        assert np.isclose(out[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-5)


def test_matmul_kernel_on_the_simulator():
    rng = np.random.default_rng(1)
    for n in (5, 16, 21):
        a, b = (rng.uniform(-1, 1, (n, n)).astype(np.float32) for _ in range(2))
        c = np.full((n, n), np.nan, np.float32)
        g = -(-n // measure.TILE)
        sim.launch(
            measure.matmul_kernel,
            (g, g),
            (measure.TILE, measure.TILE),
            (c, a, b, n),
            roles={"c": "out", "a": "in", "b": "in"},
            trace=False,
        )
        assert np.allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_busy_and_zero_kernels_on_the_simulator():
    x = np.random.default_rng(2).uniform(-1, 1, 70).astype(np.float32)
    out = np.full_like(x, np.nan)
    sim.launch(measure.busy_kernel, 2, 32, (out, x, 3), roles={"out": "out", "x": "in"}, trace=False)
    want = x.copy()
    for _ in range(3):
        want = want * np.float32(0.999) + np.float32(0.001)
    assert np.allclose(out, want)
    z = np.ones(40, np.float32)
    sim.launch(measure.zero_kernel, 2, 32, (z,), trace=False)
    assert not z.any()


# ---------------------------------------------------------------- host side


def test_stream_timeline_on_the_simulator(monkeypatch):
    from helpers import engine

    state = engine.EngineState()  # a fresh engine state, so numba.cuda is put back as it was found
    monkeypatch.setattr(engine, "STATE", state)
    state.gpu = False
    state.use("sim")
    try:
        rows = measure.overlap_timeline(n=4 * 32, chunks=4, streams=2, reps=2, threads=32)
    finally:
        state._unpatch()
    stages = ("copy in", "kernel", "copy out")
    assert [(r[0], r[2]) for r in rows] == [(c, s) for c in range(4) for s in stages]
    assert [r[1] for r in rows[::3]] == [0, 1, 0, 1]
    ends = [r[4] for r in rows]
    assert all(r[3] <= r[4] for r in rows) and ends == sorted(ends)  # synchronous: a staircase


def test_cpu_timings_are_validated_and_positive():
    small = ((measure.OPS[0], [1000, 4000]), (measure.OPS[1], [1000, 4000]), (measure.OPS[2], [8, 24]))
    for op, sizes in small:
        t = measure.cpu_timings(op, sizes)
        assert set(t) == {"NumPy", "Numba parallel"}
        assert all(len(v) == len(sizes) and all(x > 0 for x in v) for v in t.values())


def test_crossover():
    sizes = [10, 100, 1000, 10000]
    cpu = {"NumPy": [1.0, 2.0, 3.0, 4.0], "Numba parallel": [2.0, 1.5, 5.0, 3.5]}
    assert measure.crossover(sizes, cpu, {"GPU, data on device": [5.0, 1.0, 5.0, 1.0]}) == (10000, 3.5)
    assert measure.crossover(sizes, cpu, {"GPU, data on device": [0.5, 1.0, 2.0, 3.0]}) == (10, 1.0)
    assert measure.crossover(sizes, cpu, {"GPU, data on device": [9.0] * 4}) is None


def test_sizes_are_ci_sizes_under_the_suite_only_without_a_gpu(monkeypatch):
    from helpers import timing

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("MP_SMALL_STUDIES", "1")  # conftest.py sets it for the suite
    monkeypatch.setattr(timing, "skip_reason", lambda: "no GPU here")
    assert max(measure.vector_sizes()) == 10**5 and max(measure.matmul_sizes()) == 128
    monkeypatch.setenv("MP_SMALL_STUDIES", "0")  # a learner without a GPU
    assert max(measure.vector_sizes()) == 10**7 and max(measure.matmul_sizes()) == 256
    monkeypatch.setenv("MP_SMALL_STUDIES", "1")
    monkeypatch.setattr(timing, "skip_reason", lambda: None)  # with a GPU the suite measures in full
    assert max(measure.vector_sizes()) == 10**8 and max(measure.matmul_sizes()) == 2048


def test_sizes_are_capped_under_ci(monkeypatch):
    monkeypatch.delenv("MP_SMALL_STUDIES", raising=False)  # as a learner runs it, outside the suite
    monkeypatch.setenv("CI", "1")
    assert measure.vector_sizes()[0] == 1000 and max(measure.vector_sizes()) <= 10**5
    assert max(measure.matmul_sizes()) <= 128
    monkeypatch.delenv("CI")
    assert max(measure.vector_sizes()) >= 10**7


@pytest.mark.skipif(timing.skip_reason() is None, reason="a GPU is present")
def test_gpu_parts_skip_without_a_gpu():
    assert timing.skip_reason()
    with pytest.raises(RuntimeError):
        measure.measured_bandwidth()
