"""The lockstep engine against the greenlet engine (the reference): every feature gives the same
outputs, trace rows (as a multiset, `site` and `occ` included), sites, arrays and step count; every
diagnostic is detected in "lockstep" mode, and "auto" falls back to the reference on it."""

import math

import numba
import numpy as np
import pytest
from numba import cuda

from helpers import sim
from helpers.sim import errors as E
from tools import sim_speed as speed

TPB = 64


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _rows(trace):
    return np.sort(trace.acc, order=list(trace.acc.dtype.names))


def same(kernel, grid, block, args, **kw):
    """Run on both engines from the same inputs; lockstep must run it and agree in everything."""
    ref_args, ls_args = _copies(args), _copies(args)
    ref = sim.launch(kernel, grid, block, ref_args, engine="greenlet", **kw)
    got = sim.launch(kernel, grid, block, ls_args, engine="lockstep", **kw)
    assert got.engine == "lockstep" and got.fallback is None
    for r, g in zip(ref_args, ls_args):
        if isinstance(r, np.ndarray):
            np.testing.assert_array_equal(g, r)
            assert g.dtype == r.dtype
    assert got.steps == ref.steps
    assert got.shared_bytes == ref.shared_bytes
    if kw.get("trace", True):
        assert len(got.trace.acc) == len(ref.trace.acc)
        np.testing.assert_array_equal(_rows(got.trace), _rows(ref.trace))
        assert got.trace.sites == ref.trace.sites
        assert got.trace.arrays == ref.trace.arrays
    return ls_args


def lockstep_error(cls, kernel, grid, block, args, **kw):
    """`cls` raised in "lockstep" mode; "auto" gives the greenlet engine's verdict (class and message)."""
    with pytest.raises(cls) as got:
        sim.launch(kernel, grid, block, _copies(args), engine="lockstep", **kw)
    with pytest.raises(cls) as ref:
        sim.launch(kernel, grid, block, _copies(args), engine="greenlet", **kw)
    with pytest.raises(cls) as auto:
        sim.launch(kernel, grid, block, _copies(args), engine="auto", **kw)
    assert str(auto.value) == str(ref.value)
    return got.value


rng = np.random.default_rng(7)


def test_speed_kernels_agree():
    for name, (k, g, b, args, ok) in speed.cases().items():
        out = same(k, g, b, args)
        assert ok(out), name


@cuda.jit
def divergent(out, a, n):
    i = cuda.grid(1)
    if i >= n:
        return
    x = a[i] if a[i] > 0 else 0  # a float32 in some threads, a Python int in others
    if i % 3 == 0:
        y = x * 0.5
    elif i % 3 == 1:
        y = x + 1
    else:
        y = -x
    out[i] = y if not (0 <= i < 4) else numba.float32(7)


def test_divergent_branches_ternaries_and_mixed_types():
    n = 150
    a = rng.standard_normal(n).astype(np.float32)
    same(divergent, 3, TPB, [np.zeros(n, np.float32), a, n])


@cuda.jit
def loops(out, counts, n):
    i = cuda.grid(1)
    if i < n:
        total = 0
        k = 0
        while True:
            k += 1
            if k % 4 == 0:
                continue
            if k > counts[i]:
                break
            total += k
        for j in range(i, n, cuda.gridsize(1)):  # per-thread bounds
            total += j
        out[i] = last = total
        counts[i] = out[i] = last + 1


def test_loops_with_data_dependent_trips_break_continue():
    n = 100
    counts = rng.integers(0, 20, n).astype(np.int32)
    same(loops, 2, TPB, [np.zeros(n, np.int64), counts, n])


@cuda.jit(device=True)
def clamp_index(i, n):
    if i < 0:
        return 0
    if i >= n:
        return n - 1
    return i


def helper_square(x):
    return x * x


