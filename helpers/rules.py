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
from helpers.sim.trace import ATOMIC, READ, WRITE, Trace

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


def min_coalescing(limit: Limit, arrays: tuple[str, ...] | None = None) -> Rule:
    """Every source line's global accesses (to `arrays` only, when given) move at most 1/limit times
    the fewest 32-byte sectors."""

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
                    f"{moved} 32-byte sectors where {ideal} would do (the budget is {lim:.0%}). Neighbouring "
                    "threads of a warp (threadIdx.x, x+1, ...) should touch neighbouring addresses; load "
                    "through shared memory to turn the corner.",
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


# ---------------------------------------------------------------- rule kinds added for issue 23


def grid_stride_coalescing(limit: Limit, arrays: tuple[str, ...] | None = None) -> Rule:
    """`min_coalescing` for exercises that ask for a grid-stride loop: the same measure (every source
    line's global accesses to `arrays`, all when None, move at most 1/limit times the fewest 32-byte
    sectors), with the advice that fits: where each thread starts and how far it steps."""
    base = min_coalescing(limit, arrays)

    def evaluate(run, lim):
        found = base.evaluate(run, lim)
        if found is None:
            return None
        where = found.message.split(" (the budget", 1)[0]
        return Finding(
            found.rule,
            found.count,
            found.limit,
            f"{where} (the budget is {lim:.0%}). In a grid-stride loop neighbouring threads of a warp "
            "touch neighbouring elements on every trip: thread `cuda.grid(1)` starts at its own index and "
            "steps by `cuda.gridsize(1)`, the number of threads in the grid. A contiguous chunk of `k` "
            "elements per thread puts neighbouring lanes `k` elements apart instead.",
            found.view,
        )

    return Rule(base.name, base.label, limit, evaluate, base.view, base.per)


# ---------------------------------------------------------------- chapter rules: PMPP ch09-13 techniques
# (aggregated atomics, a convergent tree, a scatter that writes in thread order)


def max_shared_atomics(limit: Limit, technique: str) -> Rule:
    """At most `limit` (a function of the case) atomics on shared memory by the whole launch: what the
    exercise's technique needs (one per run of equal bins, ...); `technique` says what it asks."""

    def values(trace):
        return trace.counts(space="shared", kind=ATOMIC)

    def evaluate(run, lim):
        per_thread = values(run.trace)
        total = int(per_thread.sum())
        if total <= lim:
            return None
        blk, thr = np.unravel_index(int(per_thread.argmax()), per_thread.shape)
        trace = run.trace
        return Finding(
            "shared_atomics",
            total,
            lim,
            f"the launch made {total} atomic updates to shared memory; the exercise's technique needs at "
            f"most {lim} on this data (thread {trace.thread_index(int(thr))} of block "
            f"{trace.block_index(int(blk))} made {int(per_thread[blk, thr])}). {technique}",
            "counts",
        )

    return Rule("shared_atomics", "shared atomics per launch", limit, evaluate, "counts", "thread", values)


def active_threads_packed(limit: Limit = 0) -> Rule:
    """A convergent tree: in every block, a thread never writes shared memory more often than any thread
    before it (the threads still adding are always the first ones, `t < stride`), so whole warps drop
    out together. `limit`: how many increases from one thread to the next are allowed (0)."""

    def values(trace):
        return trace.counts(space="shared", kind=WRITE)

    def evaluate(run, lim):
        writes = values(run.trace)
        for b in range(writes.shape[0]):
            rises = np.flatnonzero(np.diff(writes[b]) > 0)
            if rises.size > lim:
                t = int(rises[0])
                trace = run.trace
                return Finding(
                    "active_threads_packed",
                    int(rises.size),
                    lim,
                    f"in block {trace.block_index(b)}, thread {trace.thread_index(t + 1)} wrote shared "
                    f"memory {int(writes[b, t + 1])} times and thread {trace.thread_index(t)} only "
                    f"{int(writes[b, t])}: the threads that still add are spread over the block, so every "
                    "warp stays busy at a fraction. Keep them packed at the front: thread t adds "
                    "part[t + stride] into part[t] while t < stride, with stride halving from blockDim.",
                    "counts",
                )
        return None

    return Rule("active_threads_packed", "convergent tree", limit, evaluate, "counts", "block")


