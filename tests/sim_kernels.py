"""A suite of correct kernels, run on three engines to show they agree.

    python tests/sim_kernels.py --numba-sim OUT.npz   # Numba's own simulator (used by test_sim_parity.py)
    python tests/sim_kernels.py --gpu OUT.npz         # a real GPU with numba-cuda
    python tests/sim_kernels.py --compare OUT.npz     # helpers.sim against a saved run; exit 1 on mismatch

Each entry has an input builder (fixed seed), a launch configuration and the
names of its outputs. Kernels use only `cuda.<name>` (Numba's simulator does
not support `from numba.cuda import ...`).
"""

import os
import sys

if "--numba-sim" in sys.argv:  # must be set before numba is imported
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import math  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

TPB = 64
TILE = 8
WARP = 32
NBINS = 16
SCALE = np.array([0.5, -1.25, 2.0, 3.5], dtype=np.float32)


@dataclass
class Spec:
    kernel: object
    build: object  # rng -> list of (name, value) in argument order
    grid: object
    block: object
    outputs: tuple
    shared_bytes: int = 0
    warp_ops: bool = False  # needs shuffles/votes that Numba's simulator lacks


# --- kernels ----------------------------------------------------------------


@cuda.jit
def map_kernel(out, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] * numba.float32(2.5) - numba.float32(1.0)


@cuda.jit
def add_2d(out, a, b, rows, cols):
    c, r = cuda.grid(2)
    if r < rows and c < cols:
        out[r, c] = a[r, c] + b[r, c]