@cuda.jit
def stencil(out, a, n):
    i = cuda.grid(1)
    if i < n and a[i] == a[i]:  # the right side only where i < n
        left = a[clamp_index(i - 1, n)]
        right = a[clamp_index(i + 1, n)]
        out[i] = helper_square(left) + right


def test_device_functions_under_the_callers_mask():
    n = 70
    a = rng.standard_normal(n).astype(np.float32)
    same(stencil, 2, TPB, [np.zeros(n, np.float32), a, n])


@cuda.jit
def local_sort(out, a, n):
    i = cuda.grid(1)
    buf = cuda.local.array(4, numba.float32)
    if 4 * i + 3 < n:
        for k in range(4):
            buf[k] = a[4 * i + k]
        for p in range(4):
            for q in range(3 - p):
                if buf[q] > buf[q + 1]:
                    t = buf[q]
                    buf[q] = buf[q + 1]
                    buf[q + 1] = t
        for k in range(4):
            out[4 * i + k] = buf[k]


def test_local_arrays_per_lane():
    n = 4 * 40
    a = rng.standard_normal(n).astype(np.float32)
    out = same(local_sort, 1, 64, [np.zeros(n, np.float32), a, n])
    np.testing.assert_array_equal(out[0], np.sort(a.reshape(-1, 4), axis=1).reshape(-1))


@cuda.jit
def maths(out, a, n):
    i = cuda.grid(1)
    if i < n:
        x = a[i]
        out[i, 0] = math.exp(x) + math.sqrt(abs(x))
        out[i, 1] = numba.float32(x) * numba.float32(1.5) + min(x, 0.25)
        out[i, 2] = max(int(x * 10), -3) // 2 + math.floor(x)


@cuda.jit
def powers(out, a, n):
    i = cuda.grid(1)
    if i < n:
        x = a[i] * numba.float32(1.5) - numba.float32(0.3)
        out[i, 0] = x**2  # NumPy's scalar power (powf), not its array square
        out[i, 1] = abs(x) ** numba.float32(2.5) + np.sqrt(abs(x)) + 2.0 ** (i % 5)


