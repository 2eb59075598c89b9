"""Simulator behaviour from issues 11 and 16: each wrong kernel diagnosed for its reason, on every
block order, and a correct twin accepted."""

import inspect
import sys
import time

import numba
import numpy as np
import pytest
from numba import cuda

from helpers import sim
from helpers.sim import errors as E
from helpers.sim import host

TPB = 64
ORDERS = [dict(block_order="forward"), dict(block_order="reverse")] + [
    dict(block_order="shuffle", seed=s) for s in range(3)
]


def line_of(fn, text):
    lines, start = inspect.getsourcelines(getattr(fn, "py_func", fn))
    for k, ln in enumerate(lines):
        if text in ln:
            return start + k
    raise AssertionError(f"{text!r} not in {fn}")


def diagnose(cls, kernel, grid, block, args, **kw):
    with pytest.raises(cls) as ei:
        sim.launch(kernel, grid, block, args, **kw)
    assert "SimArray" not in str(ei.value) and "Storage" not in str(ei.value), str(ei.value)
    return ei.value


def data(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


# --- a. dynamic shared memory is one buffer -----------------------------------------------------------


@cuda.jit
def two_dynamic(out, x, y):
    a = cuda.shared.array(0, numba.float32)
    b = cuda.shared.array(0, numba.float32)  # wrong: starts where `a` does
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    a[t] = x[i]
    b[t] = y[i]
    cuda.syncthreads()
    out[i] = a[t] + b[t]


@cuda.jit
def one_dynamic_split(out, x, y):
    dyn = cuda.shared.array(0, numba.float32)
    a = dyn[:TPB]
    b = dyn[TPB:]
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    a[t] = x[i]
    b[t] = y[i]
    cuda.syncthreads()
    out[i] = a[t] + b[t]


@cuda.jit
def dynamic_neighbour(out, x):
    a = cuda.shared.array(0, numba.float32)
    b = cuda.shared.array(0, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    a[t] = x[i]
    b[(t + 1) % TPB] = t  # the bytes of a[t + 1], which thread t + 1 writes: a race
    cuda.syncthreads()
    out[i] = a[t]


@cuda.jit
def dynamic_reinterpret(out, x):
    a = cuda.shared.array(0, numba.float32)
    b = cuda.shared.array(0, numba.int32)
    t = cuda.threadIdx.x
    a[t] = x[t]
    cuda.syncthreads()
    out[t] = b[t]


def test_dynamic_shared_declarations_alias():
    x, y = data(2 * TPB, 1), data(2 * TPB, 2)
    out = np.zeros(2 * TPB, np.float32)
    sim.launch(two_dynamic, 2, TPB, (out, x, y), shared_bytes=2 * TPB * 4)
    np.testing.assert_array_equal(out, 2 * y)  # b overwrote a, as on a GPU
    sim.launch(one_dynamic_split, 2, TPB, (out, x, y), shared_bytes=2 * TPB * 4)
    np.testing.assert_allclose(out, x + y)


def test_dynamic_shared_overlap_races_and_reinterprets():
    x = data(TPB)
    out = np.zeros(TPB, np.float32)
    for kw in ORDERS:
        err = diagnose(E.DataRace, dynamic_neighbour, 1, TPB, (out, x), shared_bytes=TPB * 4, **kw)
        # thread t + 1's own a[t + 1] store meets thread t's store through b: one bytes, two names
        assert err.line == line_of(dynamic_neighbour, "a[t] = x[i]") and err.array == "a", str(err)
        assert err.index == 1 and "thread (0, 0, 0)" in str(err)
    got = np.zeros(TPB, np.int32)
    sim.launch(dynamic_reinterpret, 1, TPB, (got, x), shared_bytes=TPB * 4)
    np.testing.assert_array_equal(got, x.view(np.int32))  # the same bytes, read as int32


# --- b. one verdict for a barrier some threads skip --------------------------------------------------


@cuda.jit
def early_return(out, a, size):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= size:
        return
    s[t] = a[i]
    cuda.syncthreads()
    out[i] = s[t] + s[(t + 1) % TPB]


@cuda.jit
def skip_then_touch(out, a, size):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < size:
        s[t] = a[i]
        cuda.syncthreads()
        out[i] = s[t]
    else:
        s[t] = s[0]  # races with thread 0's write, which waits at the barrier


@cuda.jit
def barrier_outside_if(out, a, size):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < size:
        s[t] = a[i]
    else:
        s[t] = 0.0
    cuda.syncthreads()
    if i < size:
        out[i] = s[t] + s[(t + 1) % TPB]


@cuda.jit
def two_barriers(out):
    t = cuda.threadIdx.x
    if t < 32:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    out[t] = t


def test_early_return_before_barrier_is_undefined_on_every_order():
    size = TPB + 10
    a, out = data(2 * TPB), np.zeros(2 * TPB, np.float32)
    for kw in ORDERS:
        err = diagnose(E.BarrierDivergence, early_return, 2, TPB, (out, a, size), **kw)
        msg = str(err)
        assert "undefined behaviour" in msg and "outside the `if`" in msg, msg
        assert err.line == line_of(early_return, "cuda.syncthreads()") and err.block == (1, 0, 0)
    out = np.full(2 * TPB, np.nan, np.float32)
    sim.launch(barrier_outside_if, 2, TPB, (out, a, size), roles={"out": "out", "a": "in"})
    s = np.where(np.arange(2 * TPB) < size, a, 0).reshape(2, TPB)
    want = (s + np.roll(s, -1, axis=1)).reshape(-1)[:size]
    np.testing.assert_allclose(out[:size], want)


def test_skipped_barrier_wins_over_the_race_it_causes():
    size = TPB + 10
    a, out = data(2 * TPB), np.zeros(2 * TPB, np.float32)
    for kw in ORDERS:
        err = diagnose(E.BarrierDivergence, skip_then_touch, 2, TPB, (out, a, size), **kw)
        msg = str(err)
        assert "touching memory" in msg and "undefined behaviour" not in msg, msg
        assert "DataRace" in msg  # the consequence is named, second
    sim.launch(skip_then_touch, 2, TPB, (out, a, 2 * TPB))  # no thread skips: fine


def test_different_barriers_deadlock():
    err = diagnose(E.BarrierDivergence, two_barriers, 1, TPB, (np.zeros(TPB, np.int32),))
    assert "different barriers" in str(err) and "deadlock" in str(err)


# --- c. a verdict in seconds: spin-waits nobody ends ---------------------------------------------------


@cuda.jit
def spin_on_flag(out, flag):
    i = cuda.grid(1)
    if i == 0:
        while flag[0] == 0:
            pass
    out[i] = 1


@cuda.jit
def spin_until_set(out, flag):
    i = cuda.grid(1)
    if i == 0:
        while cuda.atomic.add(flag, 0, 0) == 0:
            pass
    if i == 40:
        cuda.atomic.exch(flag, 0, 1)
    out[i] = 1


def test_spin_on_a_flag_nobody_sets_is_deadlock():
    out, flag = np.zeros(TPB, np.int32), np.zeros(1, np.int32)
    t0 = time.perf_counter()
    err = diagnose(E.Deadlock, spin_on_flag, 1, TPB, (out, flag))
    assert time.perf_counter() - t0 < 10
    assert err.thread == (0, 0, 0) and err.line == line_of(spin_on_flag, "while flag[0] == 0")
    assert err.array == "flag" and err.index == (0,) and "`flag`[0]" in str(err)
    sim.launch(spin_until_set, 1, TPB, (out, flag))  # another thread sets it: it ends
    assert flag[0] == 1 and (out == 1).all()


@cuda.jit
def all_spin_on_flag(out, flag):
    i = cuda.grid(1)
    while flag[0] == 0:
        pass
    out[i] = 1


def test_threads_spinning_as_one_already_seen_are_seen_within_a_few_hundred_steps():
    """The first spinner takes two looks (2 * SPIN_CHECK steps); each thread after it, touching just
    what it watches, an early look (spin.EARLY): 128 spinning threads cost ~170k steps, not ~5M."""
    from helpers.sim.greenlet import spin

    n = 128
    err = diagnose(E.Deadlock, all_spin_on_flag, 1, n, (np.zeros(n, np.int32), np.zeros(1, np.int32)))
    assert f"{n} threads spin so" in str(err), str(err)
    assert len(err.trace.acc) < 3 * spin.CHECK + n * 2 * spin.EARLY, len(err.trace.acc)


@cuda.jit
def poll_with_an_atomic(out, flag):
    i = cuda.grid(1)
    if i == 0:
        while cuda.atomic.add(flag, 0, 0) == 0:  # an atomic read: changes nothing
            pass
    out[i] = 1


@cuda.jit
def cas_with_a_stale_guess(out, bits):
    i = cuda.grid(1)
    if i < 4:
        guess = 0
        while guess < bits[i]:
            seen = cuda.atomic.cas(out, 0, guess, bits[i])
            if seen == guess:
                break  # (never takes the value it saw as the next guess)


@cuda.jit
def cas_that_learns(out, bits):
    i = cuda.grid(1)
    if i < 4:
        guess = 0
        while guess < bits[i]:
            seen = cuda.atomic.cas(out, 0, guess, bits[i])
            if seen == guess:
                break
            guess = seen


def test_polling_with_an_atomic_nobody_sets_is_deadlock():
    """Its own atomic reads are no writes: the spin is seen, not left to the clock."""
    out, flag = np.zeros(TPB, np.int32), np.zeros(1, np.int32)
    err = diagnose(E.Deadlock, poll_with_an_atomic, 1, TPB, (out, flag))
    assert err.line == line_of(poll_with_an_atomic, "while cuda.atomic.add(flag, 0, 0) == 0")
    assert "with an atomic that changes nothing" in str(err) and "ran for more than" not in str(err)


def test_a_cas_retried_with_a_stale_guess_is_a_runaway_named_as_such():
    bits = np.array([5, 7, 3, 9], np.int32)
    err = diagnose(E.Runaway, cas_with_a_stale_guess, 1, 32, (np.zeros(1, np.int32), bits))
    msg = str(err)
    assert "this loop never ends" in msg and "take the value cas returns" in msg, msg
    assert "ran for more than" not in msg  # found by the spin check, not by the clock
    assert err.array == "out" and err.line == line_of(cas_with_a_stale_guess, "seen = cuda.atomic.cas(")
    out = np.zeros(1, np.int32)
    sim.launch(cas_that_learns, 1, 32, (out, bits))  # the same loop taking what cas returns: it ends
    assert out[0] == 9


# --- d. valid Numba: a number into a one-element row ---------------------------------------------------


@cuda.jit
def row_store(out, a):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] * 2


@cuda.jit
def slice_store(out, a):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i]


