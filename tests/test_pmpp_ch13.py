"""PMPP chapter 13 (sorting), what tests/test_exercises.py does not cover: the chapter's exercise
and control counts, its cases' edges, and the host pipelines (radix sort, float sort, merge sort, the
benchmark's GPU-shaped kernels) built from the puzzle kernels, sorting on the simulator."""

import numpy as np
import pytest
from mutants.pmpp import ch13_sorting as mutants

from puzzles.pmpp import ch13_sorting as ch13

EXERCISES = [p.name for p in ch13.PUZZLES if p.stub != p.source]


def test_exercises_and_controls():
    # the generic test (tests/test_exercises.py) runs them; this one holds the chapter to its counts
    assert EXERCISES == ["ch13_split", "ch13_radix_scatter", "ch13_float_to_key", "ch13_merge_pass"]
    for name in EXERCISES:
        assert len(mutants.MUTANTS[name]) >= 5, name
        assert len(mutants.VARIANTS[name]) >= 2, name
        assert len({m[0] for m in mutants.MUTANTS[name]}) == len(mutants.MUTANTS[name])
    assert all(p.chapter == "pmpp-13" and p.name.startswith("ch13_") for p in ch13.PUZZLES)


# ---------------------------------------------------------------- the cases


def test_cases_cover_the_edges():
    rng = np.random.default_rng(5)
    sizes = {c.args["n"] for c in ch13.split_cases(rng)}
    assert {1, ch13.TPB - 1, ch13.TPB, ch13.TPB + 1} <= sizes and max(sizes) > 4 * ch13.TPB
    sizes = {c.args["n"] for c in ch13.scatter_cases(rng)}
    assert {1, ch13.R_TPB - 1, ch13.R_TPB, ch13.R_TPB + 1} <= sizes
    for c in ch13.split_cases(rng) + ch13.scatter_cases(rng) + ch13.merge_pass_cases(rng):
        vals = c.args["vals"]
        assert len(np.unique(vals)) == vals.size
        assert c.args["n"] < 4 or (vals < 0).any() and (vals > 0).any()
    kinds = [ch13.make_keys(rng, 50, k) for k in ch13.KINDS]
    assert len(np.unique(kinds[1])) <= 3 and len(np.unique(kinds[2])) == 1
    assert (np.diff(kinds[3].astype(np.int64)) >= 0).all() and (np.diff(kinds[4].astype(np.int64)) <= 0).all()
    assert kinds[0].max() > 1 << 31  # the top bit is used
    x = ch13.make_floats(rng, 40)
    assert (x < 0).any() and (x > 0).any() and np.isinf(x).any() and (x != np.round(x)).any()
    a, b = ch13.split_cases(np.random.default_rng(0)), ch13.split_cases(np.random.default_rng(1))
    assert not np.array_equal(a[0].args["keys"], b[0].args["keys"])


def test_scan_cases_use_several_blocks():
    grids = {c.grid for c in ch13.scan_cases(np.random.default_rng(0))}
    assert 1 in grids and max(grids) > 1


# ---------------------------------------------------------------- the pipelines, on the simulator


@pytest.fixture(scope="module")
def simulator():
    import helpers

    helpers.setup("sim")


@pytest.mark.parametrize("kind", ch13.KINDS)
def test_radix_and_merge_sort_are_stable(simulator, kind):
    rng = np.random.default_rng(len(kind))
    n = 2 * ch13.R_TPB + 11
    keys, vals = ch13.make_keys(rng, n, kind), ch13.make_vals(rng, n)
    order = np.argsort(keys, kind="stable")
    for got_k, got_v in (ch13.radix_sort(keys, vals), ch13.merge_sort(keys, vals)):
        np.testing.assert_array_equal(got_k, keys[order])
        np.testing.assert_array_equal(got_v, vals[order])
    for scan_blocks in (1, 3):  # one chunk; chunk totals first, then the scan
        got = ch13.radix_sort_keys_plan(n, scan_blocks=scan_blocks)(ch13.cuda.to_device(keys)).copy_to_host()
        np.testing.assert_array_equal(got, keys[order])


def test_sort_of_one_key(simulator):
    keys, vals = np.array([7], np.uint32), np.array([-3], np.int32)
    assert ch13.radix_sort(keys, vals) == ([7], [-3])
    assert ch13.merge_sort(keys, vals) == ([7], [-3])


def test_float_sort(simulator):
    x = ch13.make_floats(np.random.default_rng(3), 150)
    got = ch13.sort_floats(x)
    np.testing.assert_array_equal(got, np.sort(x))
    # -0.0 sorts before +0.0: the bits say so
    assert list(ch13.sort_floats(np.array([0.0, -0.0], np.float32)).view(np.uint32)) == [0x80000000, 0]


def test_a_wrong_scatter_breaks_the_sort(simulator):
    from helpers.sim.errors import OutOfBounds

    keys = ch13.make_keys(np.random.default_rng(4), 100)
    vals = ch13.make_vals(np.random.default_rng(4), 100)
    with pytest.raises(OutOfBounds):
        ch13.radix_sort(keys, vals, scatter=mutants.scatter_unstable_split)


def test_goal_is_judged_against_cupy_sort():
    # the benchmark lists cupy.sort first, as the ceiling row, so that the goal is a ratio to the peer
    from helpers.timing import Measurement
    from tools.bench import goal_row

    assert ch13.GOAL["best"] == "ch13_radix_scatter_coarse" and ch13.GOAL["ceiling"] == "cupy.sort"
    nbytes = 8 << 26
    rows = [
        Measurement("cupy.sort", 0.010, bytes=nbytes, ceiling=True),
        Measurement("device copy (ceiling)", 0.0005, bytes=nbytes, ceiling=True),
        Measurement("ch13_radix_scatter_coarse", 0.020, bytes=nbytes),
        Measurement("ch13_radix_scatter", 0.050, bytes=nbytes),
    ]
    row = goal_row("ch13", ch13, rows)
    assert row[4] == "50.0%" and row[-1] == "yes", row
    rows[2].seconds = 0.030  # a third of cupy.sort's rate: below the 40% goal
    assert goal_row("ch13", ch13, rows)[-1] == "NO"


def test_gpu_shapes_sort_on_the_simulator(simulator):
    """The benchmark's kernels (8-bit digits, 4-way splits, 256 buckets; 4-bit plain), recompiled by
    specialize, with the block sizes cut down so that the simulator stays quick."""
    coarse, plain = dict(C_TPB=64, COARSE=4, C_TILE=256), dict(R_TPB=64)
    k = ch13.gpu_kernels(coarse=coarse, plain=plain)
    rng = np.random.default_rng(6)
    n = 400  # 2 coarsened tiles, 7 plain ones, 2 scan chunks
    keys = ch13.make_keys(rng, n)
    for name, run in ch13.gpu_plans(n, k, coarse=coarse, plain=plain, scan_blocks=2).items():
        np.testing.assert_array_equal(run(ch13.cuda.to_device(keys)).copy_to_host(), np.sort(keys), name)
