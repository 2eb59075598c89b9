"""Every many-rank exercise of stencil.py, data_parallel.py and zero.py on real ranks in one launch
(one start of the ranks pays the imports once):

    python -m helpers.dist.launch -n 4 --engine mpi puzzles.dist.ranks:every_exercise
"""

from . import data_parallel, stencil, zero


def every_exercise(comm, seed: str = "0") -> None:
    """Each exercise's reference solution, checked against its single-process truth on every rank."""
    stencil.on_ranks(comm, "halo", seed)
    stencil.on_ranks(comm, "overlap", seed)
    data_parallel.on_ranks(comm, seed)
    zero.on_ranks(comm, seed)
