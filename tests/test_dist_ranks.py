"""The stencil, data-parallel and ZeRO-1 exercises' references on real MPI ranks (2 and 4, through
helpers.dist.launch, oversubscribed on a 2-core machine), each checked on every rank against its
single-process truth; and the clear message for a rank count the stencil's grid cannot be cut into."""

from __future__ import annotations

import pytest

from helpers.dist import missing
from helpers.dist.launch import launch
from puzzles.dist import slabs


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
        slabs.slab(3, 4, 0)
