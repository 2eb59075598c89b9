"""The tensor-core GEMM for the benchmark (not an exercise): tc_mma_gemm with register tiling on
top, as ch05's register-tiled SGEMM does for FP32. C (fp32, M x N) = A (fp16, M x K) @ B, with B
given transposed (`bt`, N x K: the "col" operand of mma.sync's row.col, so that both operands' fp16
pairs are neighbours in memory). A block of 8 warps owns a 128x128 tile of C; each warp a 64x32
part: 4 x 4 mma tiles, 64 fp32 accumulators per lane. Per step of BK = 32 along K, the block copies
A's 128x32 and B's 128x32 slices into shared memory as 32-bit words (fp16 pairs), padded rows (20
words: the fragment loads hit 32 different banks), then each warp issues 4 x 16 mma.sync.

`fast_gemm_k16` is the same with m16n8k16 (sm_80 and newer), half the instructions.
Sizes: M and N multiples of 128, K a multiple of 32 (the benchmark's shapes); `fits` says so.
Without ldmatrix, cp.async double buffering or Hopper's wgmma, this is the mma.sync route's simple
form; `python -m tools.profile`/ncu show where its time goes (see the notebook's "Measure it").

`fast_gemm_pipe` / `fast_gemm_pipe_64x64` (candidates for issue 27's 50% of cuBLAS, sm_80 and newer)
add what ncu found missing: cp.async copies three k-slices ahead into XOR-swizzled shared memory
(no padding: 3 stages of both operands fill the 48 KiB static limit) and ldmatrix.x4 fragment loads
(one instruction per 16x16 A fragment or per two n8 B fragments, against 4 32-bit loads a lane).
Registers (ptxas 13.0, sm_90, no spills): 128 and 248. `python -m puzzles.tensor_cores.gemm_race`
times every kernel here against cuBLAS HGEMM."""

import numpy as np
from numba import cuda, float32, uint32

from helpers.tensor_cores import (
    cp_async_16,
    cp_async_commit,
    cp_async_wait,
    ldmatrix_x4,
    mma_m16n8k8_packed,
    mma_m16n8k16_packed,
)

BM, BN, BK = 128, 128, 32
WM, WN = 64, 32  # a warp's part of the block's tile: warps 2 (M) x 4 (N)
THREADS = 256
KW = BK // 2  # 32-bit words (fp16 pairs) per slice row
ROW = KW + 4  # padded row: 20 words, so rows g = 0..7 of a fragment load start on 8 different banks
TI, TJ = WM // 16, WN // 8  # mma tiles per warp: 4 x 4


def fits(m: int, n: int, k: int) -> bool:
    return m % BM == 0 and n % BN == 0 and k % BK == 0


