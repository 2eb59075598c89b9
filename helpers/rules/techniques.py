"""Rules for the techniques particular exercises ask for (a grid-stride loop, a convergent tree, a
queue built in order, lanes interleaved over a row, ...): each a `Rule` like the standard ones in
`helpers.rules.core`, computed from the run's trace, with advice that names the technique."""

from __future__ import annotations

import numpy as np

from helpers.sim.trace import ATOMIC, READ, WRITE

from .core import Finding, Limit, Rule, min_coalescing

# ---------------------------------------------------------------- rule kinds added for issue 23


def grid_stride_coalescing(limit: Limit, arrays: tuple[str, ...] | None = None) -> Rule:
    """`min_coalescing` for exercises that ask for a grid-stride loop: the same measure (every source
    line's global accesses to `arrays`, all when None, move at most 1/limit times the fewest 32-byte
    sectors), with the advice that fits: where each thread starts and how far it steps."""
    return min_coalescing(
        limit,
        arrays,
        advice="In a grid-stride loop neighbouring threads of a warp touch neighbouring elements on every "
        "trip: thread `cuda.grid(1)` starts at its own index and steps by `cuda.gridsize(1)`, the number "
        "of threads in the grid. A contiguous chunk of `k` elements per thread puts neighbouring lanes "
        "`k` elements apart instead.",
    )


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
