"""The benchmark's fastest direct Coulomb sum (GPU benchmark only, no exercise).

Per (point, atom) pair the term is q * rsqrt(dx^2 + dy^2 + dz^2): with dy^2 + dz^2 shared by a row's
points, four instructions (dx = x - ax, r2 = dx * dx + dyz2, r = rsqrt(r2), acc += q * r), one of
them on the special-function unit (MUFU: 16 per clock per SM on an H100 against 128 FP32 lanes),
which bounds the kernel. What this kernel changes against dcs_coarsened_rsqrt:

- **rsqrt.approx.ftz.f32**: `rsqrt` below, one MUFU.RSQ; libdevice's rsqrtf without fastmath is the
  IEEE-denormal version, which adds instructions around it (the distances here are >= Z_GAP = 0.5,
  far from denormals, so flushing them changes nothing).
- **The atoms split over threadIdx.y**: the benchmark's 512 x 512 map coarsened by 8 is 32k threads,
  eight warps per SM of an H100 (132 SMs), too few to hide the MUFU's latency. Here the block's
  SPLIT rows of threads sum the same points over different atoms (atom a goes to slice a % SPLIT) and
  add their partial sums in shared memory, in a fixed order (no atomics), so the grid has SPLIT
  times the threads of the coarsened kernel.
- **One 16-byte load per atom** (ch05's `load4_global`): x, y, z, charge of atom a.
- **SOFT of a thread's points on the FMA pipe** (`rsqrt_fma`: a guess from the float's bits and two
  Newton steps, about 9 instructions against the MUFU's one): when the MUFU is the bound, moving one
  point in 8 to the idle FMA pipe lets the MUFU finish the rest sooner (searched: SOFT 0 or 1).

A block covers CF * TXF points of row blockIdx.y: thread (tx, ty) the points tx, tx + TXF, ...
(a warp's writes coalesced), atoms ty, ty + SPLIT, .... Module constants via `specialize`
(`fast_constants`); tests/test_pmpp_ch18.py runs it on the simulator against float64 and reads the PTX.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32, types
from numba.core import errors
from numba.extending import intrinsic, overload

from ..ch05_memory_tiling.vec4 import load4_global
from .common import SPACING

TXF, SPLIT, CF = 8, 4, 2  # threads along the row, atom slices, points per thread (small: simulator)
SOFT = 0  # of a thread's CF points, how many take rsqrt_fma (the FMA pipe) instead of the MUFU
POINTS = TXF * CF  # points per block (shared-array shapes must be plain constants)
PARTS = SPLIT * POINTS


def fast_constants(txf: int, split: int, cf: int, soft: int = 0) -> dict:
    """The module constants for a block of txf x split threads, cf points per thread, `soft` of them
    with rsqrt_fma."""
    assert 0 <= soft < cf, "SOFT: some, not all, of a thread's points go to the FMA pipe"
    return {"TXF": txf, "SPLIT": split, "CF": cf, "POINTS": txf * cf, "PARTS": split * txf * cf, "SOFT": soft}


def rsqrt(x):
    """1 / sqrt(x) in float32: on the GPU one `rsqrt.approx.ftz.f32` (relative error below 2^-22)."""
    return np.float32(1.0) / np.sqrt(np.float32(x))


@intrinsic
def _rsqrt_approx(typingctx, x):
    if x != types.float32:
        raise errors.TypingError(f"rsqrt(x): x must be float32, got {x}")

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        f = ir.FloatType()
        asm = ir.InlineAsm(ir.FunctionType(f, [f]), "rsqrt.approx.ftz.f32 $0, $1;", "=f,f")
        return builder.call(asm, [args[0]])

    return types.float32(types.float32), codegen


@overload(rsqrt, target="cuda")
def _ov_rsqrt(x):
    return lambda x: _rsqrt_approx(x)


def float_bits(x):
    """The 32 bits of float32 `x` as an int32 (a register move on the GPU)."""
    return np.float32(x).view(np.int32)


def bits_float(i):
    """The float32 whose bits are the low 32 of integer `i`."""
    return np.array(i, np.int64).astype(np.int32).view(np.float32)[()]


@intrinsic
def _float_bits(typingctx, x):
    if x != types.float32:
        raise errors.TypingError(f"float_bits(x): x must be float32, got {x}")

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        return builder.bitcast(args[0], ir.IntType(32))

    return types.int32(types.float32), codegen


@intrinsic
def _bits_float(typingctx, i):
    if not isinstance(i, types.Integer):
        raise errors.TypingError(f"bits_float(i): i must be an integer, got {i}")

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        i32 = ir.IntType(32)
        v = args[0] if args[0].type == i32 else builder.trunc(args[0], i32)
        return builder.bitcast(v, ir.FloatType())

    return types.float32(i), codegen


@overload(float_bits, target="cuda")
def _ov_float_bits(x):
    return lambda x: _float_bits(x)


@overload(bits_float, target="cuda")
def _ov_bits_float(i):
    return lambda i: _bits_float(i)


@cuda.jit(device=True, inline="always")
def rsqrt_fma(x):
    # 1 / sqrt(x) without the MUFU: a first guess from the float's bits (exponent halved and negated),
    # then two Newton steps y <- y * (1.5 - x/2 * y^2), each on the FMA pipe; relative error < 5e-6
    y = bits_float(0x5F375A86 - (float_bits(x) >> 1))
    h = float32(0.5) * x
    y = y * (float32(1.5) - h * y * y)
    return y * (float32(1.5) - h * y * y)


@cuda.jit
def dcs_split_kernel(energy, atoms_flat, z, nx, ny):
    # atoms_flat: the (n, 4) atoms flattened (16-byte rows); energy as the other kernels
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    j = cuda.blockIdx.y
    i0 = cuda.blockIdx.x * POINTS + tx
    part = cuda.shared.array(PARTS, float32)
    acc = cuda.local.array(CF, float32)
    xs = cuda.local.array(CF, float32)
    for u in range(CF):
        acc[u] = float32(0.0)
        xs[u] = float32(i0 + u * TXF) * SPACING
    y = float32(j) * SPACING
    n = atoms_flat.shape[0] // 4
    for a in range(ty, n, SPLIT):
        ax, ay, az, q = load4_global(atoms_flat, 4 * a)
        dy = y - ay
        dz = z - az
        dyz2 = dy * dy + dz * dz  # shared by the thread's CF points
        for u in range(CF):
            dx = xs[u] - ax
            if u < SOFT:  # the MUFU does 16 terms a clock per SM, the FMA pipe takes a share
                acc[u] += q * rsqrt_fma(dx * dx + dyz2)
            else:
                acc[u] += q * rsqrt(dx * dx + dyz2)
    for u in range(CF):
        part[ty * POINTS + u * TXF + tx] = acc[u]
    cuda.syncthreads()
    # each thread adds up the slices of some points, slice 0 first: the same order on every run
    for p in range(ty * TXF + tx, POINTS, TXF * SPLIT):
        i = cuda.blockIdx.x * POINTS + p
        if i < nx:
            s = float32(0.0)
            for k in range(SPLIT):
                s += part[k * POINTS + p]
            energy[j, i] = s
