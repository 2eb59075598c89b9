"""16-byte loads and stores of four float32 for the benchmark's SGEMM (GPU benchmark only).

numba-cuda's vector types (`cuda.float32x4`, in 0.22 and 0.30) are structs of four scalars for a
kernel's local values: a NumPy array cannot be typed as an array of them, so they cannot make a load
from global memory 16 bytes wide. These three functions can: each is an `intrinsic` that casts the
address of element `i` of a 1-D float32 array to a `<4 x float>` pointer and loads or stores it with
16-byte alignment, which NVVM emits as one `ld.global.v4.f32` / `ld.shared.v4.f32` /
`st.shared.v4.f32` (tests/test_pmpp_ch02_05.py reads the PTX for them, both numba-cuda pins).

The caller guarantees what the hardware needs: `i` a multiple of 4, the array's data 16-byte aligned
(device allocations and `cuda.shared.array(..., alignment=16)` are) and `i + 3` inside the array (no
bounds test). Called from Python (the course's simulator runs kernels as Python) each reads or writes
the four elements one by one, with the simulator's checks.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic, overload

_F4 = ir.VectorType(ir.FloatType(), 4)
_GLOBAL = 1  # NVVM's address space of global memory


def load4_global(a, i):
    """(a[i], a[i + 1], a[i + 2], a[i + 3]) from global memory in one 16-byte load."""
    return a[i], a[i + 1], a[i + 2], a[i + 3]


def load4(a, i):
    """(a[i], ..., a[i + 3]) in one 16-byte load from wherever `a` lives (shared memory here)."""
    return a[i], a[i + 1], a[i + 2], a[i + 3]


def store4(a, i, x, y, z, w):
    """a[i:i + 4] = x, y, z, w in one 16-byte store (global or shared memory)."""
    a[i], a[i + 1], a[i + 2], a[i + 3] = x, y, z, w


def _check(what, arr, idx):
    ok = isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == types.float32
    if not ok or not isinstance(idx, types.Integer):
        raise errors.TypingError(f"{what}(a, i): a 1-D float32 array and an integer index, got {arr}, {idx}")


def _pointer(context, builder, aryty, ary, idx, space):
    """The address of ary[idx] as a <4 x float> pointer (in `space`: 0 generic, 1 global)."""
    a = context.make_array(aryty)(context, builder, ary)
    ptr = cgutils.get_item_pointer(context, builder, aryty, a, [idx], wraparound=False, boundscheck=False)
    vp = builder.bitcast(ptr, _F4.as_pointer())
    return builder.addrspacecast(vp, _F4.as_pointer(space)) if space else vp


def _loader(space, what):
    @intrinsic
    def load(typingctx, arr, idx):
        _check(what, arr, idx)

        def codegen(context, builder, sig, args):
            v = builder.load(_pointer(context, builder, sig.args[0], args[0], args[1], space), align=16)
            four = [builder.extract_element(v, ir.Constant(ir.IntType(32), k)) for k in range(4)]
            return context.make_tuple(builder, sig.return_type, four)

        return types.UniTuple(types.float32, 4)(arr, idx), codegen

    return load


_load4_global = _loader(_GLOBAL, "load4_global")
_load4 = _loader(0, "load4")


@intrinsic
def _store4(typingctx, arr, idx, x, y, z, w):
    _check("store4", arr, idx)
    f32 = types.float32

    def codegen(context, builder, sig, args):
        v = ir.Constant(_F4, ir.Undefined)
        for k in range(4):
            v = builder.insert_element(v, args[2 + k], ir.Constant(ir.IntType(32), k))
        builder.store(v, _pointer(context, builder, sig.args[0], args[0], args[1], 0), align=16)
        return context.get_dummy_value()

    return types.void(arr, idx, f32, f32, f32, f32), codegen


@overload(load4_global, target="cuda")
def _ov_load4_global(a, i):
    return lambda a, i: _load4_global(a, i)


@overload(load4, target="cuda")
def _ov_load4(a, i):
    return lambda a, i: _load4(a, i)


@overload(store4, target="cuda")
def _ov_store4(a, i, x, y, z, w):
    return lambda a, i, x, y, z, w: _store4(a, i, x, y, z, w)
