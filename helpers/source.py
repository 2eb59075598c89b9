"""What a kernel's source says, read with `ast` (no run): whether its body is still the puzzle's stub,
whether it is Python no CUDA kernel can be, and which of its lines likely made arithmetic float64.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap

from .sim.kernel import py_func, source_of

__all__ = ["float64_sources", "is_stub", "not_a_kernel"]


@functools.lru_cache(maxsize=1024)
def _body(source: str) -> tuple[str, ...] | None:
    """The statements of the first function in `source`, comments, docstrings and `pass` left out."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return None
    return tuple(
        ast.dump(stmt)
        for stmt in fn.body
        if not isinstance(stmt, ast.Pass)
        and not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
    )


def is_stub(kernel, puzzle) -> bool:
    """Judged by what the kernel does, not by its comments: True only when its body is still the
    puzzle's stub (a `# FILL ME IN` line kept above real code does not count)."""
    try:
        mine = _body(source_of(py_func(kernel).__code__))
    except (OSError, TypeError):
        return False
    try:
        stub = _body(puzzle.stub)
        if stub == _body(puzzle.source):  # a worked example: no solution was cut out, so no stub
            return False
    except (OSError, TypeError):
        return False
    return mine is not None and mine == stub


def not_a_kernel(kernel) -> str | None:
    """Python a CUDA kernel cannot be, said plainly (also where the compile check is unavailable)."""
    fn = py_func(kernel)
    if fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_COROUTINE):
        return (
            "it uses `yield` (or async): generators are not supported in a kernel. Write the values "
            "to an output array instead."
        )
    try:
        tree = ast.parse(textwrap.dedent(source_of(fn.__code__)))
    except (OSError, TypeError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == fn.__name__:
            return (
                f"line {fn.__code__.co_firstlineno + node.lineno - 1} calls `{fn.__name__}` from inside "
                "itself: recursion is not supported in a kernel. Use a loop."
            )
    return None


# a Python float literal (0.0, .5, 1e-5): a float64 in Numba
_FLOAT_LITERAL = re.compile(r"(?<![\w.])(?:\d+\.\d*|\.\d+|\d+(?:\.\d*)?[eE][+-]?\d+)(?![\w.])")
_WRAPPED = re.compile(r"float32\(\s*[^()]*\)")


def float64_sources(kernel, lines: set) -> list[tuple[int, str]]:
    """(line, source) of the kernel's lines that likely made the float64 arithmetic found at `lines`:
    a float literal not wrapped in `float32(...)` on one of those lines, or assigned to a name those
    lines use (`acc = 0.0` before `acc += a[i]`)."""
    fn = py_func(kernel)
    try:
        src, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return []
    used = set()
    for n, text in enumerate(src, first):
        if n in lines:
            used |= set(re.findall(r"[A-Za-z_]\w*", text.split("#")[0]))
    # module-level float constants (TWO_PI = 2 * math.pi) are float64 too
    globals_ = {k for k, v in fn.__globals__.items() if type(v) is float}
    out = []
    for n, text in enumerate(src, first):
        code = _WRAPPED.sub("", text.split("#")[0])
        names = set(re.findall(r"[A-Za-z_]\w*", code))
        target = re.match(r"\s*([A-Za-z_]\w*)\s*[-+*/]?=", code)
        if _FLOAT_LITERAL.search(code) and (n in lines or (target and target.group(1) in used)):
            out.append((n, text.strip()))
        elif n in lines and names & globals_:
            out.append((n, text.strip()))
    return out
