"""The simulator's verdicts lead with the cause and advise the fix that fits (issue 23, classes 4, 7,
9, 10 and 18): a known-wrong kernel per class, rejected for the stated reason on seeds 0-9, and a
correct kernel beside it that passes."""

import sys
import time

import numba
import numpy as np
import pytest
from numba import cuda

import puzzles
from helpers import sim
from helpers.check import PuzzleFailure
from helpers.sim import errors as E

SEEDS = range(10)
ENGINES = ("greenlet", "lockstep", "auto")


def diagnosed(name, kernel, seed):
    """The simulator's diagnostic of a failing check (it must fail)."""
    with pytest.raises(PuzzleFailure) as info:
        puzzles.check(name, kernel, seed=seed, gpu=False)
    return getattr(info.value, "diagnostic", None), str(info.value)


def arrays(n):
    """(out, a) for a launch of `n` threads: zeros and ones, float32."""
    return np.zeros(n, np.float32), np.ones(n, np.float32)


def verdict_head(text):
    """The line naming the diagnostic and where (the first line after the case header)."""
    return next(ln for ln in text.splitlines() if ln.split(":")[0] in E.__dict__)


# ------------------------------------------------------------ 4. work memory read across blocks

TPB = 32


@cuda.jit(device=True)
def block_tree(cache, a, size):
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TPB + t
    cache[t] = a[i] if i < size else 0.0
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] += cache[t + stride]
        stride //= 2


