"""The tracing simulator: Numba CUDA kernels on any CPU, every access recorded.

    from helpers import sim
    run = sim.launch(kernel, grid, block, (out, a), roles={"out": "out", "a": "in"})
    run.trace            # helpers.sim.trace.Trace

See helpers/README.md for the options, the diagnostics and the supported API.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from . import errors
from .dispatch import Launch
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
from .options import BlockOrder, Config, Options, config
from .poison import poison
from .trace import Trace


def launch(
    kernel: Any,
    grid: Any,
    block: Any,
    args: Sequence[Any],
    *,
    shared_bytes: int = 0,
    roles: Mapping[str, str] | None = None,
    trace: bool = True,
    block_order: BlockOrder = "forward",
    seed: int = 0,
    cross_block_races: bool = True,
    races: bool = True,
    max_steps: int | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    defer_uninit: bool = False,
    engine: str | None = None,
    options: Options | None = None,
) -> Launch:
    """Run `kernel[grid, block, 0, shared_bytes](*args)` on the simulator (see helpers/README.md).

    The keyword arguments are the fields of `Options`; pass `options=` to give them as one object."""
    if options is None:
        options = Options(
            shared_bytes=shared_bytes,
            roles=dict(roles or {}),
            trace=trace,
            block_order=block_order,
            seed=seed,
            cross_block_races=cross_block_races,
            races=races,
            max_steps=max_steps,
            timeout=timeout,
            deadline=deadline,
            defer_uninit=defer_uninit,
            engine=engine,
        )
    elif engine is not None:
        options = replace(options, engine=engine)
    from .dispatch import run

    return run(kernel, grid, block, args, options)


__all__ = [
    "launch",
    "config",
    "Config",
    "Options",
    "poison",
    "Launch",
    "Trace",
    "errors",
    "to_device",
    "device_array",
    "device_array_like",
    "DeviceArray",
    "SimulatorError",
    "OutOfBounds",
    "UninitializedRead",
    "DataRace",
    "BarrierDivergence",
    "WarpDivergence",
    "Deadlock",
    "Runaway",
    "LaunchError",
    "ReadOnlyWrite",
    "KernelException",
    "Unsupported",
]
