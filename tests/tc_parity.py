"""Parity of the simulator's half precision, mma and dp4a with a real GPU: the same kernels, the same
inputs, on helpers.sim and on the device; prints each kernel's differences and exits 1 where one is
beyond what is expected (fp16 arithmetic and dp4a: bit for bit; the mma: the simulator exactly
rounded, the GPU within `puzzles.tensor_cores.common.mma_tolerance`, the bound the exercises judge by:
the tensor core truncates as it sums, so its error follows sum |a b| + |c|, not the result).

    python tests/tc_parity.py           # on a GPU machine (exit 2 without one: nothing was compared)

`tests/test_tensor_cores.py` runs the simulator half and compiles every kernel, so this script works
the first time it meets a GPU."""

from __future__ import annotations

import sys

import numba
import numpy as np
from numba import cuda

from helpers import sim
from helpers.tensor_cores import dp4a, mma_m16n8k8
from puzzles.tensor_cores.common import mma_tolerance

F16 = numba.types.float16


@cuda.jit
def half_ops(a, b, c, mul, add, fma2, div, narrow):
    i = cuda.grid(1)
    if i < a.size:
        mul[i] = a[i] * b[i]
        add[i] = a[i] + b[i]
        fma2[i] = a[i] * b[i] + c[i]  # two roundings in the simulator; a GPU that fuses gives one
        div[i] = a[i] / b[i]
        narrow[i] = np.float16(numba.float32(a[i]) * numba.float32(1.0009765625))  # f32 -> f16, RNE


@cuda.jit
def half_sum(x, out):  # a float16 running sum: one rounding per add
    i = cuda.grid(1)
    if i < out.size:
        s = x[i, 0]
        for j in range(1, x.shape[1]):
            s = s + x[i, j]
        out[i] = s


@cuda.jit
def mma_tiles(c, a, b):  # one 16x8 tile per warp; c holds the accumulator's start values
    w = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    g, t = lane >> 2, lane & 3
    fa = cuda.local.array(4, F16)
    fb = cuda.local.array(2, F16)
    fc = cuda.local.array(4, numba.float32)
    for i in range(4):
        fa[i] = a[w, g + 8 * (i >> 1), 2 * t + (i & 1)]
        fc[i] = c[w, g + 8 * (i >> 1), 2 * t + (i & 1)]
    for i in range(2):
        fb[i] = b[w, 2 * t + i, g]
    mma_m16n8k8(fa, fb, fc)
    for i in range(4):
        c[w, g + 8 * (i >> 1), 2 * t + (i & 1)] = fc[i]


