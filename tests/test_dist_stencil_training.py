"""The stencil, data-parallel and ZeRO-1 exercises (puzzles/dist/) beyond what tests/test_dist.py
runs for every exercise (reference, stub, mutants, variants): their references on real MPI ranks (2
and 4, through helpers.dist.launch, oversubscribed on a 2-core machine) against the single-process
truth; the clear messages for a problem the ranks cannot share; the scaling script's arithmetic;
the notebook's pictures."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import dist as engine
from helpers.dist import missing
from helpers.dist.launch import launch
from puzzles.dist import data_parallel, pictures, replica, scaling, slabs


@pytest.mark.parametrize("n", [2, 4])
def test_every_exercise_on_mpi_ranks(n):
    why = missing("mpi")
    if why:
        pytest.skip(why)
    out = launch(n, "puzzles.dist.ranks:every_exercise", engine="mpi", timeout=120)
    for line in (
        f"ring all-reduce matches the mpi engine's allreduce on {n} ranks",
        f"stencil (halo) on {n} mpi ranks",
        f"stencil (overlap) on {n} mpi ranks",
        f"data-parallel step on {n} mpi ranks",
        f"ZeRO-1 step on {n} mpi ranks",
    ):
        assert line in out, out


def test_more_ranks_than_planes_is_named():
    with pytest.raises(slabs.SplitError, match="3 planes cannot be shared by 4 ranks"):
        slabs.Slab.of(np.zeros((3, 4, 4), np.float32), 4, 0)


def test_a_rank_without_windows_is_named():
    case = data_parallel.cases(np.random.default_rng(0))[0]
    args = [dict(a, tokens=a["tokens"][:1], targets=a["targets"][:1]) for a in case.args]
    with pytest.raises(engine.RankRaised, match="every rank needs at least one") as info:
        engine.run(data_parallel.dp_step, case.size, args)
    assert isinstance(info.value.__cause__, replica.EmptyShard)


def test_scaling_efficiency_is_speedup_over_gpus():
    rows = [
        ("halo", "weak", 1, 2.0, 1),
        ("halo", "weak", 4, 2.5, 4),
        ("dp", "strong", 1, 4.0, 1),
        ("dp", "strong", 2, 2.5, 1),
    ]
    got = {(r["variant"], r["gpus"]): r["efficiency"] for r in scaling.efficiency(rows)}
    assert got[("halo", 4)] == pytest.approx(0.8) and got[("dp", 2)] == pytest.approx(0.8)
    assert "80%" in scaling.table(scaling.efficiency(rows))


def test_pictures_draw():
    for fig in (
        pictures.ring_schedule(4),
        pictures.slab_layout(10, 3),
        pictures.overlap_timeline(1.0, 100.0, 20.0),
        pictures.zero_memory(1000, 4),
    ):
        assert fig.axes
