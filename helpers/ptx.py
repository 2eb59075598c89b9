"""The third engine: compile a kernel to PTX for the T4 (sm_75) with real numba-cuda.

No GPU or driver is needed (NVVM comes from pip through numba-cuda[cu12] or [cu13]). A kernel
the simulator runs but Numba cannot compile (lists, Python objects, dynamic
shapes) fails here with Numba's own message. MP_COMPILER=mlir compiles with numba-cuda-mlir
instead (helpers/mlir.py), the learner's code unchanged.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import os
import re
import textwrap
import types
from pathlib import Path

import numpy as np

from .sim.kernel import py_func, source_of

T4 = (7, 5)
_cache: dict = {}

_HINTS = (
    (
        "NRT required",
        "Python lists, dicts and other objects cannot be created in a kernel: use "
        "cuda.local.array or cuda.shared.array with a constant shape.",
    ),
    ("build_list", "Python lists cannot be created in a kernel: use cuda.local.array."),
    (
        "non-precise type pyobject",
        "the kernel uses a Python object Numba cannot type (a global that is "
        "not a number or array, or a module function Numba does not support).",
    ),
    (
        "Untyped global name",
        "the kernel uses a global name Numba cannot see or type: constants must be "
        "numbers defined before the kernel is compiled.",
    ),
    ("shape", "shared/local array shapes must be compile-time constants (literals or global ints)."),
    (
        "Cannot unify",
        "a variable gets values of different types on different paths (e.g. int then float): "
        "give it one type from the start (0.0 instead of 0).",
    ),
)


class NumbaRejected(Exception):
    """Real Numba refused to compile the kernel; the message explains why."""


COMPILER_ENV = "MP_COMPILER"
COMPILERS = ("numba-cuda", "mlir")


def compiler() -> str:
    """The compiler of the check: MP_COMPILER=numba-cuda (the default) or mlir (numba-cuda-mlir)."""
    name = os.environ.get(COMPILER_ENV, "numba-cuda").strip().lower() or "numba-cuda"
    if name not in COMPILERS:
        raise ValueError(f"{COMPILER_ENV} must be one of {', '.join(COMPILERS)}, not {name!r}")
    return name


def available() -> bool:
    """True when NVVM/NVRTC are installed so PTX compilation works."""
    if compiler() == "mlir":
        from . import mlir

        return mlir.available()
    try:
        from numba.cuda.cudadrv import nvvm

        nvvm.NVVM()
        return True
    except Exception:
        return False


def arg_types(args):
    import numba

    out = []
    for a in args:
        if hasattr(a, "__sim_array__"):
            a = a.__sim_array__()
        if isinstance(a, bool):
            out.append(numba.types.boolean)
        elif isinstance(a, int):
            out.append(numba.types.int64)
        elif isinstance(a, float):
            out.append(numba.types.float64)
        else:
            out.append(numba.typeof(np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a))
    return tuple(out)


def ptx_check(kernel, args, cc=T4) -> str:
    """Compile `kernel` for the argument types of `args` and return its PTX; raise NumbaRejected if
    Numba refuses."""
    from numba import cuda

    fn = py_func(kernel)
    sig = arg_types(args)
    # a kernel written `from numba_cuda_mlir import cuda` compiles with numba-cuda-mlir whatever is chosen
    mlir = compiler() == "mlir" or type(kernel).__name__ == "MLIRDispatcher"
    key = (_memo_key(fn, set()), sig, cc, mlir)
    if key not in _cache and mlir:
        _cache[key] = _mlir_check(fn, args, cc)
    if key not in _cache:
        err, text = None, ""
        compiled = _compiled_before(fn, sig, cc)
        if compiled is not None and compiled.exists():
            text = compiled.read_text()
        else:
            try:  # the verdict: exactly what the learner's launch would compile
                with _device_functions_without_gpu(cc):
                    text, _ = cuda.compile_ptx(_fresh(fn), sig, cc=cc)
            except Exception as e:  # Numba raises many error types; all mean "not compilable"
                err = _explain(e, fn)
            if err is None and compiled is not None:
                compiled.write_text(text)
        _cache[key] = (err, text)
    err, text = _cache[key]
    if err:
        raise NumbaRejected(err)
    return text


def _memo_key(fn, seen: set) -> tuple:
    """This process's key for `fn`: its code object and the values that code reads but does not fix
    (the globals it names, its defaults, its closure cells). Kernels of one factory (a closure, or
    timing.specialize's copies with other globals) share a code object and differ only there."""
    fn = py_func(fn)
    if id(fn) in seen:
        return (fn.__code__,)
    seen.add(id(fn))
    g = fn.__globals__
    values = [(n, _memo_value(g[n], seen)) for n in _names(fn.__code__) if n in g]
    values += [("default", _memo_value(d, seen)) for d in fn.__defaults__ or ()]
    for cell in fn.__closure__ or ():
        try:
            values.append(("closure", _memo_value(cell.cell_contents, seen)))
        except ValueError:  # a cell not yet assigned
            values.append(("closure", None))
    return (fn.__code__, tuple(values))


@functools.lru_cache(maxsize=4096)
def _names(code) -> tuple:
    """Every name `code` and the functions nested in it read (globals among them)."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.update(_names(c))
    return tuple(sorted(names))


def _memo_value(v, seen: set):
    """`v` as part of a key in this process: numbers by value, functions by their own key, small
    arrays by content (Numba freezes a global array into the code), anything else by equality where
    it hashes, else by identity."""
    if isinstance(v, (bool, int, float, complex, str, np.generic)):
        return (type(v), repr(v))  # repr: 2 and 2.0 and nan stay apart / equal to themselves
    if isinstance(v, types.ModuleType):
        return ("module", v.__name__)
    if isinstance(v, types.FunctionType) or hasattr(v, "py_func"):
        return ("function", _memo_key(v, seen))
    if isinstance(v, np.ndarray):
        content = v.tobytes() if v.nbytes <= 1 << 16 else id(v)
        return ("array", v.dtype.str, v.shape, v.flags.c_contiguous, content)
    try:
        hash(v)
    except TypeError:
        return ("object", type(v), id(v))
    return ("object", type(v), v)


def _mlir_check(fn, args, cc) -> tuple:
    """(refusal message or None, PTX) from numba-cuda-mlir."""
    from . import mlir

    plain = [a.__sim_array__() if hasattr(a, "__sim_array__") else a for a in args]
    plain = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in plain]
    try:
        return None, mlir.compile_ptx(fn, plain, cc)
    except Exception as e:  # noqa: BLE001 - every error type means "not compilable"
        root = e
        while root.__cause__ or root.__context__:  # its internal errors hide the cause in the chain
            root = root.__cause__ or root.__context__
        cause = f"\nCause: {type(root).__name__}: {root}".splitlines()[:2] if root is not e else []
        return _explain(e, fn).replace("Real Numba", f"Real Numba ({mlir.NAME})", 1) + "\n".join(cause), ""


def ptx_lines(kernel, args, cc=T4) -> str | None:
    """The PTX `ptx_check` made, compiled again with source lines: only to say where float64
    arithmetic comes from, so only for a finding that names them. None where line info cannot be had
    (see _with_lines), and for numba-cuda-mlir."""
    if compiler() == "mlir" or type(kernel).__name__ == "MLIRDispatcher":
        return None
    fn = py_func(kernel)
    sig = arg_types(args)
    key = ("lines", _memo_key(fn, set()), sig, cc)
    if key not in _cache:
        compiled = _compiled_before(fn, sig, cc)
        kept = compiled.with_name(compiled.name + "-lines") if compiled is not None else None
        if kept is not None and kept.exists():
            _cache[key] = kept.read_text() or None
        else:
            _cache[key] = _with_lines(fn, sig, cc)
            if kept is not None:
                kept.write_text(_cache[key] or "")
    return _cache[key]


def _with_lines(fn, sig, cc) -> str | None:
    """The PTX again, with source lines: only to say where float64 arithmetic comes from. NVVM refuses
    some kernels with line info that it compiles without (ERROR_COMPILATION), and older numba-cuda has
    no `lineinfo`: then None, and the finding names no line."""
    from numba import cuda

    try:
        with _device_functions_without_gpu(cc):
            return cuda.compile_ptx(_fresh(fn), sig, cc=cc, lineinfo=True)[0]
    except Exception:  # noqa: BLE001 - any failure here only costs the line numbers
        return None


# The test suite sets MP_PTX_CACHE to a folder of its own run, so that its workers and every notebook
# it runs (separate processes) compile a kernel they share, such as a registered reference, once:
# one file per kernel that compiled, holding its PTX. Only successes are kept (a refusal's message
# names lines).
CACHE_ENV = "MP_PTX_CACHE"


def _compiled_before(fn, sig, cc) -> Path | None:
    """The file that marks this kernel as compiled in this test run, or None (no cache, or no source)."""
    folder = os.environ.get(CACHE_ENV)
    if not folder:
        return None
    try:
        import numba
        from numba import cuda

        parts = [
            _code_key(fn, set()),
            repr(sig),
            repr(cc),
            numba.__version__,
            getattr(cuda, "__version__", ""),
        ]
    except Exception:  # noqa: BLE001 - no source to read, or a value it cannot name: compile every time
        return None
    return Path(folder) / hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _code_key(fn, seen: set) -> str:
    """What the compiled code depends on, readable across processes: the function's syntax tree (no
    comments, no line numbers) and each global, default or closure value it names (numbers and arrays
    by value, functions by their own key, anything else by type)."""
    fn = py_func(fn)
    if id(fn) in seen:
        return fn.__name__
    seen.add(id(fn))
    tree = ast.dump(ast.parse(textwrap.dedent(source_of(fn.__code__))))
    names, stack = set(), [fn.__code__]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    values = [(n, fn.__globals__[n]) for n in sorted(names) if n in fn.__globals__]
    values += [("default", d) for d in fn.__defaults__ or ()]
    values += [("closure", c.cell_contents) for c in fn.__closure__ or ()]
    return tree + "".join(f"\n{n}={_value_key(v, seen)}" for n, v in values)


def _value_key(v, seen: set) -> str:
    if isinstance(v, (bool, int, float, complex, str, np.generic)):
        return repr(v)
    if isinstance(v, np.ndarray):
        return f"array {v.dtype} {v.shape} {hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()}"
    if isinstance(v, types.ModuleType):
        return f"module {v.__name__}"
    if isinstance(v, types.FunctionType) or hasattr(v, "py_func"):
        return "function " + _code_key(v, seen)
    text = repr(v)  # a Numba type (float32), a dtype: its name; an address would differ per process
    shown = text if " at 0x" not in text and len(text) < 200 else ""
    return f"object {type(v).__module__}.{type(v).__qualname__} {shown}"


@contextlib.contextmanager
def _device_functions_without_gpu(cc):
    """numba-cuda 0.30 asks the driver for the current device's compute capability when it
    compiles a device function, even inside compile_ptx; with no GPU, answer for the target."""
    from numba.cuda import dispatcher

    from .device import gpu_present

    if gpu_present():
        yield
        return
    real = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = real


def _fresh(fn):
    """A copy of the function, so Numba's caches never mix it up with an edited version."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


