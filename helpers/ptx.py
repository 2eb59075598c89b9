"""The third engine: compile a kernel to PTX for the T4 (sm_75) with real numba-cuda.

No GPU or driver is needed (NVVM comes from pip through numba-cuda[cu12]). A kernel
the simulator runs but Numba cannot compile (lists, Python objects, dynamic
shapes) fails here with Numba's own message.
"""

from __future__ import annotations

import contextlib
import types

import numpy as np

from .sim.kernel import py_func

T4 = (7, 5)
_cache: dict = {}

_HINTS = (
    (
        "NRT required",
        "Python lists, dicts and other objects cannot be created in a kernel: use "
        "cuda.local.array or cuda.shared.array with a constant shape.",
    ),
    ("build_list", "Python lists cannot be created in a kernel: use cuda.local.array."),
    (
        "non-precise type pyobject",
        "the kernel uses a Python object Numba cannot type (a global that is "
        "not a number or array, or a module function Numba does not support).",
    ),
    (
        "Untyped global name",
        "the kernel uses a global name Numba cannot see or type: constants must be "
        "numbers defined before the kernel is compiled.",
    ),
    ("shape", "shared/local array shapes must be compile-time constants (literals or global ints)."),
    (
        "Cannot unify",
        "a variable gets values of different types on different paths (e.g. int then float): "
        "give it one type from the start (0.0 instead of 0).",
    ),
)


class NumbaRejected(Exception):
    """Real Numba refused to compile the kernel; the message explains why."""


def available() -> bool:
    """True when NVVM/NVRTC are installed so PTX compilation works."""
    try:
        from numba.cuda.cudadrv import nvvm

        nvvm.NVVM()
        return True
    except Exception:
        return False


def arg_types(args):
    import numba

    out = []
    for a in args:
        if hasattr(a, "__sim_array__"):
            a = a.__sim_array__()
        if isinstance(a, bool):
            out.append(numba.types.boolean)
        elif isinstance(a, int):
            out.append(numba.types.int64)
        elif isinstance(a, float):
            out.append(numba.types.float64)
        else:
            out.append(numba.typeof(np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a))
    return tuple(out)


def ptx_check(kernel, args, cc=T4) -> None:
    """Compile `kernel` for the argument types of `args`; raise NumbaRejected if Numba refuses."""
    from numba import cuda

    fn = py_func(kernel)
    sig = arg_types(args)
    consts = tuple(
        sorted(
            (n, v)
            for n, v in fn.__globals__.items()
            if n in fn.__code__.co_names and isinstance(v, (int, float, bool))
        )
    )
    key = (fn.__code__, sig, consts, cc)
    if key in _cache:
        err = _cache[key]
    else:
        err = None
        try:
            with _device_functions_without_gpu(cc):
                cuda.compile_ptx(_fresh(fn), sig, cc=cc)
        except Exception as e:  # Numba raises many error types; all mean "not compilable"
            err = _explain(e)
        _cache[key] = err
    if err:
        raise NumbaRejected(err)


@contextlib.contextmanager
def _device_functions_without_gpu(cc):
    """numba-cuda 0.30 asks the driver for the current device's compute capability when it
    compiles a device function, even inside compile_ptx; with no GPU, answer for the target."""
    from numba.cuda import dispatcher

    from .engine import gpu_present

    if gpu_present():
        yield
        return
    real = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = real


def _fresh(fn):
    """A copy of the function, so Numba's caches never mix it up with an edited version."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _explain(e) -> str:
    text = str(e)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    short = "\n".join("    " + ln for ln in lines[:14])
    hint = next((h for k, h in _HINTS if k in text), None)
    msg = (
        f"Real Numba cannot compile this kernel for a GPU ({type(e).__name__}), so it would not run on "
        f"Colab's T4 or any GPU, whatever the simulator says.\nNumba says:\n{short}"
    )
    if hint:
        msg += f"\nLikely cause: {hint}"
    return msg
