"""Which engine runs a launch, above both engines. "auto": lockstep, and on anything it does not run
or any problem it detects, the inputs restored and the launch re-run on the greenlet engine (the
reference), whose result or diagnostic is the verdict. So "auto" always answers what "greenlet"
answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import errors as E
from .binding import kernel_argument
from .greenlet.scheduler import Run as GreenletRun
from .lockstep.run import Run as LockstepRun
from .lockstep.stop import DIAGNOSTIC, RUNAWAY, Stop
from .options import Options, config
from .trace import Trace

ENGINES = ("auto", "lockstep", "greenlet")


@dataclass
class Launch:
    """What a simulated launch returns (helpers.sim.launch)."""

    trace: Trace | None
    shared_bytes: int  # static + dynamic shared memory per block
    steps: int
    engine: str = "greenlet"  # which engine produced this result: "lockstep" or "greenlet"
    fallback: str | None = None  # why "auto" used the greenlet engine, in words


def run(kernel: Any, grid: Any, block: Any, args: Sequence[Any], opts: Options) -> Launch:
    engine = opts.engine or config.engine
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    args = tuple(args)
    if engine == "greenlet":
        return _greenlet(GreenletRun(kernel, grid, block, args, opts), opts, None)
    # the reference engine's launch checks (dimensions, arity, globals, shapes, arguments) come
    # first and unchanged: a launch it refuses is refused the same way
    ref = GreenletRun(kernel, grid, block, args, opts)
    saved = []
    if engine == "auto":
        for name, a in zip(ref.params, args):
            data = kernel_argument(name, a)
            if isinstance(data, np.ndarray) and data.flags.writeable:
                saved.append((data, data.copy()))
    r = None
    try:
        r = LockstepRun(kernel, grid, block, args, opts)
        r.execute()
        return Launch(r.trace(), r.static_shared_max + opts.shared_bytes, r.greenlet_steps(), "lockstep")
    except Stop as s:
        if engine == "lockstep":
            err = _as_error(s)
            err.trace = r.trace() if r is not None else None
            raise err from None
        reason = str(s)
    except E.SimulatorError as err:
        if engine == "lockstep" or getattr(err, "final", False):  # (final: lockstep's is the answer)
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
    return _greenlet(ref, opts, reason)


def _greenlet(run: GreenletRun, opts: Options, fallback: str | None) -> Launch:
    run.execute()
    return Launch(run.trace(), run.static_shared_max + opts.shared_bytes, run.steps, "greenlet", fallback)


def _as_error(s: Stop) -> E.SimulatorError:
    """A Stop in "lockstep" mode: the diagnostic class it carries, or Unsupported."""
    if s.kind == RUNAWAY:
        return E.Runaway(f"lockstep: {s.text}")
    if s.kind == DIAGNOSTIC:
        return s.cls(f"lockstep: {s.text} ({s.cls.__name__})")
    return E.Unsupported(f"lockstep cannot run this kernel: {s.text} (engine='greenlet' or 'auto' can)")
