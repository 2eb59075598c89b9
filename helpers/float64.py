"""float64 arithmetic in a float32 exercise, read from the PTX the compile check built: a Python
float (`acc = 0.0`, `i * 0.5`, `1.0 / math.sqrt(d)`) is a float64 in Numba, and so is everything
computed from it. On Colab's T4 float64 runs at 1/32 of the float32 rate; the answer also differs
from a float32 computation. `Puzzle(float64="warn")` (the default) notes it on a pass;
`float64="reject"` fails the check (exercises about precision or speed); "allow" says nothing.
"""

from __future__ import annotations

import re

import numpy as np

from .ptx import ptx_lines
from .sim.kernel import py_func
from .source import float64_sources

FLOAT64_MODES = ("warn", "reject", "allow")

# float64 arithmetic (not moves, loads, stores or conversions): what makes a float32 kernel slow
_F64_OP = re.compile(
    r"^\s*(?:@%p\d+\s+)?((?:add|sub|mul|div|fma|mad|rcp|sqrt|rsqrt|neg|abs|min|max|setp|ex2|lg2|sin|cos)"
    r"(?:\.\w+)*\.f64)\s"
)
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
# libdevice's float32 sin/cos/tan reduce a huge argument (Payne-Hanek) with one float64 multiply by
# this constant: library code inlined at the learner's `math.cos(x)` line, not float64 in the kernel
_LIBDEVICE_F64 = "0d3BF921FB54442D19"
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')


def float64_ops(ptx_text: str, filename: str | None = None) -> list[tuple[str, int | None]]:
    """(opcode, source line or None) of every float64 arithmetic instruction in `ptx_text`; with
    `filename`, lines of other files (Numba's own library code) count as None."""
    files = dict(m.groups() for m in map(_FILE.match, ptx_text.splitlines()) if m)
    out, file, line = [], None, None
    for text in ptx_text.splitlines():
        loc = _LOC.match(text)
        if loc:
            file, line = loc.group(1), int(loc.group(2))
            continue
        op = _F64_OP.match(text)
        if op and _LIBDEVICE_F64 not in text:
            mine = filename is None or files.get(file) == filename
            out.append((op.group(1), line if mine else None))
    return out


def float64_finding(puzzle, kernel, args, ptx_text: str) -> tuple[str, int] | None:
    """(message, number of float64 operations) when the kernel's PTX does float64 arithmetic although
    its float arrays are all float32; None otherwise (or when the puzzle allows it)."""
    if puzzle.float64 == "allow" or not ptx_text:
        return None
    floats = {a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f"}
    if floats != {np.dtype(np.float32)}:
        return None
    fn = py_func(kernel)
    ops = float64_ops(ptx_text, fn.__code__.co_filename)
    if not ops:
        return None
    lined = ptx_lines(kernel, args)  # compiled again, with lines, only now that they are wanted
    if lined:
        ops = float64_ops(lined, fn.__code__.co_filename) or ops
    lines = sorted({line for _, line in ops if line is not None})
    kinds = sorted({op for op, _ in ops})
    where = f" at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else ""
    plural = "s" if len(ops) > 1 else ""
    msg = (
        f"`{fn.__name__}` does float64 arithmetic ({len(ops)} float64 instruction{plural} "
        f"in its PTX: {', '.join(kinds[:5])}){where}, although its arrays are float32."
    )
    sources = float64_sources(kernel, set(lines))
    if sources:
        msg += " Likely source: " + "; ".join(f"line {n} `{text}`" for n, text in sources[:4]) + "."
    # scalars the case passes as Python floats arrive as float64 (as on a GPU launch with them)
    scalars = [n for n, a in zip(puzzle.signature, args) if isinstance(a, (float, np.float64))]
    if scalars:
        names = ", ".join(f"`{n}`" for n in scalars)
        msg += (
            f" {names} arrive{'s' if len(scalars) == 1 else ''} as float64 (a Python float argument): "
            f"make {'it' if len(scalars) == 1 else 'each'} float32 once at the top, e.g. "
            f"`{scalars[0]} = numba.float32({scalars[0]})`."
        )
    msg += (
        " A Python float (0.0, 0.5, 1.0 / math.sqrt(d), a module constant such as TWO_PI = 2 * math.pi) "
        "is a float64 in Numba, and so is a float divided by an integer (total / count) and everything "
        "computed from either: write numba.float32(0.0), numba.float32(1.0) / math.sqrt(numba.float32(d)), "
        "total / numba.float32(count). On Colab's T4, float64 runs at 1/32 of the float32 rate."
    )
    if puzzle.float64 == "reject":
        msg = (
            f"Puzzle `{puzzle.name}`: this exercise is about float32 precision and speed, so float64 "
            "arithmetic fails it. " + msg
        )
    return msg, len(ops)