def test_number_into_one_element_row():
    a = data(10)
    out = np.zeros((10, 1), np.float32)
    sim.launch(row_store, 1, 16, (out, a))
    np.testing.assert_allclose(out[:, 0], 2 * a)
    err = diagnose(E.Unsupported, slice_store, 1, 16, (np.zeros((10, 3), np.float32), data(10)))
    assert "slice" in str(err) and "one by one" in str(err)


# --- e. hostile code stays in the launch ---------------------------------------------------------------


@cuda.jit
def exits(out, how):
    i = cuda.grid(1)
    if i == 3:
        if how == 0:
            raise SystemExit
        elif how == 1:
            raise KeyboardInterrupt
        else:
            sys.exit(1)
    out[i] = 1


@cuda.jit
def huge_local(out):
    big = cuda.local.array(200_000, numba.float32)  # 800,000 bytes: over 512 KiB
    big[0] = 1
    out[0] = big[0]


@cuda.jit
def fits_local(out):
    small = cuda.local.array(1000, numba.float32)
    small[0] = 1
    out[0] = small[0]


WEIGHTS_LIST = [1.0, 2.0, 3.0]
WEIGHTS_DICT = {0: 1.0}
WEIGHTS_TUPLE = (1.0, 2.0, 3.0)
WEIGHTS_ARRAY = np.array([1.0, 2.0, 3.0])


