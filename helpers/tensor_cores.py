"""The course's tensor-core intrinsics for a learner's @cuda.jit kernel. numba-cuda has no wmma/mma
API, so each is a `numba.extending.intrinsic` around one PTX instruction (llvmlite's InlineAsm):

- `mma_m16n8k8(a, b, c)`: one warp multiplies a 16x8 fp16 tile A by an 8x8 fp16 tile B and adds the
  16x8 fp32 tile C, in place (`mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32`, sm_75 and newer:
  the T4 has it). Each lane passes its fragments: `a` = cuda.local.array(4, numba.float16),
  `b` = cuda.local.array(2, numba.float16), `c` = cuda.local.array(4, numba.float32); which element
  each value holds is `position(frag, lane, i)` (helpers/sim/mma.py, from the PTX ISA).
- `dp4a(a, b, c)`: c + the dot product of the four signed bytes packed in int32 `a` and `b`
  (`dp4a.s32.s32`, sm_61 and newer).
- `ldmatrix_x4(shared, offset)` (and x1, x2, .trans): the warp loads 8x8 tiles of 16-bit values from
  shared memory straight into mma fragment registers (sm_75); `cp_async_16(shared, i, global, j)`,
  `cp_async_commit()`, `cp_async_wait(n)`: copies global -> shared that run while the warp computes
  (sm_80). Offsets count the array's own elements. What they mean lane by lane: helpers/sim/mma.py.

On the simulator each is tagged (`_sim_op`) and the engines run their own version: the mma as a
warp-collective operation (every lane's fragments gathered, multiplied, scattered back), with the
simulator's diagnostics (a lane missing, a fragment of the wrong type, an unwritten fragment value).
"""

from __future__ import annotations

from numba import cuda, types
from numba.core import errors
from numba.extending import intrinsic

from .sim.mma import OP, position

MMA_ARCH = (7, 5)  # mma.sync m16n8k8 with fp16 inputs: Turing (T4) and newer
MMA_K16_ARCH = (8, 0)  # m16n8k16: Ampere and newer
DP4A_ARCH = (6, 1)


def arch_error(what: str, need: tuple[int, int], cc: tuple[int, int]) -> str | None:
    """Why `what` cannot run on a GPU of compute capability `cc`, or None when it can."""
    if tuple(cc) >= need:
        return None
    gpus = (
        "a T4 (7.5) or newer" if need <= (7, 5) else "an A100, L4 or H100 (8.0 or newer; Colab's T4 is 7.5)"
    )
    return (
        f"{what} needs a GPU of compute capability {need[0]}.{need[1]} or newer, and this one is "
        f"{cc[0]}.{cc[1]}: it does not have this instruction. Use {gpus}, or run the kernel on the "
        "simulator (helpers.use('sim'))."
    )


def _target_cc():
    """The compute capability being compiled for: the GPU's, or the compile check's target (7.5)
    with no GPU (helpers.ptx answers numba-cuda's question for it); None when nothing says."""
    try:
        from numba.cuda import dispatcher

        return tuple(dispatcher.get_current_device().compute_capability)
    except Exception:  # noqa: BLE001 - no driver and no compile check around: nothing to refuse
        return None


def _require(what, need):
    cc = _target_cc()
    why = cc and arch_error(what, need, cc)
    if why:
        raise errors.TypingError(why)


def _asm(builder, text, constraints, ret, args):
    from llvmlite import ir

    fnty = ir.FunctionType(ret, [a.type for a in args])
    return builder.call(ir.InlineAsm(fnty, text, constraints, side_effect=True), args)


