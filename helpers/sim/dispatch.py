"""Which engine runs a launch. "auto": lockstep, and on anything it does not run or any problem it
detects, the inputs restored and the launch re-run on the greenlet engine (the reference), whose
result or diagnostic is the verdict. So "auto" always answers what "greenlet" answers."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import errors as E
from .greenlet.scheduler import Run as GreenletRun
from .lockstep.control import Stop
from .lockstep.run import Run as LockstepRun
from .options import Options, config

ENGINES = ("auto", "lockstep", "greenlet")


def run(kernel: Any, grid: Any, block: Any, args: Sequence[Any], opts: Options) -> tuple:
    """(trace, shared bytes, steps, engine, fallback reason)."""
    engine = opts.engine or config.engine
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "greenlet":
        return _greenlet(kernel, grid, block, args, opts) + ("greenlet", None)
    # the reference engine's launch checks (dimensions, arity, globals, shapes, arguments) come
    # first and unchanged: a launch it refuses is refused the same way
    ref = GreenletRun(kernel, grid, block, tuple(args), opts)
    saved = []
    if engine == "auto":
        for a in args:
            data = a.__sim_array__() if hasattr(a, "__sim_array__") else a
            if isinstance(data, np.ndarray) and data.flags.writeable:
                saved.append((data, data.copy()))
    r = None
    try:
        r = LockstepRun(kernel, grid, block, tuple(args), opts)
        r.execute()
        return (r.trace(), r.static_shared_max + opts.shared_bytes, r.greenlet_steps(), "lockstep", None)
    except Stop as s:
        if engine == "lockstep":
            err = _as_error(str(s))
            err.trace = r.trace() if r is not None else None
            raise err from None
        reason = str(s)
    except E.SimulatorError as err:
        if engine == "lockstep":
            err.trace = r.trace() if r is not None else None  # the accesses up to the failure
            raise
        last = str(err).strip().splitlines()[-1][:160]
        reason = (
            f"diagnostic: {type(err).__name__} ({last}) — re-run on the reference engine for its exact report"
        )
    except Exception as e:  # noqa: BLE001 - anything lockstep trips on: the reference engine decides
        if engine == "lockstep":
            raise
        reason = f"unsupported: {type(e).__name__}: {e}"
    for data, copy in saved:
        data[...] = copy
    ref.execute()
    return (ref.trace(), ref.static_shared_max + opts.shared_bytes, ref.steps, "greenlet", reason)


def _greenlet(kernel, grid, block, args, opts) -> tuple:
    run = GreenletRun(kernel, grid, block, tuple(args), opts)
    run.execute()
    return (run.trace(), run.static_shared_max + opts.shared_bytes, run.steps)


def _as_error(reason: str) -> E.SimulatorError:
    """A Stop in "lockstep" mode: Unsupported, or the diagnostic class it names."""
    kind, _, rest = reason.partition(": ")
    if kind == "runaway":
        return E.Runaway(f"lockstep: {rest}")
    if kind == "diagnostic":
        for name in ("KernelException", "LaunchError", "Unsupported", "Runaway", "OutOfBounds"):
            if f"({name})" in rest:
                return getattr(E, name)(f"lockstep: {rest}")
    return E.Unsupported(f"lockstep cannot run this kernel: {rest} (engine='greenlet' or 'auto' can)")
