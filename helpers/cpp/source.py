"""Where a learner's CUDA C++ sits and what its kernel takes: NVRTC's line numbers turned into lines
of the learner's cell, and a kernel's parameter list read from the source (the driver knows only
their sizes), matched against the arguments a puzzle passes.
"""

from __future__ import annotations

import linecache
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_COURSE = str(Path(__file__).resolve().parents[2])  # the folder holding helpers/ and puzzles/


@dataclass(frozen=True)
class Origin:
    """The source string's first line in the file (a notebook cell) that wrote it."""

    filename: str
    first_line: int  # the line of the file that holds the source's line 1

    def cell_line(self, line: int) -> int:
        return self.first_line + line - 1


def locate(source: str) -> Origin | None:
    """Find `source` verbatim (a raw string literal) in the file of the nearest caller outside the
    course's own packages (a notebook cell, a test); None when it is not written there."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        inside = name.startswith(_COURSE + "/helpers/") or name.startswith(_COURSE + "/puzzles/")
        if not inside and not name.startswith("<frozen"):
            text = "".join(linecache.getlines(name, frame.f_globals))
            at = text.find(source) if source.strip() else -1
            if at >= 0:
                return Origin(name, text.count("\n", 0, at) + 1)
            break
        frame = frame.f_back
    # the source was written in another cell: Jupyter keeps every cell run in linecache, newest last
    for name, entry in reversed(list(linecache.cache.items())):
        lines = entry[2] if len(entry) > 2 else None
        text = "".join(lines or ())
        at = text.find(source) if source.strip() and "ipykernel" in name else -1
        if at >= 0:
            return Origin(name, text.count("\n", 0, at) + 1)
    return None


def line_text(source: str, line: int) -> str:
    lines = source.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def where(source: str, line: int, origin: Origin | None) -> str:
    """'line 7 of your cell (line 4 of the source): `text`' for NVRTC's line `line`."""
    text = line_text(source, line)
    shown = f": `{text}`" if text else ""
    if origin is None:
        return f"line {line} of the source{shown}"
    return f"line {origin.cell_line(line)} of your cell (line {line} of the C++ source){shown}"


_LOG_LINE = re.compile(r"^[\w./<>-]*kernel\.cu\((\d+)\): ")


def explain_log(log: str, source: str, origin: Origin | None) -> tuple[list[int], str]:
    """(NVRTC's error lines, the log with every `kernel.cu(N): ` prefix written as a cell line)."""
    lines, out = [], []
    for raw in log.splitlines():
        m = _LOG_LINE.match(raw)
        if m:
            n = int(m.group(1))
            if raw[m.end() :].startswith(("error", "catastrophic error")):
                lines.append(n)
            at = f"line {origin.cell_line(n)}" if origin else f"source line {n}"
            raw = f"{at}: {raw[m.end() :]}"
        out.append(raw)
    return lines, "\n".join(out)


# ------------------------------------------------------------------ the kernel's parameters

# C types a parameter may have, with the NumPy dtype of the data it points to (or holds)
C_TYPES = {
    "float": np.float32,
    "double": np.float64,
    "__half": np.float16,
    "half": np.float16,
    "int": np.int32,
    "int32_t": np.int32,
    "signed int": np.int32,
    "unsigned": np.uint32,
    "unsigned int": np.uint32,
    "uint32_t": np.uint32,
    "long long": np.int64,
    "long long int": np.int64,
    "long": np.int64,
    "int64_t": np.int64,
    "unsigned long long": np.uint64,
    "unsigned long long int": np.uint64,
    "uint64_t": np.uint64,
    "size_t": np.uint64,
    "short": np.int16,
    "int16_t": np.int16,
    "unsigned short": np.uint16,
    "uint16_t": np.uint16,
    "char": np.int8,
    "signed char": np.int8,
    "int8_t": np.int8,
    "unsigned char": np.uint8,
    "uint8_t": np.uint8,
    "bool": np.bool_,
}
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict)\b")