@intrinsic
def _mma(typingctx, a0, a1, a2, a3, b0, b1, c0, c1, c2, c3):
    """The instruction on ten scalars (4 + 2 fp16, 4 fp32); four fp32 come back."""
    f16, f32 = types.float16, types.float32
    got = (a0, a1, a2, a3, b0, b1, c0, c1, c2, c3)
    want = (f16,) * 6 + (f32,) * 4
    if got != want:
        raise errors.TypingError(
            f"{OP}: the fragments must be float16 (A: 4 values, B: 2) and float32 (C: 4), got "
            f"{', '.join(str(t) for t in got)}"
        )
    _require(OP, MMA_ARCH)

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        i32, f = ir.IntType(32), ir.FloatType()

        def pair(lo, hi):  # two fp16 (i16 in Numba's IR) in one 32-bit register, `lo` in the low half
            hi = builder.shl(builder.zext(hi, i32), ir.Constant(i32, 16))
            return builder.or_(builder.zext(lo, i32), hi)

        regs = [pair(args[0], args[1]), pair(args[2], args[3]), pair(args[4], args[5]), *args[6:]]
        r = _asm(
            builder,
            "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {$0,$1,$2,$3}, {$4,$5}, {$6}, {$7,$8,$9,$10};",
            "=f,=f,=f,=f,r,r,r,f,f,f,f",
            ir.LiteralStructType([f, f, f, f]),
            regs,
        )
        outs = [builder.extract_value(r, i) for i in range(4)]
        return context.make_tuple(builder, sig.return_type, outs)

    return types.UniTuple(f32, 4)(*want), codegen


@intrinsic
def mma_m16n8k8_packed(typingctx, a01, a23, b01, c0, c1, c2, c3):
    """The instruction on registers as the hardware holds them: two fp16 per uint32 (the lower
    column or row in the low half: a01 = a[0] | a[1] << 16), four fp32; four fp32 come back. Fast
    kernels load the pairs from memory as 32-bit words (a tile's two neighbouring fp16)."""
    u32, f32 = types.uint32, types.float32
    got = (a01, a23, b01, c0, c1, c2, c3)
    want = (u32,) * 3 + (f32,) * 4
    if got != want:
        raise errors.TypingError(
            f"mma_m16n8k8_packed: three uint32 (fp16 pairs) and four float32, got {', '.join(map(str, got))}"
        )
    _require(OP, MMA_ARCH)

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        f = ir.FloatType()
        r = _asm(
            builder,
            "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {$0,$1,$2,$3}, {$4,$5}, {$6}, {$7,$8,$9,$10};",
            "=f,=f,=f,=f,r,r,r,f,f,f,f",
            ir.LiteralStructType([f, f, f, f]),
            list(args),
        )
        outs = [builder.extract_value(r, i) for i in range(4)]
        return context.make_tuple(builder, sig.return_type, outs)

    return types.UniTuple(f32, 4)(*want), codegen


@intrinsic
def mma_m16n8k16_packed(typingctx, a0, a1, a2, a3, b0, b1, c0, c1, c2, c3):
    """`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (sm_80 and newer: not on a T4), twice
    the work of m16n8k8 per instruction. Registers (fp16 pairs): a0/a1 hold rows g/g + 8 at k = 2t,
    2t + 1; a2/a3 the same rows at k = 2t + 8, 2t + 9; b0 k = 2t, 2t + 1 and b1 k = 2t + 8, 2t + 9 of
    column g; C as for m16n8k8. (The simulator runs it as two m16n8k8 steps: k 0-7, then k 8-15.)"""
    u32, f32 = types.uint32, types.float32
    got = (a0, a1, a2, a3, b0, b1, c0, c1, c2, c3)
    want = (u32,) * 6 + (f32,) * 4
    if got != want:
        raise errors.TypingError(
            f"mma_m16n8k16_packed: six uint32 (fp16 pairs) and four float32, got {', '.join(map(str, got))}"
        )
    _require("mma_m16n8k16", MMA_K16_ARCH)

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        f = ir.FloatType()
        r = _asm(
            builder,
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
            "{$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};",
            "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
            ir.LiteralStructType([f, f, f, f]),
            list(args),
        )
        outs = [builder.extract_value(r, i) for i in range(4)]
        return context.make_tuple(builder, sig.return_type, outs)

    return types.UniTuple(f32, 4)(*want), codegen


