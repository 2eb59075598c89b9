"""CUDA C++ beside Numba: a C++ source string compiled with NVRTC for the T4 (no GPU needed), run on a
GPU where there is one, and checked against a puzzle like its Numba twin.

    from helpers import cpp
    k = cpp.kernel(SOURCE)                 # compile for sm_75; errors name lines of your cell
    k[blocks, threads](out, a, n)          # NumPy arrays; runs on a GPU, says so and skips on a CPU
    cpp.check(puzzle, SOURCE)              # the puzzle's cases and spec (puzzles.cpp.check by name)

Modules: `nvrtc` (compile), `source` (cell lines, parameters), `module` (kernel lookup, launch
shape), `driver` (the CUDA driver, also as a child process), `gpu` (child runs, compute-sanitizer),
`check` (a puzzle's verdict), `launch` (a learner's own launch).
"""

from __future__ import annotations

from .check import CppResult
from .check import check as _check
from .launch import Kernel
from .nvrtc import NvrtcMissing, compile_source, version
from .source import locate

__all__ = ["CppResult", "Kernel", "NvrtcMissing", "available", "check", "compile_source", "kernel", "version"]


def available() -> str | None:
    """None when NVRTC works here; else why not, in one line."""
    try:
        version()
        return None
    except Exception as e:  # noqa: BLE001 - any failure to load NVRTC is the one-line reason
        return f"CUDA C++ cells need NVRTC (pip install 'numba-cuda[cu12]'): {e}"


def kernel(source: str, name: str | None = None) -> Kernel:
    """Compile `source` for the T4 and pick kernel `name` (None: its only kernel)."""
    return Kernel(source, name, _origin=locate(source))


def check(puzzle, source: str, *, kernel: str | None = None, stub: str | None = None, seed=None, gpu=None):
    """Check `source` against `puzzle` (a helpers.puzzle.Puzzle); see helpers.cpp.check."""
    return _check(puzzle, source, kernel=kernel, stub=stub, seed=seed, gpu_present=gpu, origin=locate(source))
