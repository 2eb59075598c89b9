"""`beside(left, right)`: two kernels' sources printed side by side (a Numba kernel and its Triton
spelling), each under its name, so that a reader can match them line for line."""

from __future__ import annotations

import inspect
import textwrap

from puzzles.triton.lang import python_function


def _source(kernel) -> list[str]:
    fn = getattr(kernel, "py_func", None) or python_function(kernel)
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines()
    keep = [ln for ln in lines if ln.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")]
    return ["@triton.jit" if ln == "@jit" else ln for ln in keep]  # the op files' lazy @jit is triton.jit


def beside_text(left, right, titles=("Numba", "Triton"), width: int = 0) -> str:
    a, b = _source(left), _source(right)
    width = width or max(len(x) for x in a)
    head = [
        f"{titles[0]}".ljust(width) + " | " + titles[1],
        "-" * width + "-+-" + "-" * max(len(x) for x in b),
    ]
    body = [
        x.ljust(width) + " | " + y for x, y in zip(a + [""] * (len(b) - len(a)), b + [""] * (len(a) - len(b)))
    ]
    return "\n".join(head + body)


def beside(left, right, titles=("Numba", "Triton")) -> None:
    print(beside_text(left, right, titles))