@intrinsic
def _fragments(typingctx, a, b, c):
    """Nothing on a GPU (the typer checks the fragments' types); the simulator checks shapes."""
    for name, arr, dt in (("A", a, types.float16), ("B", b, types.float16), ("C", c, types.float32)):
        if not isinstance(arr, types.Array) or arr.dtype != dt or arr.ndim != 1:
            raise errors.TypingError(f"{OP}: fragment {name} must be a 1-D local array of {dt}, got {arr}")

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return types.none(a, b, c), codegen


@cuda.jit(device=True)
def mma_m16n8k8(a, b, c):
    """c (4 fp32 per lane) += A (4 fp16 per lane in a) @ B (2 fp16 per lane in b), for the warp."""
    _fragments(a, b, c)
    d0, d1, d2, d3 = _mma(a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], c[2], c[3])
    c[0] = d0
    c[1] = d1
    c[2] = d2
    c[3] = d3


@intrinsic
def dp4a(typingctx, a, b, c):
    """c + sum of the products of the four signed bytes of a and of b (all int32)."""
    for t in (a, b, c):
        if not isinstance(t, types.Integer):
            raise errors.TypingError(f"dp4a takes three int32 (4 packed int8, 4 packed int8, a sum), got {t}")
    _require("dp4a", DP4A_ARCH)

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        i32 = ir.IntType(32)
        vals = [context.cast(builder, v, t, types.int32) for v, t in zip(args, sig.args)]
        return _asm(builder, "dp4a.s32.s32 $0, $1, $2, $3;", "=r,r,r,r", i32, vals)

    return types.int32(a, b, c), codegen


# --- moving tiles: ldmatrix (sm_75) and cp.async (sm_80), on a shared/global array at an element offset

LDMATRIX_ARCH = (7, 5)
CP_ASYNC_ARCH = (8, 0)


def _address(context, builder, aryty, ary, offty, offset, space):
    """The address of element `offset` (counted in the array's own dtype from its first element, as
    in a C-contiguous array's flat view) in the window of `space` (3: shared, a 32-bit integer; 1:
    global, a 64-bit integer): Numba's data pointer is generic, an LLVM address-space cast turns it
    into the window's (cvta.to.shared/global in the PTX, or nothing where LLVM sees where it came from)."""
    from llvmlite import ir

    data = context.make_array(aryty)(context, builder, ary).data
    ptr = builder.gep(data, [context.cast(builder, offset, offty, types.intp)])
    i8 = ir.IntType(8)
    generic = builder.bitcast(ptr, i8.as_pointer())
    windowed = builder.addrspacecast(generic, ir.PointerType(i8, space))
    return builder.ptrtoint(windowed, ir.IntType(32 if space == 3 else 64))


def _check_array(what, ary, offset):
    if not isinstance(ary, types.Array) or not isinstance(offset, types.Integer):
        raise errors.TypingError(f"{what} takes an array and an integer element offset, got {ary}, {offset}")


def _ldmatrix(count: int, trans: bool):
    name = f"ldmatrix_x{count}{'_trans' if trans else ''}"
    text = (
        f"ldmatrix.sync.aligned.m8n8.x{count}{'.trans' if trans else ''}.shared.b16 "
        "{" + ",".join(f"${i}" for i in range(count)) + "}, [$" + str(count) + "];"
    )

    def typer(typingctx, ary, offset):
        _check_array(name, ary, offset)
        _require(name, LDMATRIX_ARCH)

        def codegen(context, builder, sig, args):
            from llvmlite import ir

            i32 = ir.IntType(32)
            addr = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1], 3)
            ret = i32 if count == 1 else ir.LiteralStructType([i32] * count)
            r = _asm(builder, text, ",".join(["=r"] * count) + ",r,~{memory}", ret, [addr])
            outs = [r] if count == 1 else [builder.extract_value(r, i) for i in range(count)]
            return context.make_tuple(builder, sig.return_type, outs)

        return types.UniTuple(types.uint32, count)(ary, offset), codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = (
        f"`{text.split(' {')[0]}`: the warp loads {count} 8x8 matrices of 16-bit values from shared "
        "memory; lane l gives the address (array + element offset) of row l % 8 of matrix l // 8 (lanes "
        f"0-{8 * count - 1} are read; 16 bytes a row, 16-byte aligned) and receives, per matrix, one "
        "uint32: row l >> 2, columns 2 (l & 3) and 2 (l & 3) + 1"
        + (" of the transposed matrix." if trans else " (the low half the first).")
    )
    op = intrinsic(typer)
    op._sim_op = "course_" + name
    return op


