"""This process's Comm when helpers.dist.launch started it (one per process)."""

from __future__ import annotations

import os

_WORLD: list = []


def world():
    """This process's Comm (launched by helpers.dist.launch); built on first use."""
    if not _WORLD:
        engine = os.environ.get("MP_DIST_ENGINE")
        if engine is None and any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK")):
            engine = "mpi"  # a script started by a plain `mpirun -n 4 python script.py`
        if engine == "mpi":
            from .mpi import MpiComm

            _WORLD.append(MpiComm())
        elif engine == "nccl":
            from .nccl import NcclComm

            _WORLD.append(NcclComm(int(os.environ["MP_DIST_RANK"]), int(os.environ["MP_DIST_SIZE"])))
        else:
            raise RuntimeError(
                "helpers.dist.world(): this process was not started by helpers.dist.launch "
                "(python -m helpers.dist.launch -n 4 --engine mpi module:function)"
            )
    return _WORLD[0]