def writes_in_thread_order(array: str, limit: Limit, why: str) -> Rule:
    """In every block, the writes to global `array` taken in thread order (for each write instruction and
    each trip round a loop) step to the next address except at most `limit` times (one jump per bucket
    boundary, ...): neighbouring threads write neighbouring addresses. `why` says what the exercise
    does to get there."""

    def evaluate(run, lim):
        trace = run.trace
        rows = trace.select(array=array, kind=(WRITE,))
        for b in np.unique(rows["block"]):
            mine = rows[rows["block"] == b]
            order = np.lexsort((mine["thread"], mine["occ"], mine["site"]))  # warp instruction, then lane
            addr = mine["index"][order]
            breaks = int(np.count_nonzero(np.diff(addr) != 1))
            if breaks > lim:
                return Finding(
                    f"writes_in_order_{array}",
                    breaks,
                    lim,
                    f"block {trace.block_index(int(b))}'s writes to `{array}`, taken thread by thread, jump "
                    f"{breaks} times; at most {lim} jumps are expected (neighbouring threads writing "
                    f"neighbouring addresses). {why}",
                    "access",
                )
        return None

    return Rule(f"writes_in_order_{array}", f"jumps in {array}'s writes", limit, evaluate, "access", "block")


def max_shared_writes_per_block(limit: Limit, technique: str) -> Rule:
    """At most `limit` shared-memory writes (plain stores) by any block: the work the exercise's algorithm
    does (Brent-Kung's ~3N for a section of N, where Kogge-Stone needs ~N log N)."""

    def values(trace):
        return trace.counts(space="shared", kind=WRITE).sum(axis=1)

    def evaluate(run, lim):
        per_block = values(run.trace)
        if not per_block.size or int(per_block.max()) <= lim:
            return None
        b = int(per_block.argmax())
        return Finding(
            "shared_writes_per_block",
            int(per_block[b]),
            lim,
            f"block {run.trace.block_index(b)} wrote shared memory {int(per_block[b])} times; the exercise's "
            f"algorithm needs at most {lim}. {technique}",
            "counts",
        )

    return Rule(
        "shared_writes_per_block", "shared writes per block", limit, evaluate, "counts", "block", values
    )


# ---------------------------------------------------------------- chapter rules: produced queues, techniques
# (PMPP ch14-18: a queue filled in any order, one array's reads against what the technique needs, the
# atomics of a privatised queue)


def holds_flagged(queue: str, count: str, flags: str) -> Rule:
    """A queue filled in any order: the first `count[0]` slots of global `queue` were written by the
    launch and hold, as a multiset, exactly the indices where global `flags` is 1, each once. Checked
    on the arrays after the launch, once the compared outputs (`flags`, `count`) are right."""

    def evaluate(run, lim):
        trace = run.trace
        n = int(np.asarray(trace.after[count]).ravel()[0])
        got_all = np.asarray(trace.after[queue]).ravel()
        written = set(trace.select(array=queue, kind=(WRITE,))["index"].tolist())
        unwritten = [s for s in range(min(n, got_all.size)) if s not in written]
        got = sorted(got_all[:n].tolist())
        want = np.flatnonzero(np.asarray(trace.after[flags]).ravel() == 1).tolist()
        if not unwritten and got == want:
            return None
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        twice = sorted({v for v in got if got.count(v) > 1})
        parts = [f"slots never written {unwritten[:8]}"] if unwritten else []
        parts += [f"missing {missing[:8]}"] if missing else []
        parts += [f"queued but not marked in `{flags}` {extra[:8]}"] if extra else []
        parts += [f"queued more than once {twice[:8]}"] if twice else []
        return Finding(
            "queue_contents",
            len(unwritten) + len(missing) + len(extra) + len(twice),
            lim,
            f"`{flags}` and `{count}` are right, but `{queue}[0 : {count}[0]]` must hold, in any order, each "
            f"vertex marked in `{flags}` once: {'; '.join(parts)}. Write the vertex you claimed (the child, "
            f"not the vertex whose edges you walk) into the slot the atomic on `{count}` returned; a block "
            "copying its private queue out writes entry j at the block's base plus j.",
            "access",
        )

    return Rule("queue_contents", "wrong queue entries", 0, evaluate, "access", "block")