@cuda.jit
def block_sum(out, a, n):
    s = cuda.shared.array(TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    s[t] = a[i] if i < n else numba.float32(0)
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def kogge_stone(out, a, n):
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


@cuda.jit
def tiled_matmul(c, a, b, m, k, n):
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sb = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = numba.float32(0)
    for ph in range((k + TILE - 1) // TILE):
        ka = ph * TILE + tx
        kb = ph * TILE + ty
        sa[ty, tx] = a[row, ka] if row < m and ka < k else numba.float32(0)
        sb[ty, tx] = b[kb, col] if kb < k and col < n else numba.float32(0)
        cuda.syncthreads()
        for q in range(TILE):
            acc += sa[ty, q] * sb[q, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


@cuda.jit
def histogram(bins, a, n):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        cuda.atomic.add(bins, a[i] % NBINS, 1)
        i += stride


@cuda.jit
def atomics_misc(res, a, n):
    i = cuda.grid(1)
    if i < n:
        cuda.atomic.max(res, 0, a[i])
        cuda.atomic.min(res, 1, a[i])
        cuda.atomic.or_(res, 2, a[i])
        cuda.atomic.and_(res, 3, a[i])
        cuda.atomic.xor(res, 4, a[i])
        cuda.atomic.sub(res, 5, a[i])


@cuda.jit
def warp_reduce(out, a, n):
    i = cuda.grid(1)
    v = a[i] if i < n else numba.float32(0)
    off = WARP // 2
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // WARP] = v


@cuda.jit
def votes(out, a, n):
    i = cuda.grid(1)
    p = i < n and a[i] > 0
    b = cuda.ballot_sync(0xFFFFFFFF, p)
    y = cuda.any_sync(0xFFFFFFFF, p)
    z = cuda.all_sync(0xFFFFFFFF, p)
    if cuda.laneid == 0:
        w = i // WARP
        out[w, 0] = b
        out[w, 1] = y
        out[w, 2] = z


@cuda.jit
def local_window(out, a, n):
    i = cuda.grid(1)
    w = cuda.local.array(4, numba.float32)
    for k in range(4):
        j = i + k
        w[k] = a[j] if j < n else numba.float32(0)
    acc = numba.float32(0)
    for k in range(4):
        acc += w[3 - k] * SCALE[k]
    if i < n:
        out[i] = acc


@cuda.jit
def dyn_reverse(out, a, n):
    s = cuda.shared.array(0, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < n else numba.float32(0)
    cuda.syncthreads()
    j = cuda.blockIdx.x * cuda.blockDim.x + (cuda.blockDim.x - 1 - t)
    if j < n:
        out[j] = s[t]


@cuda.jit(device=True)
def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@cuda.jit
def device_fn(out, a, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = clamp(a[i], numba.float32(-0.5), numba.float32(0.5))


@cuda.jit
def grid_3d(out, a):
    x, y, z = cuda.grid(3)
    if z < out.shape[0] and y < out.shape[1] and x < out.shape[2]:
        out[z, y, x] = a[z, y, x] * numba.float32(z + 1) + numba.float32(y - x)


@cuda.jit
def block_votes(out, a, n):
    i = cuda.grid(1)
    p = numba.int32(1) if i < n and a[i] > 0 else numba.int32(0)  # Numba wants an int32 predicate
    c = cuda.syncthreads_count(p)
    y = cuda.syncthreads_or(p)
    z = cuda.syncthreads_and(p)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x, 0] = c
        out[cuda.blockIdx.x, 1] = y
        out[cuda.blockIdx.x, 2] = z


@cuda.jit
def const_lookup(out, a, n):
    lut = cuda.const.array_like(SCALE)
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] * lut[i % 4]


@cuda.jit
def math_fns(out, a, n):
    i = cuda.grid(1)
    if i < n:
        x = a[i]
        out[i] = math.sqrt(abs(x)) + math.exp(-x * x) + math.sin(x) + cuda.fma(x, x, numba.float32(1))


# --- inputs -----------------------------------------------------------------


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _zeros(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


def _1d(n, out_dtype=np.float32):
    return lambda rng: [("out", _zeros(n, dtype=out_dtype)), ("a", _f32(rng, n)), ("n", n)]


def _matmul(rng):
    m, k, n = 19, 13, 22
    return [("c", _zeros(m, n)), ("a", _f32(rng, m, k)), ("b", _f32(rng, k, n)), ("m", m), ("k", k), ("n", n)]


def _hist(rng):
    n = 300
    a = rng.integers(0, 1000, n).astype(np.int32)
    return [("bins", _zeros(NBINS, dtype=np.int32)), ("a", a), ("n", n)]


def _misc(rng):
    n = 150
    res = np.array([-(2**31), 2**31 - 1, 0, -1, 0, 1000], np.int32)
    return [("res", res), ("a", rng.integers(-(10**6), 10**6, n).astype(np.int32)), ("n", n)]


def _votes(rng):
    n = 90
    a = _f32(rng, n)
    a[32:64] = np.abs(a[32:64]) + 1  # one warp all positive
    return [("out", _zeros(4, 3, dtype=np.int64)), ("a", a), ("n", n)]


def _block_votes(rng):
    n = 200
    a = _f32(rng, n)
    a[64:128] = np.abs(a[64:128]) + 1
    a[128:192] = -np.abs(a[128:192]) - 1
    return [("out", _zeros(4, 3, dtype=np.int32)), ("a", a), ("n", n)]


def _add2d(rng):
    rows, cols = 11, 21
    return [
        ("out", _zeros(rows, cols)),
        ("a", _f32(rng, rows, cols)),
        ("b", _f32(rng, rows, cols)),
        ("rows", rows),
        ("cols", cols),
    ]


def _grid3d(rng):
    return [("out", _zeros(3, 5, 6)), ("a", _f32(rng, 3, 5, 6))]


SUITE = {
    "map": Spec(map_kernel, _1d(100), 2, TPB, ("out",)),
    "add_2d": Spec(add_2d, _add2d, (3, 2), (8, 8), ("out",)),
    "block_sum": Spec(
        block_sum, lambda rng: [("out", _zeros(3)), ("a", _f32(rng, 150)), ("n", 150)], 3, TPB, ("out",)
    ),
    "kogge_stone": Spec(kogge_stone, _1d(150), 3, TPB, ("out",)),
    "tiled_matmul": Spec(tiled_matmul, _matmul, (3, 3), (TILE, TILE), ("c",)),
    "histogram": Spec(histogram, _hist, 2, 64, ("bins",)),
    "atomics_misc": Spec(atomics_misc, _misc, 3, TPB, ("res",)),
    "warp_reduce": Spec(
        warp_reduce,
        lambda rng: [("out", _zeros(4)), ("a", _f32(rng, 120)), ("n", 120)],
        2,
        TPB,
        ("out",),
        warp_ops=True,
    ),
    "votes": Spec(votes, _votes, 2, TPB, ("out",), warp_ops=True),
    "local_window": Spec(local_window, _1d(70), 2, TPB, ("out",)),
    "dyn_reverse": Spec(dyn_reverse, _1d(100), 2, TPB, ("out",), shared_bytes=TPB * 4),
    "device_fn": Spec(device_fn, _1d(90), 2, TPB, ("out",)),
    "grid_3d": Spec(grid_3d, _grid3d, (2, 2, 2), (4, 4, 2), ("out",)),
    "block_votes": Spec(block_votes, _block_votes, 4, TPB, ("out",)),
    "const_lookup": Spec(const_lookup, _1d(70), 2, TPB, ("out",)),
    "math_fns": Spec(math_fns, _1d(70), 2, TPB, ("out",)),
}


def inputs(name, seed=0):
    return SUITE[name].build(np.random.default_rng(seed))


# --- engines ----------------------------------------------------------------


def run_helpers_sim(name, seed=0):
    """Outputs of one suite kernel on helpers.sim (dict name -> array)."""
    from helpers import sim

    spec = SUITE[name]
    args = inputs(name, seed)
    sim.launch(spec.kernel, spec.grid, spec.block, [v for _, v in args], shared_bytes=spec.shared_bytes)
    d = dict(args)
    return {o: d[o] for o in spec.outputs}


def run_numba(name, seed=0):
    """Outputs on numba-cuda: the real GPU, or Numba's simulator when NUMBA_ENABLE_CUDASIM=1."""
    spec = SUITE[name]
    args = inputs(name, seed)
    dev = [cuda.to_device(v) if isinstance(v, np.ndarray) else v for _, v in args]
    spec.kernel[spec.grid, spec.block, 0, spec.shared_bytes](*dev)
    cuda.synchronize()
    return {o: d.copy_to_host() for (o, _), d in zip(args, dev) if o in spec.outputs}


def save_numba(path):
    """Run the suite with numba-cuda; outputs as `name/out`, failures as `name/!error`."""
    res = {}
    for name in SUITE:
        try:
            for o, v in run_numba(name).items():
                res[f"{name}/{o}"] = v
        except Exception as e:
            res[f"{name}/!error"] = np.array(f"{type(e).__name__}: {e}")
    np.savez(path, **res)
    return res


def compare(path, exact=False):
    """helpers.sim against a saved run; returns a list of mismatch lines."""
    saved = np.load(path)
    bad = []
    for name in SUITE:
        if f"{name}/!error" in saved:
            print(f"{name:14s} not run there: {saved[f'{name}/!error']}")
            continue
        for o, mine in run_helpers_sim(name).items():
            ref = saved[f"{name}/{o}"]
            ok = np.array_equal(mine, ref) if exact else np.allclose(mine, ref, rtol=1e-5, atol=1e-5)
            err = np.max(np.abs(mine.astype(np.float64) - ref)) if mine.shape == ref.shape else "shape"
            print(f"{name:14s} {o:5s} {'ok' if ok else 'MISMATCH'} (max abs diff {err})")
            if not ok:
                bad.append(f"{name}/{o}")
    return bad


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("--numba-sim", "--gpu", "--compare"):
        sys.exit(__doc__)
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "--compare":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        bad = compare(path)
        print("all equal" if not bad else f"MISMATCH: {bad}")
        sys.exit(1 if bad else 0)
    if mode == "--gpu" and not cuda.is_available():
        sys.exit("--gpu: numba-cuda finds no CUDA GPU here")
    res = save_numba(path)
    errors = [k for k in res if k.endswith("!error")]
    print(f"saved {len(res) - len(errors)} outputs to {path}; failed: {errors or 'none'}")
    if mode == "--gpu" and errors:
        sys.exit(1)
