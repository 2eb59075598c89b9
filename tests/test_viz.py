"""helpers.viz: the numbers behind each view (hand-built traces and real simulated kernels),
and every view rendering for every registered puzzle's reference under Agg."""

import io
import time
from types import SimpleNamespace

import matplotlib
import numba
import numpy as np
import pytest
from numba import cuda

matplotlib.use("Agg")

from helpers import metrics, rules, sim, viz  # noqa: E402
from helpers.check import run_once  # noqa: E402
from helpers.puzzle import Budget, Case, Puzzle  # noqa: E402
from helpers.sim.trace import ACCESS_DTYPE, ATOMIC, READ, WRITE, ArrayInfo, Site, Trace  # noqa: E402
from helpers.viz import analysis as an  # noqa: E402


def make_trace(grid, block, arrays, rows, nsites=1):
    """A Trace from (block, thread, array, index, kind, epoch, site, occ[, issue]) tuples, arrays as
    (name, space, shape, dtype, role); `issue` is -1 (unknown, as the greenlet engine records) if left out."""
    infos = [
        ArrayInfo(i, n, sp, tuple(sh), np.dtype(dt), role) for i, (n, sp, sh, dt, role) in enumerate(arrays)
    ]
    sites = [Site(i, "k.py", 10 + i, f"line {i}") for i in range(nsites)]
    rows = [tuple(r) + (-1,) * (len(ACCESS_DTYPE.names) - len(r)) for r in rows]
    return Trace(tuple(grid), tuple(block), infos, sites, np.array(rows, ACCESS_DTYPE))


def warp_trace(indices, dtype="f4", space="global", shape=(4096,)):
    """One warp, one instruction: lane k accesses element indices[k]."""
    rows = [(0, lane, 0, int(i), READ, 0, 0, 0) for lane, i in enumerate(indices)]
    return make_trace((1, 1, 1), (len(indices), 1, 1), [("a", space, shape, dtype, "in")], rows)


def render(fig, svg=True, dpi=100):
    """Draw the figure for real (PNG, and SVG unless told not to); return the PNG bytes."""
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=dpi)
    if svg:
        fig.savefig(io.BytesIO(), format="svg")
    return png.getvalue()


def texts(fig):
    return " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))


# ---------------------------------------------------------------- coalescing


def test_stride_two_float32_moves_twice_the_sectors():
    c = an.coalescing(warp_trace(np.arange(32) * 2))
    assert len(c) == 1
    assert (c[0].sectors, c[0].ideal, c[0].efficiency) == (8, 4, 0.5)


def test_contiguous_float32_is_ideal_and_column_walk_is_not():
    row = an.coalescing(warp_trace(np.arange(32) + 8))[0]
    assert (row.sectors, row.ideal) == (4, 4)
    col = an.coalescing(warp_trace(np.arange(32) * 32))[0]  # a column of a 32-wide matrix
    assert (col.sectors, col.ideal) == (32, 4)
    assert an.sectors(np.arange(32), 8).size == 8  # float64: 256 bytes


def test_unaligned_contiguous_access_touches_one_extra_sector():
    c = an.coalescing(warp_trace(np.arange(32) + 3))[0]
    assert (c.sectors, c.ideal) == (5, 4)


def test_coalescing_by_site_adds_up_per_source_line():
    rows = [(0, t, 0, 2 * t, READ, 0, 0, 0) for t in range(64)]
    rows += [(0, t, 1, t, WRITE, 0, 1, 0) for t in range(64)]
    tr = make_trace(
        (1, 1, 1),
        (64, 1, 1),
        [("a", "global", (128,), "f4", "in"), ("out", "global", (64,), "f4", "out")],
        rows,
        nsites=2,
    )
    s = {(x.array, x.kind): x for x in an.coalescing_by_site(tr)}
    assert (s[0, READ].count, s[0, READ].total, s[0, READ].ideal) == (2, 16, 8)
    assert (s[1, WRITE].total, s[1, WRITE].ideal, s[1, WRITE].efficiency) == (8, 8, 1.0)