class Box:
    v = 2.0


BOX = Box()


@cuda.jit
def uses_list(out):
    i = cuda.grid(1)
    out[i] = WEIGHTS_LIST[i % 3]


@cuda.jit
def uses_dict(out):
    i = cuda.grid(1)
    out[i] = WEIGHTS_DICT[0]


@cuda.jit
def uses_object(out):
    i = cuda.grid(1)
    out[i] = BOX.v


@cuda.jit
def uses_constants(out):
    i = cuda.grid(1)
    out[i] = WEIGHTS_TUPLE[i % 3] + WEIGHTS_ARRAY[i % 3]


def test_exits_become_diagnostics():
    for how in range(3):
        err = diagnose(E.KernelException, exits, 1, 8, (np.zeros(8), how))
        assert err.thread == (3, 0, 0) and "cannot stop the program" in str(err)


def test_local_memory_limit():
    err = diagnose(E.LaunchError, huge_local, 1, 1, (np.zeros(1, np.float32),))
    assert err.array == "big" and "512 KiB" in str(err) and "`big`" in str(err)
    out = np.zeros(1, np.float32)
    sim.launch(fits_local, 1, 1, (out,))
    assert out[0] == 1


@pytest.mark.parametrize(
    "kernel,name,kind",
    [
        (uses_list, "WEIGHTS_LIST", "list"),
        (uses_dict, "WEIGHTS_DICT", "dict"),
        (uses_object, "BOX", "object"),
    ],
)
def test_globals_numba_cannot_type(kernel, name, kind):
    err = diagnose(E.Unsupported, kernel, 1, 4, (np.zeros(4),))
    assert f"`{name}`" in str(err) and kind in str(err) and "Numba cannot type" in str(err)


