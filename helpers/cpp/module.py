"""A learner's CUDA C++ source made ready to run: compiled for the T4 (NVRTC's errors as lines of the
learner's cell), its kernel found by name (a missing `extern "C"` said as such, the kernels it has
listed), its parameters read, and a launch's shape checked before any GPU sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sim.errors import LaunchError
from ..verdicts import CompileRejected
from . import nvrtc
from .source import Origin, Param, explain_log, kernel_params, where


@dataclass(frozen=True)
class Built:
    source: str
    name: str  # the kernel's name, as the driver finds it
    params: list[Param]
    compiled: nvrtc.Compiled  # for the T4
    origin: Origin | None

    def say_line(self, line: int) -> str:
        return where(self.source, line, self.origin)


def build(source: str, kernel: str | None, origin: Origin | None, what: str = "") -> Built:
    """Compile `source` for sm_75 and find `kernel` in it (None: the module's only kernel); raise
    CompileRejected naming the line, the name or the parameter that is wrong."""
    if not isinstance(source, str):
        raise TypeError(f'the CUDA C++ source must be a string (a raw string r"""..."""), got {source!r}')
    lead = f"{what}: " if what else ""
    compiled = nvrtc.compile_source(source, nvrtc.T4)
    if not compiled.ok:
        lines, log = explain_log(compiled.log, source, origin)
        at = f"\nAt {where(source, lines[0], origin)}" if lines else ""
        raise CompileRejected(
            f"{lead}NVRTC {nvrtc.version()} cannot compile this CUDA C++ for the T4 (sm_75), so it would "
            f"not run on any GPU.{at}\nNVRTC says:\n" + "\n".join("    " + ln for ln in log.splitlines()[:16])
        )
    name = _find(compiled, source, kernel, lead)
    params = kernel_params(source, name)
    if params is None:
        raise CompileRejected(
            f"{lead}the kernel `{name}` compiles, but its parameter list could not be read here: write "
            f'it on one line as `extern "C" __global__ void {name}(float* out, const float* a, int n)`.'
        )
    return Built(source, name, params, compiled, origin)


def _find(compiled: nvrtc.Compiled, source: str, kernel: str | None, lead: str) -> str:
    entries = compiled.entries
    plain = {e: nvrtc.plain_name(e) for e in entries}
    if kernel is None and len(entries) == 1 and plain[entries[0]] == entries[0]:
        return entries[0]
    if kernel is not None and kernel in entries:
        return kernel
    if not entries:
        raise CompileRejected(
            f"{lead}this source compiles but defines no kernel: a kernel is a function declared "
            '`extern "C" __global__ void name(...)`.'
        )
    mangled = [e for e in entries if e != plain[e] and plain[e] in (kernel, None)]
    if mangled:
        e = mangled[0]
        raise CompileRejected(
            f"{lead}the kernel `{plain[e]}` is there, but under its C++ name `{e}` (C++ encodes the "
            "parameter types into a function's name), and a kernel is looked up by its plain name. Put "
            f'`extern "C"` in front of `__global__`: `extern "C" __global__ void {plain[e]}(...)`.'
        )
    have = ", ".join(f"`{plain[e]}`" + ("" if plain[e] == e else ' (without extern "C")') for e in entries)
    if kernel is None:
        raise CompileRejected(
            f'{lead}this source has {len(entries)} kernels ({have}); say which one to run with kernel="...".'
        )
    raise CompileRejected(
        f"{lead}no kernel named `{kernel}` in this source; it has {have}. Name the kernel `{kernel}` "
        f"(the name after `__global__ void`), or pass kernel= the one you mean."
    )


MAX_THREADS = 1024  # per block, on every GPU since 2010
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)


def dims(d, what: str) -> tuple[int, int, int]:
    """(x, y, z) of a launch's grid or block given as an int or a tuple of one to three ints."""
    t = (d,) if isinstance(d, int) else tuple(d) if isinstance(d, (tuple, list)) else None
    if t is None or not 1 <= len(t) <= 3 or not all(isinstance(v, int) and v >= 1 for v in t):
        raise LaunchError(f"the {what} must be a positive int or a tuple of 1 to 3 positive ints, got {d!r}")
    return tuple(t) + (1,) * (3 - len(t))


def check_launch(grid, block, limit: int = MAX_THREADS) -> tuple[tuple, tuple]:
    """The launch's (grid, block) as 3-tuples, or a LaunchError saying which limit it breaks."""
    g, b = dims(grid, "grid"), dims(block, "block")
    threads = b[0] * b[1] * b[2]
    if threads > limit:
        shape = " x ".join(map(str, b[: 3 if b[2] > 1 else 2 if b[1] > 1 else 1]))
        why = "every CUDA GPU" if limit == MAX_THREADS else "this kernel on this GPU (its registers)"
        raise LaunchError(
            f"a block of {shape} = {threads} threads: {why} allows at most {limit} threads per block. "
            "Use fewer threads per block and more blocks (the grid), e.g. block=256 and grid = "
            "ceil(n / 256)."
        )
    for axis, v, most in zip("xyz", b, MAX_BLOCK):
        if v > most:
            raise LaunchError(f"block.{axis} = {v}: at most {most} threads along {axis}.")
    for axis, v, most in zip("xyz", g, MAX_GRID):
        if v > most:
            raise LaunchError(f"grid.{axis} = {v}: at most {most} blocks along {axis}.")
    return g, b
