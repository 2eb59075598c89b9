"""helpers.sim: every kernel-API function, every diagnostic (a kernel that triggers it and a correct
near-twin that does not), determinism, block order, the trace, and the engine patching."""

import inspect
import math

import numba
import numpy as np
import pytest
from numba import cuda
from numba.cuda import shfl_down_sync, syncthreads

import helpers
from helpers import engine, sim
from helpers.sim import errors as E
from helpers.sim.trace import ATOMIC, READ, WRITE

TPB = 32
BIG = 13000  # float32s: 52000 bytes, over the 48 KiB static shared limit
FITS = 12288  # float32s: exactly 48 KiB
LUT = np.array([3.0, -1.5, 0.25, 8.0], np.float32)
OFFSET = 7


def rng():
    return np.random.default_rng(1234)


def f32(*shape):
    return rng().standard_normal(shape).astype(np.float32)


def line_of(fn, text):
    """Absolute line number of the (first) source line of `fn` containing `text`."""
    lines, start = inspect.getsourcelines(getattr(fn, "py_func", fn))
    for k, ln in enumerate(lines):
        if text in ln:
            return start + k
    raise AssertionError(f"{text!r} not in {fn}")


def diagnose(cls, kernel, grid, block, args, **kw):
    with pytest.raises(cls) as ei:
        sim.launch(kernel, grid, block, args, **kw)
    return ei.value


def assert_names(err, *, block, thread, line, array=None, index=None):
    """The exception and its message name block, thread, line (and array, index)."""
    msg = str(err)
    assert err.block == block and f"block {block}" in msg, msg
    assert err.thread == thread and f"thread {thread}" in msg, msg
    assert err.line == line and f"line {line}" in msg, msg
    if array is not None:
        assert err.array == array and f"`{array}`" in msg, msg
    if index is not None:
        assert err.index == index, (err.index, index)
        shown = ", ".join(map(str, index)) if isinstance(index, tuple) else str(index)
        assert f"[{shown}]" in msg, msg


# --- indices -----------------------------------------------------------------


@cuda.jit
def indices(out):
    t, b, bd, gd = cuda.threadIdx, cuda.blockIdx, cuda.blockDim, cuda.gridDim
    x, y, z = cuda.grid(3)
    vals = (t.x, t.y, t.z, b.x, b.y, b.z, bd.x, bd.y, bd.z, gd.x, gd.y, gd.z)
    for k in range(12):
        out[z, y, x, k] = vals[k]


