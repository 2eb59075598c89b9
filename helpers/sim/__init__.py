"""The tracing simulator: Numba CUDA kernels on any CPU, every access recorded.

    from helpers import sim
    run = sim.launch(kernel, grid, block, (out, a), roles={"out": "out", "a": "in"})
    run.trace            # helpers.sim.trace.Trace

See helpers/README.md for the options, the diagnostics and the supported API.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import errors
from .errors import (
    BarrierDivergence,
    DataRace,
    Deadlock,
    KernelException,
    LaunchError,
    OutOfBounds,
    ReadOnlyWrite,
    Runaway,
    SimulatorError,
    UninitializedRead,
    Unsupported,
    WarpDivergence,
)
from .host import DeviceArray, device_array, device_array_like, to_device
from .scheduler import Run
from .trace import Trace


@dataclass
class Config:
    max_steps: int = 5_000_000   # memory accesses + barriers per launch before Runaway
    timeout: float = 30.0        # seconds per launch before Runaway (catches loops with no accesses)
    trace: bool = True           # record accesses for launches made through kernel[...] (sim engine)


config = Config()


@dataclass
class Launch:
    trace: Trace | None
    shared_bytes: int            # static + dynamic shared memory per block
    steps: int


def launch(kernel, grid, block, args, *, shared_bytes=0, roles=None, trace=True, block_order="forward",
           seed=0, cross_block_races=True, races=True, max_steps=None, timeout=None) -> Launch:
    """Run `kernel[grid, block, 0, shared_bytes](*args)` on the simulator (see helpers/README.md)."""
    run = Run(kernel, grid, block, tuple(args), shared_bytes=shared_bytes, roles=roles, trace=trace,
              block_order=block_order, seed=seed, cross_block_races=cross_block_races, races=races,
              max_steps=max_steps or config.max_steps,
              timeout=config.timeout if timeout is None else timeout)
    run.execute()
    return Launch(run.trace(), run.static_shared_max + shared_bytes, run.steps)


__all__ = ["launch", "config", "Launch", "Trace", "errors", "to_device", "device_array",
           "device_array_like", "DeviceArray", "SimulatorError", "OutOfBounds", "UninitializedRead",
           "DataRace", "BarrierDivergence", "WarpDivergence", "Deadlock", "Runaway", "LaunchError",
           "ReadOnlyWrite", "KernelException", "Unsupported"]