@cuda.jit
def dp4a_all(x, y, z, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = dp4a(x[i], y[i], z[i])


def inputs(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n = 4096
    specials = np.array([65504, -65504, 6.1e-5, 5.96e-8, 0.0, -0.0, 1.0, 2049, 0.333, 300], np.float16)
    a = np.concatenate([specials, rng.standard_normal(n - len(specials)) * 10]).astype(np.float16)
    b = np.concatenate([specials[::-1], rng.standard_normal(n - len(specials))]).astype(np.float16)
    b[b == 0] = np.float16(1.0)
    c = rng.standard_normal(n).astype(np.float16)
    tiles = 64
    ma = rng.standard_normal((tiles, 16, 8)).astype(np.float16)
    mb = rng.standard_normal((tiles, 8, 8)).astype(np.float16)
    mc = rng.standard_normal((tiles, 16, 8)).astype(np.float32)
    ma[1], mb[1] = np.float16(200.0), np.float16(300.0)  # products past fp16's range: fine in fp32
    ma[2] = (rng.standard_normal((16, 8)) * 1e-4).astype(np.float16)  # subnormal-sized inputs
    x = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    y = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    x[0] = y[0] = np.int32(-2139062144)  # 0x80808080: four -128 bytes
    z = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    z[0] = np.int32(2**31 - 1)  # the sum wraps
    sums = (rng.standard_normal((256, 300)) * 3).astype(np.float16)
    return dict(a=a, b=b, c=c, ma=ma, mb=mb, mc=mc, x=x, y=y, z=z, sums=sums)


def run_all(launch, d: dict) -> dict:
    """Every parity kernel through `launch(kernel, grid, block, *arrays)`, outputs by name."""
    n = d["a"].size
    outs = {k: np.zeros(n, np.float16) for k in ("mul", "add", "fma2", "div", "narrow")}
    launch(half_ops, n // 128, 128, d["a"], d["b"], d["c"], *outs.values())
    outs["half_sum"] = np.zeros(d["sums"].shape[0], np.float16)
    launch(half_sum, 2, 128, d["sums"], outs["half_sum"])
    outs["mma"] = d["mc"].copy()
    launch(mma_tiles, d["ma"].shape[0], 32, outs["mma"], d["ma"], d["mb"])
    outs["dp4a"] = np.zeros(n, np.int32)
    launch(dp4a_all, n // 128, 128, d["x"], d["y"], d["z"], outs["dp4a"])
    return outs


def on_simulator(d: dict) -> dict:
    def launch(kernel, grid, block, *arrays):
        sim.launch(kernel, grid, block, arrays, trace=False)

    return run_all(launch, d)


def on_gpu(d: dict) -> dict:
    def launch(kernel, grid, block, *arrays):
        dev = [cuda.to_device(a) for a in arrays]
        kernel[grid, block](*dev)
        cuda.synchronize()
        for a, x in zip(arrays, dev):
            a[...] = x.copy_to_host()

    return run_all(launch, d)


def compare(simulated: dict, gpu: dict, d: dict) -> bool:
    ok = True
    want = (d["ma"].astype(np.float64) @ d["mb"].astype(np.float64) + d["mc"]).astype(np.float32)
    for name in simulated:
        s, g = simulated[name], gpu[name]
        same = np.array_equal(s.view(np.uint8), g.view(np.uint8)) or np.array_equal(s, g, equal_nan=True)
        with np.errstate(invalid="ignore"):  # inf - inf where both overflowed alike
            diff = np.abs(s.astype(np.float64) - g.astype(np.float64))
        diff = diff[np.isfinite(diff)]
        line = f"{name:9s} bitwise equal: {same}; elements differing: {int((s != g).sum())}/{s.size}"
        if diff.size:
            line += f"; max |sim - gpu| = {diff.max():.3g}"
        if name == "mma":
            ulp = np.spacing(np.abs(want)).astype(np.float64)
            bound = mma_tolerance(d["ma"], d["mb"], d["mc"])
            with np.errstate(invalid="ignore", divide="ignore"):
                used = float(np.nanmax(np.abs(g - want.astype(np.float64)) / bound))
            line += f"; GPU vs float64 truth rounded once: at most {used:.3g} of the mma bound"
            good = used <= 1 and float((np.abs(s - want) / ulp).max()) <= 0.5
        elif name == "fma2":
            good = True  # reported: a fused multiply-add on the GPU would differ here, by design
            line += " (a GPU that fuses the multiply-add rounds once: reported, not judged)"
        else:
            good = same
        ok &= good
        print(("ok   " if good else "FAIL ") + line)
    return ok


def main() -> int:
    d = inputs()
    simulated = on_simulator({k: v.copy() for k, v in d.items()})
    from helpers.device import gpu_present

    if not gpu_present():
        print("no CUDA GPU: the simulator's half ran; run this on a GPU machine to compare")
        return 2
    name = cuda.get_current_device().name  # bytes on older numba-cuda, str on newer
    print(f"device: {name.decode() if isinstance(name, bytes) else name}")
    ok = compare(simulated, on_gpu({k: v.copy() for k, v in d.items()}), d)
    return 0 if wmma_route() and ok else 1


def wmma_route() -> bool:
    """The CUDA C++ wmma tile linked into a Numba kernel, against NumPy."""
    from puzzles.tensor_cores import wmma

    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    c = cuda.device_array(256, np.float32)  # flat arrays: the C++ side sees pointers
    wmma.kernel()[1, 32](cuda.to_device(a.ravel()), cuda.to_device(b.T.ravel()), c)  # b column-major
    err = float(np.abs(c.copy_to_host().reshape(16, 16) - a.astype(np.float64) @ b.astype(np.float64)).max())
    good = err < 1e-4
    print(("ok   " if good else "FAIL ") + f"wmma (CUDA C++ linked): max |C - A @ B| = {err:.3g}")
    return good


if __name__ == "__main__":
    sys.exit(main())