def test_thread_block_indices_3d():
    grid, block = (2, 3, 2), (4, 2, 3)
    out = np.full((6, 6, 8, 12), -1, np.int64)
    sim.launch(indices, grid, block, (out,))
    z, y, x = np.meshgrid(np.arange(6), np.arange(6), np.arange(8), indexing="ij")
    consts = [np.full_like(x, v) for v in block + grid]
    want = np.stack([x % 4, y % 2, z % 3, x // 4, y // 2, z // 3] + consts, axis=-1)
    np.testing.assert_array_equal(out, want)


@cuda.jit
def grids(o1, o2, o3, size):
    i = cuda.grid(1)
    x, y = cuda.grid(2)
    p, q, r = cuda.grid(3)
    o1[i] = i
    o2[y, x, 0] = x
    o2[y, x, 1] = y
    o3[r, q, p] = p + 10 * q + 100 * r
    if i == 0 and y == 0 and r == 0:
        sx, sy, sz = cuda.gridsize(3)
        sx2, sy2 = cuda.gridsize(2)
        size[0], size[1], size[2] = sx, sy, sz
        size[3], size[4], size[5] = cuda.gridsize(1), sx2, sy2


def test_grid_and_gridsize():
    o1, o2, o3 = np.zeros(6, np.int64), np.zeros((4, 6, 2), np.int64), np.zeros((2, 4, 6), np.int64)
    size = np.zeros(6, np.int64)
    sim.launch(grids, (3, 2, 2), (2, 2, 1), (o1, o2, o3, size), races=False)
    np.testing.assert_array_equal(o1, np.arange(6))
    np.testing.assert_array_equal(o2[..., 0], np.tile(np.arange(6), (4, 1)))
    np.testing.assert_array_equal(o2[..., 1], np.tile(np.arange(4)[:, None], (1, 6)))
    r, q, p = np.meshgrid(range(2), range(4), range(6), indexing="ij")
    np.testing.assert_array_equal(o3, p + 10 * q + 100 * r)
    np.testing.assert_array_equal(size, [6, 4, 2, 6, 6, 4])


@cuda.jit
def lanes(out):
    i = cuda.grid(1)
    out[i, 0] = cuda.laneid
    out[i, 1] = cuda.warpsize


def test_laneid_warpsize():
    out = np.zeros((140, 2), np.int64)
    sim.launch(lanes, 2, 70, (out,))
    t = np.arange(140) % 70
    np.testing.assert_array_equal(out[:, 0], t % 32)
    assert (out[:, 1] == 32).all()


# --- shared, local, const ------------------------------------------------------


@cuda.jit
def reverse_block(out, a):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i]
    cuda.syncthreads()
    out[i] = s[TPB - 1 - t]


def test_static_shared_array():
    a, out = f32(64), np.zeros(64, np.float32)
    r = sim.launch(reverse_block, 2, TPB, (out, a))
    np.testing.assert_array_equal(out, a.reshape(2, TPB)[:, ::-1].reshape(-1))
    info = r.trace.array("s")
    assert info.space == "shared" and info.shape == (TPB,) and info.dtype == np.float32
    assert r.shared_bytes == TPB * 4


@cuda.jit
def dyn_shared(out, a):
    s = cuda.shared.array(0, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[(t + 1) % cuda.blockDim.x]
    if t == 0:
        out[cuda.blockDim.x] = s.shape[0]


def test_dynamic_shared_array():
    a, out = f32(16), np.zeros(17, np.float32)
    r = sim.launch(dyn_shared, 1, 16, (out, a), shared_bytes=40 * 4)
    np.testing.assert_array_equal(out[:16], np.roll(a, -1))
    assert out[16] == 40 and r.shared_bytes == 160
    err = diagnose(E.LaunchError, dyn_shared, 1, 16, (out, a))
    assert "4th launch parameter" in str(err)


@cuda.jit
def precision(out, a):
    s = cuda.shared.array(2, numba.float32)
    w = cuda.local.array(1, numba.float32)
    s[0] = a[0]
    w[0] = a[0]
    x = s[0] + numba.float32(1)  # 2**24 + 1 is not a float32: stays 2**24 in float32 arithmetic
    y = w[0] + numba.float32(1)
    out[0] = x - 16777216.0
    out[1] = y - 16777216.0
    s[1] = numba.float32(0.1)
    out[2] = s[1]


def test_float32_arithmetic_stays_float32():
    out = np.zeros(3, np.float64)
    sim.launch(precision, 1, 1, (out, np.array([2.0**24], np.float32)))
    assert out[0] == 0.0 and out[1] == 0.0  # in float64 they would be 1.0
    assert out[2] == float(np.float32(0.1)) != 0.1


@cuda.jit
def local_private(out, a):
    i = cuda.grid(1)
    w = cuda.local.array(3, numba.int32)
    v = cuda.local.array((2, 2), numba.float64, alignment=16)
    for k in range(3):
        w[k] = a[i] * (k + 1)
    v[1, 1] = 0.5
    out[i] = w[0] + w[1] + w[2] + v[1, 1]


def test_local_array_per_thread():
    a, out = np.arange(40, dtype=np.int32), np.zeros(40)
    r = sim.launch(local_private, 2, 20, (out, a))
    np.testing.assert_array_equal(out, 6 * a + 0.5)
    assert r.trace.array("w").space == "local" and r.trace.array("w").dtype == np.int32
    assert r.trace.array("v").shape == (2, 2)


@cuda.jit
def const_read(out):
    c = cuda.const.array_like(LUT)
    i = cuda.grid(1)
    out[i] = c[i % 4] + OFFSET


@cuda.jit
def const_write(out):
    c = cuda.const.array_like(LUT)
    c[0] = 1.0
    out[0] = c[0]


def test_const_array_and_module_constants():
    out = np.zeros(8, np.float32)
    r = sim.launch(const_read, 1, 8, (out,))
    np.testing.assert_array_equal(out, np.tile(LUT, 2) + OFFSET)
    assert r.trace.array("c").space == "const"
    err = diagnose(E.ReadOnlyWrite, const_write, 1, 1, (out,))
    assert_names(err, block=(0, 0, 0), thread=(0, 0, 0), line=line_of(const_write, "c[0] = 1.0"), array="c")
    assert LUT[0] == 3.0


# --- barriers ---------------------------------------------------------------------


@cuda.jit
def block_votes(out, a):
    t = cuda.threadIdx.x
    p = a[cuda.grid(1)] > 0
    c = cuda.syncthreads_count(p)
    y = cuda.syncthreads_and(p)
    z = cuda.syncthreads_or(p)
    if t == 0:
        b = cuda.blockIdx.x
        out[b, 0], out[b, 1], out[b, 2] = c, y, z


def test_syncthreads_count_and_or():
    a = np.r_[np.ones(40), -np.ones(40), f32(40)].astype(np.float32)
    out = np.zeros((3, 3), np.int64)
    sim.launch(block_votes, 3, 40, (out, a))
    p = (a > 0).reshape(3, 40)
    np.testing.assert_array_equal(out, np.stack([p.sum(1), p.all(1), p.any(1)], axis=1))
    assert out[0, 1] == 1 and out[1, 2] == 0


@cuda.jit
def warp_neighbour(out, a, sync):
    s = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    if sync:
        cuda.syncwarp()
    if t % 32 > 0:
        out[t] = s[t - 1]  # read a neighbour's write


def test_syncwarp_orders_a_warp():
    a, out = f32(64), np.zeros(64, np.float32)
    sim.launch(warp_neighbour, 1, 64, (out, a, True))
    np.testing.assert_array_equal(out[1:32], a[:31])
    err = diagnose(E.DataRace, warp_neighbour, 1, 64, (out, a, False))
    assert "syncwarp" in str(err) and err.array == "s"
    assert_names(
        err,
        block=(0, 0, 0),
        thread=(1, 0, 0),
        line=line_of(warp_neighbour, "out[t] = s[t - 1]"),
        array="s",
        index=0,
    )


@cuda.jit
def fences(out):
    i = cuda.grid(1)
    out[i] = i
    cuda.threadfence()
    cuda.threadfence_block()
    cuda.threadfence_system()


def test_threadfences():
    out = np.zeros(8, np.int64)
    sim.launch(fences, 2, 4, (out,))
    np.testing.assert_array_equal(out, np.arange(8))


# --- atomics ------------------------------------------------------------------------


@cuda.jit
def every_atomic(old, v, f):
    old[0] = cuda.atomic.add(v, 0, 5)
    old[1] = cuda.atomic.sub(v, 1, 3)
    old[2] = cuda.atomic.max(v, 2, 50)
    old[3] = cuda.atomic.min(v, 3, -50)
    old[4] = cuda.atomic.exch(v, 4, 77)
    old[5] = cuda.atomic.cas(v, 5, 10, 99)  # matches: swaps
    old[6] = cuda.atomic.cas(v, 6, 10, 99)  # does not match: keeps
    old[7] = cuda.atomic.inc(v, 7, 10)  # 10 >= 10: wraps to 0
    old[8] = cuda.atomic.inc(v, 8, 10)
    old[9] = cuda.atomic.dec(v, 9, 10)  # 0: wraps to 10
    old[10] = cuda.atomic.dec(v, 10, 10)
    old[11] = cuda.atomic.and_(v, 11, 0b1100)
    old[12] = cuda.atomic.or_(v, 12, 0b1100)
    old[13] = cuda.atomic.xor(v, 13, 0b1100)
    g = cuda.atomic.add(f, (1, 0), numba.float32(0.5))
    old[14] = g * 2


def test_every_atomic_and_its_return_value():
    v = np.array([1, 10, 20, 30, 40, 10, 11, 10, 4, 0, 6, 0b1010, 0b1010, 0b1010], np.int32)
    before = v.copy()
    f = np.full((2, 2), 1.5, np.float32)
    old = np.zeros(15, np.int64)
    sim.launch(every_atomic, 1, 1, (old, v, f))
    np.testing.assert_array_equal(old[:14], before)
    np.testing.assert_array_equal(v, [6, 7, 50, -50, 77, 99, 11, 0, 5, 10, 5, 0b1000, 0b1110, 0b0110])
    assert f[1, 0] == 2.0 and old[14] == 3 and f.dtype == np.float32


@cuda.jit
def tickets(out, counter):
    i = cuda.grid(1)
    out[i] = cuda.atomic.add(counter, 0, 1)


def test_atomic_add_from_many_threads():
    out, counter = np.zeros(96, np.int64), np.zeros(1, np.int32)
    r = sim.launch(tickets, 3, 32, (out, counter))
    assert counter[0] == 96 and sorted(out) == list(range(96))
    assert (r.trace.select(array="counter")["kind"] == ATOMIC).all()


# --- warp operations ----------------------------------------------------------------------


@cuda.jit
def shuffles(out, a):
    t = cuda.threadIdx.x
    v = a[t]
    out[t, 0] = cuda.shfl_sync(0xFFFFFFFF, v, 5)
    out[t, 1] = cuda.shfl_up_sync(0xFFFFFFFF, v, 3)
    out[t, 2] = cuda.shfl_down_sync(0xFFFFFFFF, v, 3)
    out[t, 3] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 6)
    out[t, 4] = cuda.shfl_sync(0xFFFFFFFF, v, t + 33)  # src lane taken modulo 32


def test_shuffles():
    a, out = f32(32), np.zeros((32, 5), np.float32)
    sim.launch(shuffles, 1, 32, (out, a))
    lane = np.arange(32)
    np.testing.assert_array_equal(out[:, 0], a[5])
    np.testing.assert_array_equal(out[:, 1], a[np.where(lane >= 3, lane - 3, lane)])
    np.testing.assert_array_equal(out[:, 2], a[np.where(lane + 3 < 32, lane + 3, lane)])
    np.testing.assert_array_equal(out[:, 3], a[lane ^ 6])
    np.testing.assert_array_equal(out[:, 4], a[(lane + 1) % 32])


@cuda.jit
def half_warp_sum(out, a, delta_past_mask):
    t = cuda.threadIdx.x
    if t < 16:  # the other half of the warp is inactive here
        v = a[t]
        if delta_past_mask:
            v += cuda.shfl_down_sync(0x0000FFFF, v, 1)  # lane 15 reads lane 16: not in the mask
        else:
            for k in (8, 4, 2, 1):
                v += cuda.shfl_xor_sync(0x0000FFFF, v, k)
        out[t] = v


def test_shuffle_with_masked_lanes():
    a, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    sim.launch(half_warp_sum, 1, 32, (out, a, False))
    np.testing.assert_array_equal(out[:16], a[:16].sum())
    err = diagnose(E.WarpDivergence, half_warp_sum, 1, 32, (out, a, True))
    assert "lane 16" in str(err) and "not in the mask" in str(err)
    assert_names(err, block=(0, 0, 0), thread=(15, 0, 0), line=line_of(half_warp_sum, "0x0000FFFF, v, 1)"))


@cuda.jit
def own_lane_missing(out):
    out[cuda.threadIdx.x] = cuda.shfl_sync(0x1, 1.0, 0)


def test_mask_without_own_lane():
    err = diagnose(E.WarpDivergence, own_lane_missing, 1, 2, (np.zeros(2),))
    assert err.thread == (1, 0, 0) and "own lane 1" in str(err)


@cuda.jit
def votes(out, a):
    t = cuda.threadIdx.x
    if t >= 20:
        return  # lanes 20..31 exit early
    p = a[t] > 0
    m = cuda.activemask()
    out[t, 0] = m
    out[t, 1] = cuda.ballot_sync(m, p)
    out[t, 2] = cuda.any_sync(m, p)
    out[t, 3] = cuda.all_sync(m, p)
    if t < 8:
        out[t, 5] = cuda.ballot_sync(0xF0, True) if t >= 4 else cuda.ballot_sync(0x0F, p)


def test_votes_and_activemask():
    a = np.r_[f32(20), np.zeros(12, np.float32)]
    a[3] = 1.0
    out = np.zeros((32, 6), np.int64)
    sim.launch(votes, 1, 32, (out, a))
    p = a[:20] > 0
    ballot = sum(1 << k for k in range(20) if p[k])
    assert (out[:20, 0] == (1 << 20) - 1).all()
    assert (out[:20, 1] == ballot).all() and (out[:20, 2] == 1).all() and (out[:20, 3] == int(p.all())).all()
    assert (out[:8, 5] == np.r_[[ballot & 0x0F] * 4, [0xF0] * 4]).all()
    assert (out[20:] == 0).all()


@cuda.jit
def vote_outside_mask(out):
    t = cuda.threadIdx.x
    out[t] = cuda.all_sync(0xFF, t < 8)


def test_vote_called_by_lane_outside_its_mask():
    err = diagnose(E.WarpDivergence, vote_outside_mask, 1, 16, (np.zeros(16, np.int64),))
    assert err.thread == (8, 0, 0) and "own lane 8" in str(err)


@cuda.jit
def shfl_after_exit(out, a, exit_early):
    t = cuda.threadIdx.x
    if exit_early and t >= 16:
        return
    v = a[t] + cuda.shfl_down_sync(0xFFFFFFFF, a[t], 16)
    if t < 16:
        out[t] = v


def test_shuffle_with_exited_lane():
    a, out = f32(32), np.zeros(32, np.float32)
    sim.launch(shfl_after_exit, 1, 32, (out, a, False))
    np.testing.assert_array_equal(out[:16], a[:16] + a[16:])
    err = diagnose(E.WarpDivergence, shfl_after_exit, 1, 32, (out, a, True))
    assert "had already finished" in str(err) and "lane 16" in str(err)
    assert_names(err, block=(0, 0, 0), thread=(0, 0, 0), line=line_of(shfl_after_exit, "shfl_down_sync"))


# --- arithmetic, math, casts, device functions, imports ------------------------------------


@cuda.jit
def arith(out, x):
    v = x[0]
    out[0] = cuda.fma(v, numba.float32(2), numba.float32(1))
    out[1] = math.sqrt(v)
    out[2] = math.exp(v)
    out[3] = math.log(v)
    out[4] = math.sin(v) + math.cos(v) + math.tan(v)
    out[5] = math.floor(-v) + math.ceil(v)
    out[6] = math.pow(v, 3.0) + math.fabs(-v) + abs(-v)
    out[7] = math.tanh(v) + math.atan2(v, 1.0) + math.hypot(v, 1.0)
    out[8] = math.isnan(v) + math.isinf(v) + math.isfinite(v)
    out[9] = numba.int32(7.9) + numba.int32(-7.9)
    out[10] = numba.float32(0.1)
    out[11] = min(v, 1.0) + max(v, 3.0)
    out[12] = math.erf(v) + math.log2(v) + math.log10(v) + math.expm1(v) + math.log1p(v)
    out[13] = 7 // 2 + 7 % 3 + (-7) // 2


def test_fma_math_casts():
    v = 2.25
    out = np.zeros(14, np.float64)
    sim.launch(arith, 1, 1, (out, np.array([v], np.float32)))
    want = [
        v * 2 + 1,
        math.sqrt(v),
        math.exp(v),
        math.log(v),
        math.sin(v) + math.cos(v) + math.tan(v),
        -3 + 3,
        v**3 + 2 * v,
        math.tanh(v) + math.atan2(v, 1) + math.hypot(v, 1),
        1,
        7 - 7,
        float(np.float32(0.1)),
        1.0 + 3.0,
        math.erf(v) + math.log2(v) + math.log10(v) + math.expm1(v) + math.log1p(v),
        3 + 1 - 4,
    ]
    np.testing.assert_allclose(out, want, rtol=1e-12)


@cuda.jit(device=True)
def my_lane_twice(x):
    return x * 2 + cuda.threadIdx.x  # device functions see the simulator's cuda too


@cuda.jit(device=True)
def outer(x):
    return my_lane_twice(x) + 1


@cuda.jit
def uses_device_fn(out, a):
    i = cuda.grid(1)
    out[i] = outer(a[i])


def test_device_functions():
    a, out = f32(8), np.zeros(8, np.float32)
    sim.launch(uses_device_fn, 2, 4, (out, a))
    np.testing.assert_allclose(out, a * 2 + np.tile(np.arange(4), 2) + 1)


@cuda.jit
def imported_names(out, a):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    syncthreads()
    v = s[TPB - 1 - t]
    out[t] = v + shfl_down_sync(0xFFFFFFFF, v, 1)


def test_from_numba_cuda_import_style():
    a, out = f32(TPB), np.zeros(TPB, np.float32)
    sim.launch(imported_names, 1, TPB, (out, a))
    r = a[::-1]
    np.testing.assert_array_equal(out, r + np.r_[r[1:], r[-1]])


def test_numba_float_types_pass_through():
    @cuda.jit
    def k(out):
        s = cuda.shared.array(2, dtype=numba.float64)
        s[0] = numba.float64(1) / 3
        out[0] = s[0]
        out[1] = cuda.float32(0.1)

    out = np.zeros(2)
    sim.launch(k, 1, 1, (out,))
    assert out[0] == 1 / 3 and out[1] == float(np.float32(0.1))


# --- diagnostics: OutOfBounds -------------------------------------------------------------------


@cuda.jit
def copy_unguarded(out, a, n):
    i = cuda.grid(1)
    out[i] = a[i]


@cuda.jit
def copy_guarded(out, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i]


def test_out_of_bounds_past_the_end():
    a, out = f32(20), np.zeros(20, np.float32)
    sim.launch(copy_guarded, 3, 8, (out, a, 20))
    np.testing.assert_array_equal(out, a)
    err = diagnose(E.OutOfBounds, copy_unguarded, 3, 8, (out, a, 20))
    assert_names(
        err,
        block=(2, 0, 0),
        thread=(4, 0, 0),
        line=line_of(copy_unguarded, "out[i] = a[i]"),
        array="a",
        index=(20,),
    )
    assert "past the end" in str(err) and "guard" in str(err)
    assert err.trace is not None and len(err.trace.acc) > 0


@cuda.jit
def left_neighbour(out, a, n, guarded):
    i = cuda.grid(1)
    if i < n:
        if guarded and i == 0:
            out[i] = a[i]
        else:
            out[i] = a[i] - a[i - 1]


def test_out_of_bounds_negative_index():
    a, out = f32(10), np.zeros(10, np.float32)
    sim.launch(left_neighbour, 1, 16, (out, a, 10, True))
    np.testing.assert_allclose(out[1:], np.diff(a))
    err = diagnose(E.OutOfBounds, left_neighbour, 1, 16, (out, a, 10, False))
    assert_names(
        err,
        block=(0, 0, 0),
        thread=(0, 0, 0),
        line=line_of(left_neighbour, "a[i] - a[i - 1]"),
        array="a",
        index=(-1,),
    )
    assert "negative index" in str(err)


@cuda.jit
def add_2d(out, a, rows, cols, swapped):
    c, r = cuda.grid(2)
    ok = (r < cols and c < rows) if swapped else (r < rows and c < cols)
    if ok:
        out[r, c] = a[r, c] + 1


def test_out_of_bounds_2d():
    a, out = f32(5, 11), np.zeros((5, 11), np.float32)
    sim.launch(add_2d, (2, 2), (8, 4), (out, a, 5, 11, False))
    np.testing.assert_array_equal(out, a + 1)
    err = diagnose(E.OutOfBounds, add_2d, (2, 2), (8, 4), (out, a, 5, 11, True))
    assert err.array == "a" and err.index[0] >= 5 and err.line == line_of(add_2d, "a[r, c] + 1")
    assert f"[{err.index[0]}, {err.index[1]}]" in str(err) and "(5, 11)" in str(err)


# --- UninitializedRead --------------------------------------------------------------------------


@cuda.jit
def shared_partial(out, a, n, pad):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < n:
        s[t] = a[i]
    elif pad:
        s[t] = 0
    cuda.syncthreads()
    if t == 0:
        acc = numba.float32(0)
        for k in range(TPB):
            acc += s[k]
        out[cuda.blockIdx.x] = acc


def test_uninitialized_shared():
    a, out = f32(40), np.zeros(2, np.float32)
    sim.launch(shared_partial, 2, TPB, (out, a, 40, True))
    np.testing.assert_allclose(out, [a[:32].sum(), a[32:].sum()], rtol=1e-5)
    err = diagnose(E.UninitializedRead, shared_partial, 2, TPB, (out, a, 40, False))
    assert_names(
        err,
        block=(1, 0, 0),
        thread=(0, 0, 0),
        line=line_of(shared_partial, "acc += s[k]"),
        array="s",
        index=8,
    )
    assert "no thread of this block" in str(err)


@cuda.jit
def local_partial(out, full):
    w = cuda.local.array(4, numba.int32)
    for k in range(4 if full else 3):
        w[k] = k
    out[cuda.grid(1)] = w[0] + w[3]


def test_uninitialized_local():
    out = np.zeros(4, np.int64)
    sim.launch(local_partial, 1, 4, (out, True))
    assert (out == 3).all()
    err = diagnose(E.UninitializedRead, local_partial, 1, 4, (out, False))
    assert_names(
        err, block=(0, 0, 0), thread=(0, 0, 0), line=line_of(local_partial, "w[0] + w[3]"), array="w", index=3
    )


@cuda.jit
def accumulate(out, a):
    i = cuda.grid(1)
    out[i] += a[i]


@cuda.jit
def assign(out, a):
    i = cuda.grid(1)
    out[i] = a[i]


def test_uninitialized_output():
    a = f32(8)
    out = np.zeros(8, np.float32)
    sim.launch(assign, 1, 8, (out, a), roles={"out": "out", "a": "in"})
    sim.launch(accumulate, 1, 8, (out, a))  # without roles the output counts as initialised
    err = diagnose(E.UninitializedRead, accumulate, 1, 8, (out, a), roles={"out": "out", "a": "in"})
    assert_names(
        err,
        block=(0, 0, 0),
        thread=(0, 0, 0),
        line=line_of(accumulate, "out[i] += a[i]"),
        array="out",
        index=0,
    )


# --- DataRace -------------------------------------------------------------------------------------


@cuda.jit
def shift_shared(out, a, sync):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    if sync:
        cuda.syncthreads()
    if t > 0:
        out[cuda.grid(1)] = s[t - 1]


def test_race_shared_within_block():
    a, out = f32(64), np.zeros(64, np.float32)
    sim.launch(shift_shared, 2, TPB, (out, a, True))
    err = diagnose(E.DataRace, shift_shared, 2, TPB, (out, a, False))
    assert_names(
        err, block=(0, 0, 0), thread=(1, 0, 0), line=line_of(shift_shared, "= s[t - 1]"), array="s", index=0
    )
    assert "thread (0, 0, 0) of block (0, 0, 0) wrote it" in str(err)


@cuda.jit
def last_writer(out, a, only_first):
    i = cuda.grid(1)
    if not only_first or cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = a[i]


def test_race_global_within_block():
    a, out = f32(16), np.zeros(2, np.float32)
    sim.launch(last_writer, 2, 8, (out, a, True))
    np.testing.assert_array_equal(out, a[[0, 8]])
    err = diagnose(E.DataRace, last_writer, 2, 8, (out, a, False))
    assert_names(
        err,
        block=(0, 0, 0),
        thread=(1, 0, 0),
        line=line_of(last_writer, "out[cuda.blockIdx.x] ="),
        array="out",
        index=0,
    )
    assert "same barrier interval" in str(err)


@cuda.jit
def block_total(out, a, per_block):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    if t == 0:
        acc = numba.float32(0)
        for k in range(TPB):
            acc += s[k]
        out[cuda.blockIdx.x if per_block else 0] = acc


def test_race_global_across_blocks():
    a, out = f32(96), np.zeros(3, np.float32)
    sim.launch(block_total, 3, TPB, (out, a, True))
    err = diagnose(E.DataRace, block_total, 3, TPB, (out, a, False))
    assert_names(
        err,
        block=(1, 0, 0),
        thread=(0, 0, 0),
        line=line_of(block_total, "out[cuda.blockIdx.x if"),
        array="out",
        index=0,
    )
    assert "in another block" in str(err)
    sim.launch(block_total, 3, TPB, (out, a, False), cross_block_races=False)  # the opt-out


@cuda.jit
def count_up(counter, atomic):
    if atomic:
        cuda.atomic.add(counter, 0, 1)
    else:
        counter[0] += 1


@cuda.jit
def reset_then_add(counter):
    if cuda.threadIdx.x == 0:
        counter[0] = 0
    cuda.atomic.add(counter, 0, 1)


def test_race_atomic_vs_plain():
    c = np.zeros(1, np.int32)
    sim.launch(count_up, 2, 16, (c, True))
    assert c[0] == 32
    err = diagnose(E.DataRace, count_up, 2, 16, (c, False))
    assert err.array == "counter" and err.thread == (1, 0, 0)
    assert err.line == line_of(count_up, "counter[0] += 1")
    err = diagnose(E.DataRace, reset_then_add, 1, 4, (c,))
    assert "atomically updates" in str(err) and err.line == line_of(reset_then_add, "cuda.atomic.add")


# --- BarrierDivergence ----------------------------------------------------------------------------


@cuda.jit
def sync_in_if(out, a, n, inside):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if inside:
        if i < n:
            s[t] = a[i]
            cuda.syncthreads()
            out[i] = s[(t + 1) % TPB] if (t + 1) % TPB + cuda.blockIdx.x * TPB < n else s[t]
    else:
        if i < n:
            s[t] = a[i]
        cuda.syncthreads()
        if i < n:
            out[i] = s[(t + 1) % TPB] if (t + 1) % TPB + cuda.blockIdx.x * TPB < n else s[t]


def test_barrier_inside_if():
    a, out = f32(64), np.zeros(64, np.float32)
    sim.launch(sync_in_if, 2, TPB, (out, a, 40, False))
    sim.launch(sync_in_if, 2, TPB, (out, a, 64, True))  # every thread passes the guard: fine
    err = diagnose(E.BarrierDivergence, sync_in_if, 2, TPB, (out, a, 40, True))
    assert_names(err, block=(1, 0, 0), thread=(0, 0, 0), line=line_of(sync_in_if, "    cuda.syncthreads()"))
    assert "if i < size" in str(err) and "already finished" in str(err)


@cuda.jit
def two_barriers(out):
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = 1
        cuda.syncthreads()
    else:
        out[t] = 2
        cuda.syncthreads()  # the other barrier


def test_threads_at_different_barriers():
    err = diagnose(E.BarrierDivergence, two_barriers, 1, 32, (np.zeros(32),))
    msg = str(err)
    assert "different barriers" in msg and f"line {line_of(two_barriers, '# the other barrier')}" in msg
    assert err.block == (0, 0, 0) and err.line is not None


@cuda.jit
def one_barrier(out):
    t = cuda.threadIdx.x
    out[t] = 1 if t < 16 else 2
    cuda.syncthreads()


def test_one_barrier_line_is_fine():
    out = np.zeros(32)
    sim.launch(one_barrier, 1, 32, (out,))
    assert out.sum() == 48


# --- LaunchError ---------------------------------------------------------------------------------


@cuda.jit
def too_much_shared(out):
    s = cuda.shared.array(BIG, numba.float32)
    s[0] = 1
    out[0] = s[0]


@cuda.jit
def just_enough_shared(out):
    s = cuda.shared.array(FITS, numba.float32)
    s[0] = 1
    out[0] = s[0]


@cuda.jit
def shape_from_argument(out, n):
    s = cuda.shared.array(n, numba.float32)
    s[0] = 1
    out[0] = s[0]


@cuda.jit
def shape_from_constant(out, n):
    s = cuda.shared.array(TPB, numba.float32)
    s[0] = n
    out[0] = s[0]


def test_launch_errors():
    out = np.zeros(1, np.float32)
    err = diagnose(E.LaunchError, assign, 1, 1025, (out, out))
    assert "1024" in str(err)
    diagnose(E.LaunchError, assign, 1, (32, 33), (out, out))
    sim.launch(assign, 1, (1, 1), (out, out.copy()))
    r = sim.launch(just_enough_shared, 1, 1, (out,))
    assert r.shared_bytes == 48 * 1024
    err = diagnose(E.LaunchError, too_much_shared, 1, 1, (out,))
    assert "48 KiB" in str(err) and err.line == line_of(too_much_shared, "cuda.shared.array(BIG")
    err = diagnose(E.LaunchError, shape_from_argument, 1, 1, (out, 8))
    assert (
        "`n`" in str(err)
        and "kernel argument" in str(err)
        and err.line == line_of(shape_from_argument, "array(n,")
    )
    sim.launch(shape_from_constant, 1, 1, (out, 8))
    err = diagnose(E.LaunchError, assign, 1, 8, (out,))
    assert "takes 2 arguments" in str(err) and "passed 1" in str(err)


# --- Runaway -------------------------------------------------------------------------------------


@cuda.jit
def stuck_stride(out, a, n, stride):
    i = cuda.grid(1)
    while i < n:
        out[i] = a[i]
        i += stride


@cuda.jit
def spin(out, forever):
    x = 0
    while forever or x < 3:  # no memory access: the wall clock, or lockstep's count of trips, stops it
        x += 1
    out[cuda.grid(1)] = x


def test_runaway_by_steps_and_by_time():
    a, out = f32(16), np.zeros(16, np.float32)
    sim.launch(stuck_stride, 1, 4, (out, a, 16, 4), max_steps=10_000)
    err = diagnose(E.Runaway, stuck_stride, 1, 4, (out, a, 16, 0), max_steps=10_000)
    assert "10,000" in str(err) and err.line == line_of(stuck_stride, "out[i] = a[i]")
    sim.launch(spin, 1, 4, (out, False), timeout=0.3)
    err = diagnose(E.Runaway, spin, 1, 4, (out, True), timeout=0.3)
    # the greenlet engine stops it by the wall clock; lockstep (and so "auto") sees a loop that
    # touches no memory for 65,536 trips, which nothing can end: a Runaway at once, the same each time
    assert ("0.3 s" in str(err) or "never ends" in str(err)) and err.thread == (0, 0, 0)
    assert err.line in (line_of(spin, "while forever"), line_of(spin, "x += 1"))


def test_a_wall_clock_runaway_leaves_the_process_as_it_was():
    # no clock thread left, no tracer changed, nothing pending; that a traced call after it runs
    # (it spun forever on CPython 3.11) is tests/test_dist_engines.py's, in a subprocess
    import sys
    import threading

    import greenlet

    from helpers.sim.greenlet.wallclock import WallClock

    def clocks():
        owners = (getattr(getattr(t, "function", None), "__self__", None) for t in threading.enumerate())
        return [o for o in owners if isinstance(o, WallClock)]

    before = (sys.gettrace(), greenlet.gettrace())
    for _ in range(3):
        with pytest.raises(E.Runaway, match="0.05 s"):
            sim.launch(spin, 1, 4, (np.zeros(16, np.float32), True), timeout=0.05, engine="greenlet")
        assert clocks() == [] and (sys.gettrace(), greenlet.gettrace()) == before
    for _ in range(10_000):  # a Timeout left pending would land here
        pass


# --- KernelException, ReadOnlyWrite, Unsupported -----------------------------------------------------


@cuda.jit
def divide(out, a, d):
    i = cuda.grid(1)
    out[i] = a[i] + 10 // (d - cuda.threadIdx.x)


def test_kernel_exception_names_the_line():
    a, out = f32(8), np.zeros(8, np.float32)
    sim.launch(divide, 2, 4, (out, a, 9))
    err = diagnose(E.KernelException, divide, 2, 4, (out, a, 2))
    assert_names(err, block=(0, 0, 0), thread=(2, 0, 0), line=line_of(divide, "10 // (d"))
    assert "ZeroDivisionError" in str(err) and "scheduler.py" not in str(err)
    assert isinstance(err.__cause__, ZeroDivisionError)


def test_read_only_input():
    a, out = f32(8), np.zeros(8, np.float32)
    roles = {"out": "out", "a": "in"}
    sim.launch(assign, 1, 8, (out, a), roles=roles)
    err = diagnose(E.ReadOnlyWrite, assign, 1, 8, (out, a), roles={"out": "in"})
    assert_names(
        err, block=(0, 0, 0), thread=(0, 0, 0), line=line_of(assign, "out[i] = a[i]"), array="out", index=0
    )


@cuda.jit
def half_precision(out):
    out[0] = cuda.fp16.hadd(out[0], out[0])


def test_unsupported_feature_is_named():
    # (cooperative groups' grid sync, once the example here, is supported now: tests/test_sim_features.py)
    err = diagnose(E.Unsupported, half_precision, 1, 1, (np.zeros(1),))
    assert "cuda.fp16" in str(err) and "not supported" in str(err)


# --- determinism, block order, the trace ------------------------------------------------------------


@cuda.jit
def scan_block(out, a, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < n else numba.float32(0)
    cuda.syncthreads()
    d = 1
    while d < TPB:
        v = s[t - d] if t >= d else numba.float32(0)
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < n:
        out[i] = s[t]


def test_deterministic_trace():
    a = f32(70)
    runs = [
        sim.launch(scan_block, 3, TPB, (np.zeros(70, np.float32), a, 70), block_order="shuffle", seed=3)
        for _ in range(2)
    ]
    t1, t2 = runs[0].trace, runs[1].trace
    assert np.array_equal(t1.acc, t2.acc) and t1.sites == t2.sites and t1.arrays == t2.arrays
    np.testing.assert_array_equal(t1.after["out"], t2.after["out"])
    blocks_in_order = list(dict.fromkeys(t1.acc["block"].tolist()))
    assert sorted(blocks_in_order) == [0, 1, 2] and blocks_in_order != [0, 1, 2]


@cuda.jit
def chain(out):
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        out[b] = (out[b - 1] + 1) if b > 0 else 1  # wrong: assumes block b-1 already ran


def test_block_order_exposes_order_dependence():
    out = np.zeros(6)
    sim.launch(chain, 6, 1, (out,), cross_block_races=False)
    np.testing.assert_array_equal(out, np.arange(1, 7))  # forward order hides the bug
    out[:] = 0
    sim.launch(chain, 6, 1, (out,), cross_block_races=False, block_order="shuffle", seed=1)
    assert not np.array_equal(out, np.arange(1, 7))
    out[:] = 0
    sim.launch(chain, 6, 1, (out,), cross_block_races=False, block_order="reverse")
    np.testing.assert_array_equal(out, [1, 1, 1, 1, 1, 1])
    err = diagnose(E.DataRace, chain, 6, 1, (out,))  # and by default it is a race
    assert "in another block" in str(err) and err.block == (1, 0, 0)


def test_trace_fields():
    a, out = f32(40), np.zeros(40, np.float32)
    r = sim.launch(copy_guarded, 1, 64, (out, a, 40))
    tr = r.trace
    assert tr.grid == (1, 1, 1) and tr.block == (64, 1, 1) and tr.nthreads == 64
    ids = {x.name: x.id for x in tr.arrays}
    assert tr.arrays[ids["a"]].space == "global" and tr.arrays[ids["out"]].shape == (40,)
    reads = tr.select(array="a", kind=READ)
    assert len(reads) == 40 and (reads["index"] == reads["thread"]).all()
    assert {tr.sites[s].text for s in reads["site"]} == {"out[i] = a[i]"}
    assert tr.sites[reads["site"][0]].lineno == line_of(copy_guarded, "out[i] = a[i]")
    np.testing.assert_array_equal(tr.counts(kind=READ)[0], np.r_[np.ones(40), np.zeros(24)])
    np.testing.assert_array_equal(tr.counts(kind=WRITE, array="out")[0], np.r_[np.ones(40), np.zeros(24)])
    np.testing.assert_array_equal(tr.heatmap("a"), np.ones(40))
    was = tr.warp_accesses(space="global", kind=READ)
    assert [(w.warp, len(w.lanes)) for w in was] == [(0, 32), (1, 8)]
    np.testing.assert_array_equal(was[1].lanes, np.arange(8))
    np.testing.assert_array_equal(was[1].indices, np.arange(32, 40))
    np.testing.assert_array_equal(tr.before["a"], a)
    np.testing.assert_array_equal(tr.after["out"], a)


def test_trace_epochs_and_occurrences():
    r = sim.launch(scan_block, 1, TPB, (np.zeros(TPB, np.float32), f32(TPB), TPB))
    tr = r.trace
    s = tr.select(array="s", kind=WRITE)
    assert s["epoch"].max() == 2 * 5  # 1 + 2 barriers per step, log2(32) steps
    w = tr.warp_accesses(space="shared", kind=READ)
    assert all(len(x.lanes) <= 32 for x in w)
    # every read of s[t - d] in one loop step is one warp instruction for the lanes t >= d
    steps = [x for x in w if tr.sites[x.site].text.startswith("v = s[t - d]")]
    assert sorted(len(x.lanes) for x in steps) == sorted(32 - 2**k for k in range(5))


def test_trace_off():
    r = sim.launch(copy_guarded, 1, 8, (np.zeros(8), np.ones(8), 8), trace=False)
    assert r.trace is None and r.steps > 0
    with pytest.raises(E.OutOfBounds):
        sim.launch(copy_unguarded, 1, 8, (np.zeros(4), np.ones(4), 4), trace=False)


# --- the engine ------------------------------------------------------------------------------------


@pytest.fixture
def sim_engine():
    """Traced launches on the simulator (conftest's shared fixture runs untraced)."""
    was = engine.STATE.name
    helpers.use("sim")
    yield
    engine.STATE._unpatch()
    engine.STATE.name = was


def test_engine_sim_patches_launch_and_host_calls(sim_engine):
    a = f32(64)
    out = np.zeros(64, np.float32)
    reverse_block[2, 32](out, a)
    np.testing.assert_array_equal(out, a.reshape(2, 32)[:, ::-1].reshape(-1))
    d_a = cuda.to_device(a)
    d_out = cuda.device_array(64, np.float32)
    assert np.isnan(d_out.copy_to_host()).all()  # fresh device memory is garbage, not zeros
    copy_guarded[2, 32](d_out, d_a, 64)
    cuda.synchronize()
    np.testing.assert_array_equal(d_out.copy_to_host(), a)
    host = np.zeros(64, np.float32)
    d_out.copy_to_host(host)
    np.testing.assert_array_equal(host, a)
    like = cuda.device_array_like(a)
    assert like.shape == (64,) and like.dtype == np.float32
    dyn_shared[1, 16, 0, 160](out, a)
    assert out[16] == 40
    assert sim.last.trace is not None


def test_engine_gpu_without_gpu_is_a_clear_error():
    if helpers.gpu_present():
        pytest.skip("there is a GPU here")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        helpers.use("gpu")
    with pytest.raises(ValueError):
        helpers.use("tpu")