def _one_by_one(trace):
    """The coalescing and bank numbers of `trace` from the per-instruction definitions (sectors,
    ideal_sectors and conflict_degree of each warp access's indices), summed per line and per site."""
    size = [a.itemsize for a in trace.arrays]
    glob = [
        (w, len(an.sectors(w.indices, size[w.array])), an.ideal_sectors(w.indices, size[w.array]))
        for w in trace.warp_accesses(space="global")
    ]
    shared = [
        (w, an.conflict_degree(w.indices, size[w.array]), 1) for w in trace.warp_accesses(space="shared")
    ]
    by_line: dict = {}
    for w, moved, ideal in glob:
        key = (trace.sites[w.site].lineno, trace.arrays[w.array].name)
        by_line[key] = tuple(np.add(by_line.get(key, (0, 0)), (moved, ideal)).tolist())

    def by_site(items):
        groups: dict = {}
        for w, value, ideal in items:
            groups.setdefault((an.line_of(trace, w.site), w.array, w.kind), []).append((w, value, ideal))
        return sorted(
            (
                (
                    line,
                    min(w.site for w, _, _ in g),
                    kind,
                    array,
                    len(g),
                    sum(v for _, v, _ in g),
                    sum(i for _, _, i in g),
                    max(v for _, v, _ in g),
                )
                for (line, array, kind), g in groups.items()
            )
        )

    return glob, shared, by_line, by_site(glob), by_site(shared)


def _summaries(trace, items):
    return sorted(
        (an.line_of(trace, s.site), s.site, s.kind, s.array, s.count, s.total, s.ideal, s.worst)
        for s in items
    )


@pytest.mark.parametrize(
    "name", ["matmul", "transpose_pad", "histogram", "ch05_matmul_regtile", "llm3_attn_flash"]
)
def test_numbers_for_every_warp_access_at_once_equal_the_one_by_one_definitions(name):
    """metrics computes sectors, ideal sectors and bank conflicts of all warp accesses at once (NumPy
    over the whole trace); they equal the per-access definitions, and so do their sums per line and site."""
    import puzzles

    p = puzzles.get(name)
    trace = run_once(p, p.reference, seed=1).trace
    glob, shared, by_line, glob_sites, shared_sites = _one_by_one(trace)
    assert glob or shared, name
    got = an.coalescing(trace)
    assert [(c.access.block, c.access.site, c.access.lanes.tolist(), c.sectors, c.ideal) for c in got] == [
        (w.block, w.site, w.lanes.tolist(), m, i) for w, m, i in glob
    ]
    assert [(b.access.site, b.degree) for b in an.bank_conflicts(trace)] == [
        (w.site, d) for w, d, _ in shared
    ]
    assert metrics.coalescing_by_line(trace) == by_line
    assert _summaries(trace, an.coalescing_by_site(trace)) == glob_sites
    assert _summaries(trace, an.bank_conflicts_by_site(trace)) == shared_sites


def test_two_warps_on_one_sector_each_pay_for_it():
    """Sectors and bank words are counted per warp instruction: two warps reading one sector move it twice."""
    rows = [(0, t, 0, t % 8, READ, 0, 0, 0) for t in range(64)]
    tr = make_trace((1, 1, 1), (64, 1, 1), [("a", "global", (8,), "f4", "in")], rows)
    assert [(c.sectors, c.ideal) for c in an.coalescing(tr)] == [(1, 1), (1, 1)]
    assert metrics.coalescing_by_line(tr) == {(10, "a"): (2, 2)}
    rows = [(0, t, 0, (t % 32) * 32, READ, 0, 0, 0) for t in range(64)]
    tr = make_trace((1, 1, 1), (64, 1, 1), [("s", "shared", (1024,), "f4", "")], rows)
    assert [s.worst for s in an.bank_conflicts_by_site(tr)] == [32]
    assert [(s.count, s.total) for s in an.bank_conflicts_by_site(tr)] == [(2, 64)]


# ---------------------------------------------------------------- banks


def test_stride_two_float32_shared_is_a_two_way_conflict():
    assert an.conflict_degree(np.arange(32) * 2, 4) == 2
    b = an.bank_conflicts(warp_trace(np.arange(32) * 2, space="shared", shape=(64,)))
    assert b[0].degree == 2
    assert b[0].banks.tolist() == [(2 * k) % 32 for k in range(32)]


def test_broadcast_and_contiguous_are_conflict_free_column_walk_is_not():
    assert an.conflict_degree(np.zeros(32, int), 4) == 1  # every lane, one word: broadcast
    assert an.conflict_degree(np.arange(32), 4) == 1
    assert an.conflict_degree(np.arange(32) * 33, 4) == 1  # padded column walk
    assert an.conflict_degree(np.arange(32) * 32, 4) == 32  # column of a 32x32 tile
    assert an.conflict_degree(np.r_[np.zeros(16, int), np.arange(16) * 32], 4) == 16
    assert an.conflict_degree([], 4) == 0


