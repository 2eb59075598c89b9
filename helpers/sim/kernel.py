"""Preparing a kernel for the simulator: the same Python function, with `cuda`
bound to the simulator's API, and the static checks Numba would make."""

from __future__ import annotations

import ast
import copy
import dis
import functools
import inspect
import math
import textwrap
import types
from types import CodeType
from typing import Any

import numpy as np

from .errors import LaunchError, Unsupported
from .semantics import MATH, MATH_FUNCTIONS

_DISPATCHER_NAMES = ("CUDADispatcher", "Dispatcher", "FakeCUDAKernel", "MLIRDispatcher")
# numba-cuda-mlir's `cuda` module (`from numba_cuda_mlir import cuda`): the simulator stands in for it too
MLIR_CUDA = "numba_cuda_mlir.cuda"


def is_cuda_module(v, real_cuda) -> bool:
    """`v` is numba-cuda's `cuda` module or numba-cuda-mlir's."""
    return v is real_cuda or (isinstance(v, types.ModuleType) and v.__name__ == MLIR_CUDA)


def py_func(kernel):
    """The plain Python function behind a @cuda.jit dispatcher (or the function itself)."""
    fn = getattr(kernel, "py_func", kernel)
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"expected a @cuda.jit kernel or a Python function, got {type(kernel).__name__}")
    return fn


@functools.lru_cache(maxsize=4096)
def source_of(code: CodeType) -> str:
    """The source text of a function's code (`inspect.getsource`, which tokenizes the file up to it),
    read once per code object: a kernel edited and run again is a new code object."""
    return inspect.getsource(code)


def _is_dispatcher(v):
    return type(v).__name__ in _DISPATCHER_NAMES and hasattr(v, "py_func")


class _NumbaProxy:
    """Stands in for the `numba` module inside a kernel: `numba.cuda` is the simulator."""

    def __init__(self, real, api):
        self._real, self.cuda = real, api

    def __getattr__(self, name):
        return getattr(self._real, name)


def rebind(kernel, api, real_cuda, real_numba, aliases):
    """A copy of the kernel's function whose globals see the simulator as `cuda`.

    `aliases` maps id(real numba.cuda function) -> simulator attribute name, for
    kernels that did `from numba.cuda import syncthreads`."""
    memo = {}
    root = py_func(kernel)

    def sub(v):
        if is_cuda_module(v, real_cuda):
            return api
        if v is real_numba:
            return _NumbaProxy(real_numba, api)
        if v is math:
            return MATH  # IEEE results (inf, NaN) where Python's math raises
        if id(v) in MATH_FUNCTIONS and isinstance(v, types.BuiltinFunctionType):
            return MATH_FUNCTIONS[id(v)]  # `from math import exp`
        op = getattr(v, "_sim_op", None)
        if type(op) is str:  # the course's intrinsics (helpers/tensor_cores.py): the engine's own
            return getattr(api, op)
        if _is_dispatcher(v):
            return fn_copy(v.py_func)
        if isinstance(v, types.FunctionType) and v.__module__ == root.__module__:
            return fn_copy(v)  # an undecorated helper that may use cuda.*
        name = aliases.get(id(v))
        if name is not None:
            return getattr(api, name)
        return v

    def fn_copy(fn):
        if fn in memo:
            return memo[fn]
        g = dict(fn.__globals__)
        closure = None
        if fn.__closure__:
            closure = tuple(types.CellType(sub(c.cell_contents)) for c in fn.__closure__)
        new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)
        memo[fn] = new
        for name in _global_names(fn.__code__):
            if name in g:
                g[name] = sub(g[name])
        for name in _loaded_globals(fn.__code__):
            if name in g:
                _check_global(fn, name, g[name])
        static_checks(fn)
        return new

    return fn_copy(root)


@functools.lru_cache(maxsize=4096)
def _loaded_globals(code):
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names = names | _loaded_globals(c)
    return frozenset(names)


_PLAIN = (
    int,
    float,
    complex,
    bool,
    str,
    bytes,
    np.generic,
    np.ndarray,
    np.dtype,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    type,
)


def _check_global(fn, name, v):
    """Numba compiles a kernel's globals as constants: numbers, NumPy arrays, tuples of them, modules,
    functions and types. Lists, dicts, sets and arbitrary objects do not compile (the simulator could
    run them, so it must refuse them, or a machine without the compile check would pass them)."""
    if v is None or isinstance(v, _PLAIN) or callable(v):
        return
    if isinstance(v, tuple):
        for x in v:
            _check_global(fn, name, x)
        return
    mod = type(v).__module__ or ""
    if mod.split(".")[0] in ("numba", "numba_cuda", "numpy", "helpers", "enum"):
        return
    kind = {list: "a Python list", dict: "a Python dict", set: "a Python set"}.get(type(v), "a Python object")
    code = fn.__code__
    raise Unsupported(
        f"{fn.__name__} (line {code.co_firstlineno}) uses the global `{name}`, {kind}: Numba cannot type "
        "it inside a kernel, so the kernel would not compile. Pass the data as an array argument, or "
        "use a tuple or a NumPy array constant.",
        array=name,
    )


def _global_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


_checked: dict = {}


def static_checks(fn):
    """Numba needs shared/local array shapes to be compile-time constants: literals or
    module-level names, never kernel arguments or local variables."""
    code = fn.__code__
    if code in _checked:  # the verdict is remembered, a failing one too: every launch gets it
        if _checked[code] is not None:
            raise copy.copy(_checked[code])
        return
    _checked[code] = None
    try:
        _static_checks(fn, code)
    except LaunchError as err:
        _checked[code] = err
        raise


def _static_checks(fn, code):
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return
    func = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None:
        return
    params = {a.arg for a in func.args.args + func.args.kwonlyargs}
    local = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for node in ast.walk(func):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "array"
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr in ("shared", "local")
        ):
            continue
        shape = (
            node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
        )
        if shape is None:
            continue
        for n in ast.walk(shape):
            if isinstance(n, ast.Name) and (n.id in params or n.id in local):
                kind = "a kernel argument" if n.id in params else "a variable of the kernel"
                line = code.co_firstlineno + node.lineno - 1
                raise LaunchError(
                    f"line {line}: the shape of cuda.{node.func.value.attr}.array uses `{n.id}`, which is "
                    f"{kind}. Numba needs the shape at compile time: use a literal or a module-level "
                    "constant (e.g. TPB = 8), or dynamic shared memory (shape 0 plus the 4th launch "
                    "parameter).",
                    line=line,
                    source=ast.get_source_segment(src, node),
                )


def uses_grid_sync(fn: Any) -> bool:
    """Does the kernel (or a function it calls through its globals) name `this_grid`?"""
    seen: set = set()

    def names(code: CodeType) -> set:
        out = set(code.co_names)
        for c in code.co_consts:
            if isinstance(c, CodeType):
                out |= names(c)
        return out

    def visit(f: Any) -> bool:
        code = getattr(f, "__code__", None)
        if code is None or code in seen:
            return False
        seen.add(code)
        ns = names(code)
        if "this_grid" in ns:
            return True
        g = getattr(f, "__globals__", {})
        return any(
            visit(getattr(g.get(n), "py_func", g.get(n)))
            for n in ns
            if callable(g.get(n)) and getattr(g.get(n), "__module__", None) == f.__module__
        )

    return visit(fn)