@cuda.jit
def no_ticket(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
    if t == 0 and b == cuda.gridDim.x - 1:  # no ticket at all: the highest index need not finish last
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total


@cuda.jit
def with_ticket(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    last = cuda.shared.array(1, numba.int32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        cuda.threadfence()
        last[0] = cuda.atomic.add(ticket, 0, 1) == cuda.gridDim.x - 1
    cuda.syncthreads()
    if last[0] and t == 0:
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total


@cuda.jit
def first_ticket_reads(out, partial, ticket, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    first = cuda.shared.array(1, numba.int32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    block_tree(cache, a, size)
    if t == 0:
        partial[b] = cache[0]
        first[0] = cuda.atomic.add(ticket, 0, 1) == 0  # the first to finish, not the last
    cuda.syncthreads()
    if first[0] and t == 0:
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total


def last_block_launch(kernel, n, order, seed, engine):
    a = np.random.default_rng(seed).uniform(-10, 10, n).astype(np.float32)
    blocks = (n + TPB - 1) // TPB
    out = np.full(1, np.nan, np.float32)
    args = (out, np.zeros(blocks, np.float32), np.zeros(1, np.int32), a, n)
    roles = {"out": "out", "partial": "scratch", "ticket": "inout", "a": "in"}
    sim.launch(
        kernel,
        blocks,
        TPB,
        args,
        roles=roles,
        block_order=order,
        seed=seed,
        cross_block_races=False,
        engine=engine,
    )
    return out[0], a.astype(np.float64).sum()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_block_reading_others_work_memory_without_a_ticket_is_rejected_on_every_order(engine):
    # the harness passes `partial` as role "scratch" (work memory that starts as garbage); blocks run
    # one after another, so in forward order the highest block does see every partial: still a race
    for seed in SEEDS:
        for order in ("forward", "reverse", "shuffle"):
            with pytest.raises((E.DataRace, E.UninitializedRead, E.Unsupported)) as info:
                last_block_launch(no_ticket, 300 + 7 * seed, order, seed, engine)
            err = info.value
            if engine == "lockstep":  # it hands these launches to the reference engine
                assert isinstance(err, E.Unsupported) and "scratch" in str(err)
                continue
            assert err.array == "partial"
            text = str(err)
            assert "Blocks run" in text and "any order" in text and "ticket" in text, text
            with pytest.raises((E.DataRace, E.UninitializedRead)):
                last_block_launch(first_ticket_reads, 300 + 7 * seed, order, seed, engine)
            got, want = last_block_launch(with_ticket, 300 + 7 * seed, order, seed, engine)
            assert abs(got - want) < 1e-3


def test_unwritten_work_memory_is_an_uninitialised_read_naming_the_array():
    with pytest.raises(E.UninitializedRead) as info:
        last_block_launch(no_ticket, 300, "reverse", 0, "greenlet")
    err = info.value
    assert err.array == "partial" and "work memory" in str(err) and err.block == (9, 0, 0)
    # without the scratch role (the values passed are meant) the same read is no diagnostic
    a = np.ones(64, np.float32)
    out = np.full(1, np.nan, np.float32)
    sim.launch(
        no_ticket,
        2,
        TPB,
        (out, np.zeros(2, np.float32), np.zeros(1, np.int32), a, 64),
        cross_block_races=False,
    )


# ------------------------------------------------------------ 7. a divergent barrier leads

FULL = 0xFFFFFFFF
WARPS = 128 // 32


@cuda.jit(device=True)
def warp_total(x):
    offset = 16
    while offset > 0:
        x += cuda.shfl_down_sync(FULL, x, offset)
        offset //= 2
    return x


@cuda.jit
def barrier_in_lane0(out, a, size):
    slots = cuda.shared.array(WARPS, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 128 + t
    lane, warp = t % 32, t // 32
    x = warp_total(a[i] if i < size else numba.float32(0))
    if lane == 0:
        slots[warp] = x
        cuda.syncthreads()  # only lane 0 of each warp gets here
    if warp == 0:
        y = warp_total(slots[lane] if lane < WARPS else numba.float32(0))
        if lane == 0:
            out[cuda.blockIdx.x] = y


@cuda.jit(device=True)
def partial_max(cache, a, size):
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    m = numba.float32(0)
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        m = max(m, abs(a[i]))
    cache[t] = m
    stride = TPB // 2
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] = max(cache[t], cache[t + stride])
        stride //= 2
    cuda.syncthreads()
    return cache[0]


@cuda.jit
def grid_barrier_in_thread0(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    m = partial_max(cache, a, size)
    if t == 0:
        partial[b] = m
        cuda.cg.this_grid().sync()  # only thread 0 of each block waits here
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@cuda.jit
def grid_barrier_skipped_by_block0(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    m = partial_max(cache, a, size)
    if t == 0:
        partial[b] = m
    if b != 0:
        cuda.cg.this_grid().sync()
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@cuda.jit
def grid_barrier_for_all(out, partial, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    m = partial_max(cache, a, size)
    if t == 0:
        partial[b] = m
    cuda.cg.this_grid().sync()
    top = numba.float32(0)
    for k in range(cuda.gridDim.x):
        top = max(top, partial[k])
    for i in range(b * TPB + t, size, cuda.gridDim.x * TPB):
        out[i] = a[i] / top


@pytest.mark.parametrize(
    "name, kernel",
    [
        ("block_sum", barrier_in_lane0),
        ("grid_sync", grid_barrier_in_thread0),
        ("grid_sync", grid_barrier_skipped_by_block0),
    ],
)
def test_the_divergent_barrier_leads_on_every_seed(name, kernel):
    for seed in SEEDS:
        err, text = diagnosed(name, kernel, seed)
        assert isinstance(err, E.BarrierDivergence), text
        assert verdict_head(text).startswith("BarrierDivergence"), text
        if "grid" in kernel.__name__:
            assert "this_grid().sync()" in str(err) and "Put a cuda.syncthreads()" not in text, text


def test_the_same_barriers_reached_by_all_pass():
    for seed in SEEDS:
        puzzles.check("grid_sync", grid_barrier_for_all, seed=seed, gpu=False)


def test_the_divergent_barrier_leads_in_each_engine_and_block_order():
    a = np.random.default_rng(1).uniform(-10, 10, 300).astype(np.float32)
    for engine in ENGINES:
        out = np.zeros(3, np.float32)
        with pytest.raises((E.BarrierDivergence, E.Unsupported)) as info:
            sim.launch(barrier_in_lane0, 3, 128, (out, a, 300), engine=engine, defer_uninit=True)
        assert isinstance(info.value, E.BarrierDivergence) or engine == "lockstep"
        for order in ("forward", "reverse", "shuffle"):
            for kernel in (grid_barrier_in_thread0, grid_barrier_skipped_by_block0):
                args = (np.zeros(300, np.float32), np.zeros(3, np.float32), a, 300)
                with pytest.raises((E.BarrierDivergence, E.Unsupported)) as info:
                    sim.launch(kernel, 3, TPB, args, engine=engine, block_order=order, seed=2)
                if engine != "lockstep":  # (lockstep hands grid barriers over)
                    assert isinstance(info.value, E.BarrierDivergence), str(info.value)
                    assert "probably a consequence" in str(info.value)


# ------------------------------------------------------------ 9. runaway: deterministic, fast, at the loop


@cuda.jit
def loop_never_advances(out, a):
    i = cuda.threadIdx.x
    k = 0
    while k < 4:  # k is never advanced
        out[i % 4] = a[i % 4] + k


def test_runaway_is_the_same_verdict_every_time_at_the_learners_loop_within_seconds():
    line = loop_never_advances.py_func.__code__.co_firstlineno + 5  # (the decorator's line first)
    for seed in (0, 1, 2):
        heads = set()
        for _ in range(2):
            start = time.monotonic()
            err, text = diagnosed("map", loop_never_advances, seed)
            assert time.monotonic() - start < 5.0
            assert isinstance(err, E.Runaway) and err.line == line, text
            assert "helpers/" not in verdict_head(text) and "step budget" in text
            heads.add(verdict_head(text))
        assert len(heads) == 1, heads


def test_runaway_in_each_engine_names_the_loop_line():
    line = loop_never_advances.py_func.__code__.co_firstlineno + 5  # (the decorator's line first)
    for engine in ENGINES:
        with pytest.raises(E.Runaway) as info:
            sim.launch(
                loop_never_advances, 1, 8, (np.zeros(8, np.float32), np.ones(8, np.float32)), engine=engine
            )
        assert info.value.line == line


@cuda.jit
def loop_touches_nothing(out, a):
    i = cuda.threadIdx.x
    k = 0
    x = 0.0
    while k < 10:  # k is never advanced, and the loop reads and writes no memory
        x += 1.0
    out[i] = x


def test_an_endless_loop_without_memory_accesses_is_a_runaway_at_once_not_at_the_wall_clock():
    for seed in (0, 1, 2):
        start = time.monotonic()
        err, text = diagnosed("map", loop_touches_nothing, seed)
        assert time.monotonic() - start < 5.0
        assert isinstance(err, E.Runaway) and "never ends" in str(err), text
        first = loop_touches_nothing.py_func.__code__.co_firstlineno  # (the decorator's line)
        assert err.line in (first + 5, first + 6), text  # the `while` or its body
    for engine in ("auto", "lockstep"):
        with pytest.raises(E.Runaway):
            sim.launch(loop_touches_nothing, 1, 8, arrays(8), engine=engine)


def test_the_step_budget_scales_with_the_launch():
    small = sim.Options().resolved(8).max_steps
    big = sim.Options().resolved(256).max_steps
    assert small == sim.config.min_steps and big == 256 * sim.config.steps_per_thread
    assert sim.Options().resolved(10**7).max_steps == sim.config.max_steps
    assert sim.Options(max_steps=7).resolved(8).max_steps == 7


# ------------------------------------------------------------ 10. a lost update wants an atomic


@cuda.jit
def shared_histogram_plus_equals(out, keys, size):
    local = cuda.shared.array(16, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 64 + t
    if t < 16:
        local[t] = 0
    cuda.syncthreads()
    if i < size:
        local[keys[i]] += 1  # two threads with one key lose an update
    cuda.syncthreads()
    if t < 16:
        cuda.atomic.add(out, t, local[t])


@cuda.jit
def counter_by_hand(out, count, a):
    t = cuda.threadIdx.x
    slot = count[0]
    count[0] = slot + 1
    out[slot] = a[t]


@cuda.jit
def check_then_set(out, flag, a):
    t = cuda.threadIdx.x
    if flag[0] == 0:
        flag[0] = 1
        out[0] = a[t]


@cuda.jit
def plain_store_beside_atomics(out, a):
    t = cuda.threadIdx.x
    if t == 3:
        out[0] = 5
    else:
        cuda.atomic.add(out, 0, 1)


@cuda.jit
def grads_plus_equals(dwte, dwpe, dout, tokens, n, T, C):
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n * C:
        i = k // C
        c = k % C
        g = dout[i, c]
        dwte[tokens[i], c] += g  # a token seen twice loses one of its gradients
        cuda.atomic.add(dwpe, (i % T, c), g)
        k += step


@cuda.jit
def blocks_wrap_around(out, a):
    i = cuda.grid(1) % 8  # the block is in the index, and then wrapped away
    out[i] = a[i]


@cuda.jit
def queue_counter_by_hand(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and cuda.atomic.cas(found, u, 0, 1) == 0:
                slot = count[0]  # the counter by hand: two threads take one slot
                count[0] = slot + 1
                next_frontier[slot] = u


@cuda.jit
def claim_by_test_then_set(found, count, next_frontier, row_ptr, col, level, frontier, n_frontier, cur):
    i = cuda.grid(1)
    if i < n_frontier:
        v = frontier[i]
        for k in range(row_ptr[v], row_ptr[v + 1]):
            u = col[k]
            if level[u] == -1 and found[u] == 0:  # test, then set: two threads both claim u
                found[u] = 1
                slot = cuda.atomic.add(count, 0, 1)
                next_frontier[slot] = u


ATOMIC_ADVICE = "Use an atomic"


def test_a_lost_update_in_a_puzzle_is_told_to_use_an_atomic():
    for seed in SEEDS:
        err, text = diagnosed("histogram", shared_histogram_plus_equals, seed)
        assert isinstance(err, E.DataRace) and ATOMIC_ADVICE in str(err), text
        assert "Put a cuda.syncthreads()" not in str(err)
    for kernel in (queue_counter_by_hand, claim_by_test_then_set):
        for seed in SEEDS:
            err, text = diagnosed("ch15_bfs_queue", kernel, seed)
            assert isinstance(err, E.DataRace) and ATOMIC_ADVICE in str(err), text
            assert "Put a cuda.syncthreads()" not in str(err)
    err, text = diagnosed("llm2_embedding_backward_atomic", grads_plus_equals, 0)
    assert isinstance(err, E.DataRace) and ATOMIC_ADVICE in str(err) and "leaves out" not in str(err), text


@pytest.mark.parametrize("trace", [True, False])
def test_race_advice_by_kind(trace):
    def race(kernel, grid, block, args):
        with pytest.raises(E.DataRace) as info:
            sim.launch(kernel, grid, block, args, trace=trace)
        return str(info.value)

    keys = np.arange(64, dtype=np.int32) % 2
    text = race(shared_histogram_plus_equals, 1, 64, (np.zeros(16, np.int32), keys, 64))
    assert ATOMIC_ADVICE in text and "Put a cuda.syncthreads()" not in text
    if trace:  # two statements: the trace shows each thread read, then wrote, the element
        for kernel in (counter_by_hand, check_then_set):
            text = race(
                kernel, 1, 8, (np.zeros(8, np.float32), np.zeros(1, np.int32), np.ones(8, np.float32))
            )
            assert ATOMIC_ADVICE in text and "cuda.atomic.cas" in text
    text = race(plain_store_beside_atomics, 1, 8, (np.zeros(1, np.float32), np.ones(8, np.float32)))
    assert "Make every update of this element atomic" in text
    text = race(blocks_wrap_around, 2, 8, (np.zeros(16, np.float32), np.ones(16, np.float32)))
    assert "in another block" in text and "leaves out cuda.blockIdx" not in text and "overlap" in text


@cuda.jit
def stencil_reads_too_early(out, a):
    s = cuda.shared.array(8, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t] * 2
    s[t] = s[t] + 1  # read-modify-write of its own element
    if t > 0:
        out[t] = s[t - 1]  # a neighbour's, with no barrier: a barrier is the fix here


def test_a_read_of_a_neighbours_update_still_wants_a_barrier():
    with pytest.raises(E.DataRace) as info:
        sim.launch(
            stencil_reads_too_early,
            1,
            8,
            (np.zeros(8, np.float32), np.ones(8, np.float32)),
            engine="greenlet",
        )
    text = str(info.value)
    assert "cuda.syncthreads()" in text and ATOMIC_ADVICE not in text


@cuda.jit
def every_lane_writes_the_row(out, a, cols):
    lane = cuda.threadIdx.x % 32
    r = cuda.blockIdx.x * (cuda.blockDim.x // 32) + cuda.threadIdx.x // 32
    s = numba.float32(0)
    for j in range(lane, cols, 32):
        s += a[r * cols + j]
    offset = 16
    while offset > 0:
        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, offset)
        offset //= 2
    out[r] = s  # every lane: `if lane == 0:` is missing


@cuda.jit
def every_thread_writes_the_total(out, a):
    t = cuda.threadIdx.x
    s = cuda.shared.array(64, numba.float32)
    s[t] = a[t]
    cuda.syncthreads()
    out[0] = s[0] + s[63]  # every thread: `if cuda.threadIdx.x == 0:` is missing


LANE0_ADVICE = "let lane 0 of the warp write it (under `if lane == 0:`"
THREAD0_ADVICE = "let one thread write it (e.g. under `if cuda.threadIdx.x == 0:`"


@pytest.mark.parametrize("engine", ENGINES)
def test_several_writers_of_one_element_are_told_the_one_writer_that_fits(engine):
    """Lanes of one warp in a kernel organised by warps want lane 0 of the warp as the writer (thread 0
    of the block would leave the other warps' rows unwritten); threads of a block want thread 0."""

    def race(kernel, block, args):
        with pytest.raises(E.DataRace) as info:
            sim.launch(kernel, 2, block, args, engine=engine)
        return str(info.value)

    text = race(every_lane_writes_the_row, 64, (np.zeros(4, np.float32), np.ones(4 * 40, np.float32), 40))
    assert LANE0_ADVICE in text and "threadIdx.x == 0" not in text, text
    text = race(every_thread_writes_the_total, 64, (np.zeros(1, np.float32), np.ones(64, np.float32)))
    assert THREAD0_ADVICE in text and "lane == 0" not in text, text


def test_a_warp_per_row_puzzle_says_lane_0_on_every_seed():
    from mutants.pmpp.ch14_sparse.csr import vec_every_lane_writes

    for seed in SEEDS:
        err, text = diagnosed("ch14_spmv_csr_vector", vec_every_lane_writes, seed)
        assert isinstance(err, E.DataRace) and LANE0_ADVICE in str(err), text


# ------------------------------------------------------------ 18. nothing a kernel does escapes as itself


@cuda.jit
def exits(out, a):
    i = cuda.threadIdx.x
    if i < out.size:
        sys.exit()
        out[i] = a[i] + 10


@cuda.jit
def writes_forever(out, a):
    i = cuda.threadIdx.x
    k = 0
    while True:
        out[i % out.size] = k
        k += 1


def test_sys_exit_in_a_kernel_is_a_verdict_on_every_engine():
    line = exits.py_func.__code__.co_firstlineno + 4
    for engine in ENGINES:
        with pytest.raises(E.KernelException) as info:
            sim.launch(exits, 1, 4, (np.zeros(4, np.float32), np.ones(4, np.float32)), engine=engine)
        assert info.value.line == line, str(info.value)
        assert "stop the program" in str(info.value) or "exit the program" in str(info.value)
    for seed in (0, 1):
        with pytest.raises(PuzzleFailure):
            puzzles.check("map", exits, seed=seed, gpu=False)


def test_an_endless_loop_that_writes_ends_as_runaway_never_as_the_watchdog():
    for seed in SEEDS:
        err, text = diagnosed("map", writes_forever, seed)
        assert isinstance(err, E.Runaway), text
    # the wall-clock watchdog alone (a tiny timeout, a huge step budget): still a Runaway verdict
    for _ in range(20):
        with pytest.raises(E.Runaway):
            sim.launch(
                writes_forever,
                1,
                8,
                (np.zeros(8, np.float32), np.ones(8, np.float32)),
                engine="greenlet",
                timeout=0.02,
                max_steps=10**9,
            )