def test_constant_globals_accepted():
    out = np.zeros(6)
    sim.launch(uses_constants, 1, 6, (out,))
    np.testing.assert_allclose(out, 2 * np.array(WEIGHTS_TUPLE * 2))


# --- f. no internal names in messages ------------------------------------------------------------------


@cuda.jit
def add_arrays(out, a, b):
    i = cuda.grid(1)
    out[i] = a + b


@cuda.jit
def scale_array(out, a):
    i = cuda.grid(1)
    out[i] = 2.0 * a


def test_whole_array_arithmetic_in_plain_words():
    a, b, out = data(4), data(4), np.zeros(4, np.float32)
    err = diagnose(E.Unsupported, add_arrays, 1, 4, (out, a, b))
    assert "adding two whole arrays" in str(err) and "a[i] + b[i]" in str(err)
    assert err.line == line_of(add_arrays, "out[i] = a + b")
    err = diagnose(E.Unsupported, scale_array, 1, 4, (out, a))
    assert "whole array" in str(err) and "a[i]" in str(err)


# --- g. match_any_sync / match_all_sync, host streams and events --------------------------------------


@cuda.jit
def match(any_out, all_out, pred_out, keys):
    i = cuda.grid(1)
    k = keys[i]
    any_out[i] = cuda.match_any_sync(0xFFFFFFFF, k)
    m, p = cuda.match_all_sync(0xFFFFFFFF, k)
    all_out[i] = m
    pred_out[i] = p


def test_match_any_and_all():
    keys = np.random.default_rng(3).integers(0, 4, 64).astype(np.int32)
    any_out, all_out, pred = (np.zeros(64, np.int64) for _ in range(3))
    sim.launch(match, 2, 32, (any_out, all_out, pred, keys))
    for w in range(2):
        kw = keys[32 * w : 32 * w + 32]
        for ln in range(32):
            want = sum(1 << j for j in range(32) if kw[j] == kw[ln])
            assert any_out[32 * w + ln] == np.uint32(want).view(np.int32)
    assert (all_out == 0).all() and (pred == 0).all()
    same = np.full(64, 5, np.int32)
    sim.launch(match, 2, 32, (any_out, all_out, pred, same))
    assert (all_out == -1).all() and (pred == 1).all()  # the full mask as a signed int32


@cuda.jit
def popcounts(out, keys):
    i = cuda.grid(1)
    m = cuda.match_any_sync(0xFFFFFFFF, keys[i])  # an int32: negative when lane 31 is in the group
    out[i, 0] = cuda.popc(m)
    out[i, 1] = cuda.popc(numba.int32(-1))
    out[i, 2] = cuda.popc(numba.uint32(0xFFFFFFFF))
    out[i, 3] = cuda.popc(numba.int64(-1))


def test_popc_counts_the_bits_of_the_value_s_own_width():
    keys = np.zeros(32, np.int32)
    keys[::2] = 1  # lanes 1, 3, ..., 31 share key 0: their mask has the sign bit set
    out = np.zeros((32, 4), np.int64)
    sim.launch(popcounts, 1, 32, (out, keys))
    assert (out[:, 0] == 16).all()  # not 48: the int32 mask is 32 bits wide, as on a GPU
    assert (out[:, 1:] == [32, 32, 64]).all()


