"""A learner's own launch of a C++ kernel, spelled as in Numba: `kernel(SOURCE)[blocks, threads](out,
a, n)` with NumPy arrays. On a GPU it runs in a child process (a stray write cannot break the
notebook's CUDA context) and copies every array back; on a CPU it is compiled and checked (the
kernel's name, its parameters against the arguments, the launch's shape) and says it did not run.
"""

from __future__ import annotations

import numpy as np

from ..sim.errors import LaunchError
from . import gpu
from .module import build, check_launch, dims
from .source import bind, locate

NOT_RUN = "Not run: this machine has no GPU. NVRTC compiled the kernel and the launch was checked."


class Kernel:
    """A compiled C++ kernel; `kernel[grid, block]` or `kernel[grid, block, shared_bytes]` launches it."""

    def __init__(self, source: str, name: str | None = None, *, _origin=None):
        self.built = build(source, name, _origin or locate(source))
        self.name = self.built.name

    def __getitem__(self, config) -> _Launch:
        if not isinstance(config, tuple) or len(config) not in (2, 3):
            raise LaunchError(
                "launch as kernel[blocks, threads] or kernel[blocks, threads, shared_bytes], "
                f"got kernel[{config!r}]"
            )
        shared = config[2] if len(config) == 3 else 0
        if not isinstance(shared, int) or shared < 0:
            raise LaunchError(f"shared_bytes must be an int >= 0, got {shared!r}")
        grid, block = check_launch(config[0], config[1])
        return _Launch(self, grid, block, shared)

    def __repr__(self) -> str:
        params = ", ".join(p.spelled() for p in self.built.params)
        return f"<CUDA C++ kernel {self.name}({params}), compiled for sm_75>"


class _Launch:
    def __init__(self, kernel: Kernel, grid, block, shared):
        self.kernel, self.grid, self.block, self.shared = kernel, grid, block, shared

    def __call__(self, *args):
        from ..device import gpu_present

        built = self.kernel.built
        names = tuple(p.name for p in built.params)
        if len(args) != len(names):
            raise LaunchError(
                f"`{built.name}` takes {len(names)} arguments ({', '.join(names)}), got {len(args)}"
            )
        for a in args:
            if not isinstance(a, (np.ndarray, int, float, np.generic)):
                raise LaunchError(f"pass NumPy arrays and numbers to a C++ kernel, got {type(a).__name__}")
        values, problem = bind(built.params, names, list(args))
        if problem:
            raise LaunchError(f"`{built.name}`: {problem}")
        if not gpu_present():
            print(NOT_RUN)
            return None
        run = {
            "grid": dims(self.grid, "grid"),
            "block": self.block,
            "shared_bytes": self.shared,
            "args": values,
        }
        child = gpu.run({"source": built.source, "name": built.name, "cubin": None, "runs": [run]})
        if child.result is None:
            raise LaunchError(child.why)
        if child.result.get("error"):
            _, text, code = child.result["error"]
            if code == "TOO_MANY_THREADS":
                raise LaunchError(f"{text}: launch fewer threads per block.")
            most = child.result.get("max_threads")
            extra = f" (this kernel runs at most {most} threads per block here)" if most else ""
            raise LaunchError(f"the GPU reported {code}: {text}{extra}")
        for a, back in zip(args, child.result["runs"][0]):
            if isinstance(a, np.ndarray) and back is not None:
                a[...] = back.reshape(a.shape)
        return None