def reads_of(array: str, limit: Limit, technique: str) -> Rule:
    """At most `limit` (a function of the case) reads of global `array` by the whole launch: what the
    exercise's technique needs (stop at the first hit, visit only the neighbouring bins, ...), so a
    kernel that reads more does not use it. `technique` says what the exercise asks, as advice."""

    def evaluate(run, lim):
        trace = run.trace
        rows = trace.select(array=array, kind=(READ,))
        if len(rows) <= lim:
            return None
        per_thread = np.zeros((trace.nblocks, trace.nthreads), int)
        np.add.at(per_thread, (rows["block"], rows["thread"]), 1)
        blk, thr = np.unravel_index(int(per_thread.argmax()), per_thread.shape)
        return Finding(
            f"reads_of_{array}",
            len(rows),
            lim,
            f"the launch read `{array}` {len(rows)} times; the exercise's technique needs at most {lim} "
            f"(thread {trace.thread_index(int(thr))} of block {trace.block_index(int(blk))} read it "
            f"{int(per_thread[blk, thr])} times). {technique}",
            "counts",
        )

    return Rule(f"reads_of_{array}", f"reads of {array}", limit, evaluate, "counts", "block")


def private_queue_atomics(counter: str, queue: str, capacity: int) -> Rule:
    """A privatised queue: each block makes at most one atomic on global `counter` (reserving room for
    its whole private queue) plus one per entry that did not fit the `capacity` private slots (the
    block's writes to global `queue` beyond `capacity`)."""

    from helpers.sim.trace import ATOMIC

    def values(trace):
        return np.bincount(trace.select(array=counter, kind=(ATOMIC,))["block"], minlength=trace.nblocks)

    def evaluate(run, lim):
        trace = run.trace
        made = values(trace)
        writes = np.bincount(trace.select(array=queue, kind=(WRITE,))["block"], minlength=trace.nblocks)
        allowed = lim + np.maximum(writes - capacity, 0)
        over = np.nonzero(made > allowed)[0]
        if not over.size:
            return None
        b = int(over[0])
        return Finding(
            "queue_atomics",
            int(made[b]),
            int(allowed[b]),
            f"block {trace.block_index(b)} made {int(made[b])} atomics on global `{counter}` for "
            f"{int(writes[b])} queue entries; a privatised queue needs {lim} per block (thread 0 reserves "
            f"room for the block's whole private queue) plus one per entry that overflows its {capacity} "
            "slots. "
            "Append into the shared-memory queue with a shared atomic first, then reserve and copy once "
            "per block.",
            "counts",
        )

    return Rule("queue_atomics", "atomics on the queue counter per block", 1, evaluate, "counts", "block")


def lanes_interleaved(arrays: tuple[str, ...], segments: str) -> Rule:
    """Lanes sharing a segment (a CSR row: `segments` is its pointer array, e.g. row_ptr) read it
    interleaved: no thread reads two neighbouring elements of one segment of `arrays`, so that
    neighbouring lanes read neighbouring elements together (coalesced) instead of each lane walking a
    contiguous chunk of its own. Judged per thread from the trace, whatever the warp grouping."""

    def evaluate(run, lim):
        trace = run.trace
        ptr = np.asarray(trace.before[segments]).ravel().astype(np.int64)
        span = int(ptr[-1]) + 1
        for name in arrays:
            rows = trace.select(array=name, kind=(READ,))
            thread = rows["block"].astype(np.int64) * trace.nthreads + rows["thread"]
            pairs = np.unique(thread * span + rows["index"])  # (thread, element), sorted
            idx = pairs % span
            same_row = np.searchsorted(ptr, idx, side="right") == np.searchsorted(ptr, idx + 1, side="right")
            bad = np.flatnonzero(np.isin(pairs + 1, pairs) & same_row)
            if not bad.size:
                continue
            k = int(idx[bad[0]])
            blk, thr = divmod(int(pairs[bad[0]] // span), trace.nthreads)
            row = int(np.searchsorted(ptr, k, side="right") - 1)
            return Finding(
                "lanes_interleaved",
                int(bad.size),
                lim,
                f"thread {trace.thread_index(thr)} of block {trace.block_index(blk)} (lane {thr % 32}) read "
                f"`{name}[{k}]` and `{name}[{k + 1}]`, neighbours in row {row}: each lane walked a "
                "contiguous chunk of the row, so at any moment the warp's lanes read entries far apart "
                "(uncoalesced). Interleave them: lane l takes entries row start + l, + 32, + 64, ..., so "
                "that the warp reads 32 neighbouring entries at once.",
                "coalescing",
            )
        return None

    return Rule("lanes_interleaved", "lanes interleaved on a row", 0, evaluate, "coalescing", "thread")