def test_host_streams_and_events():
    s = host.stream()
    start, end = host.event(), host.event()
    start.record(s)
    d = host.to_device(np.arange(4.0), stream=s)
    pinned = host.pinned_array(4, np.float64)
    d.copy_to_host(pinned, stream=s)
    end.record(s)
    end.synchronize()
    s.synchronize()
    np.testing.assert_array_equal(pinned, np.arange(4.0))
    assert host.event_elapsed_time(start, end) >= 0
    with pytest.raises(RuntimeError):
        host.event_elapsed_time(host.event(), end)
    assert set(host.HOST_API) >= {"stream", "event", "event_elapsed_time", "pinned_array", "to_device"}


def test_poison_policy():
    assert np.isnan(sim.poison((3,), np.float32)).all()
    ints = sim.poison(np.zeros((2, 2), np.int32))
    assert ints.shape == (2, 2) and (ints == np.iinfo(np.int32).max // 3 + 7).all()
    assert (host.device_array(3, np.int64).copy_to_host() == np.iinfo(np.int64).max // 3 + 7).all()


# --- g. cooperative groups: a grid-wide barrier -------------------------------------------------------


@cuda.jit
def reverse_via_grid(out, tmp, x):
    i = cuda.grid(1)
    n = x.shape[0]
    tmp[i] = 2 * x[i]
    cuda.cg.this_grid().sync()
    out[i] = tmp[n - 1 - i]  # written by another block: ordered by the grid barrier


@cuda.jit
def reverse_no_grid_sync(out, tmp, x):
    i = cuda.grid(1)
    n = x.shape[0]
    tmp[i] = 2 * x[i]
    cuda.syncthreads()  # orders one block only
    out[i] = tmp[n - 1 - i]


@cuda.jit
def grid_sync_in_if(out, tmp, x):
    i = cuda.grid(1)
    tmp[i] = x[i]
    if i < x.shape[0] - 5:
        cuda.cg.this_grid().sync()
    out[i] = tmp[i]


def test_grid_sync_orders_blocks():
    n = 4 * TPB
    x = data(n)
    for kw in ORDERS:
        out, tmp = np.zeros(n, np.float32), np.zeros(n, np.float32)
        sim.launch(reverse_via_grid, 4, TPB, (out, tmp, x), **kw)
        np.testing.assert_allclose(out, 2 * x[::-1])
        err = diagnose(E.DataRace, reverse_no_grid_sync, 4, TPB, (out, tmp, x), **kw)
        assert err.array == "tmp" and "another block" in str(err)


def test_grid_sync_needs_every_thread_and_a_resident_grid():
    n = 2 * TPB
    x, out, tmp = data(n), np.zeros(n, np.float32), np.zeros(n, np.float32)
    err = diagnose(E.BarrierDivergence, grid_sync_in_if, 2, TPB, (out, tmp, x))
    assert "this_grid().sync()" in str(err) and "hangs" in str(err)
    # a T4 holds 40 SMs x min(16, 1024 // 1024) = 40 blocks of 1024 threads
    big = 41 * 1024
    err = diagnose(
        E.LaunchError,
        reverse_via_grid,
        41,
        1024,
        (np.zeros(big, np.float32), np.zeros(big, np.float32), np.zeros(big, np.float32)),
        trace=False,
        races=False,
    )
    assert "40 such blocks" in str(err) and "resident" in str(err)
    from helpers.sim.occupancy import max_resident_blocks

    assert max_resident_blocks(256, 0) == 160 and max_resident_blocks(256, 48 * 1024) == 40


@cuda.jit
def call_array(out, a):
    i = cuda.grid(1)
    out[i] = a(i)


@cuda.jit
def slow_loop(out, n):
    i = cuda.grid(1)
    x = 0
    for k in range(n):
        x += k
    out[i] = x


def test_python_errors_name_no_internal_class():
    err = diagnose(E.KernelException, call_array, 1, 2, (np.zeros(2), np.zeros(2)))
    assert "device array" in str(err) and "not callable" in str(err)


def test_deadline_bounds_a_whole_check():
    t0 = time.perf_counter()
    deadline = time.monotonic() + 0.5
    with pytest.raises(E.Runaway):
        for _ in range(10):  # each launch alone is within its own 10 s limit
            sim.launch(slow_loop, 1, 1, (np.zeros(1), 10**9), deadline=deadline)
    assert time.perf_counter() - t0 < 3
    assert sim.config.timeout <= 10
