"""Which device runs `kernel[blocks, threads](...)` in a notebook cell (the real GPU or the simulator):
one object everyone asks.

`auto` (the default) picks the real GPU where numba-cuda finds one and the simulator otherwise.
Override with the environment variable MP_ENGINE=sim|gpu|auto or `helpers.use("sim")`. The
simulator device patches numba-cuda's launch and host functions (device arrays, streams, events,
pinned arrays: `helpers.sim.host.HOST_API`, all synchronous); `use("gpu")` puts them back.
Code that must reach the real GPU whatever notebook cells use (the GPU stage of `check`, timing)
asks `STATE.real(name)` for numba-cuda's own function.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

# puzzle-sized grids are small on purpose; Numba's low-occupancy warning is noise for them
LOW_OCCUPANCY_WARNING = r"Grid size \d+ will likely result in GPU under-utilization"


class DeviceState:
    """The device in use (real GPU or simulator), whether a GPU is present, and numba-cuda's real
    functions while the simulator has replaced them. Tests may set `gpu` (True/False) to pretend."""

    def __init__(self) -> None:
        self.name: str | None = None  # "sim" or "gpu" once chosen
        self.gpu: bool | None = None  # cached answer of gpu_present()
        self.saved: dict[str, Any] = {}  # numba-cuda's own functions, while patched
        self.saved_mlir: dict[str, Any] = {}  # numba-cuda-mlir's, where its kernels are in use

    def gpu_present(self) -> bool:
        """True when numba-cuda sees a usable CUDA GPU (cached)."""
        if self.gpu is None:
            try:
                from numba import cuda

                self.gpu = bool(cuda.is_available())
            except Exception:
                self.gpu = False
        return self.gpu

    def current(self) -> str:
        if self.name is None:
            self.use(os.environ.get("MP_ENGINE", "auto"))
        return self.name

    def use(self, name: str = "auto") -> str:
        """Select the device: "auto", "sim" or "gpu". Returns the one now in use."""
        name = name.lower()
        if name not in ("auto", "sim", "gpu"):
            raise ValueError(f"engine must be 'auto', 'sim' or 'gpu', not {name!r}")
        if name == "auto":
            name = "gpu" if self.gpu_present() else "sim"
        if name == "gpu" and not self.gpu_present():
            from .environment import NO_GPU, EnvironmentProblem

            raise EnvironmentProblem(NO_GPU)
        self._unpatch()
        if name == "sim":
            self._patch()
        self.name = name
        return name

    def real(self, name: str) -> Callable:
        """numba-cuda's own `cuda.<name>` (to_device, device_array, synchronize...), patched or not."""
        if name in self.saved:
            return self.saved[name]
        import numba.cuda as cuda

        return getattr(cuda, name)

    def real_getitem(self) -> Callable:
        """numba-cuda's own `CUDADispatcher.__getitem__` (the launch configuration)."""
        if "getitem" in self.saved:
            return self.saved["getitem"]
        from numba.cuda.dispatcher import CUDADispatcher

        return CUDADispatcher.__getitem__

    def _patch(self) -> None:
        import numba.cuda as cuda
        from numba.cuda.dispatcher import CUDADispatcher

        from .sim import host

        self.saved["getitem"] = CUDADispatcher.__getitem__
        CUDADispatcher.__getitem__ = lambda self, config: _SimLaunch(self, config)
        # device arrays, streams, events, pinned arrays: host code runs unchanged, synchronously
        for name, fn in {**host.HOST_API, "synchronize": _sync_nothing}.items():
            self.saved[name] = getattr(cuda, name)
            setattr(cuda, name, fn)
        self._patch_mlir()

    def _patch_mlir(self) -> None:
        """The same for kernels written `from numba_cuda_mlir import cuda`, when it is imported."""
        mlir = sys.modules.get("numba_cuda_mlir.descriptor")
        mcuda = sys.modules.get("numba_cuda_mlir.cuda")
        if mlir is None or mcuda is None:
            return
        from .sim import host

        self.saved_mlir["getitem"] = mlir.MLIRDispatcher.__getitem__
        mlir.MLIRDispatcher.__getitem__ = lambda self, config: _SimLaunch(self, config)
        for name, fn in {**host.HOST_API, "synchronize": _sync_nothing}.items():
            if hasattr(mcuda, name):
                self.saved_mlir[name] = getattr(mcuda, name)
                setattr(mcuda, name, fn)

    def _unpatch(self) -> None:
        if self.saved_mlir:
            mcuda, mlir = sys.modules["numba_cuda_mlir.cuda"], sys.modules["numba_cuda_mlir.descriptor"]
            mlir.MLIRDispatcher.__getitem__ = self.saved_mlir.pop("getitem")
            for name in list(self.saved_mlir):
                setattr(mcuda, name, self.saved_mlir.pop(name))
        if not self.saved:
            return
        import numba.cuda as cuda
        from numba.cuda.dispatcher import CUDADispatcher

        CUDADispatcher.__getitem__ = self.saved.pop("getitem")
        for name in list(self.saved):
            setattr(cuda, name, self.saved.pop(name))


STATE = DeviceState()
EngineState = DeviceState  # the name before the rename (tests construct it)


def gpu_present() -> bool:
    """True when numba-cuda sees a usable CUDA GPU (cached)."""
    return STATE.gpu_present()


def current() -> str:
    """The device in use: "sim" or "gpu" (chosen from MP_ENGINE on first call)."""
    return STATE.current()


def use(name: str = "auto") -> str:
    """Select the device: "auto", "sim" or "gpu". Returns the one now in use."""
    return STATE.use(name)


def gpu_launch(kernel, grid, block, args, shared_bytes: int = 0):
    """Launch on the real GPU, whatever device notebook cells use."""
    from . import environment

    try:
        with environment.quiet_host_arrays():  # the harness passes host arrays on purpose
            return STATE.real_getitem()(kernel, (grid, block, 0, shared_bytes))(*args)
    except Exception as e:  # a wrong environment gets one sentence naming the fix
        environment.reraise(e)


def _sync_nothing() -> None:
    """`cuda.synchronize()` on the simulator: every launch and copy has already finished."""


class _SimLaunch:
    def __init__(self, kernel, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError(
                "launch as kernel[blocks, threads] or kernel[blocks, threads, stream, "
                f"shared_bytes], got kernel[{config!r}]"
            )
        self.kernel = kernel
        self.grid, self.block = config[0], config[1]
        self.shared_bytes = int(config[3]) if len(config) == 4 else 0

    def __call__(self, *args):
        from . import sim

        sim.last = sim.launch(
            self.kernel, self.grid, self.block, args, shared_bytes=self.shared_bytes, trace=sim.config.trace
        )
