"""Which engine runs `kernel[blocks, threads](...)` in a notebook cell.

`auto` (the default) picks the real GPU where numba-cuda finds one and the
simulator otherwise. Override with the environment variable MP_ENGINE=sim|gpu|auto
or `helpers.use("sim")`. The simulator engine patches numba-cuda's launch and
host-array functions; `use("gpu")` puts them back.
"""
from __future__ import annotations

import os

# puzzle-sized grids are small on purpose; Numba's low-occupancy warning is noise for them
LOW_OCCUPANCY_WARNING = r"Grid size \d+ will likely result in GPU under-utilization"

_ENGINE = None
_SAVED: dict = {}
_GPU = None


def gpu_present() -> bool:
    """True when numba-cuda sees a usable CUDA GPU (cached)."""
    global _GPU
    if _GPU is None:
        try:
            from numba import cuda
            _GPU = bool(cuda.is_available())
        except Exception:
            _GPU = False
    return _GPU


def current() -> str:
    if _ENGINE is None:
        use(os.environ.get("MP_ENGINE", "auto"))
    return _ENGINE


def use(name: str = "auto") -> str:
    """Select the engine: "auto", "sim" or "gpu". Returns the engine now in use."""
    global _ENGINE
    name = name.lower()
    if name not in ("auto", "sim", "gpu"):
        raise ValueError(f"engine must be 'auto', 'sim' or 'gpu', not {name!r}")
    if name == "auto":
        name = "gpu" if gpu_present() else "sim"
    if name == "gpu" and not gpu_present():
        from .environment import NO_GPU, EnvironmentProblem
        raise EnvironmentProblem(NO_GPU)
    _unpatch()
    if name == "sim":
        _patch()
    _ENGINE = name
    return name


def gpu_launch(kernel, grid, block, args, shared_bytes=0):
    """Launch on the real GPU, whatever engine notebook cells use."""
    from numba.cuda.dispatcher import CUDADispatcher

    from . import environment
    getitem = _SAVED.get("getitem", CUDADispatcher.__getitem__)
    try:
        with environment.quiet_host_arrays():      # the harness passes host arrays on purpose
            return getitem(kernel, (grid, block, 0, shared_bytes))(*args)
    except Exception as e:                          # a wrong environment gets one sentence naming the fix
        environment.reraise(e)


class _SimLaunch:
    def __init__(self, kernel, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError("launch as kernel[blocks, threads] or kernel[blocks, threads, stream, "
                             f"shared_bytes], got kernel[{config!r}]")
        self.kernel = kernel
        self.grid, self.block = config[0], config[1]
        self.shared_bytes = int(config[3]) if len(config) == 4 else 0

    def __call__(self, *args):
        from . import sim
        sim.last = sim.launch(self.kernel, self.grid, self.block, args, shared_bytes=self.shared_bytes,
                              trace=sim.config.trace)


def _patch():
    import numba.cuda as cuda
    from numba.cuda.dispatcher import CUDADispatcher

    from .sim import host
    _SAVED["getitem"] = CUDADispatcher.__getitem__
    CUDADispatcher.__getitem__ = lambda self, config: _SimLaunch(self, config)
    for name in ("to_device", "device_array", "device_array_like", "synchronize"):
        _SAVED[name] = getattr(cuda, name)
    cuda.to_device = host.to_device
    cuda.device_array = host.device_array
    cuda.device_array_like = host.device_array_like
    cuda.synchronize = lambda: None


def _unpatch():
    if not _SAVED:
        return
    import numba.cuda as cuda
    from numba.cuda.dispatcher import CUDADispatcher
    CUDADispatcher.__getitem__ = _SAVED.pop("getitem")
    for name in list(_SAVED):
        setattr(cuda, name, _SAVED.pop(name))


def banner() -> str:
    from . import compile as ptx
    from .environment import versions
    eng = current()
    if eng == "gpu":
        from numba import cuda
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
        major, minor = dev.compute_capability
        where = f"the real GPU: {name} (compute capability {major}.{minor})"
    else:
        where = "the CPU simulator (helpers.sim)" + ("" if gpu_present() else ": no CUDA GPU found here")
    check = "each check also compiles your kernel for a T4 (sm_75) with real Numba" if ptx.available() else \
        "PTX compile check unavailable (NVVM not installed)"
    return (f"Kernels launched with kernel[blocks, threads](...) run on {where}.\n"
            f"{versions()}; {check}.")