# ---------------------------------------------------------------- counts vs budget


def test_the_thread_over_budget_is_flagged():
    rows = [(b, t, 0, b * 4 + t, READ, 0, 0, 0) for b in range(2) for t in range(4)]
    rows.append((1, 3, 0, 0, READ, 0, 0, 1))  # block 1 thread 3 reads twice
    rows += [(b, t, 1, b * 4 + t, WRITE, 0, 1, 0) for b in range(2) for t in range(4)]
    tr = make_trace(
        (2, 1, 1),
        (4, 1, 1),
        [("a", "global", (8,), "f4", "in"), ("out", "global", (8,), "f4", "out")],
        rows,
        nsites=2,
    )
    table = Budget(global_reads=1, global_writes=1).rules()
    limits = rules.limits(table)
    assert limits == {"global_reads": 1, "global_writes": 1}
    found = rules.first_broken(table, SimpleNamespace(trace=tr, shared_bytes=0), None)
    assert (found.rule, found.count, found.limit, found.view) == ("global_reads", 2, 1, "counts")
    assert "thread (3, 0, 0) of block (1, 0, 0) made 2 global reads" in found.message
    fig = viz.counts_view(tr, limits)
    render(fig)
    assert "1 thread over" in texts(fig) and "block 1, thread 3" in texts(fig)


def test_budget_limits_may_depend_on_the_case():
    case = Case(grid=1, block=4, args={"size": 6})
    table = Budget(shared_reads=lambda c: c.args["size"] * 2).rules()
    assert rules.limits(table, case) == {"shared_reads": 12}


def test_atomics_per_block_over_budget():
    rows = [(b, t, 0, 0, ATOMIC, 0, 0, 0) for b in range(3) for t in range(2 + b)]
    tr = make_trace((3, 1, 1), (4, 1, 1), [("hist", "global", (4,), "i4", "out")], rows)
    assert an.block_atomics(tr).tolist() == [2, 3, 4]
    found = rules.first_broken(Budget(global_atomics_per_block=3).rules(), SimpleNamespace(trace=tr), None)
    assert (found.rule, found.count, found.limit) == ("global_atomics_per_block", 4, 3)
    assert "block (2, 0, 0) made 4 atomic updates" in found.message
    render(viz.counts_view(tr, {"global_atomics_per_block": 3}))


# ---------------------------------------------------------------- access-map edges (real kernels)


