"""Triton when present, imported on first use: `load()`, `why_not()`, the lazy `jit`, `launch`.

Importing this package never imports Triton or PyTorch (the puzzle registry imports every module of
`puzzles/`, in every notebook). `load()` imports them the first time a Triton kernel is needed:

- on a machine where PyTorch sees no CUDA GPU it sets `TRITON_INTERPRET=1` first (Triton's
  interpreter runs each program with NumPy on the CPU; Triton reads the variable when a kernel is
  decorated, so it must be set before any `@triton.jit` runs);
- where Triton or PyTorch cannot be imported, `why_not()` says so in one line and the callers skip.

Triton kernels take torch tensors (the interpreter too: it reads `data_ptr()`); `launch` says which
argument is a NumPy array and how to fix it, where Triton's own message would not.
"""

from __future__ import annotations

import inspect
import os
import sys

import numpy as np

_STATE: dict = {}  # "triton", "tl", "torch", "mode" once loaded; "why" where it cannot be


def _probe() -> None:
    if _STATE:
        return
    try:
        import torch
    except ImportError:
        _STATE["why"] = (
            "PyTorch is not installed: Triton kernels take torch tensors, so the Triton cells are skipped "
            "(pip install torch triton)."
        )
        return
    gpu = bool(torch.cuda.is_available())
    if not gpu:
        if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET", "0") not in ("1", "true"):
            print("Note: Triton was imported before TRITON_INTERPRET was set; kernels decorated from now on "
                  "run in the interpreter.")  # fmt: skip
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        import triton
        import triton.language as tl
    except ImportError as e:
        _STATE["why"] = (
            f"Triton cannot be imported ({e}): the Triton cells are skipped (pip install triton; "
            "Linux wheels only)."
        )
        return
    _STATE.update(triton=triton, tl=tl, torch=torch, mode="gpu" if gpu else "interpreter")
    if not gpu:
        _fix_interpreter_index(triton)


def _fix_interpreter_index(triton) -> None:
    """Triton 3.6's interpreter turns a scalar into an int with `int(array of shape (1,))`, which
    NumPy 2.4 refuses ("only 0-dimensional arrays can be converted to Python scalars"): every
    `range(0, K, BK)` over a runtime K fails. Same conversion, through the one element."""
    try:
        from triton.runtime import interpreter
    except ImportError:
        return
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_course_fix", False):
        return

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    patched._course_fix = True
    interpreter._patch_lang_tensor = patched


def why_not() -> str | None:
    """None where Triton kernels can run (GPU or interpreter), else one line saying why not."""
    _probe()
    return _STATE.get("why")


def short_why() -> str | None:
    """why_not()'s line up to its first colon ("PyTorch is not installed"), for the cells after the
    first: the notebook says the whole reason once."""
    why = why_not()
    return why.split(":")[0] if why else None


def load():
    """(triton, tl, torch): raises RuntimeError with why_not()'s line where Triton cannot run."""
    why = why_not()
    if why:
        raise RuntimeError(why)
    return _STATE["triton"], _STATE["tl"], _STATE["torch"]


def mode() -> str:
    """ "gpu", "interpreter" or "absent"."""
    return "absent" if why_not() else _STATE["mode"]


def versions() -> str:
    """One line: the versions the Triton cells run with."""
    if why_not():
        return why_not()
    triton, _, torch = load()
    where = "GPU" if mode() == "gpu" else "interpreter, CPU"
    return f"triton {triton.__version__}, torch {torch.__version__}, numpy {np.__version__} ({where})"


def device() -> str:
    """Where torch tensors for a Triton kernel live here: "cuda" or "cpu" (the interpreter)."""
    return "cuda" if mode() == "gpu" else "cpu"


class _Later:
    """`tl` in the op files until Triton is loaded: attribute access loads it; a kernel's first launch
    rebinds the module's `tl` to `triton.language` itself (Triton's compiler must see the module)."""

    def __getattr__(self, name):
        if name.startswith("__"):  # introspection (copy, pickle, inspect) must not import Triton
            raise AttributeError(name)
        return getattr(load()[1], name)


tl = _Later()


class Kernel:
    """A Triton kernel compiled on first launch (`kernel[grid](...)`), so that importing the module
    that defines it imports no Triton. The op files write `@jit` where a notebook writes
    `@triton.jit`; `.fn` is the Python function, as on Triton's own kernels."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._compiled = None

    def compiled(self):
        if self._compiled is None:
            triton, tl, _ = load()
            # the body's `tl.` names resolve in the defining module's globals when Triton compiles it
            g = self.fn.__globals__
            if isinstance(g.get("tl", _Later()), _Later):
                g["tl"] = tl
            self._compiled = triton.jit(self.fn)
        return self._compiled

    def __getitem__(self, grid):
        return self.compiled()[grid]


def jit(fn) -> Kernel:
    return Kernel(fn)


class _StandIn:
    """`triton` and `tl` in a notebook where Triton cannot run: `@triton.jit` still defines the kernel
    (a Kernel whose launch raises why_not()'s line) and `tl.constexpr` still reads, so every cell
    runs and the checks say in one line that they were skipped."""

    def __init__(self, name: str):
        self._name = name

    def jit(self, fn=None, **options):
        return Kernel(fn) if fn is not None else Kernel

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StandIn(f"{self._name}.{name}")


def modules():
    """(triton, triton.language) where Triton can run (TRITON_INTERPRET=1 set first on a CPU), else
    stand-ins that let the cells define kernels."""
    if why_not():
        return _StandIn("triton"), _StandIn("triton.language")
    triton, tl, _ = load()
    return triton, tl


def python_function(kernel):
    """The Python function behind a Triton kernel (ours, Triton's JITFunction or its interpreter's)."""
    fn = kernel
    for _ in range(3):
        if inspect.isfunction(fn):
            return fn
        fn = getattr(fn, "fn", None)
    raise TypeError(
        f"expected a Triton kernel (a function decorated with @triton.jit), got {type(kernel).__name__}"
    )


def launch(kernel, grid, *args, **constexprs):
    """`kernel[grid](*args, **constexprs)`, after checking that no argument is a NumPy array (Triton
    reads a tensor's `data_ptr()`; an array has none) and that every tensor is where the kernel runs."""
    names = list(inspect.signature(python_function(kernel)).parameters)
    dev = device()
    for i, a in enumerate(args):
        name = names[i] if i < len(names) else f"#{i}"
        kname = python_function(kernel).__name__
        if isinstance(a, np.ndarray):
            fix = "torch.from_numpy(a).cuda()" if dev == "cuda" else "torch.from_numpy(a)"
            raise TypeError(
                f"argument `{name}` of `{kname}` is a NumPy array: Triton kernels take torch tensors "
                f"(Triton reads the tensor's data_ptr()). Pass {fix} instead, and read the result "
                "back with .cpu().numpy()."
            )
        if hasattr(a, "device") and hasattr(a, "data_ptr") and a.device.type != dev:
            raise TypeError(
                f"argument `{name}` of `{kname}` is a tensor on {a.device}, but Triton runs "
                f"{'on the GPU' if dev == 'cuda' else 'in its interpreter, on the CPU'} here: "
                f"move it with .to('{dev}')."
            )
    return kernel[grid](*args, **constexprs)
