"""One table of rules: each a named check computed from a run's trace, with its limit (a number or a
function of the case), the message and advice a learner reads, and the view that shows it.

The harness (helpers.check) evaluates the rules of a puzzle after a correct run and raises
`OverBudget(rule.name, count, limit)` on the first one broken; the counts view draws the per-thread
and per-block rules from the same table. `Budget(...)` builds the standard rules; a puzzle adds its
own with `Puzzle(rules=(...))`, e.g. `max_paths_per_warp(1)`, `max_bank_conflicts(1)`,
`min_occupancy(1.0)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

import numpy as np

from helpers import metrics
from helpers.advice import ADVICE, SHARE, per_array
from helpers.sim.trace import READ, WRITE, Trace

Limit = Union[int, float, Callable[[Any], Union[int, float]], None]


@dataclass(frozen=True)
class Finding:
    """A broken rule: what OverBudget carries, and the sentence that explains it."""

    rule: str
    count: int | float
    limit: int | float
    message: str
    view: str


@dataclass(frozen=True)
class Rule:
    """A named check of one run.

    `evaluate(run, limit)` gets the simulator's launch record (`.trace`, `.shared_bytes`) and the
    limit already resolved for the case, and returns a Finding or None. `values(trace)` (optional)
    gives the measured numbers per thread (shape (blocks, threads)) or per block (shape (blocks,))
    for the counts view and for the "most per thread" line of a passing Result.
    """

    name: str
    label: str
    limit: Limit
    evaluate: Callable[[Any, Any], Finding | None]
    view: str = "counts"
    per: str = "thread"  # "thread", "block", "line" or "warp": what one measured number belongs to
    values: Callable[[Trace], np.ndarray] | None = None

    def limit_for(self, case: Any = None) -> int | float | None:
        return self.limit(case) if callable(self.limit) else self.limit

    def limit_text(self) -> Any:
        return "depends on size" if callable(self.limit) else self.limit

    def check(self, run: Any, case: Any) -> Finding | None:
        """The Finding when `run` (on `case`) breaks this rule, else None."""
        limit = self.limit_for(case)
        return None if limit is None else self.evaluate(run, limit)


# ---------------------------------------------------------------- the standard rules

COUNTS = {
    "global_reads": ("global", READ),
    "global_writes": ("global", WRITE),
    "shared_reads": ("shared", READ),
    "shared_writes": ("shared", WRITE),
}


def _once(values: Callable[[Trace], np.ndarray]) -> Callable[[Trace], np.ndarray]:
    """`values` computed once per trace: the harness reads the maxima, then the rule's check."""
    last: list = [None, None]

    def cached(trace):
        if last[0] is not trace:
            last[0], last[1] = trace, values(trace)
        return last[1]

    return cached


def per_thread(name: str, limit: Limit, advice: str | None = None) -> Rule:
    """At most `limit` accesses of one kind (a key of COUNTS) by any thread. `advice`: the rule of
    the exercise in one sentence (e.g. "stop at the first hit with a warp vote"), said instead of
    the generic advice."""
    space, kind = COUNTS[name]
    label = name.replace("_", " ")

    @_once
    def values(trace):
        return trace.counts(space=space, kind=kind)

    def evaluate(run, lim):
        trace = run.trace
        counts = values(trace)
        m = int(counts.max()) if counts.size else 0
        if m <= lim:
            return None
        blk, thr = np.unravel_index(int(counts.argmax()), counts.shape)
        arrays, repeated = per_array(trace, space, kind, int(blk), int(thr))
        if advice:
            tip = f"The rule of this exercise: {advice}"
        elif not repeated and name in SHARE:
            tip = SHARE[name]
        else:
            tip = ADVICE[name]
        return Finding(
            name,
            m,
            lim,
            f"thread {trace.thread_index(int(thr))} of block {trace.block_index(int(blk))} made {m} {label}; "
            f"the budget is {lim} per thread. Over budget: {arrays}. " + tip,
            "counts",
        )

    return Rule(name, label, limit, evaluate, "counts", "thread", values)


def shared_bytes_per_block(limit: Limit) -> Rule:
    def evaluate(run, lim):
        used = run.shared_bytes
        if used <= lim:
            return None
        return Finding(
            "shared_bytes",
            used,
            lim,
            f"each block uses {used} bytes of shared memory; the budget is {lim}.",
            "access",
        )

    return Rule("shared_bytes", "shared bytes per block", limit, evaluate, "access", "block")


