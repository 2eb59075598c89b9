"""`sanitize(kernel, grid, *args, **constexprs)`: one launch under triton-viz's sanitizer, where it
imports (triton-viz 3.0 imports with triton 3.6 only), its verdict said as the course says one.

The sanitizer runs the kernel in Triton's interpreter and checks every load and store against the
tensors' memory; on an out-of-bounds access it prints a long report (file, line, tensor, address) and
calls `sys.exit(1)`, which in a notebook would end the cell's kernel run. Here the exit is caught, the
report is kept, and the message names the line, the tensor and how far past its end the access went.
"""

from __future__ import annotations

import contextlib
import io
import re

from puzzles.triton import lang

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def why_not() -> str | None:
    if lang.why_not():
        return f"Sanitizer not run ({lang.short_why()})."
    try:
        import triton_viz  # noqa: F401
    except Exception as e:  # ImportError, or triton-viz built against another Triton
        first = str(e).splitlines()[0] if str(e) else ""
        return (
            f"triton-viz cannot be imported ({type(e).__name__}: {first}): the sanitizer is skipped "
            "(pip install triton-viz; version 3.0 imports with triton 3.6)."
        )
    return None


class OutOfBounds(AssertionError):
    """triton-viz's sanitizer found a load or store outside every tensor's memory. `.report` is its
    full text."""

    def __init__(self, message: str, report: str):
        super().__init__(message)
        self.report = report


def sanitize(kernel, grid, *args, **constexprs) -> None:
    """Launch once under the sanitizer; raise OutOfBounds (with the course's message) on a bad access,
    print one line and return where the sanitizer cannot run."""
    why = why_not()
    if why:
        print(why)
        return
    import triton_viz

    base = kernel.compiled() if isinstance(kernel, lang.Kernel) else kernel
    traced = triton_viz.trace("sanitizer")(base)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf), _loops_restored():
            lang.launch(traced_kernel(traced, base), grid, *args, **constexprs)
    except SystemExit:
        report = _ANSI.sub("", buf.getvalue())
        raise OutOfBounds(_message(report, lang.python_function(base).__name__), report) from None
    except TypeError:
        raise  # lang.launch's messages (a NumPy array, a tensor on the wrong device)
    except Exception as e:  # triton-viz on a setup it was not tested with (a GPU, another Triton)
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"triton-viz's sanitizer could not run here ({type(e).__name__}: {first}).")
        return
    print(
        f"triton-viz's sanitizer: every load and store of `{lang.python_function(base).__name__}` in bounds."
    )


@contextlib.contextmanager
def _loops_restored():
    """triton-viz 3.0 rewrites the interpreter's `for` loops (ASTTransformer.visit_For) while it traces
    and puts back the old method only where there was one: Triton 3.6 has none, so every kernel run in
    the interpreter afterwards would call triton-viz's loop hook and fail with a NameError. Put the
    class back as it was."""
    from triton.runtime.interpreter import ASTTransformer

    had = "visit_For" in vars(ASTTransformer)
    before = vars(ASTTransformer).get("visit_For")
    try:
        yield
    finally:
        if had:
            ASTTransformer.visit_For = before
        elif "visit_For" in vars(ASTTransformer):
            del ASTTransformer.visit_For


def traced_kernel(traced, base):
    """The traced kernel with the Python function reachable as `.fn` (for lang.launch's checks)."""
    if not hasattr(traced, "fn"):
        traced.fn = lang.python_function(base)
    return traced


def _message(report: str, name: str) -> str:
    code = re.search(r"File:.*:(\d+)\s*\n(?:.*\n)*?\s*Code:\s*(.*)", report)
    line = code or re.search(r"→\s*(\d+)\s*│\s*(.*)", report)
    op = re.search(r"Symbolic Expression Tree\W*\n\s*(load|store)", report)
    arg = re.search(r"arg:\s*(\w+)", report)
    rng = re.search(r"valid_range:\s*\[0x([0-9a-f]+),\s*0x([0-9a-f]+)\)", report)
    addr = re.search(r"Violation address:\s*0x([0-9a-f]+)", report)
    what = f"a {op.group(1)}" if op else "a load or store"
    where = f"{what} on line {line.group(1)} of its cell or file: `{line.group(2).strip()}`" if line else what
    past = ""
    if rng and addr:
        end, a = int(rng.group(2), 16), int(addr.group(1), 16)
        past = (
            f" ({a - end} bytes past its end)"
            if a >= end
            else f" ({int(rng.group(1), 16) - a} bytes before it)"
        )
    tensor = f"the tensor `{arg.group(1)}`{past}" if arg else "no tensor's memory"
    return (
        f"triton-viz's sanitizer: `{name}` accessed memory outside {tensor}, in {where}. A GPU would read "
        "garbage or fault there. Mask the access (`mask=offsets < n` on tl.load and tl.store)."
    )
