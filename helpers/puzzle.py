"""What a puzzle or exercise is: the data the harness needs, nothing more.

Exercise modules in `puzzles/` build `Puzzle` objects; `helpers.check` runs them and `helpers.viz`
draws their runs. Nothing here calls either.
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass, field
from typing import Callable, Union

import numpy as np

from helpers.rules import Budget, Limit, Rule

__all__ = [
    "BEGIN",
    "END",
    "Budget",
    "Case",
    "Limit",
    "Puzzle",
    "Rule",
    "RunRecord",
    "edge_sizes",
    "make_stub",
    "strip_markers",
]


@dataclass
class Case:
    """One launch: its configuration and the kernel's arguments by name.

    `args` holds every parameter in signature order: input arrays, output
    arrays (shape and dtype matter; the harness poisons their contents), and
    scalars such as sizes.
    """

    grid: Union[int, tuple]
    block: Union[int, tuple]
    args: dict
    shared_bytes: int = 0  # dynamic shared memory (4th launch parameter)

    def launch_text(self) -> str:
        def dims(d):
            return str(d) if isinstance(d, int) else "(" + ", ".join(map(str, d)) + ")"

        extra = f", dynamic shared {self.shared_bytes} B" if self.shared_bytes else ""
        return f"kernel[{dims(self.grid)}, {dims(self.block)}]{extra}"

    def describe(self) -> str:
        parts = []
        for name, v in self.args.items():
            if isinstance(v, np.ndarray):
                parts.append(f"{name}: {v.dtype}{list(v.shape)}")
            else:
                parts.append(f"{name}={v}")
        return f"{self.launch_text()} with " + ", ".join(parts)


@dataclass
class Puzzle:
    name: str  # short name: puzzles.check(name, kernel)
    title: str
    statement: str  # markdown, shown in the notebook
    signature: tuple = ()  # kernel parameters in order; left out, read from `reference`
    outputs: tuple = ()  # the parameters the kernel writes: ("out",)
    spec: Callable = None  # NumPy truth: spec(**inputs and scalars) -> array, or dict per output
    cases: Callable = None  # cases(rng: np.random.Generator, **choices) -> list[Case]
    reference: Callable = None  # the reference kernel, its solution between ### BEGIN/END SOLUTION
    hints: tuple = ()  # progressive; none gives the answer away
    budget: Budget = field(default_factory=Budget)
    rules: tuple = ()  # extra rules (helpers.rules), checked after the budget's
    zeroed: tuple = ()  # outputs and work arrays the host clears to zero first (atomics, counters)
    # work arrays (block sums, flags), never compared: garbage at the start (reading an element before
    # a thread wrote it is diagnosed) unless also listed in `zeroed`
    scratch: tuple = ()
    # outputs that start at the case's values (what earlier launches or chunks left) and must end at
    # those plus this launch's part: `spec` receives their starting values by name
    accumulate: tuple = ()
    cross_block_races: bool = True  # False only where blocks legitimately talk through global memory
    rtol: float = 1e-5  # float tolerance (integer-valued data is compared exactly)
    atol: float = 1e-5
    # where the error bound depends on the inputs (tensor-core sums): tolerance(**the spec's arguments)
    # -> per-element absolute tolerance (one array, or {output: array}); it replaces rtol/atol
    tolerance: Callable = None
    chapter: str = ""  # "puzzles", "pmpp-05", ...
    # launch settings the learner chooses: names of module-level constants (e.g. "BLOCK") read from
    # the checked kernel's globals and passed to `cases` by keyword (see `cases_for`)
    choices: tuple = ()
    # float64 arithmetic in the PTX of a kernel whose arrays are float32: "warn" (a note on a pass),
    # "reject" (exercises about precision or speed: OverBudget field "float64") or "allow"
    float64: str = "warn"
    # integer outputs that hold float bit patterns (float keys as ints, CAS on floats as ints):
    # messages show their values as floats and in hex
    bits: bool = False

    def __post_init__(self):
        if self.float64 not in ("warn", "reject", "allow"):
            raise ValueError(f"Puzzle {self.name!r}: float64 must be 'warn', 'reject' or 'allow'")
        missing = [f for f in ("outputs", "spec", "cases", "reference") if not getattr(self, f)]
        if missing:
            raise TypeError(f"Puzzle {self.name!r} needs {', '.join(missing)}")
        if not self.signature:
            fn = getattr(self.reference, "py_func", self.reference)
            self.signature = tuple(inspect.signature(fn).parameters)

    def chosen(self, kernel: Callable) -> dict:
        """{name: value} of `choices` as the kernel's module (or notebook) sets them; a name it does
        not set keeps the reference's value."""
        ref = getattr(self.reference, "py_func", self.reference).__globals__
        own = getattr(getattr(kernel, "py_func", kernel), "__globals__", {})
        return {n: own.get(n, ref[n]) for n in self.choices}

    def cases_for(self, kernel: Callable, rng: np.random.Generator) -> list:
        """The cases `kernel` is checked on: `cases(rng)`, plus the kernel's own `choices`."""
        return self.cases(rng, **self.chosen(kernel)) if self.choices else self.cases(rng)

    @property
    def all_rules(self) -> tuple[Rule, ...]:
        """The rule table of this puzzle: its budget's standard rules, then its own."""
        return (*self.budget.rules(), *self.rules)

    @functools.cached_property
    def source(self) -> str:
        """The reference kernel's source, solution markers included (read once: tokenizing is slow)."""
        return inspect.getsource(getattr(self.reference, "py_func", self.reference))

    @property
    def stub(self) -> str:
        """The code a learner starts from: the reference with its solution cut out."""
        return make_stub(self.source)

    def hint(self, n: int = 1) -> str:
        """The first n hints, as text."""
        if not self.hints:
            return "No hints for this one."
        return "\n".join(f"Hint {i + 1}: {h}" for i, h in enumerate(self.hints[:n]))


