"""A CUDA C++ kernel checked against a Numba puzzle: the same cases (drawn with the same seed), the
same NumPy spec, the same comparison and the same verdict classes where they apply. Without a GPU
the source is compile-checked for the T4 and the result says plainly that nothing ran.

Stages: NVRTC for sm_75 (CompileRejected, with NVRTC's lines as lines of the learner's cell; a
missing `extern "C"` or a wrong kernel name; parameters that cannot take the puzzle's arguments),
then on a GPU every case in a child process, under compute-sanitizer memcheck where it is installed
(OutOfBounds as KernelDiagnosed), the outputs against the spec (WrongAnswer naming the cells),
inputs unchanged (InputModified), and racecheck for kernels with shared memory (DataRace; after a
wrong answer, its hazard-by-hazard listing too). A failing verdict carries the notes of what was not
looked for.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

import numpy as np

from ..compare import compare
from ..puzzle import Puzzle
from ..runs import _quiet_numpy, expected, prepare_args
from ..sim import errors
from ..verdicts import (
    CompileRejected,
    InputModified,
    KernelDiagnosed,
    Message,
    NotSolvedYet,
    PuzzleFailure,
    WrongAnswer,
)
from . import gpu, nvrtc
from .module import Built, build, check_launch
from .source import Origin, bind


@dataclass
class CppResult:
    """A C++ check that raised nothing: what compiled, and what ran (nothing, without a GPU)."""

    puzzle: str
    kernel: str
    cases: int  # cases run on the GPU: 0 where there is none
    gpu_arch: str | None  # the GPU's architecture where the kernel ran
    notes: tuple = ()
    missing: str | None = None  # why nothing was compiled (NVRTC cannot be loaded here)
    sanitized: tuple = ()  # the compute-sanitizer tools that found nothing: ("memcheck", "racecheck")

    @property
    def ran(self) -> bool:
        return self.cases > 0

    def __repr__(self) -> str:
        if self.missing:
            return f"Not checked: {self.missing}"
        compiled = f"NVRTC {nvrtc.version()} compiles `{self.kernel}` for the T4 (sm_75)"
        if not self.ran:
            text = (
                f"Compiled, not run: {compiled}, but this machine has no GPU, so the kernel's answers "
                f"were not checked.\nIts Numba twin runs on the simulator here: "
                f"puzzles.check({self.puzzle!r}, <your Numba kernel>)."
            )
        else:
            text = (
                f"Passed: {self.puzzle} in CUDA C++, {self.cases} cases on the GPU ({self.gpu_arch}); "
                f"{compiled}."
            )
            if self.sanitized:
                text += f"\ncompute-sanitizer {' and '.join(self.sanitized)} found nothing."
        return text + "".join(f"\nNote: {n}" for n in self.notes)

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))


def check(
    puzzle: Puzzle,
    source: str,
    *,
    kernel: str | None = None,
    stub: str | None = None,
    seed: int | None = None,
    gpu_present: bool | None = None,
    origin: Origin | None = None,
) -> CppResult:
    """Check C++ `source` against `puzzle`; `kernel` defaults to the Numba reference's name, `stub`
    is the exercise's starting text (NotSolvedYet while the source is still it)."""
    ref_name = getattr(puzzle.reference, "py_func", puzzle.reference).__name__
    name = kernel or ref_name
    what = f"Puzzle `{puzzle.name}` in CUDA C++"
    if stub is not None and _words(source) == _words(stub):
        raise NotSolvedYet(
            f"{what}: not solved yet. The source is still the stub; fill in the kernel where it says "
            "`// FILL ME IN` and run this cell again."
        )
    try:
        nvrtc.version()
    except Exception as e:  # noqa: BLE001 - no NVRTC here: one line, as for any optional engine
        return CppResult(
            puzzle.name, name, 0, None, missing=f"CUDA C++ needs NVRTC, which cannot be loaded ({e})"
        )
    built = build(source, name, origin, what)
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    cases = puzzle.cases_for(puzzle.reference, np.random.default_rng(seed))
    prepared = [prepare_args(puzzle, c) for c in cases]
    runs = []
    for case, (args, _, _, _) in zip(cases, prepared):
        values, problem = bind(built.params, puzzle.signature, args)
        if problem:
            raise CompileRejected(
                f"{what}: `{built.name}` cannot take the puzzle's arguments "
                f"({', '.join(puzzle.signature)}): {problem}."
            )
        check_launch(case.grid, case.block)
        runs.append(
            {"grid": case.grid, "block": case.block, "shared_bytes": case.shared_bytes, "args": values}
        )
    if gpu_present is None:
        from ..device import gpu_present as present

        gpu_present = present()
    if not gpu_present:
        return CppResult(puzzle.name, built.name, 0, None)
    ctx = _Ctx(puzzle, built, seed, cases)
    job = {"source": source, "name": built.name, "cubin": None, "runs": runs}
    notes: list[str] = []
    tool = "memcheck" if gpu.sanitizer() else None
    if tool is None:
        notes.append(gpu.NO_SANITIZER)
    child = gpu.run(job, tool)
    if tool and child.result is None and not child.why.startswith("the kernel had not finished"):
        notes.append(f"compute-sanitizer could not run here ({child.why[-300:]}); ran without it.")
        tool, child = None, gpu.run(job)
    result = _result(child, ctx, tool)
    sanitized = [tool] if tool else []
    failure = None
    try:
        with _quiet_numpy():
            for k, (after, (_, _, _, pristine)) in enumerate(zip(result["runs"], prepared)):
                _compare(ctx, k, after, pristine)
    except PuzzleFailure as f:  # a race found below is its likely cause and leads, as on the simulator
        failure = f
    if tool and "__shared__" in source:
        raced = gpu.run(job, "racecheck")
        if raced.result is None and not raced.why.startswith("the kernel had not finished"):
            notes.append(f"racecheck could not run here ({raced.why[-300:]}): races not looked for.")
        else:
            _result(raced, ctx, "racecheck")
            sanitized.append("racecheck")
            if failure is not None:
                notes.append(_second_look(job, ctx, raced))
    if failure is not None:  # what was and was not looked for goes with the verdict
        failure.args = (str(failure) + "".join(f"\nNote: {n}" for n in notes),)
        raise failure
    return CppResult(
        puzzle.name, built.name, len(result["runs"]), result["arch"], tuple(notes), sanitized=tuple(sanitized)
    )


