"""Chapter 16's GPU benchmark: a ResNet-style layer, direct, tiled and im2col + SGEMM, against cuDNN."""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .common import conv_ref, sum_tolerance
from .forward import conv_forward, conv_tiled

GOAL = {"ceiling": "cuDNN conv2d (torch, FP32)", "fraction": 0.5, "best": "ch16 im2col + SGEMM"}


GOAL_DIRECT = 0.3  # the direct layer's goal, reported by benchmark() itself


def benchmark(scale: float = 1.0, *, layer: tuple = (32, 64, 64, 56, 56)):
    """A ResNet-style layer (N=32, C=K=64, 56x56, 3x3, 'same' via a padded input): direct, tiled with
    a constant filter bank, and im2col + register-tiled SGEMM against torch's cuDNN conv2d in FP32
    (TF32 off), each validated first. `layer` = (N, C, K, H, W) (a smaller one for a dry run)."""
    from helpers import timing, tuning
    from helpers.timing import specialize
    from puzzles.pmpp import ch05_memory_tiling as ch05

    n_img, c_in, k_out, h, wd = layer
    n_img = max(1, int(n_img * scale))
    fs = 3
    rng = np.random.default_rng(16)
    # 'same' padding done once on the host: the kernels compute valid convolutions of the padded input
    x = np.zeros((n_img, c_in, h + 2, wd + 2), np.float32)
    x[:, :, 1:-1, 1:-1] = rng.uniform(-1, 1, (n_img, c_in, h, wd))
    w = rng.uniform(-0.1, 0.1, (k_out, c_in, fs, fs)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, k_out).astype(np.float32)
    flops = 2 * n_img * k_out * h * wd * c_in * fs * fs
    tol = dict(rtol=1e-4, atol=sum_tolerance(c_in * fs * fs + 1, 0.1))
    # validation on the first image in float64 (the whole batch in float64 is slow on the host)
    expected0 = conv_ref(x[:1], w, b).astype(np.float32)

    d_x, d_w, d_b = cuda.to_device(x), cuda.to_device(w), cuda.to_device(b)
    rows = []

    # the library peer, the ceiling of this table: cuDNN through torch, TF32 pinned off
    try:
        import torch
        import torch.nn.functional as F

        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
        tx = torch.as_tensor(x[:, :, 1:-1, 1:-1].copy(), device="cuda")
        tw, tb = torch.as_tensor(w, device="cuda"), torch.as_tensor(b, device="cuda")
        ty = F.conv2d(tx, tw, tb, padding=1)
        timing.validate("cuDNN conv2d", ty[:1].cpu().numpy(), expected0, **tol)
        s = timing.time_gpu(lambda: F.conv2d(tx, tw, tb, padding=1))
        rows.append(timing.Measurement(GOAL["ceiling"], s, flops=flops, ceiling=True, peer=True))
    except ImportError:
        print("torch is not installed: no cuDNN row (the goals need it)")

    # direct, one thread per output: the exercise kernel at 16 x 16 tiles
    y = cuda.device_array((n_img, k_out, h, wd), np.float32)
    direct = specialize(conv_forward)
    grid = (math.ceil(wd / 16), math.ceil(h / 16), n_img * k_out)
    run_direct = lambda: direct[grid, (16, 16)](y, d_x, d_w, d_b)  # noqa: E731
    run_direct()
    timing.validate("ch16 direct", y.copy_to_host()[:1], expected0, **tol)
    rows.append(timing.Measurement("ch16 direct", timing.time_gpu(run_direct), flops=flops))

    # shared input tiles, the filter bank in constant memory: 144 KiB of weights do not fit in 64 KiB, so
    # one kernel per group of KB filters, each with its group compiled in (CUDA C would copy the group
    # with cudaMemcpyToSymbol before each launch); 16 x 16 output tiles
    kb, tile = 16, 16
    groups = []
    for k0 in range(0, k_out, kb):
        bank = np.ascontiguousarray(w[k0 : k0 + kb])
        kern = specialize(
            conv_tiled,
            BANK=bank,
            BANK_BIAS=np.ascontiguousarray(b[k0 : k0 + kb]),
            BANK_K=bank.shape[0],
            BANK_C=c_in,
            BANK_FS=fs,
            TILE=tile,
            IN_TILE=tile + fs - 1,
        )
        groups.append((kern, y[:, k0 : k0 + kb]))
    tgrid = (math.ceil(wd / tile), math.ceil(h / tile), n_img)

    def run_tiled():
        for kern, part in groups:
            kern[tgrid, (tile, tile)](part, d_x)

    run_tiled()
    timing.validate("ch16 tiled, constant filter bank", y.copy_to_host()[:1], expected0, **tol)
    rows.append(
        timing.Measurement("ch16 tiled, constant filter bank", timing.time_gpu(run_tiled), flops=flops)
    )

    # im2col of the whole batch into one CFF x (N * HO * WO) matrix, then one register-tiled SGEMM
    # (chapter 5's kernel at its GPU tile sizes): y comes out as K x (N * HO * WO), i.e. in CNHW order
    cff, cols = c_in * fs * fs, n_img * h * wd
    xu = cuda.device_array((1, cff, cols), np.float32)
    unroll = specialize(_im2col_batch)
    wm = cuda.to_device(w.reshape(k_out, cff))
    yk = cuda.device_array((k_out, cols), np.float32)
    # chapter 5's register-tiled kernel at a configuration its benchmark validates: 64 x 64 block tiles
    # match the K = 64 filters exactly (a 128-row tile would leave half of each block idle); searched
    # against chapter 5's two-stage kernel (sgemm_fast.py) at 64-row tiles, every candidate validated
    gemms = {label: _gemm(ch05, specialize, *cfg) for label, cfg in GEMM_GRID.items()}
    add_bias = specialize(_add_row_bias)
    xflat, wflat = xu[0].reshape(cff * cols), wm.reshape(k_out * cff)

    def run_gemm(label):
        kern, (bm, bn), block, flat = gemms[label]
        unroll[(math.ceil(h * wd / 256), c_in, n_img), 256](xu, d_x, fs)
        a, bmat = (wflat, xflat) if flat else (wm, xu[0])
        kern[(math.ceil(cols / bn), math.ceil(k_out / bm)), block](yk, a, bmat, k_out, cff, cols)
        add_bias[(math.ceil(cols / 256), k_out), 256](yk, d_b)

    for label in gemms:
        run_gemm(label)
        got0 = yk.copy_to_host().reshape(k_out, n_img, h, wd)[:, :1].transpose(1, 0, 2, 3)
        timing.validate(f"ch16 im2col + SGEMM [{label}]", got0, expected0, **tol)
    choice, seconds = tuning.tuned_time(
        "ch16 im2col + SGEMM", {k: k for k in gemms}, lambda label: timing.time_gpu(lambda: run_gemm(label))
    )
    rows.append(timing.Measurement("ch16 im2col + SGEMM", seconds, flops=flops, config=choice.label))
    if rows[0].ceiling:
        best = max(
            timing.fraction_of_ceiling(rows, r) for r in ("ch16 direct", "ch16 tiled, constant filter bank")
        )
        print(f"best direct kernel: {best:.1%} of cuDNN (goal {GOAL_DIRECT:.0%})")
    return rows