ldmatrix_x1 = _ldmatrix(1, False)
ldmatrix_x2 = _ldmatrix(2, False)
ldmatrix_x4 = _ldmatrix(4, False)
ldmatrix_x2_trans = _ldmatrix(2, True)
ldmatrix_x4_trans = _ldmatrix(4, True)


@intrinsic
def cp_async_16(typingctx, dst, dst_offset, src, src_offset):
    """`cp.async.cg.shared.global`: start copying 16 bytes from `src` (global) at element
    `src_offset` to `dst` (shared) at element `dst_offset`, without waiting (both 16-byte aligned);
    `cp_async_commit()` closes a group of copies, `cp_async_wait(n)` waits until at most n groups
    are still in flight (sm_80 and newer)."""
    _check_array("cp_async_16", dst, dst_offset)
    _check_array("cp_async_16", src, src_offset)
    _require("cp_async_16 (cp.async)", CP_ASYNC_ARCH)

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        d = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1], 3)
        s = _address(context, builder, sig.args[2], args[2], sig.args[3], args[3], 1)
        _asm(builder, "cp.async.cg.shared.global [$0], [$1], 16;", "r,l,~{memory}", ir.VoidType(), [d, s])
        return context.get_dummy_value()

    return types.none(dst, dst_offset, src, src_offset), codegen


@intrinsic
def cp_async_commit(typingctx):
    """`cp.async.commit_group`: the copies started since the last commit form one group."""
    _require("cp_async_commit (cp.async)", CP_ASYNC_ARCH)

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        _asm(builder, "cp.async.commit_group;", "~{memory}", ir.VoidType(), [])
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic(prefer_literal=True)
def cp_async_wait(typingctx, n):
    """`cp.async.wait_group n`: wait until at most `n` (a constant) committed groups are pending."""
    if not isinstance(n, types.IntegerLiteral):
        raise errors.TypingError(
            f"cp_async_wait(n): n must be a constant integer (the PTX takes an immediate), got {n}"
        )
    _require("cp_async_wait (cp.async)", CP_ASYNC_ARCH)
    count = n.literal_value

    def codegen(context, builder, sig, args):
        from llvmlite import ir

        _asm(builder, f"cp.async.wait_group {count};", "~{memory}", ir.VoidType(), [])
        return context.get_dummy_value()

    return types.none(n), codegen


cp_async_16._sim_op = "course_cp_async_16"
cp_async_commit._sim_op = "course_cp_async_commit"
cp_async_wait._sim_op = "course_cp_async_wait"


# the simulator's engines run their own version of each (helpers/sim/kernel.py rebinds by this tag)
_mma._sim_op = "course_mma"
_fragments._sim_op = "course_fragments"
mma_m16n8k8_packed._sim_op = "course_mma_packed"
mma_m16n8k16_packed._sim_op = "course_mma_k16_packed"
dp4a._sim_op = "course_dp4a"

__all__ = [
    "CP_ASYNC_ARCH",
    "DP4A_ARCH",
    "LDMATRIX_ARCH",
    "MMA_ARCH",
    "MMA_K16_ARCH",
    "arch_error",
    "cp_async_16",
    "cp_async_commit",
    "cp_async_wait",
    "dp4a",
    "ldmatrix_x1",
    "ldmatrix_x2",
    "ldmatrix_x2_trans",
    "ldmatrix_x4",
    "ldmatrix_x4_trans",
    "mma_m16n8k8",
    "mma_m16n8k8_packed",
    "mma_m16n8k16_packed",
    "position",
]