@dataclass(frozen=True)
class Param:
    name: str
    ctype: str  # the type without qualifiers and `*`: "float"
    pointer: bool

    @property
    def dtype(self):
        return C_TYPES.get(self.ctype)

    def spelled(self) -> str:
        return f"{self.ctype}{'*' if self.pointer else ''} {self.name}"


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", "", source)


def kernel_params(source: str, name: str) -> list[Param] | None:
    """The parameters of `__global__` kernel `name` as written in `source`, or None if the source
    does not define it in a form read here."""
    text = _strip_comments(source)
    bounds = r"(?:__launch_bounds__\s*\([^)]*\)\s*)?"
    m = re.search(r"__global__\s+" + bounds + r"void\s+" + bounds + re.escape(name) + r"\s*\(([^)]*)\)", text)
    if m is None:
        return None
    params = []
    for part in filter(None, (p.strip() for p in m.group(1).split(","))):
        if part == "void":
            continue
        words = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\])?$", part.replace("*", " * "))
        if words is None:
            return None
        kind, pname, brackets = words.groups()
        pointer = "*" in kind or brackets is not None
        ctype = " ".join(_QUALIFIERS.sub(" ", kind).replace("*", " ").split())
        params.append(Param(pname, ctype, pointer))
    return params


_DIM = re.compile(r"^(\w+)_dim(\d)$")


def bind(params: list[Param], signature: tuple, args: list) -> tuple[list | None, str | None]:
    """(the kernel's argument list, None) for the puzzle's `args` (one per name of `signature`), or
    (None, what does not fit). Parameters after the puzzle's are `NAME_dimK`: axis K of array NAME
    (C++ has no `.shape`)."""
    values = dict(zip(signature, args))
    if len(params) < len(signature):
        missing = ", ".join(f"`{n}`" for n in signature[len(params) :])
        return None, (
            f"the kernel takes {len(params)} parameters, the puzzle passes {len(signature)} "
            f"({', '.join(signature)}): {missing} missing"
        )
    out = []
    for k, p in enumerate(params):
        if k < len(signature):
            label, value = signature[k], args[k]
        else:
            m = _DIM.match(p.name)
            if m is None or m.group(1) not in values or not isinstance(values[m.group(1)], np.ndarray):
                return None, (
                    f"parameter {k + 1}, `{p.spelled()}`, is one more than the puzzle's "
                    f"{len(signature)} ({', '.join(signature)}); extra parameters must be named "
                    "`ARRAY_dimK` (axis K of an array the puzzle passes, e.g. `q_dim0`)"
                )
            arr, axis = values[m.group(1)], int(m.group(2))
            if axis >= arr.ndim:
                return None, f"`{p.name}`: `{m.group(1)}` has {arr.ndim} axes"
            label, value = p.name, int(arr.shape[axis])
        problem = _fits(p, label, value)
        if problem:
            return None, f"parameter {k + 1}, `{p.spelled()}`: {problem}"
        out.append(value if p.pointer else np.array(value).astype(p.dtype)[()])
    return out, None


def _fits(p: Param, label: str, value) -> str | None:
    if p.dtype is None:
        known = ", ".join(sorted({k for k in C_TYPES if " " not in k}))
        return f"type `{p.ctype}` is not one read here (use one of {known})"
    if isinstance(value, np.ndarray):
        want = _spell(value.dtype)
        if not p.pointer:
            return f"the puzzle passes the array `{label}` ({value.dtype}): declare it `{want}* {p.name}`"
        if np.dtype(p.dtype) != value.dtype:
            return f"`{label}` holds {value.dtype}, so it must be `{want}*`, not `{p.ctype}*`"
        return None
    if p.pointer:
        return (
            f"the puzzle passes the number `{label}` = {value!r} here, not an array: declare it without `*`"
        )
    if isinstance(value, float) and np.dtype(p.dtype).kind != "f":
        return f"`{label}` is a float ({value!r}): declare it `float` or `double`"
    return None


def _spell(dtype) -> str:
    return next((c for c, d in C_TYPES.items() if np.dtype(d) == dtype), str(dtype))
