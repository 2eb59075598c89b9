"""Speed of helpers.sim against Numba's own CUDA simulator.

    python -m tools.sim_speed [--repeat N]

Runs (a) a Kogge-Stone scan, 8 blocks x 256 threads, shared memory and barriers,
(b) a 64x64 tiled matmul with 16x16 tiles, (c) a warp-shuffle reduction, on
helpers.sim's two engines (greenlet: one greenlet per thread, the reference; lockstep: a block's
threads as NumPy lanes, the default through "auto") with tracing on and off, and on Numba's simulator
(NUMBA_ENABLE_CUDASIM=1, in a subprocess because it must be set before numba is
imported). Times are the best of N launches after a warm-up launch. Not a test:
timings depend on the machine and its load.
"""

import json
import os
import subprocess
import sys
import time

if "--numba-sim" in sys.argv:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

SCAN_TPB = 256
TILE = 16
WARP = 32


@cuda.jit
def scan(out, a, n):
    s = cuda.shared.array(SCAN_TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < n else numba.float32(0)
    cuda.syncthreads()
    d = 1
    while d < SCAN_TPB:
        v = s[t - d] if t >= d else numba.float32(0)
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < n:
        out[i] = s[t]


@cuda.jit
def matmul(c, a, b, n):
    sa = cuda.shared.array((TILE, TILE), numba.float32)
    sb = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = numba.float32(0)
    for ph in range(n // TILE):
        sa[ty, tx] = a[row, ph * TILE + tx]
        sb[ty, tx] = b[ph * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc


@cuda.jit
def warp_sum(out, a, n):
    i = cuda.grid(1)
    v = a[i] if i < n else numba.float32(0)
    off = WARP // 2
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // WARP] = v


def cases():
    """name -> (kernel, grid, block, args, check(args) -> bool)."""
    rng = np.random.default_rng(0)
    n = 8 * SCAN_TPB
    a = rng.standard_normal(n).astype(np.float32)
    m = 64
    x, y = rng.standard_normal((m, m)).astype(np.float32), rng.standard_normal((m, m)).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)

    def scan_ok(args):
        want = np.cumsum(a.reshape(8, SCAN_TPB), axis=1).reshape(-1)
        return np.allclose(args[0], want, rtol=1e-4, atol=1e-4)

    return {
        "scan 8x256": (scan, 8, SCAN_TPB, [np.zeros(n, np.float32), a, n], scan_ok),
        "matmul 64x64": (
            matmul,
            (m // TILE, m // TILE),
            (TILE, TILE),
            [np.zeros((m, m), np.float32), x, y, m],
            lambda args: np.allclose(args[0], x @ y, rtol=1e-3, atol=1e-3),
        ),
        "warp sum 8x256": (
            warp_sum,
            8,
            SCAN_TPB,
            [np.zeros(n // WARP, np.float32), w, n],
            lambda args: np.allclose(args[0], w.reshape(-1, WARP).sum(1), rtol=1e-4, atol=1e-4),
        ),
    }


def _best(fn, repeat):
    """(best wall seconds, best CPU seconds of this process, all its threads) over `repeat` runs."""
    fn()  # warm-up: fills caches (source lines, rebinding, Numba's simulator's setup)
    wall = cpu = float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w0), min(cpu, time.process_time() - c0)
    return wall, cpu


def time_helpers_sim(repeat, engine="greenlet"):
    from helpers import sim

    res = {}
    for name, (k, g, b, args, ok) in cases().items():
        row = {}
        for tr in (True, False):
            row["traced" if tr else "untraced"] = _best(
                lambda k=k, g=g, b=b, args=args, tr=tr: sim.launch(k, g, b, args, trace=tr, engine=engine),
                repeat,
            )
            assert ok(args), f"{name}: helpers.sim ({engine}) gave a wrong answer"
        res[name] = row
    return res


def time_numba_sim(repeat):
    res = {}
    for name, (k, g, b, args, ok) in cases().items():
        dev = [cuda.to_device(v) if isinstance(v, np.ndarray) else v for v in args]

        def launch(k=k, g=g, b=b, dev=dev):
            k[g, b](*dev)
            cuda.synchronize()

        try:
            res[name] = _best(launch, repeat)
        except AttributeError as e:  # Numba's simulator lacks the warp shuffles
            res[name] = f"cannot run it ({str(e).split(': ', 1)[-1]})"
            continue
        args[0][...] = dev[0].copy_to_host()
        assert ok(args), f"{name}: Numba's simulator gave a wrong answer"
    return res


def main(argv):
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 3
    if "--numba-sim" in argv:
        print(json.dumps(time_numba_sim(repeat)))
        return
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    p = subprocess.run(
        [sys.executable, "-m", "tools.sim_speed", "--numba-sim", "--repeat", str(repeat)],
        env=env,
        capture_output=True,
        text=True,
        cwd=os.getcwd(),
    )
    if p.returncode:
        sys.exit(f"Numba's simulator run failed:\n{p.stdout}{p.stderr}")
    nsim = json.loads(p.stdout.strip().splitlines()[-1])
    engines = {e: time_helpers_sim(repeat, e) for e in ("greenlet", "lockstep")}
    print(
        f"best of {repeat} launches after a warm-up; seconds as wall / CPU (CPU: all threads of the "
        "process, the fairer figure on a loaded machine)\n"
    )
    print(
        f"{'kernel':15s} {'engine':9s} {'sim traced':>13s} {'sim untraced':>13s} {'Numba sim':>13s} "
        f"{'Numba/traced':>13s} {'Numba/untraced':>15s}"
    )

    def pair(x):
        return f"{x[0]:6.3f}/{x[1]:6.3f}"

    for name in engines["greenlet"]:
        ns = nsim[name]
        for engine, ours in engines.items():
            row = ours[name]
            if isinstance(ns, str):
                print(
                    f"{name:15s} {engine:9s} {pair(row['traced'])} {pair(row['untraced'])}  Numba's "
                    f"simulator {ns}"
                )
                continue
            ratio = [f"{ns[0] / row[k][0]:.1f}x/{ns[1] / row[k][1]:.1f}x" for k in ("traced", "untraced")]
            print(
                f"{name:15s} {engine:9s} {pair(row['traced'])} {pair(row['untraced'])} {pair(ns)} "
                f"{ratio[0]:>13s} {ratio[1]:>15s}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