# the GEMM of im2col, searched: (block rows, block columns, k step, outputs per thread, two-stage)
GEMM_GRID = {
    "register-tiled 64x64, 4x4/thread": (64, 64, 8, 4, 4, False),
    "two-stage 64x64, 4x4/thread": (64, 64, 8, 4, 4, True),
    "two-stage 64x128, 8x8/thread": (64, 128, 8, 8, 8, True),
}


def _gemm(ch05, specialize, bm, bn, bk, tm, tn, two_stage):
    """(kernel, (bm, bn), block, reads flat operands) for one GEMM_GRID entry."""
    from puzzles.pmpp.ch05_memory_tiling import sgemm_fast as f

    if two_stage:
        consts = f.fast_constants(bm, bn, bk, tm, tn)
        kern = specialize(f.prefetch2_matmul_kernel, (f._k1, f._k4, f._fetch), **consts)
    else:
        consts = ch05.regtile_constants(bm, bn, bk, tm, tn)
        kern = specialize(ch05.regtile_matmul_kernel, **consts)
    return kern, (bm, bn), (consts["TX"], consts["TY"]), two_stage


@cuda.jit
def _im2col_batch(xu, x, fs):
    # the whole batch in one matrix: column n * HO * WO + h * WO + w (GPU-sized blocks of the exercise)
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    plane = (x.shape[2] - fs + 1) * wo
    if j < plane:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[0, c * fs * fs + p * fs + q, n * plane + j] = x[n, c, h + p, w + q]


@cuda.jit
def _add_row_bias(y, b):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    k = cuda.blockIdx.y
    if j < y.shape[1]:
        y[k, j] += b[k]