# Numba's typing errors in plain words: (test on Numba's text, explanation)
_PLAIN = (
    (
        lambda t: "_ol_array_allocate" in t or ("NRT required" in t and "array" in t),
        "an operation on whole arrays (like `a + b` or `a * 2` where `a` and `b` are arrays) makes a "
        "new array, and a kernel cannot create arrays that way: work element by element, "
        "`out[i] = a[i] + b[i]`.",
    ),
    (
        lambda t: ("shared.array" in t or "local.array" in t) and ">>> array(" in t,
        "the shape of `cuda.shared.array` / `cuda.local.array` must be a constant known when the kernel "
        "compiles (a number, or a module-level int like `TPB`), not an argument or a variable.",
    ),
    (
        lambda t: "built-in function setitem" in t,
        "an assignment `array[index] = value` whose value (or index) has a type the array cannot hold: "
        "store one number per element, of the array's kind (a float into a float32 array), at an "
        "integer index.",
    ),
    (
        lambda t: "Cannot unify" in t,
        "a variable gets values of different types on different paths (e.g. int then float): give it "
        "one type from the start (0.0 instead of 0).",
    ),
)


def _learner_line(text: str, fn) -> tuple[int, str] | None:
    """(line, source) of the last place in the learner's file that Numba's message points at."""
    import linecache

    filename = fn.__code__.co_filename
    found = None
    for pattern in (r'File "([^"]+)", line (\d+)', r"at (\S+) \((\d+)\)"):
        for m in re.finditer(pattern, text):
            if m.group(1) == filename:
                found = int(m.group(2))
    if found is None:
        return None
    return found, linecache.getline(filename, found).strip()


def _explain(e, fn=None) -> str:
    text = str(e)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    short = "\n".join("    " + ln for ln in lines[:14])
    plain = next((h for test, h in _PLAIN if test(text)), None)
    hint = None if plain else next((h for k, h in _HINTS if k in text), None)
    where = _learner_line(text, fn) if fn is not None else None
    msg = (
        f"Real Numba cannot compile this kernel for a GPU ({type(e).__name__}), so it would not run on "
        "Colab's T4 or any GPU, whatever the simulator says."
    )
    if where:
        msg += f"\nAt line {where[0]}: `{where[1]}`"
    if plain:
        msg += f"\nIn plain words: {plain}"
    msg += f"\nNumba says:\n{short}"
    if hint:
        msg += f"\nLikely cause: {hint}"
    return msg
