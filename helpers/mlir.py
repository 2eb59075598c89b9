"""The compile check through numba-cuda-mlir, numba-cuda's successor (MP_COMPILER=mlir).

A learner's kernel stays `from numba import cuda` / `@cuda.jit`: its Python function is compiled
again by `numba_cuda_mlir`, with every global that names numba-cuda (the `cuda` module, device
functions, Numba scalar types) swapped for numba-cuda-mlir's own. With no GPU, numba-cuda-mlir still
asks the driver for the device's compute capability; it is told the target's instead.
"""

from __future__ import annotations

import types

NAME = "numba-cuda-mlir"


def available() -> bool:
    try:
        import numba_cuda_mlir  # noqa: F401
    except Exception:  # noqa: BLE001 - not installed, or its LLVM failed to load: not available
        return False
    return True


def compile_ptx(fn, args, cc) -> str:
    """`fn`'s PTX for `cc`, compiled by numba-cuda-mlir for the types of `args`."""
    import numba_cuda_mlir.tools as tools
    from numba_cuda_mlir import cuda as mcuda
    from numba_cuda_mlir.numba_cuda.typing.typeof import typeof

    from .device import gpu_present

    if not gpu_present():
        tools._cached_cc = tuple(cc)  # what the driver would say; read for the linker's target only
    sig = tuple(typeof(a) for a in args)
    return mcuda.compile_ptx(_rebound(fn, {}), sig, cc=cc)[0]


def jit(fn):
    """`fn` (a numba-cuda kernel or its function) as a numba-cuda-mlir kernel, to launch on a GPU."""
    from numba_cuda_mlir import cuda as mcuda

    return mcuda.jit(_rebound(getattr(fn, "py_func", fn), {}))


def run(fn, grid, block, args, shared_bytes: int = 0) -> list:
    """Launch `fn` compiled by numba-cuda-mlir on the GPU; the arguments after the run (arrays copied
    back from the device)."""
    import numpy as np
    from numba_cuda_mlir import cuda as mcuda

    dev = [mcuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    jit(fn)[grid, block, 0, shared_bytes](*dev)
    mcuda.synchronize()
    return [d.copy_to_host() if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)]


def _rebound(fn, done: dict):
    """`fn` with numba-cuda's globals replaced by numba-cuda-mlir's (device functions recursively)."""
    if id(fn) in done:
        return done[id(fn)]
    glb = dict(fn.__globals__)
    new = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)
    done[id(fn)] = new
    for name in fn.__code__.co_names:
        if name in glb:
            glb[name] = _swap(glb[name], done)
    return new


def _swap(value, done):
    import numba_cuda_mlir.numba_cuda.types as mtypes
    from numba_cuda_mlir import cuda as mcuda

    module = getattr(value, "__name__", "") if isinstance(value, types.ModuleType) else ""
    if module in ("numba.cuda", "numba_cuda.numba.cuda"):
        return mcuda
    if module == "numba":  # `numba.float32` in a kernel: numba-cuda-mlir's cuda module has the types
        return mcuda
    if hasattr(value, "py_func") and type(value).__name__ == "CUDADispatcher":  # a device function
        inner = _rebound(value.py_func, done)
        return mcuda.jit(device=True)(inner)
    if type(value).__module__.startswith("numba.core.types"):  # float32 and friends, by name
        return getattr(mtypes, str(value), value)
    return value