def edge_sizes(
    rng: np.random.Generator, typical: int, block: int, largest: tuple[int, int], *, smallest: int = 1
) -> list[int]:
    """Sizes for a puzzle's cases, drawn per seed: `typical` first (case 0, the one `puzzles.show`
    draws and the notebook's prose may name), then, shuffled, the edges around one block
    (`smallest`, block-1, block, block+1), a few blocks plus a remainder, and the largest, drawn from
    `largest` (inclusive) so that no single size, nor the largest, is the same on every seed."""
    rng = rng.spawn(1)[0]  # its own stream: the data drawn from `rng` stay what they were
    lo, hi = largest
    several = int(rng.integers(2 * block + 1, max(2 * block + 2, min(hi, 4 * block))))
    edges = [smallest, block - 1, block, block + 1, several, int(rng.integers(lo, hi + 1))]
    edges = [e for e in edges if smallest <= e <= hi]
    rng.shuffle(edges)
    out = [typical]
    for e in edges:
        if e not in out:
            out.append(e)
    return out


BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_BLOCK = re.compile(r"^([ \t]*)" + BEGIN + r"[^\n]*\n(.*?)^[ \t]*" + END + r"[^\n]*\n?", re.M | re.S)


def strip_markers(source: str) -> str:
    """The solution version: marker lines removed, code kept."""
    return "".join(line for line in source.splitlines(keepends=True) if line.strip() not in (BEGIN, END))


def make_stub(source: str) -> str:
    """The learner version: each marked block becomes a FILL ME IN line (plus `pass`
    where the block was all the body there was, so the stub still compiles)."""

    def cut(m):
        indent, body = m.group(1), m.group(2)
        n = sum(1 for line in body.splitlines() if line.strip() and not line.strip().startswith("#"))
        return f"{indent}# FILL ME IN (roughly {n} line{'s' if n != 1 else ''})\n"

    stub = _BLOCK.sub(cut, source)
    try:
        compile(stub, "<stub>", "exec")
    except SyntaxError:
        stub = _BLOCK.sub(lambda m: cut(m) + m.group(1) + "pass\n", source)
    return stub


@dataclass
class RunRecord:
    """What one simulator run of one case produced: the harness keeps it, the views draw it.

    `launch` is the simulator's record (`.trace`, `.shared_bytes`) of a run that finished; when the
    simulator diagnosed the kernel instead, `launch` is None and `diagnostic` holds the
    `helpers.sim.errors.SimulatorError` (its `.trace` has the accesses up to the fault).
    `expected` holds the spec's outputs (computed once per case; `tol` their per-element tolerances
    where the puzzle has a `tolerance`) and `wrong` the flat indices of the
    wrong cells per output, for a run that finished ({} otherwise): the check, `puzzles.show` and the
    GPU stage read them.
    """

    puzzle: Puzzle
    kernel_name: str
    case: Case
    case_index: int
    seed: int
    launch: object = None
    outputs: dict = field(default_factory=dict)
    diagnostic: Exception | None = None
    expected: dict = field(default_factory=dict)
    wrong: dict = field(default_factory=dict)
    tol: dict = field(default_factory=dict)  # {output: per-element tolerance} of a `tolerance` puzzle

    @property
    def trace(self):
        """The trace of the run (partial when the simulator stopped it), or None."""
        if self.launch is not None:
            return self.launch.trace
        return getattr(self.diagnostic, "trace", None)