# racecheck listing every hazard, down to those it rates harmless (INFO: e.g. two writes of one value)
HAZARD_LISTING = ("--racecheck-report", "hazard", "--racecheck-detect-level", "info", "--print-level", "info")


def _second_look(job: dict, ctx: _Ctx, raced: gpu.ChildResult) -> str:
    """A wrong answer from a kernel with shared memory that racecheck's analysis passed: racecheck
    again, listing every single hazard it saw (the records its analysis groups and filters). An
    ERROR or WARNING hazard there is the DataRace that leads; else a note saying what racecheck saw
    (its INFO hazards, its summaries)."""
    listing = gpu.run(job, "racecheck", options=HAZARD_LISTING)
    if listing.result is None and not listing.why.startswith("the kernel had not finished"):
        return f"racecheck's hazard listing could not run here ({listing.why[-300:]})."
    records = [r for r in listing.report.split("\n\n") if r.strip()]
    harmless = [r for r in records if r.strip().upper().startswith("INFO")]
    listing.report = "\n\n".join(r for r in records if r not in harmless)
    _result(listing, ctx, "racecheck")
    said = "; ".join(filter(None, dict.fromkeys([raced.summary, listing.summary]))) or "no summary printed"
    seen = (
        f"only {len(harmless)} hazard(s) it rates harmless (INFO), the first: "
        + " ".join(harmless[0].split())[:300]
        if harmless
        else "no shared-memory hazard"
    )
    return (
        f"compute-sanitizer racecheck watched these runs and reported {seen}, in its analysis and "
        f"hazard by hazard ({said}): the wrong answer is not a shared-memory race that it could see."
    )


def _words(source: str) -> str:
    """The source without comments and spacing: a stub with edited comments is still the stub."""
    source = re.sub(r"/\*.*?\*/|//[^\n]*", " ", source, flags=re.S)
    return " ".join(source.split())


class _Ctx:
    def __init__(self, puzzle, built: Built, seed, cases):
        self.puzzle, self.built, self.seed, self.cases = puzzle, built, seed, cases

    def head(self, k: int | None) -> str:
        p = self.puzzle
        which = (
            f"case {k} (cases 0 to {len(self.cases) - 1}): {self.cases[k].describe()}"
            if k is not None
            else f"its cases (0 to {len(self.cases) - 1})"
        )
        return (
            f"Puzzle `{p.name}` in CUDA C++ (`{self.built.name}`) failed on the GPU, {which}\n"
            f"(seed {self.seed}: cpp.check({p.name!r}, source, seed={self.seed}) repeats this run)"
        )


def _result(child: gpu.ChildResult, ctx: _Ctx, tool: str | None) -> dict:
    """The child's result, or the verdict of a run that went wrong (sanitizer report, driver error,
    deadline)."""
    if child.result is None and child.why.startswith("the kernel had not finished"):
        err = errors.Runaway(child.why)
        raise KernelDiagnosed(Message(ctx.head(None), f"Runaway: {child.why}").text(), err)
    if child.result is None:
        raise RuntimeError(f"the CUDA C++ run failed outside the kernel: {child.why}")
    res = child.result
    k = res["error"][0] if res.get("error") else None
    if child.report:
        err = gpu.diagnostic(child.report, tool, ctx.built.say_line)
        raise KernelDiagnosed(Message(ctx.head(k), f"{type(err).__name__}: {err}").text(), err)
    if res.get("error"):
        k, text, code = res["error"]
        if code == "NVRTC":
            raise CompileRejected(f"NVRTC cannot compile the kernel for this GPU ({res['arch']}):\n{text}")
        err = _driver_error(code, text, res)
        raise KernelDiagnosed(Message(ctx.head(k), f"{type(err).__name__}: {err}").text(), err)
    return res


def _driver_error(code: str, text: str, res: dict) -> errors.SimulatorError:
    if code in ("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS"):
        return errors.OutOfBounds(
            f"the GPU stopped the kernel: {text}. An index went past an array's end (or before its "
            "start): guard it with the size. (compute-sanitizer, where installed, names the line.)"
        )
    if code == "TOO_MANY_THREADS":
        return errors.LaunchError(f"{text}: launch fewer threads per block.")
    if code in ("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "CUDA_ERROR_INVALID_VALUE"):
        most = res.get("max_threads")
        return errors.LaunchError(
            f"the GPU refused the launch: {text}."
            + (f" This kernel can run at most {most} threads per block here." if most else "")
        )
    return errors.KernelException(f"the GPU reported {code}: {text}")


def _compare(ctx: _Ctx, k: int, after: list, pristine: dict) -> None:
    p = ctx.puzzle
    got = dict(zip(p.signature, after))
    for n, v in pristine.items():
        if not np.array_equal(got[n], v, equal_nan=True):
            raise InputModified(Message(ctx.head(k), f"the kernel changed its input `{n}`.").text())
    want = expected(p, ctx.cases[k], pristine)
    for n in p.outputs:
        problem = compare(want[n], got[n], p, name=n)
        if problem:
            raise WrongAnswer(Message(ctx.head(k), f"`{n}` is wrong:\n{problem}").text())