def test_float32_powers_bit_for_bit():
    n = 4096
    a = (rng.standard_normal(n) * 10).astype(np.float32)
    same(powers, n // TPB, TPB, [np.zeros((n, 2), np.float32), a, n])


def test_math_casts_builtins_values_and_dtypes():
    n = 90
    a = (rng.standard_normal(n) * 3).astype(np.float32)
    same(maths, 2, TPB, [np.zeros((n, 3), np.float64), a, n])


@cuda.jit
def transpose_tiles(out, a, rows, cols):
    tile = cuda.shared.array((16, 17), numba.float32)
    x, y = cuda.grid(2)
    if y < rows and x < cols:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    tx = cuda.blockIdx.y * 16 + cuda.threadIdx.x
    ty = cuda.blockIdx.x * 16 + cuda.threadIdx.y
    if ty < cols and tx < rows:
        out[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


def test_two_dimensional_blocks_and_shared_tiles():
    rows, cols = 37, 20
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    same(transpose_tiles, (2, 3), (16, 16), [np.zeros((cols, rows), np.float32), a, rows, cols])


@cuda.jit
def histogram(hist, data, n):
    i = cuda.grid(1)
    while i < n:
        cuda.atomic.add(hist, data[i], 1)
        i += cuda.gridsize(1)


@cuda.jit
def take_a_ticket(tickets, counter, n):
    i = cuda.grid(1)
    if i < n:
        tickets[i] = cuda.atomic.add(counter, 0, 1)


@cuda.jit
def float_sums(out, a, n):
    i = cuda.grid(1)
    for k in range(3):  # several atomic instructions per element and interval: thread-major order
        if i < n:
            cuda.atomic.add(out, k % 2, a[i] * (k + 1))
    cuda.syncthreads()
    if i == 0:
        out[2] = out[0] + out[1]


def test_atomics_in_the_greenlet_engines_order():
    a = rng.standard_normal(150).astype(np.float32)
    same(float_sums, 3, TPB, [np.zeros(3, np.float32), a, 150], cross_block_races=False)
    data = rng.integers(0, 8, 500).astype(np.int64)
    same(histogram, 2, TPB, [np.zeros(8, np.int32), data, 500])
    for order in ("forward", "reverse", "shuffle"):
        same(take_a_ticket, 3, TPB, [np.zeros(150, np.int32), np.zeros(1, np.int32), 150], block_order=order)


@cuda.jit
def warp_ops(out, a, n):
    i = cuda.grid(1)
    v = a[i] if i < n else numba.float32(0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    total = cuda.shfl_sync(0xFFFFFFFF, v, 0)
    ball = cuda.ballot_sync(0xFFFFFFFF, a[i % n] > 0)
    up = cuda.shfl_up_sync(0xFFFFFFFF, i, 1)
    votes = cuda.any_sync(0xFFFFFFFF, i == 3) + cuda.all_sync(0xFFFFFFFF, i >= 0)
    if i < n:
        out[i, 0] = total
        out[i, 1] = ball
        out[i, 2] = up + votes


@cuda.jit
def syncwarp_exchange(out):
    s = cuda.shared.array(64, numba.int32)
    t = cuda.threadIdx.x
    s[t] = t * 3
    cuda.syncwarp()
    out[t] = s[t ^ 1] + cuda.syncthreads_count(t % 3 == 0)


def test_warp_operations_and_syncwarp():
    n = 200
    a = rng.standard_normal(n).astype(np.float32)
    same(warp_ops, 4, TPB, [np.zeros((n, 3), np.float64), a, n])
    same(syncwarp_exchange, 1, 64, [np.zeros(64, np.int64)])


@cuda.jit
def more_warp_ops(out, a):
    t = cuda.threadIdx.x
    v = a[t] % 4
    same_as_me = cuda.match_any_sync(0xFFFFFFFF, v)
    allm, all_same = cuda.match_all_sync(0xFFFFFFFF, v // 8)
    eq = cuda.eq_sync(0xFFFFFFFF, v // 8)
    if t % 2 == 0:
        active = cuda.activemask() % 1000
    else:
        active = cuda.activemask() % 999 + 1
    bits = cuda.popc(same_as_me) + cuda.ffs(active) + cuda.brev(t) % 7
    n = cuda.syncthreads_and(v >= 0) + cuda.syncthreads_or(v == 3)
    out[t] = same_as_me + allm + all_same + eq + active + bits + n + (not v)


@cuda.jit
def nested_control(out, a, n):
    i = cuda.grid(1)
    if i >= n:
        return
    found = -1
    for r in range(4):
        for c in (1, 2, 3):
            if a[(i + r * c) % n] > 1.0:
                found = r * 10 + c
                break
            if c == 2 and r % 2:
                continue
        if found >= 0:
            break
    out[i] = found if 0 < found < 30 else -found


def test_more_warp_operations_and_nested_control_flow():
    a = rng.integers(0, 9, 64).astype(np.int32)
    same(more_warp_ops, 1, 64, [np.zeros(64, np.int64), a])
    x = (rng.standard_normal(90) * 1.5).astype(np.float32)
    same(nested_control, 2, TPB, [np.zeros(90, np.int64), x, 90])


@cuda.jit
def overwrites(out):
    t = cuda.threadIdx.x
    out[t // 2] = t  # two threads write each element
    if t % 2 == 0:
        out[t // 2] = -t  # the even thread again: the reference's thread order decides the value


def test_races_off_keeps_the_reference_thread_order():
    out = np.zeros(32, np.int64)
    r = sim.launch(overwrites, 1, 64, [out], races=False)
    assert r.engine == "greenlet" and "order matters" in r.fallback
    ref = np.zeros(32, np.int64)
    sim.launch(overwrites, 1, 64, [ref], races=False, engine="greenlet")
    np.testing.assert_array_equal(out, ref)


def test_untraced_and_raceless_launches():
    for kw in ({"trace": False}, {"races": False}, {"block_order": "reverse"}):
        same(
            speed.scan,
            2,
            speed.SCAN_TPB,
            [np.zeros(512, np.float32), rng.standard_normal(512).astype(np.float32), 512],
            **kw,
        )


# --- diagnostics
@cuda.jit
def past_end(out, a, n):
    i = cuda.grid(1)
    out[i] = a[i + 1]


@cuda.jit
def negative(out, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i - 1]


@cuda.jit
def no_barrier(out, a):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    out[t] = s[t - 1] if t > 0 else s[t]


@cuda.jit
def half_tile(out, a):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    if t < TPB // 2:
        s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[t]


@cuda.jit
def barrier_in_if(out, a):
    t = cuda.threadIdx.x
    if t < 16:
        cuda.syncthreads()
    out[t] = a[t]


@cuda.jit
def same_element_every_block(out, a):
    t = cuda.threadIdx.x
    out[t] = a[t]


@cuda.jit
def writes_input(out, a):
    t = cuda.threadIdx.x
    a[t] = 0
    out[t] = 1


@cuda.jit
def divides_by_zero(out, a):
    t = cuda.threadIdx.x
    out[t] = 10 // (t - 3)


@cuda.jit
def int32_plus_big(out, a):
    t = cuda.threadIdx.x
    out[t] = a[t] + 0xAAAAAAAA  # NEP 50: a Python int that does not fit int32 is an error


@cuda.jit
def shuffle_after_exit(out, a):
    t = cuda.threadIdx.x
    if t >= 20:
        return
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, a[t], 1)


@cuda.jit
def spins(out, flag):
    t = cuda.threadIdx.x
    while flag[0] == 0:
        pass
    out[t] = 1


@cuda.jit
def big_hash(out, a):
    t = cuda.threadIdx.x
    h = t + 1
    for k in range(6):
        h = h * 1000003 + k  # a Python int: past 64 bits in the greenlet engine, never wrapped
    out[t] = h % 1000


def test_python_ints_past_64_bits_are_handed_over():
    out = np.zeros(32, np.int64)
    r = sim.launch(big_hash, 1, 32, [out, out.copy()])
    assert r.engine == "greenlet" and "64 bits" in r.fallback
    assert (
        out[5]
        == ((((((6 * 1000003 + 0) * 1000003 + 1) * 1000003 + 2) * 1000003 + 3) * 1000003 + 4) * 1000003 + 5)
        % 1000
    )


def test_diagnostics_in_lockstep_mode():
    a = rng.standard_normal(TPB).astype(np.float32)
    out = np.zeros(TPB, np.float32)
    err = lockstep_error(E.OutOfBounds, past_end, 1, TPB, [out, a, TPB])
    assert (
        err.array == "a"
        and err.index == (TPB,)
        and err.thread == (TPB - 1, 0, 0)
        and "past the end" in str(err)
    )
    err = lockstep_error(E.OutOfBounds, negative, 1, TPB, [out, a, TPB])
    assert err.index == (-1,) and err.thread == (0, 0, 0) and "negative" in str(err)
    err = lockstep_error(E.DataRace, no_barrier, 1, TPB, [out, a])
    assert err.array == "s" and "out[t] = s[t - 1] if t > 0 else s[t]" in err.source
    err = lockstep_error(E.UninitializedRead, half_tile, 1, TPB, [out, a])
    assert err.array == "s" and err.index == TPB // 2 and err.thread == (TPB // 2, 0, 0)
    err = lockstep_error(E.BarrierDivergence, barrier_in_if, 1, TPB, [out, a])
    assert err.source == "cuda.syncthreads()"
    err = lockstep_error(E.DataRace, same_element_every_block, 2, TPB, [out, a])
    assert err.array == "out" and "another block" in str(err)
    err = lockstep_error(E.ReadOnlyWrite, writes_input, 1, TPB, [out, a], roles={"a": "in"})
    assert err.array == "a" and err.source == "a[t] = 0"
    lockstep_error(E.KernelException, divides_by_zero, 1, TPB, [np.zeros(TPB, np.int64), a])
    ints = rng.integers(-5, 5, TPB).astype(np.int32)
    lockstep_error(E.KernelException, int32_plus_big, 1, TPB, [np.zeros(TPB, np.int64), ints])
    err = lockstep_error(E.WarpDivergence, shuffle_after_exit, 1, 32, [out, a])
    assert err.thread == (0, 0, 0)
    lockstep_error(E.OutOfBounds, past_end, 1, TPB, [out, a, TPB], trace=False)


def test_auto_falls_back_with_the_reason_and_restored_inputs():
    a = rng.standard_normal(TPB).astype(np.float32)
    out = np.zeros(TPB, np.float32)
    flag = np.zeros(1, np.int32)
    # a spin-wait nobody ends: the lockstep loop cap hands it over; the reference names the deadlock
    with pytest.raises(E.Deadlock):
        sim.launch(spins, 1, 32, [out, flag])
    # iterating over an array is not run in lockstep: auto says why and answers as the reference
    args = [np.zeros(1, np.float32), a]
    r = sim.launch(iterates, 1, 1, args)
    assert r.engine == "greenlet" and r.fallback.startswith("unsupported:") and "for loop" in r.fallback
    want = np.float32(0)
    for v in a:
        want += v  # float32 additions in the reference's order
    assert args[0][0] == want
    # a diagnostic found in lockstep: the outputs lockstep had written are restored before the re-run
    out = np.full(TPB, 5, np.float32)
    with pytest.raises(E.OutOfBounds) as ei:
        sim.launch(past_end, 1, TPB, [out, a, TPB])
    assert "lockstep" not in str(ei.value)
    np.testing.assert_array_equal(out[: TPB - 1], a[1:])  # the reference wrote these, then stopped


@cuda.jit
def speed_dynamic(out, a):
    s = cuda.shared.array(0, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[TPB - 1 - t]


@cuda.jit
def iterates(out, a):
    acc = numba.float32(0)
    for v in a:
        acc += v
    out[0] = acc


@cuda.jit
def dynamic_alias(out, a):
    f = cuda.shared.array(0, numba.float32)
    g = cuda.shared.array(0, numba.int32)  # the same bytes, another view
    t = cuda.threadIdx.x
    f[t] = a[t]
    cuda.syncthreads()
    out[t] = g[TPB - 1 - t] + 1


def test_dynamic_shared_memory_aliases_one_buffer():
    a = rng.standard_normal(TPB).astype(np.float32)
    out = same(dynamic_alias, 1, TPB, [np.zeros(TPB, np.int64), a], shared_bytes=4 * TPB)
    np.testing.assert_array_equal(out[0], a[::-1].view(np.int32) + 1)
    same(speed_dynamic, 1, TPB, [np.zeros(TPB, np.float32), a], shared_bytes=4 * TPB + 8)


def test_engine_option_and_config():
    a = rng.standard_normal(TPB).astype(np.float32)
    for engine in ("greenlet", "lockstep", "auto"):
        r = sim.launch(same_element_every_block, 1, TPB, [np.zeros(TPB, np.float32), a], engine=engine)
        assert r.engine == ("greenlet" if engine == "greenlet" else "lockstep")
    with pytest.raises(ValueError):
        sim.launch(same_element_every_block, 1, TPB, [np.zeros(TPB, np.float32), a], engine="fast")
    old = sim.config.engine
    try:
        sim.config.engine = "greenlet"
        assert (
            sim.launch(same_element_every_block, 1, TPB, [np.zeros(TPB, np.float32), a]).engine == "greenlet"
        )
    finally:
        sim.config.engine = old
    with pytest.raises(E.Unsupported, match="for loop"):
        sim.launch(iterates, 1, 1, [np.zeros(1, np.float32), a], engine="lockstep")
