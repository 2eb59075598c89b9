"""Options of one simulated launch: one frozen object, defaults from `helpers.sim.config`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence, Union


@dataclass
class Config:
    """Process-wide defaults (`helpers.sim.config`), read when a launch leaves an option unset."""

    # Runaway after this many memory accesses + barriers in one launch, counted the same way by both
    # engines (a step budget, not wall time: the same launch stops at the same access every time).
    # A launch that sets no max_steps gets a budget scaled to its size: `steps_per_thread` per thread
    # of the grid (the course's references take under 2,000 each), at least `min_steps`, at most
    # `max_steps`; small cases so reach their Runaway within a second or two.
    max_steps: int = 5_000_000
    steps_per_thread: int = 4_096
    min_steps: int = 50_000  # (above two looks for a spin-wait, 2 x SPIN_CHECK: a lone spinner is a Deadlock)
    timeout: float = 10.0  # seconds per launch before Runaway (catches loops with no accesses)
    trace: bool = True  # record accesses for launches made through kernel[...] (sim engine)
    # "auto": the lockstep engine, falling back to the greenlet engine on anything it cannot prove
    # clean; "lockstep": lockstep only (Unsupported where it cannot run); "greenlet": the reference
    engine: str = "auto"


config = Config()

BlockOrder = Union[str, Sequence[int]]


@dataclass(frozen=True)
class Options:
    """How to run one launch. `max_steps`/`timeout` of None mean `config`'s value at launch time."""

    shared_bytes: int = 0  # dynamic shared memory per block (4th launch parameter)
    # argument -> "in" (read only) | "out" (starts as garbage: reads before a write are flagged) |
    # "inout" (the values passed are meant: a zeroed counter, an array updated in place) |
    # "scratch" (work memory that starts as garbage, as "out", never compared: block partials...)
    roles: Mapping[str, str] = field(default_factory=dict)
    trace: bool = True  # record every access (needed for pictures and budgets)
    block_order: BlockOrder = "forward"  # "forward", "reverse", "shuffle" (by seed) or a permutation
    seed: int = 0
    cross_block_races: bool = True  # accesses to one global element from two blocks conflict
    races: bool = True  # check races at all
    max_steps: int | None = None
    timeout: float | None = None
    deadline: float | None = None  # time.monotonic() by which to stop (a whole check's budget)
    # uninitialised reads noted and run past (the read returns the poison value) instead of raised at
    # once: a race or divergence later in the run then leads (`.secondary` holds the reads)
    defer_uninit: bool = False
    engine: str | None = None  # None: config.engine (see Config)

    def resolved(self, threads: int | None = None) -> "Options":
        """These options with the limits left unset taken from `config` (the step budget scaled to
        a launch of `threads` threads in all, when given)."""
        steps = self.max_steps
        if not steps:
            steps = config.max_steps
            if threads:
                steps = min(steps, max(config.min_steps, config.steps_per_thread * int(threads)))
        return replace(
            self,
            roles=dict(self.roles or {}),
            max_steps=steps,
            timeout=config.timeout if self.timeout is None else self.timeout,
        )
