"""Run a compiled CUDA C++ kernel through the CUDA driver API (`cuda.bindings.driver`, the layer that
is the same in Colab's cuda-bindings 12.9.7 and the newest 12.9.x; cuda.core's API moved between
0.3 and 1.x).

Used two ways: in the process that owns the notebook's GPU (timing, through `load` and `launch`, on
Numba's own primary context), and as a child process for checks (`python -m helpers.cpp.driver
JOB RESULT`), so that a kernel that writes out of bounds or never ends cannot break the notebook's
CUDA context, and so that compute-sanitizer can watch it.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np


class DriverError(RuntimeError):
    """A CUDA driver call failed; `.name` is the CUresult's name (CUDA_ERROR_ILLEGAL_ADDRESS...)."""

    def __init__(self, what: str, name: str, text: str):
        super().__init__(f"{what}: {name} ({text})")
        self.name = name


def _ok(result, what: str):
    """The values of a driver call's result tuple, or DriverError."""
    from cuda.bindings import driver as cu

    err, *values = result
    if err != cu.CUresult.CUDA_SUCCESS:
        name = cu.cuGetErrorName(err)[1]
        text = cu.cuGetErrorString(err)[1]
        raise DriverError(what, name.decode() if name else str(err), text.decode() if text else "")
    return values[0] if len(values) == 1 else values


def device() -> tuple[object, str]:
    """(the primary context of GPU 0, made current; its architecture "sm_XY")."""
    from cuda.bindings import driver as cu

    _ok(cu.cuInit(0), "cuInit")
    dev = _ok(cu.cuDeviceGet(0), "cuDeviceGet")
    attr = cu.CUdevice_attribute
    major = _ok(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc")
    minor = _ok(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc")
    ctx = _ok(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx, f"sm_{major}{minor}"


class Function:
    """One kernel of a loaded cubin."""

    def __init__(self, cubin: bytes, name: str):
        from cuda.bindings import driver as cu

        self._image = np.frombuffer(cubin, np.uint8).copy()  # kept alive while the module is
        self.module = _ok(cu.cuModuleLoadData(self._image.ctypes.data), "cuModuleLoadData")
        self.handle = _ok(cu.cuModuleGetFunction(self.module, name.encode()), f"cuModuleGetFunction {name}")
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
        self.max_threads = int(_ok(cu.cuFuncGetAttribute(attr, self.handle), "cuFuncGetAttribute"))


def _dims(d) -> tuple[int, int, int]:
    d = (d,) if isinstance(d, (int, np.integer)) else tuple(d)
    return tuple(int(x) for x in d) + (1,) * (3 - len(d))


def launch(fn: Function, grid, block, params: list, shared_bytes: int = 0) -> None:
    """Launch without waiting. `params`: one value per kernel parameter, each a device pointer (an
    int, for a `T*` parameter) or a NumPy scalar of the parameter's C type."""
    from cuda.bindings import driver as cu

    if shared_bytes > 48 * 1024:  # above 48 KiB a kernel must ask for dynamic shared memory
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        _ok(cu.cuFuncSetAttribute(fn.handle, attr, int(shared_bytes)), "cuFuncSetAttribute")
    slots = [np.array([p], np.uint64) if isinstance(p, int) else np.array([p]) for p in params]
    pointers = np.array([s.ctypes.data for s in slots], np.uint64)
    g, b = _dims(grid), _dims(block)
    _ok(
        cu.cuLaunchKernel(fn.handle, *g, *b, int(shared_bytes), cu.CUstream(0), pointers.ctypes.data, 0),
        "cuLaunchKernel",
    )
    fn._last_slots = (slots, pointers)  # alive until the launch has read them (it copies at launch)


def run_job(job: dict) -> dict:
    """Every run of `job` on GPU 0: {"arch", "runs": [[arrays after the run], ...], "error": None or
    (run index, text, CUresult name)}. A job: {"source", "name", "cubin" (None: compile here for this
    GPU), "runs": [{"grid", "block", "shared_bytes", "args": [ndarray or NumPy scalar]}]}."""
    from cuda.bindings import driver as cu

    _, arch = device()
    cubin = job.get("cubin")
    if cubin is None:
        from .nvrtc import compile_source

        compiled = compile_source(job["source"], arch)
        if not compiled.ok:
            return {"arch": arch, "runs": [], "error": (None, compiled.log, "NVRTC")}
        cubin = compiled.cubin
    fn = Function(cubin, job["name"])
    out: dict = {"arch": arch, "runs": [], "error": None, "max_threads": fn.max_threads}
    for k, run in enumerate(job["runs"]):
        threads = int(np.prod(_dims(run["block"])))
        if threads > fn.max_threads:  # registers or __launch_bounds__ allow fewer than 1024
            text = (
                f"a block of {threads} threads: this kernel can run at most {fn.max_threads} threads per "
                "block on this GPU (its registers, or its __launch_bounds__)"
            )
            out["error"] = (k, text, "TOO_MANY_THREADS")
            break
        try:
            held, params = [], []
            for a in run["args"]:
                if isinstance(a, np.ndarray):
                    host = np.ascontiguousarray(a)
                    ptr = _ok(cu.cuMemAlloc(max(host.nbytes, 1)), "cuMemAlloc")
                    _ok(cu.cuMemcpyHtoD(ptr, host.ctypes.data, host.nbytes), "cuMemcpyHtoD")
                    held.append((ptr, host))
                    params.append(int(ptr))
                else:
                    held.append(None)
                    params.append(a)
            launch(fn, run["grid"], run["block"], params, run.get("shared_bytes", 0))
            _ok(cu.cuCtxSynchronize(), "the kernel")
            after = []
            for h in held:
                if h is None:
                    after.append(None)
                    continue
                ptr, host = h
                back = np.empty_like(host)
                _ok(cu.cuMemcpyDtoH(back.ctypes.data, ptr, host.nbytes), "cuMemcpyDtoH")
                _ok(cu.cuMemFree(ptr), "cuMemFree")
                after.append(back)
            out["runs"].append(after)
        except DriverError as e:
            out["error"] = (k, str(e), e.name)
            break
    return out


def main(argv: list[str]) -> int:
    job_path, result_path = argv
    with open(job_path, "rb") as f:
        job = pickle.load(f)
    try:
        result = run_job(job)
    except DriverError as e:  # no GPU, a cubin the driver refuses
        result = {"arch": None, "runs": [], "error": (None, str(e), e.name)}
    except Exception as e:  # noqa: BLE001 - no driver library at all: said, not a crash
        result = {"arch": None, "runs": [], "error": (None, f"{type(e).__name__}: {e}", "NO_DRIVER")}
    with open(result_path, "wb") as f:
        pickle.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