@cuda.jit
def fast_gemm(c, a32, bt32, m, n, k):
    """a32: A as uint32 words (M x K/2); bt32: B transposed as words (N x K/2)."""
    tid = cuda.threadIdx.x
    warp, lane = tid // 32, tid % 32
    g, t = lane >> 2, lane & 3
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    wm, wn = WM * (warp // 4), WN * (warp % 4)
    sa = cuda.shared.array((BM, ROW), uint32)
    sb = cuda.shared.array((BN, ROW), uint32)
    acc = cuda.local.array((TI, TJ, 4), float32)
    for i in range(TI):
        for j in range(TJ):
            for r in range(4):
                acc[i, j, r] = 0.0
    for k0 in range(0, k // 2, KW):  # in words
        for e in range(tid, BM * KW, THREADS):  # 8 words of A and 8 of B per thread
            r, w = e // KW, e % KW
            sa[r, w] = a32[row0 + r, k0 + w]
            sb[r, w] = bt32[col0 + r, k0 + w]
        cuda.syncthreads()
        for ks in range(0, KW, 4):  # k8 steps: 4 words of each row
            for j in range(TJ):
                b01 = sb[wn + 8 * j + g, ks + t]
                for i in range(TI):
                    ra = wm + 16 * i + g
                    d = mma_m16n8k8_packed(
                        sa[ra, ks + t],
                        sa[ra + 8, ks + t],
                        b01,
                        acc[i, j, 0],
                        acc[i, j, 1],
                        acc[i, j, 2],
                        acc[i, j, 3],
                    )
                    acc[i, j, 0] = d[0]
                    acc[i, j, 1] = d[1]
                    acc[i, j, 2] = d[2]
                    acc[i, j, 3] = d[3]
        cuda.syncthreads()
    for i in range(TI):
        for j in range(TJ):
            for r in range(4):
                c[row0 + wm + 16 * i + g + 8 * (r >> 1), col0 + wn + 8 * j + 2 * t + (r & 1)] = acc[i, j, r]


@cuda.jit
def fast_gemm_k16(c, a32, bt32, m, n, k):
    """fast_gemm with m16n8k16 (sm_80 and newer): half the mma instructions for the same work."""
    tid = cuda.threadIdx.x
    warp, lane = tid // 32, tid % 32
    g, t = lane >> 2, lane & 3
    row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    wm, wn = WM * (warp // 4), WN * (warp % 4)
    sa = cuda.shared.array((BM, ROW), uint32)
    sb = cuda.shared.array((BN, ROW), uint32)
    acc = cuda.local.array((TI, TJ, 4), float32)
    for i in range(TI):
        for j in range(TJ):
            for r in range(4):
                acc[i, j, r] = 0.0
    for k0 in range(0, k // 2, KW):
        for e in range(tid, BM * KW, THREADS):
            r, w = e // KW, e % KW
            sa[r, w] = a32[row0 + r, k0 + w]
            sb[r, w] = bt32[col0 + r, k0 + w]
        cuda.syncthreads()
        for ks in range(0, KW, 8):  # k16 steps: 8 words of each row
            for j in range(TJ):
                nb = wn + 8 * j + g
                b0, b1 = sb[nb, ks + t], sb[nb, ks + 4 + t]
                for i in range(TI):
                    ra = wm + 16 * i + g
                    d = mma_m16n8k16_packed(
                        sa[ra, ks + t],
                        sa[ra + 8, ks + t],
                        sa[ra, ks + 4 + t],
                        sa[ra + 8, ks + 4 + t],
                        b0,
                        b1,
                        acc[i, j, 0],
                        acc[i, j, 1],
                        acc[i, j, 2],
                        acc[i, j, 3],
                    )
                    acc[i, j, 0] = d[0]
                    acc[i, j, 1] = d[1]
                    acc[i, j, 2] = d[2]
                    acc[i, j, 3] = d[3]
        cuda.syncthreads()
    for i in range(TI):
        for j in range(TJ):
            for r in range(4):
                c[row0 + wm + 16 * i + g + 8 * (r >> 1), col0 + wn + 8 * j + 2 * t + (r & 1)] = acc[i, j, r]


# --- the pipelined candidates: cp.async into swizzled shared memory, 3 stages, ldmatrix fragments
STAGES = 3  # k-slices in flight: 3 x (A 8 KiB + B 8 KiB) = 48 KiB, the static shared-memory limit
SLICE = BM * KW  # words of A's slice in one stage (128 rows x 16 words)


@cuda.jit(device=True, inline=True)
def swz(row, chunk):
    """Word offset of 16-byte `chunk` (0-3) of `row` in a 64-byte-row slice, its chunk XOR-ed with
    bits 1-2 of the row: the 8 rows one ldmatrix phase reads (8 consecutive rows, one chunk) land
    on 8 different 16-byte bank groups, so neither ldmatrix nor the cp.async stores conflict."""
    return row * KW + 4 * (chunk ^ ((row >> 1) & 3))


def pipe_kernel(warps_n: int, wn: int, bn: int = BN, stages: int = STAGES):
    """A 128 x `bn`-tile kernel of 2 x `warps_n` warps, each 64 x `wn` of C (m16n8k16, sm_80 and
    newer), fed by a `stages`-stage cp.async pipeline (slice kt + stages - 1 is copied while slice kt
    is multiplied) and ldmatrix.x4 fragment loads (one brings a warp a 16x16 A fragment, or the B
    fragments of two n8 tiles). Its threads and tile width: `threads_of(kernel)`, `tile_n(kernel)`."""
    assert warps_n * wn == bn and wn % 16 == 0 and stages * (BM + bn) * KW * 4 <= 48 * 1024
    threads = 64 * warps_n
    ti, tj = WM // 16, wn // 8  # mma tiles per warp
    copies_a, copies_b = BM * 4 // threads, bn * 4 // threads  # 16-byte chunks a thread, a slice
    slice_b = bn * KW
    smem_a, smem_b = stages * SLICE, stages * slice_b
    wait = stages - 2  # cp.async groups left pending when a slice is used (a PTX immediate)

    @cuda.jit(device=True, inline=True)
    def load_slice(sa, sb, a32, bt32, stage, kt, row0, col0, kw, tid):
        """Start the copies of A's and B's k-slice `kt` into `stage`."""
        for p in range(copies_a):
            e = tid + threads * p
            r, ch = e >> 2, e & 3
            cp_async_16(sa, stage * SLICE + swz(r, ch), a32, (row0 + r) * kw + kt * KW + 4 * ch)
        for p in range(copies_b):
            e = tid + threads * p
            r, ch = e >> 2, e & 3
            cp_async_16(sb, stage * slice_b + swz(r, ch), bt32, (col0 + r) * kw + kt * KW + 4 * ch)

    def fast_gemm_pipe(c, a32, bt32, m, n, k):
        tid = cuda.threadIdx.x
        warp, lane = tid // 32, tid % 32
        g, t = lane >> 2, lane & 3
        row0, col0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * bn
        wm0, wn0 = WM * (warp // warps_n), wn * (warp % warps_n)
        sa = cuda.shared.array(smem_a, uint32, alignment=16)
        sb = cuda.shared.array(smem_b, uint32, alignment=16)
        acc = cuda.local.array((ti, tj, 4), float32)
        af = cuda.local.array((ti, 4), uint32)
        bf = cuda.local.array((tj, 2), uint32)
        for i in range(ti):
            for j in range(tj):
                for r in range(4):
                    acc[i, j, r] = 0.0
        kw = k // 2
        ktiles = k // BK
        for s in range(stages - 1):
            if s < ktiles:
                load_slice(sa, sb, a32, bt32, s, s, row0, col0, kw, tid)
            cp_async_commit()
        # the row this lane addresses: A rows lane % 16 at chunk + lane // 16 (matrices: rows 0-7 and
        # 8-15 at k 0-7, then at k 8-15); B rows lane % 8 + 8 (lane // 16) at chunk + (lane // 8) % 2
        a_row, a_hi = lane & 15, lane >> 4
        b_row, b_hi = (lane & 7) + 8 * (lane >> 4), (lane >> 3) & 1
        for kt in range(ktiles):
            cp_async_wait(wait)  # this thread's copies of slice kt have landed
            cuda.syncthreads()  # everyone's have, and everyone is done with slice kt - 1's stage
            nxt = kt + stages - 1
            if nxt < ktiles:
                load_slice(sa, sb, a32, bt32, nxt % stages, nxt, row0, col0, kw, tid)
            cp_async_commit()  # (an empty group at the end keeps the count `wait` means)
            stage = kt % stages
            for kk in range(BK // 16):
                for i in range(ti):
                    f = ldmatrix_x4(sa, stage * SLICE + swz(wm0 + 16 * i + a_row, 2 * kk + a_hi))
                    for q in range(4):  # rows 0-7 / 8-15 at k 0-7, then at k 8-15: m16n8k16's a0-a3
                        af[i, q] = f[q]
                for jp in range(tj // 2):
                    f = ldmatrix_x4(sb, stage * slice_b + swz(wn0 + 16 * jp + b_row, 2 * kk + b_hi))
                    bf[2 * jp, 0] = f[0]  # columns 0-7 of the pair, k 0-7
                    bf[2 * jp, 1] = f[1]  # columns 0-7, k 8-15
                    bf[2 * jp + 1, 0] = f[2]  # columns 8-15, k 0-7
                    bf[2 * jp + 1, 1] = f[3]  # columns 8-15, k 8-15
                for i in range(ti):
                    for j in range(tj):
                        d = mma_m16n8k16_packed(
                            af[i, 0],
                            af[i, 1],
                            af[i, 2],
                            af[i, 3],
                            bf[j, 0],
                            bf[j, 1],
                            acc[i, j, 0],
                            acc[i, j, 1],
                            acc[i, j, 2],
                            acc[i, j, 3],
                        )
                        acc[i, j, 0] = d[0]
                        acc[i, j, 1] = d[1]
                        acc[i, j, 2] = d[2]
                        acc[i, j, 3] = d[3]
        cp_async_wait(0)
        for i in range(ti):
            for j in range(tj):
                for r in range(4):
                    c[row0 + wm0 + 16 * i + g + 8 * (r >> 1), col0 + wn0 + 8 * j + 2 * t + (r & 1)] = acc[
                        i, j, r
                    ]

    fast_gemm_pipe.__name__ = fast_gemm_pipe.__qualname__ = f"fast_gemm_pipe_{2 * warps_n}w_64x{wn}"
    _SHAPE[fast_gemm_pipe] = (threads, bn)
    return cuda.jit(fast_gemm_pipe)


_SHAPE: dict = {}  # a pipelined kernel's Python function -> (threads per block, tile width)


def threads_of(kernel) -> int:
    return _SHAPE.get(getattr(kernel, "py_func", kernel), (THREADS, BN))[0]


def tile_n(kernel) -> int:
    return _SHAPE.get(getattr(kernel, "py_func", kernel), (THREADS, BN))[1]


def fit(kernel, m: int, n: int, k: int) -> tuple[int, int, int]:
    """(m, n, k) with n rounded up to `kernel`'s tile width (validation shapes for every kernel)."""
    return m, -(-n // tile_n(kernel)) * tile_n(kernel), k


def capped(kernel, registers: int):
    """`kernel` compiled with at most `registers` a thread (more blocks a SM; spills are the risk)."""
    return cuda.jit(max_registers=registers)(kernel.py_func)


fast_gemm_pipe = pipe_kernel(4, 32)  # 8 warps of 64x32: fast_gemm_k16's tiles
fast_gemm_pipe_64x64 = pipe_kernel(2, 64)  # 4 warps of 64x64: twice the mma per ldmatrix, 128 threads
# 8 warps of 64x64 on a 128x256 tile, 2 stages (48 KiB): the most mma per byte of shared memory
fast_gemm_pipe_256 = pipe_kernel(4, 64, bn=256, stages=2)


def launch(c, a32, bt32, m, n, k, kernel=None):
    kernel = kernel or fast_gemm
    kernel[(n // tile_n(kernel), m // BM), threads_of(kernel)](c, a32, bt32, m, n, k)


def words(x: np.ndarray) -> np.ndarray:
    """An fp16 matrix (last axis even) as uint32 words of neighbouring pairs, the low half first."""
    return np.ascontiguousarray(x, np.float16).view(np.uint32)
