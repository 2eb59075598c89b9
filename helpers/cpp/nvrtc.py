"""CUDA C++ to machine code with NVRTC (`cuda.bindings.nvrtc`, installed by numba-cuda[cu12]): no GPU
and no driver needed. One compile per (source, architecture), kept in memory: a compile costs about
30 ms, so a notebook's compile checks cost well under a second.

Raw NVRTC has no default include path: the pip CUDA wheels' `include` folders (where
`<cuda_fp16.h>` lives) are put on it, or the toolkit's where no wheel holds the headers.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

T4 = "sm_75"  # Colab's free GPU: every source is compiled for it, GPU or not
FILENAME = "kernel.cu"  # the name NVRTC's messages give the source

_memo: dict[tuple, Compiled] = {}


@dataclass(frozen=True)
class Compiled:
    """What NVRTC made of one source for one architecture: the cubin, the PTX (read for the names
    of the kernels), the log (warnings, or the errors when `ok` is False)."""

    arch: str
    ok: bool
    log: str
    cubin: bytes = b""
    ptx: str = ""

    @property
    def entries(self) -> list[str]:
        """The kernels in the module, as the driver names them (mangled where `extern "C"` is missing)."""
        return re.findall(r"^\s*\.(?:visible\s+)?\.entry\s+([\w$]+)\s*\(", self.ptx, re.M)


class NvrtcMissing(RuntimeError):
    """NVRTC cannot be loaded on this machine; the message says what to install."""


def _preload() -> None:
    """Load the pip wheel's libnvrtc by its path before cuda.bindings looks for it: its own search
    reads the interpreter's site-packages and misses a wheel seen through a .pth file or PYTHONPATH;
    a library already loaded is found whatever the search."""
    if _loaded:
        return
    _loaded.append(True)
    try:
        import ctypes

        import cuda.bindings
        import nvidia

        major = cuda.bindings.__version__.split(".")[0]
        for root in map(Path, nvidia.__path__):
            for lib in sorted(root.glob(f"*/lib/libnvrtc.so.{major}*")):
                ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
                return
    except Exception:  # noqa: BLE001 - then cuda.bindings' own search decides, and says why
        return


_loaded: list = []


def version() -> str:
    """NVRTC's version, e.g. "12.9"."""
    _preload()
    from cuda.bindings import nvrtc

    _, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def include_dirs(header: str = "cuda_fp16.h") -> list[str]:
    """The folders of the CUDA headers: every pip wheel's `nvidia/<part>/include` (and the CUDA 13
    wheels' `nvidia/cu13/include`), else, where none holds `header`, the toolkit's (CUDA_HOME,
    /usr/local/cuda)."""
    found: list[str] = []
    try:
        import nvidia

        for root in map(Path, nvidia.__path__):
            found += sorted(str(p) for p in root.glob("*/include") if p.is_dir())
    except ImportError:
        pass
    if not any(Path(d, header).exists() for d in found):
        for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
            if home and Path(home, "include", header).exists():
                found.append(str(Path(home, "include")))
                break
    return found


def compile_source(source: str, arch: str = T4) -> Compiled:
    """Compile `source` for `arch` ("sm_75", "sm_90"...): a Compiled whose `ok` says whether NVRTC
    accepted it (never raises for the learner's code; raises NvrtcMissing without NVRTC)."""
    key = (source, arch)
    if key not in _memo:
        _memo[key] = _compile(source, arch)
    return _memo[key]


def _compile(source: str, arch: str) -> Compiled:
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise NvrtcMissing(
            "CUDA C++ needs NVRTC from Python (the package cuda-bindings, which numba-cuda[cu12] "
            f"installs): {e}. Install it with `pip install 'numba-cuda[cu12]'`."
        ) from None
    _preload()
    options = [f"--gpu-architecture={arch}", "-lineinfo", "-std=c++17"]
    options += [f"-I{d}" for d in include_dirs()]
    try:
        err, prog = nvrtc.nvrtcCreateProgram(source.encode(), FILENAME.encode(), 0, [], [])
    except RuntimeError as e:  # cuda-bindings is there, libnvrtc.so is not
        raise NvrtcMissing(
            f"NVRTC's library cannot be loaded ({e}); install it with `pip install 'numba-cuda[cu12]'`."
        ) from None
    _ok(nvrtc, err, "nvrtcCreateProgram")
    try:
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
        log = _read(nvrtc, prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog).decode(
            errors="replace"
        )
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return Compiled(arch, False, log.strip("\x00 \n"))
        cubin = _read(nvrtc, prog, nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
        ptx = _read(nvrtc, prog, nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX).decode(errors="replace")
        return Compiled(arch, True, log.strip("\x00 \n"), cubin, ptx.rstrip("\x00"))
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _read(nvrtc, prog, size_fn, get_fn) -> bytes:
    err, n = size_fn(prog)
    _ok(nvrtc, err, size_fn.__name__)
    buf = b" " * n
    (err,) = get_fn(prog, buf)
    _ok(nvrtc, err, get_fn.__name__)
    return buf.rstrip(b"\x00")


def _ok(nvrtc, err, what: str) -> None:
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"{what} failed: {nvrtc.nvrtcGetErrorString(err)[1].decode()}")


_MANGLED = re.compile(r"^_Z(\d+)(\w+)$")


def plain_name(entry: str) -> str:
    """`_Z10map_kernelPfPKf` -> `map_kernel` (a C++ function's own name, read off its mangled one)."""
    m = _MANGLED.match(entry)
    if m and len(m.group(2)) >= int(m.group(1)):
        return m.group(2)[: int(m.group(1))]
    return entry