def global_atomics_per_block(limit: Limit) -> Rule:
    def evaluate(run, lim):
        trace = run.trace
        per_block = metrics.block_atomics(trace)
        m = int(per_block.max()) if per_block.size else 0
        if m <= lim:
            return None
        blk = int(per_block.argmax())
        return Finding(
            "global_atomics_per_block",
            m,
            lim,
            f"block {trace.block_index(blk)} made {m} atomic updates to global memory; the budget is {lim} "
            "per block. Accumulate privately (shared memory) first, then merge once per block.",
            "counts",
        )

    return Rule(
        "global_atomics_per_block",
        "global atomics per block",
        limit,
        evaluate,
        "counts",
        "block",
        metrics.block_atomics,
    )


_COALESCE = (
    "Neighbouring threads of a warp (threadIdx.x, x+1, ...) should touch neighbouring addresses; load "
    "through shared memory to turn the corner."
)


def min_coalescing(limit: Limit, arrays: tuple[str, ...] | None = None, advice: str = _COALESCE) -> Rule:
    """Every source line's global accesses (to `arrays` only, when given) move at most 1/limit times
    the fewest 32-byte sectors; `advice` is what the message tells the learner to do."""

    def evaluate(run, lim):
        for (line, arr), (moved, ideal) in sorted(metrics.coalescing_by_line(run.trace).items()):
            if arrays is not None and arr not in arrays:
                continue
            if moved and ideal / moved < lim:
                return Finding(
                    "min_coalescing",
                    round(ideal / moved, 3),
                    lim,
                    f"line {line} accesses `{arr}` with {ideal / moved:.0%} coalescing: its warps moved "
                    f"{moved} 32-byte sectors where {ideal} would do (the budget is {lim:.0%}). {advice}",
                    "coalescing",
                )
        return None

    return Rule("min_coalescing", "coalescing per line", limit, evaluate, "coalescing", "line")


def max_paths_per_warp(limit: Limit) -> Rule:
    """No warp takes more than `limit` distinct paths (sets of access sites) through the kernel."""

    def evaluate(run, lim):
        paths = metrics.paths_per_warp(run.trace)
        worst = int(paths.max()) if paths.size else 0
        if worst <= lim:
            return None
        block, w = np.unravel_index(int(np.argmax(paths)), paths.shape)
        return Finding(
            "paths_per_warp",
            worst,
            lim,
            f"warp {int(w)} of block {int(block)} took {worst} different paths through the kernel (budget: "
            f"{lim}). Its lanes disagreed at a branch, so the warp ran both sides one after the other.",
            "paths",
        )

    return Rule("paths_per_warp", "paths per warp", limit, evaluate, "paths", "warp")


def max_bank_conflicts(limit: Limit) -> Rule:
    """Every warp-level shared-memory access needs at most `limit` passes (1: conflict-free)."""

    def evaluate(run, lim):
        trace = run.trace
        worst = max(metrics.bank_conflicts_by_site(trace), key=lambda s: s.worst, default=None)
        if worst is None or worst.worst <= lim:
            return None
        _, line = metrics.line_of(trace, worst.site)
        arr = trace.arrays[worst.array].name
        return Finding(
            "bank_conflicts",
            worst.worst,
            lim,
            f"line {line}: a warp's access to shared `{arr}` needs {worst.worst} passes, because "
            f"{worst.worst} of its lanes want different words of one bank (the limit is {lim} "
            f"pass{'es' if lim != 1 else ''}). Word w is in bank w % 32: arrange the indices so the "
            "32 lanes' words fall in different banks (pad a 2-D tile's rows, or swizzle its columns).",
            "banks",
        )

    return Rule("bank_conflicts", "bank conflict degree", limit, evaluate, "banks", "warp")


def min_occupancy(target: Limit, registers: int = 32) -> Rule:
    """The launch keeps at least `target` (a fraction) of a T4 SM's 32 warp slots filled, given its
    threads per block, shared bytes per block (static + dynamic) and `registers` per thread."""

    def evaluate(run, lim):
        threads, shared = run.trace.nthreads, run.shared_bytes
        occ = metrics.t4_occupancy(threads, shared, registers)
        if occ.fraction >= lim:
            return None
        return Finding(
            "occupancy",
            round(occ.fraction, 3),
            lim,
            f"blocks of {threads} threads using {shared} bytes of shared memory: a T4 SM holds "
            f"{occ.blocks_per_sm} of them (the limit is {occ.limit}), "
            f"{occ.blocks_per_sm * occ.warps_per_block} warps of its 32, so its occupancy is "
            f"{occ.fraction:.0%}; the rule is at least {lim:.0%} "
            f"(assuming {registers} registers per thread). Change the block size or the shared memory "
            "per block so that the blocks that fit bring 32 warps.",
            "access",
        )

    return Rule("occupancy", "T4 occupancy", target, evaluate, "access", "block")


