"""PMPP chapters 14 (sparse matrices) and 15 (graph traversal), what tests/test_exercises.py does not
cover: the chapters' exercise and control counts; the format conversions are right; the coalescing
numbers the chapter 14 notebook states are what helpers.metrics computes; (chapter 15) the host loops
built from the level-step kernels give the right BFS levels on whole graphs; the benchmark-only
kernels compile.
"""

from pathlib import Path

import numpy as np
import pytest
from support import controls

import puzzles
from helpers.check import run_once
from helpers.metrics import coalescing_by_site
from puzzles.pmpp import ch14_sparse as ch14
from puzzles.pmpp import ch15_graphs as ch15

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (0, 1, 2)


def chapter_puzzles(m):
    """The registered puzzles of chapter package `m`, in notebook order."""
    return [puzzles.get(n) for n in puzzles.names(m.CHAPTER)]


@pytest.mark.parametrize("m", [ch14, ch15], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_chapters_have_several_exercises_each_with_its_controls(m):
    ps = chapter_puzzles(m)
    exercises = [p.name for p in ps if p.stub != p.source]
    assert len(exercises) >= 3, m.__name__
    assert all(p.name.startswith(m.CHAPTER.replace("pmpp-", "ch")) for p in ps)
    assert all(puzzles.module_of(p.name).startswith(m.__name__ + ".") for p in ps)
    for name in exercises:
        c = controls(puzzles.module_of(name))
        assert len(c.MUTANTS[name]) >= 5, name
        assert len(c.VARIANTS[name]) >= 2, name
        assert len({x[0] for x in c.MUTANTS[name]}) == len(c.MUTANTS[name]), name


# ---------------------------------------------------------------- chapter 14: formats and views


@pytest.mark.parametrize("seed", SEEDS)
def test_every_format_holds_the_same_matrix(seed):
    rng = np.random.default_rng(seed)
    for label, n_rows, n_cols, row, col, val in ch14.matrices(rng):
        a = ch14.dense(n_rows, n_cols, row, col, val)
        x = rng.uniform(-1, 1, n_cols).astype(np.float32)
        want = a @ x.astype(np.float64)
        row_ptr, c, v = ch14.to_csr(n_rows, row, col, val)
        assert row_ptr[0] == 0 and row_ptr[-1] == row.size and np.all(np.diff(row_ptr) >= 0), label
        np.testing.assert_allclose(ch14.csr_spec(row_ptr, c, v, x, n_rows), want, rtol=1e-5, atol=1e-5)
        row_len, ell_col, ell_val, width = ch14.to_ell(n_rows, row, col, val)
        assert ell_col.size == width * n_rows and width == max(1, int(np.diff(row_ptr).max()))
        np.testing.assert_allclose(
            ch14.ell_spec(row_len, ell_col, ell_val, x, n_rows, width), want, rtol=1e-5, atol=1e-5
        )
        hyb = ch14.to_hybrid(n_rows, row, col, val, ch14.hybrid_width(row_ptr))
        np.testing.assert_allclose(ch14.hybrid_spec(*hyb[:6], x, n_rows, hyb[6]), want, rtol=1e-5, atol=1e-5)
        perm, jd_ptr, jd_col, jd_val = ch14.to_jds(n_rows, row, col, val)
        assert sorted(perm) == list(range(n_rows))
        assert np.all(np.diff(jd_ptr) <= np.concatenate([[n_rows], np.diff(jd_ptr)[:-1]]))  # jagged
        np.testing.assert_allclose(
            ch14.jds_spec(perm, jd_ptr, jd_col, jd_val, x, n_rows, jd_ptr.size - 1),
            want,
            rtol=1e-5,
            atol=1e-5,
        )


def test_cases_cover_the_edge_shapes():
    labels = [m[0] for m in ch14.matrices(np.random.default_rng(0))]
    assert labels[0] == "poisson"
    assert {"power-law", "banded", "empty rows", "1x1", "1xN", "Nx1"} <= set(labels)
    for seed in SEEDS:
        for label, n_rows, _, row, _, val in ch14.matrices(np.random.default_rng(seed)):
            lengths = np.bincount(row, minlength=n_rows)
            if label in ("power-law", "empty rows"):
                assert (lengths == 0).any() and lengths.max() >= 3, label
            if label in ("power-law", "1xN"):
                assert lengths.max() > 32, label  # a warp per row needs more than one pass
            assert np.all(val != 0) and (val.size == 1 or len(np.unique(val)) > 1)


def _site_efficiency(p, kernel, array):
    """(sectors moved, sectors ideal) over every warp access of `kernel` to `array` (case 0, seed 0)."""
    trace = run_once(p, kernel, case=0, seed=0).trace
    aid = trace.array(array).id
    sums = [s for s in coalescing_by_site(trace) if s.array == aid]
    return sum(s.total for s in sums), sum(s.ideal for s in sums)


def test_coalescing_numbers_stated_in_the_notebook():
    # notebooks/src/15_pmpp_ch14_sparse.py states these for the Poisson matrix of case 0, seed 0
    csr = puzzles.get("ch14_spmv_csr")
    ell = puzzles.get("ch14_spmv_ell")
    assert _site_efficiency(csr, csr.reference, "val") == ch14.VIEW_NUMBERS["csr_val"]
    assert _site_efficiency(ell, ell.reference, "ell_val") == ch14.VIEW_NUMBERS["ell_val"]
    text = (ROOT / "notebooks" / "src" / "15_pmpp_ch14_sparse.py").read_text()
    moved, ideal = ch14.VIEW_NUMBERS["csr_val"]
    assert f"move **{moved}** 32-byte sectors where **{ideal}** would" in text
    assert f"{ideal / moved:.0%} of what memory delivers" in text
    assert ideal / moved < 0.5
    moved, ideal = ch14.VIEW_NUMBERS["ell_val"]
    assert f"`ell_val` move **{moved}** sectors where **{ideal}** would do, {ideal / moved:.0%}" in text
    assert ideal / moved > 0.85


def test_benchmark_matrices_match_the_small_builders():
    row_ptr, col, val = ch14.poisson_csr(6)
    n, _, row, c, v = ch14.poisson_2d(6, 6)
    want = ch14.to_csr(n, row, c, v)
    for got, exp in zip((row_ptr, col, val), want, strict=True):
        np.testing.assert_array_equal(got, exp)
    row_ptr, col, val = ch14.power_law_csr(np.random.default_rng(0), 5000)
    lengths = np.diff(row_ptr)
    assert (lengths == 0).any() and lengths.max() > 100 and col.max() < 5000
    assert ch14.bench._lanes_for(ch14.poisson_csr(64)[0]) == 8


def test_benchmark_skips_without_a_gpu():
    from helpers import timing

    if timing.skip_reason() is None:
        pytest.skip("a GPU is present: the benchmark runs for real elsewhere")
    with pytest.raises(RuntimeError):
        ch14.benchmark(scale=0.01)


# ---------------------------------------------------------------- chapter 15: whole BFS from level steps


@pytest.fixture
def sim_engine():
    from helpers import engine

    before = engine.current()
    engine.use("sim")
    yield
    engine.use(before)


def _ch15_steps():
    return [
        ("push", ch15.bfs_push),
        ("pull", ch15.bfs_pull),
        ("edge", ch15.bfs_edge),
        ("queue", ch15.bfs_queue),
        ("queue", ch15.bfs_queue_private),
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_host_loop_of_level_steps_gives_every_level(seed, sim_engine):
    rng = np.random.default_rng(seed)
    for label, n, src, dst in ch15.graphs(rng):
        row_ptr, col = ch15.to_csr(n, src, dst)
        source = int(rng.integers(n))
        want = ch15.bfs_levels(row_ptr, col, source)
        for step, kernel in _ch15_steps():
            got = ch15.bfs(step, kernel, n, src, dst, source)
            assert np.array_equal(got, want), (label, step, kernel.__name__)


def test_levels_spec_is_a_true_bfs():
    # independent check of the NumPy BFS: a level is one more than the smallest level of a parent
    for seed in SEEDS:
        for label, n, src, dst in ch15.graphs(np.random.default_rng(seed)):
            row_ptr, col = ch15.to_csr(n, src, dst)
            level = ch15.bfs_levels(row_ptr, col, 0)
            assert level[0] == 0
            for v in range(1, n):
                parents = level[src[(dst == v) & (level[src] >= 0)]]
                assert level[v] == (parents.min() + 1 if parents.size else -1), (label, v)


def test_cases_cover_the_graph_shapes():
    labels = [g[0] for g in ch15.graphs(np.random.default_rng(0))]
    assert labels[0] == "grid"
    assert {"star", "power-law", "disconnected", "single vertex"} <= set(labels)
    for seed in SEEDS:
        for label, _, src, dst in ch15.graphs(np.random.default_rng(seed)):
            pairs = list(zip(src.tolist(), dst.tolist(), strict=True))
            if "power-law" in label:
                assert (src == dst).any() and len(set(pairs)) < len(pairs), label  # loops, repeats
        private = puzzles.get("ch15_bfs_queue_private")
        found = private.cases(np.random.default_rng(seed))[1].args
        assert found["n_frontier"] == 1 and found["row_ptr"][1] > ch15.LOCAL_CAP  # the star overflows


def test_queue_cases_end_with_a_frontier_over_three_blocks():
    # issue 23 (1): several blocks append at once, each more than LOCAL_CAP vertices (its private queue
    # overflows and lands at its own offset); the frontier vertices' children are unreached
    from puzzles.pmpp.ch15_graphs.queue import queue_cases

    for seed in range(10):
        a = queue_cases(np.random.default_rng(seed))[-1].args
        frontier, row_ptr, col, level = a["frontier"], a["row_ptr"], a["col"], a["level"]
        assert frontier.size > 2 * ch15.TPB and set(level[frontier]) == {a["cur"]}
        for b in range(0, frontier.size, ch15.TPB):
            mine = frontier[b : b + ch15.TPB]
            children = {int(u) for v in mine for u in col[row_ptr[v] : row_ptr[v + 1]] if level[u] == -1}
            assert len(children) > ch15.LOCAL_CAP


def test_block_cases_have_a_level_wider_than_the_block():
    # issue 23 (19): on every seed a level holds more vertices than the block has threads, and each is
    # the only parent of a vertex of the next level
    for seed in range(10):
        cases = ch15.block.block_cases(np.random.default_rng(seed))
        assert any(
            np.bincount(ch15.bfs_levels(c.args["row_ptr"], c.args["col"], c.args["source"]) + 1).max()
            > c.block
            for c in cases
        )


def test_host_loop_rejects_a_queue_that_disagrees_with_found(sim_engine):
    from numba import cuda

    @cuda.jit
    def queue_off_by_one(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
        i = cuda.grid(1)
        if i < n_frontier:
            v = frontier[i]
            for k in range(row_ptr[v], row_ptr[v + 1]):
                u = col[k]
                if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                    next_frontier[cuda.atomic.add(count, 0, 1)] = v  # the parent, not u

    n, src, dst = ch15.grid_graph(4, 5)
    with pytest.raises(AssertionError, match="the queue holds"):
        ch15.bfs("queue", queue_off_by_one, n, src, dst, 0)


def test_benchmark_bfs_drivers_on_the_simulator(sim_engine):
    from numba import cuda

    n, src, dst = ch15.power_law_graph(np.random.default_rng(1), 200, 6.0)
    row_ptr, col = ch15.to_csr(n, src, dst)
    col_ptr, row = ch15.to_csc(n, src, dst)
    source = int(np.argmax(np.diff(row_ptr)))
    want = ch15.bfs_levels(row_ptr, col, source)
    assert want.max() >= 2
    d = [cuda.to_device(a) for a in (row_ptr, col, col_ptr, row, src, dst)]
    level = cuda.device_array(n, np.int32)
    found = cuda.to_device(np.zeros(n, np.int32))
    new = cuda.device_array(1, np.int32)
    queues = (cuda.device_array(n, np.int32), cuda.device_array(n, np.int32))
    for step, kernel, graph in [
        ("push", ch15.bfs_push, d[0:2]),
        ("pull", ch15.bfs_pull, d[2:4]),
        ("edge", ch15.bfs_edge, d[4:6]),
    ]:
        ch15.pipelines._gpu_bfs_flags(step, kernel, graph, level, found, new, source)
        assert np.array_equal(level.copy_to_host(), want), step
    for kernel in (ch15.bfs_queue, ch15.bfs_queue_private):
        ch15.pipelines._gpu_bfs_queue(kernel, d[0], d[1], level, found, queues, new, source)
        assert np.array_equal(level.copy_to_host(), want), kernel.__name__


def test_ch15_benchmark_skips_without_a_gpu():
    from helpers import timing

    if timing.skip_reason() is None:
        pytest.skip("a GPU is present: the benchmark runs for real elsewhere")
    with pytest.raises(RuntimeError):
        ch15.benchmark(scale=0.01)


def test_benchmark_only_kernels_compile_for_the_gpu():
    # the kernels only the GPU benchmarks launch, at their GPU-sized constants
    from helpers.ptx import available, ptx_check
    from helpers.timing import specialize

    if not available():
        pytest.skip("NVVM not installed: no PTX compile here")

    def i32(n):
        return np.zeros(n, np.int32)

    def f32(n):
        return np.zeros(n, np.float32)

    ptx_check(ch14.bench._fill_zero, [f32(4)])
    ptx_check(specialize(ch14.spmv_csr_lanes, (), LANES=8), [f32(4), i32(5), i32(8), f32(8), f32(4), 4])
    ptx_check(ch15.pipelines._reset, [i32(4), 0])
    ptx_check(ch15.pipelines._apply_found, [i32(4), i32(4), i32(1), 0])
    ptx_check(ch15.pipelines._apply_queue, [i32(4), i32(4), 2, 0])
    ptx_check(ch15.pipelines._clear, [i32(4)])
    ptx_check(
        specialize(ch15.bfs_queue_private, (), LOCAL_CAP=2048),
        [i32(4), i32(1), i32(4), i32(5), i32(8), i32(4), i32(4), 2, 0],
    )
