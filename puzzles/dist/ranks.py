"""Every many-rank exercise on real ranks in one launch (one start of the ranks pays the imports
once): the ring all-reduce against the engine's own, the stencil, the data-parallel and ZeRO-1 steps.

    python -m helpers.dist.launch -n 4 --engine mpi puzzles.dist.ranks:every_exercise
"""

from . import allreduce, data_parallel, stencil, zero


def every_exercise(comm, seed: str = "0") -> None:
    """Each exercise's reference solution, checked against its single-process truth on every rank."""
    allreduce.against_engine(comm, seed=seed)
    stencil.on_ranks(comm, "halo", seed)
    stencil.on_ranks(comm, "overlap", seed)
    data_parallel.on_ranks(comm, seed)
    zero.on_ranks(comm, seed)