@cuda.jit
def _neighbours(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + a[i + 1]


@cuda.jit
def _rotate_through_shared(out, a):
    sh = cuda.shared.array(4, numba.float32)
    i = cuda.threadIdx.x
    sh[i] = a[i]
    cuda.syncthreads()
    out[i] = sh[(i + 1) % 4]


def test_edges_link_each_threads_reads_to_its_write():
    out, a = np.zeros(4, np.float32), np.random.default_rng(1).normal(size=5).astype(np.float32)
    tr = sim.launch(_neighbours, 1, 4, (out, a), roles={"out": "out", "a": "in"}).trace
    e = an.edges(tr, 0)
    ia, io = tr.array("a").id, tr.array("out").id
    got = sorted(
        (int(r["thread"]), int(r["src_array"]), int(r["src_index"]), int(r["dst_array"]), int(r["dst_index"]))
        for r in e
    )
    assert got == sorted([(t, ia, t, io, t) for t in range(4)] + [(t, ia, t + 1, io, t) for t in range(4)])


def test_edges_go_through_one_shared_copy_per_barrier_interval():
    out, a = np.zeros(4, np.float32), np.random.default_rng(2).normal(size=4).astype(np.float32)
    tr = sim.launch(_rotate_through_shared, 1, 4, (out, a), roles={"out": "out", "a": "in"}).trace
    ia, ish, io = tr.array("a").id, tr.array("sh").id, tr.array("out").id
    got = {
        (
            int(r["thread"]),
            int(r["src_array"]),
            int(r["src_epoch"]),
            int(r["src_index"]),
            int(r["dst_array"]),
            int(r["dst_epoch"]),
            int(r["dst_index"]),
        )
        for r in an.edges(tr, 0)
    }
    want = {(t, ia, -1, t, ish, 0, t) for t in range(4)} | {
        (t, ish, 1, (t + 1) % 4, io, -1, t) for t in range(4)
    }
    assert got == want
    assert an.shared_epochs(tr, [0]) == {ish: [0, 1]}
    fig = viz.access_map(tr)
    render(fig)
    assert "after the 1st syncthreads" in texts(fig)


def test_a_write_with_no_read_has_no_edge_and_sampling_is_even():
    rows = [(0, 0, 0, 0, WRITE, 0, 0, 0)]
    tr = make_trace((1, 1, 1), (1, 1, 1), [("out", "global", (1,), "f4", "out")], rows)
    assert len(an.edges(tr, 0)) == 0
    assert an.sample(10, 4) == [0, 3, 6, 9]
    picked = an.sample(10, 4, must=[5])
    assert 5 in picked and len(picked) == 4 and picked == sorted(set(picked))
    assert len(an.sample(1000, 256)) == 256


# ---------------------------------------------------------------- drawing


@cuda.jit
def _writes_nothing(out, a):
    i = cuda.threadIdx.x  # noqa: F841


@cuda.jit
def _off_by_one(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i + 1]


@cuda.jit
def _racy_sum(out, a):
    i = cuda.threadIdx.x
    out[0] = out[0] + a[i]


def _launch(kernel, n=8, m=8, zero=False):
    out = np.zeros(n, np.float32)
    a = np.random.default_rng(3).normal(size=m).astype(np.float32)
    return sim.launch(kernel, 1, 8, (out, a), roles={"out": "inout" if zero else "out", "a": "in"})


def test_a_kernel_that_writes_nothing_draws_cleanly():
    tr = _launch(_writes_nothing).trace
    for fig in (
        viz.access_map(tr),
        viz.counts_view(tr, {"global_writes": 1}),
        viz.coalescing_view(tr),
        viz.banks_view(tr),
    ):
        render(fig)
    assert "Nothing written yet" in texts(viz.access_map(tr))
    assert "No global memory accesses" in texts(viz.coalescing_view(tr))
    assert "no shared-memory accesses" in texts(viz.banks_view(tr))


def test_out_of_bounds_is_drawn_past_the_end_of_the_array_in_vermillion():
    with pytest.raises(sim.OutOfBounds) as info:
        _launch(_off_by_one)
    err = info.value
    focus = viz.diagnostic.focus_of(err, err.trace)
    assert focus.block == 0 and focus.threads == (7,)
    (mark,) = focus.marks
    assert mark[2] == (8,) and mark[3] == "thread 7: a[8] is outside a (shape (8,))"
    fig = viz.diagnostic_view(err)
    render(fig)
    words = texts(fig)
    assert "OutOfBounds" in words and "a[8]" in words and "out[i] = a[i + 1]" in words


def test_a_race_marks_every_thread_on_the_cell():
    with pytest.raises(sim.DataRace) as info:
        _launch(_racy_sum, n=1, zero=True)
    err = info.value
    focus = viz.diagnostic.focus_of(err, err.trace)
    assert len(focus.threads) >= 2
    render(viz.diagnostic_view(err))


def test_diagnostic_without_a_trace_is_a_message():
    err = sim.Runaway("the kernel ran past 100 steps", line=3, source="while True:")
    fig = viz.diagnostic_view(err)
    render(fig)
    assert "Runaway" in texts(fig) and "100 steps" in texts(fig)


def test_figures_are_deterministic():
    tr = sim.launch(
        _rotate_through_shared,
        1,
        4,
        (np.zeros(4, np.float32), np.ones(4, np.float32) * 2),
        roles={"out": "out", "a": "in"},
    ).trace
    for view in (viz.access_map, viz.coalescing_view, viz.banks_view):
        assert render(view(tr), svg=False) == render(view(tr), svg=False)


def test_big_launches_are_sampled_and_say_so():
    rows = [(b, t, 0, b * 1024 + t, READ, 0, 0, 0) for b in range(6) for t in range(1024)]
    rows += [(b, t, 1, b * 1024 + t, WRITE, 0, 1, 0) for b in range(6) for t in range(1024)]
    tr = make_trace(
        (6, 1, 1),
        (1024, 1, 1),
        [("a", "global", (6144,), "f4", "in"), ("out", "global", (6144,), "f4", "out")],
        rows,
        nsites=2,
    )
    t0 = time.perf_counter()
    fig = viz.access_map(tr)
    render(fig)
    words = texts(fig)
    assert "showing 4 of 6 blocks" in words and "showing 256 of 1024 threads" in words
    assert time.perf_counter() - t0 < 30


# ---------------------------------------------------------------- show() and every puzzle


def _puzzle_names():
    try:
        import puzzles

        return puzzles.names()
    except Exception:  # the registry is someone else's: report, don't crash
        return []


def test_show_rejects_an_unknown_view():
    import puzzles

    with pytest.raises(ValueError, match="coalescing"):
        puzzles.show("map", _neighbours, view="heatmap")


def test_show_draws_the_diagnostic_instead_of_raising():
    pytest.importorskip("helpers.check")
    p = Puzzle(
        "tiny",
        "Tiny",
        "",
        ("out", "a"),
        ("out",),
        lambda a: a[1:],
        lambda rng: [
            Case(1, 8, {"out": np.empty(8, np.float32), "a": rng.normal(size=8).astype(np.float32)})
        ],
        _off_by_one,
    )
    run = run_once(p, _off_by_one)
    assert run.launch is None and type(run.diagnostic).__name__ == "OutOfBounds"
    fig = viz.draw(run, view="counts")
    render(fig)
    assert "OutOfBounds" in texts(fig)


@pytest.mark.parametrize("view", ["access", "counts", "coalescing", "banks", "paths"])
def test_puzzles_show_draws_every_view(view):
    names = _puzzle_names()
    if not names:
        pytest.skip("no puzzles registered yet")
    import puzzles

    name = names[-1]
    fig = puzzles.show(name, puzzles.get(name).reference, view=view)
    render(fig)
    assert puzzles.get(name).title in fig.get_suptitle().replace("\n", " ")


def test_a_figure_shows_itself_in_jupyter_as_png():
    tr = _launch(_writes_nothing).trace
    assert viz.access_map(tr)._repr_png_().startswith(b"\x89PNG")


# ---------------------------------------------------------------- details that misled


def _legend_texts(fig):
    out = []
    for leg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if leg is not None:
            out += [t.get_text() for t in leg.get_texts()]
    return out


def test_thread_colours_avoid_the_culprit_and_neighbours_differ():
    assert style_bad_distance(viz.style.thread_colors(6)) > 0.3  # no orange next to vermillion
    many = viz.style.thread_colors(64, 8)
    rgb = np.array([matplotlib.colors.to_rgb(c) for c in many]).reshape(8, 8, 3)
    assert np.abs(np.diff(rgb, axis=1)).sum(-1).min() > 0.15  # left/right neighbours
    assert np.abs(np.diff(rgb, axis=0)).sum(-1).min() > 0.15  # up/down neighbours


def style_bad_distance(colors):
    bad = np.array(matplotlib.colors.to_rgb(viz.style.BAD))
    return min(np.abs(np.array(matplotlib.colors.to_rgb(c)) - bad).sum() for c in colors)


def test_barrier_divergence_view_shows_who_reached_the_barrier():
    from mutants.gpu_puzzles.p08_shared import shared_barrier_in_branch

    import puzzles
    from helpers.check import KernelDiagnosed

    with pytest.raises(KernelDiagnosed) as e:
        puzzles.check("shared", shared_barrier_in_branch, seed=0, gpu=False)
    err = e.value.diagnostic
    assert err.reached and err.exited
    fig = viz.diagnostic_view(err)
    texts = _legend_texts(fig)
    assert f"waited at the barrier ({len(err.reached)})" in texts
    assert f"exited without reaching it ({len(err.exited)})" in texts
    render(fig, svg=False)


def test_show_frames_wrong_output_cells():
    from mutants.gpu_puzzles.p01_map import map_times_ten

    import puzzles

    run = puzzles.harness.run_once(puzzles.get("map"), map_times_ten, case=0, seed=0)
    wrong = puzzles.wrong_cells(run)
    n = run.case.args["a"].size
    assert wrong == {"out": list(range(n))}  # every cell is ten times too big
    fig = puzzles.show("map", map_times_ten, seed=0)
    assert "wrong value" in _legend_texts(fig)
    assert f"{n} output cells shown hold a wrong value" in fig._supxlabel.get_text().replace("\n", " ")
    # the frames drawn are the wrong cells: one square around each cell of `out` (drawn after `a`)
    ax = fig.axes[0]
    (frames,) = [p for p in ax.patches if p.get_gid() == viz.access.WRONG_GID]
    (cells,) = [c for c in ax.collections if len(c.get_paths()) == 2 * n]
    out_cells = [tuple(path.vertices[:4].mean(axis=0)) for path in cells.get_paths()[n:]]
    assert sorted(viz.access.squares_centres(frames)) == sorted(out_cells)
    right = puzzles.get("map").reference
    assert puzzles.wrong_cells(puzzles.harness.run_once(puzzles.get("map"), right, case=0, seed=0)) == {}


def test_show_thread_picks_one_thread():
    import puzzles

    p = puzzles.get("matmul")
    fig = puzzles.show("matmul", p.reference, thread=(1, 1))
    assert _legend_texts(fig) == ["thread (1,1)"]
    assert "thread (1,1) in blue" in fig._supxlabel.get_text().replace("\n", " ")
    assert viz.linear_thread((8, 8, 1), (1, 2)) == 17 and viz.linear_thread((8, 1, 1), 3) == 3
    with pytest.raises(ValueError, match="outside the block"):
        viz.linear_thread((8, 8, 1), (8, 0))


def test_tangled_maps_draw_one_threads_lines():
    import puzzles

    p = puzzles.get("matmul")
    fig = puzzles.show("matmul", p.reference)
    assert "lines of thread" in fig._supxlabel.get_text().replace("\n", " ")
    assert not any(isinstance(a, matplotlib.colorbar.Colorbar) for a in fig.axes)


def test_diagnosed_runs_leave_out_blocks_that_never_ran():
    from mutants.pmpp.ch06_performance.transpose import transpose_no_barrier

    import puzzles

    p = puzzles.get("ch06_transpose_tiled")
    n = len(p.cases(np.random.default_rng(5)))
    # the first case of seed 5 whose race is found before every block has run
    for case in range(n):
        run = puzzles.harness.run_once(p, transpose_no_barrier, case=case, seed=5)
        trace = run.trace
        ran = set(trace.acc["block"].tolist())
        if run.diagnostic is not None and len(ran) < trace.nblocks:
            break
    assert run.diagnostic is not None and len(ran) < trace.nblocks, "no case stops before its last block"
    fig = viz.draw(run)
    panels = [ax for ax in fig.axes if ax.get_title(loc="left")]
    assert len(panels) == len(ran)
    assert (
        f"{trace.nblocks - len(ran)} of {trace.nblocks} blocks never ran"
        in fig._supxlabel.get_text().replace("\n", " ")
    )


def test_short_never_cuts_a_word():
    s = "Volta and later GPUs run the threads of a warp independently. So the order is not fixed at all."
    assert viz.style.short(s, 200) == s
    assert viz.style.short(s, 80) == "Volta and later GPUs run the threads of a warp independently. …"
    cut = viz.style.short("alpha beta gamma delta", 14)
    assert cut == "alpha beta…" and "gam" not in cut


def test_prefix_sum_map_shows_every_tree_step():
    import puzzles

    p = puzzles.get("prefix_sum")
    run = run_once(p, p.reference, case=0, seed=0)
    fig = viz.draw(run)
    titles = [t.get_text() for ax in fig.axes for t in ax.texts]
    epochs = sorted(
        set(run.trace.acc["epoch"][run.trace.acc["array"] == run.trace.array("cache").id].tolist())
    )
    assert len(epochs) == 5  # log2(8) steps after the load, and the load
    for e in epochs[1:]:
        assert any(f"after the {an_ordinal(e)} syncthreads" in t for t in titles), e
    assert "barrier intervals" not in fig._supxlabel.get_text()


def an_ordinal(n):
    from helpers.viz.access import _ordinal

    return _ordinal(n)


def test_paths_legend_names_each_paths_lines():
    import puzzles
    from helpers.viz.paths import path_lines

    p = puzzles.get("ch04_parity_branch")
    run = run_once(p, p.reference, case=0, seed=0)
    lines = path_lines(run.trace, 0)
    assert len(lines) == 2 and lines[0] != lines[1]  # odd and even lanes: the two sides of the branch
    shared = set(lines[0]) & set(lines[1])
    assert shared and set(lines[0]) - shared and set(lines[1]) - shared
    texts = _legend_texts(viz.draw(run, "paths"))
    assert texts[:2] == [f"path {k}: lines {', '.join(map(str, ls))}" for k, ls in enumerate(lines)]
