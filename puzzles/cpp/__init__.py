"""The CUDA C++ twins of the course's kernels: `<puzzle name>.cu` in this folder, one file per
puzzle, the solution between `// BEGIN SOLUTION` and `// END SOLUTION`.

One folder, one real C++ file per puzzle: each reads (and compiles with nvcc) as C++, diffs line by
line against its Numba twin, and is found by the puzzle's name alone; the puzzle module keeps the
spec and the cases both spellings are checked on.

    from puzzles import cpp
    cpp.check("map", MAP_CPP)        # the Numba puzzle's cases and spec; NVRTC; the GPU where there is one
    print(cpp.stub("map"))           # the exercise's starting text
"""

from __future__ import annotations

import re
from pathlib import Path

import puzzles
from helpers import cpp as _cpp
from helpers.cpp.source import locate

HERE = Path(__file__).resolve().parent
BEGIN, END = "// BEGIN SOLUTION", "// END SOLUTION"
_BLOCK = re.compile(
    r"^([ \t]*)" + re.escape(BEGIN) + r"[^\n]*\n(.*?)^[ \t]*" + re.escape(END) + r"[^\n]*\n?", re.M | re.S
)

__all__ = ["NAMES", "cell", "check", "names", "names_table", "solution", "stub"]

# Numba's spelling, CUDA C++'s, and what differs: the table the notebooks show (tools.nbbuild)
NAMES = (
    (
        "`@cuda.jit` `def k(out, a, n):`",
        '`extern "C" __global__ void k(float* out, const float* a, int n)`',
        'types are written out; `extern "C"` keeps the name `k` findable',
    ),
    ("`cuda.threadIdx.x`, `cuda.blockIdx.x`", "`threadIdx.x`, `blockIdx.x`", "built-in variables"),
    ("`cuda.blockDim.x`, `cuda.gridDim.x`", "`blockDim.x`, `gridDim.x`", ""),
    ("`cuda.grid(1)`", "`blockIdx.x * blockDim.x + threadIdx.x`", "no shorthand"),
    (
        "`a[i, j]` on a 2-D array",
        "`a[i * cols + j]`",
        "a flat pointer: rows one after another (`a[i, j]` compiles in C++ as the comma operator, `a[j]`)",
    ),
    ("`a.shape[0]`", "a parameter (`int n`, `q_dim1` in these checks)", "a pointer has no shape"),
    (
        "`cuda.shared.array(TPB, float32)`",
        "`__shared__ float cache[TPB];`",
        "`TPB` a `#define` or `constexpr`",
    ),
    ("`cuda.local.array(8, float32)`", "`float r[8];`", ""),
    ("`cuda.syncthreads()`", "`__syncthreads();`", ""),
    ("`cuda.atomic.add(out, 0, v)`", "`atomicAdd(&out[0], v)`", "takes an address"),
    ("`cuda.shfl_down_sync(mask, v, d)`", "`__shfl_down_sync(mask, v, d)`", "also `__shfl_xor_sync`"),
    ("`math.exp(x)`, `max(a, b)`", "`expf(x)`, `fmaxf(a, b)`", "the float32 versions end in `f`"),
    (
        "`kernel[blocks, threads](out, a, n)`",
        "`kernel<<<blocks, threads>>>(out, a, n)`",
        "here: `cpp.check(name, source)`",
    ),
)


def names() -> list[str]:
    """The puzzles that have a C++ twin."""
    return sorted(p.stem for p in HERE.glob("*.cu"))


def _text(name: str) -> str:
    path = HERE / f"{name}.cu"
    if not path.exists():
        raise KeyError(f"no CUDA C++ twin for {name!r}; these have one: {', '.join(names())}")
    return path.read_text()


def solution(name: str) -> str:
    """The C++ twin with its solution, marker lines removed."""
    return "".join(ln for ln in _text(name).splitlines(keepends=True) if ln.strip() not in (BEGIN, END))


def stub(name: str) -> str:
    """The C++ twin with each solution block cut to a `// FILL ME IN` line."""

    def cut(m):
        n = sum(1 for ln in m.group(2).splitlines() if ln.strip() and not ln.strip().startswith("//"))
        return f"{m.group(1)}// FILL ME IN (roughly {n} line{'s' if n != 1 else ''})\n"

    return _BLOCK.sub(cut, _text(name))


_SESSION: dict[str, str] = {}  # puzzle -> "ran" (passed on a GPU) or "compiled" (no GPU to run it)


def summary_text(wanted: list[str]) -> str:
    """What this session's C++ checks proved for the twins `wanted`: passed on a GPU, compiled only,
    still to write."""
    ran = [n for n in wanted if _SESSION.get(n) == "ran"]
    compiled = [n for n in wanted if _SESSION.get(n) == "compiled"]
    left = [n for n in wanted if n not in _SESSION]
    lines = [
        f"CUDA C++: {len(ran)} of {len(wanted)} twins passed on a GPU"
        + (": " + ", ".join(ran) if ran else ".")
    ]
    if compiled:
        lines.append(
            f"{len(compiled)} compiled for the T4 but not run (no GPU here): " + ", ".join(compiled) + ". "
            "Their Numba twins run on the simulator (notebook 01)."
        )
    if left:
        lines.append("still to pass: " + ", ".join(left))
    return "\n".join(lines)


def check(
    name: str, source: str, *, kernel: str | None = None, seed: int | None = None, gpu: bool | None = None
):
    """Check C++ `source` against puzzle `name` (its Numba twin's cases and spec); raises the
    course's verdicts (CompileRejected, WrongAnswer, KernelDiagnosed...) or returns a CppResult that
    says what ran."""
    # a twin without solution markers (a chapter's Rosetta kernel) is shown, not an exercise
    stub_text = stub(name) if (HERE / f"{name}.cu").exists() and BEGIN in _text(name) else None
    result = _cpp._check(
        puzzles.get(name),
        source,
        kernel=kernel,
        stub=stub_text,
        seed=seed,
        gpu_present=gpu,
        origin=locate(source),
    )
    if not result.missing:
        _SESSION[name] = "ran" if result.ran else "compiled"
    return result


def cell(name: str, solutions: bool) -> str:
    """A notebook cell (tools.nbbuild's `cpp:NAME`): the twin as a raw string the learner edits, and its
    check, in one cell, so that NVRTC's line numbers are lines of this cell."""
    text = (solution(name) if solutions else stub(name)).strip("\n")
    var = f"{name}_cpp"
    return f'from puzzles import cpp\n\n{var} = r"""\n{text}\n"""\ncpp.check("{name}", {var})'


def names_table() -> str:
    """NAMES as a markdown table (tools.nbbuild's `cpp-names`)."""
    rows = "\n".join(f"| {a} | {b} | {note} |" for a, b, note in NAMES)
    return "| Numba | CUDA C++ | note |\n|---|---|---|\n" + rows