def min_shared_readers(fraction: Limit = 0.5) -> Rule:
    """A parallel reduction: in every block, at least `fraction` of the threads that loaded an input
    value from global memory also read shared memory (take part in the adding). One thread summing
    the block's values in a loop (its running total in a register) breaks it whatever it reads."""

    def values(trace):
        readers = (trace.counts(space="shared", kind=READ) > 0).sum(axis=1)
        return readers

    def evaluate(run, lim):
        trace = run.trace
        readers = values(trace)
        loaders = (trace.counts(space="global", kind=READ) > 0).sum(axis=1)
        need = np.floor(loaders * lim).astype(int)
        short = np.nonzero(readers < need)[0]
        if not short.size:
            return None
        b = int(short[0])
        return Finding(
            "shared_readers",
            int(readers[b]),
            int(need[b]),
            f"block {trace.block_index(b)} loaded {int(loaders[b])} values but only {int(readers[b])} of its "
            f"threads read shared memory to add them up (at least {int(need[b])} should): one thread adding "
            "the values one after another takes one step per value, while a tree takes log2 of that. In "
            "each step let half of the still-active threads add a partner's partial sum to their own "
            "(stride TPB/2, TPB/4, ..., 1), with a barrier after every step.",
            "counts",
        )

    return Rule(
        "shared_readers", "threads that read shared per block", fraction, evaluate, "counts", "block", values
    )


def outputs_via_shared(limit: Limit = 1) -> Rule:
    """Every thread that writes global memory read at least `limit` values from shared memory first:
    the data goes global -> shared -> global, as the exercise teaches."""

    def evaluate(run, lim):
        trace = run.trace
        writes = trace.counts(space="global", kind=WRITE)
        sreads = trace.counts(space="shared", kind=READ)
        bad = (writes > 0) & (sreads < lim)
        if not bad.any():
            return None
        blk, thr = np.unravel_index(int(np.argmax(bad)), bad.shape)
        return Finding(
            "outputs_via_shared",
            int(sreads[blk, thr]),
            lim,
            f"thread {trace.thread_index(int(thr))} of block {trace.block_index(int(blk))} wrote its output "
            f"without reading shared memory: here every value must travel global -> shared -> global. "
            "Copy your element into the shared array, `cuda.syncthreads()`, then compute the output from "
            "the shared array.",
            "access",
        )

    return Rule("outputs_via_shared", "shared reads per writing thread", limit, evaluate, "access", "thread")


@dataclass(frozen=True)
class Budget:
    """The standard limits (None: unlimited), enforced from the trace on every case.

    A limit may be a function of the case (e.g. tiled matmul: 2 reads per tile). `rules()` is the
    rule table they stand for.
    """

    global_reads: Limit = None
    global_writes: Limit = None
    shared_reads: Limit = None
    shared_writes: Limit = None
    shared_bytes: Limit = None  # per block, static + dynamic
    global_atomics_per_block: Limit = None
    min_coalescing: float | None = None  # every source line's global accesses: ideal / moved sectors
    # {rule name: the exercise's rule in one sentence}, said when that rule is broken (instead of the
    # generic advice), e.g. {"global_reads": "stop at the first hit with a warp vote (cuda.any_sync)."}
    advice: Any = None

    def rules(self) -> tuple[Rule, ...]:
        """Every standard rule, in the order the harness checks them (count rules even when unlimited:
        a passing Result reports their maxima)."""
        return (
            *(per_thread(f, getattr(self, f), (self.advice or {}).get(f)) for f in COUNTS),
            shared_bytes_per_block(self.shared_bytes),
            min_coalescing(self.min_coalescing),
            global_atomics_per_block(self.global_atomics_per_block),
        )


def limits(rules, case: Any = None) -> dict[str, int | float]:
    """{rule name: limit for this case} of the rules that have a limit."""
    out = {}
    for r in rules:
        v = r.limit_for(case)
        if v is not None:
            out[r.name] = v
    return out


def first_broken(rules, run: Any, case: Any) -> Finding | None:
    """The first rule (in table order) that `run` breaks, or None."""
    for r in rules:
        found = r.check(run, case)
        if found is not None:
            return found
    return None
