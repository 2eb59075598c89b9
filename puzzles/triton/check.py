"""check(name, kernel): a Triton kernel against the NumPy spec of its Numba twin, on the twin's cases
(sizes drawn per seed, never multiples of the block), with the course's verdicts:

    NotSolvedYet     the kernel's body is still the exercise's stub
    CompileRejected  Triton refuses the kernel (its message, with the line)
    WrongAnswer      an output differs from the spec: the case, the output, the first wrong indices
    InputModified    the kernel wrote into an input

On a GPU the kernel is compiled by Triton; on a CPU it runs in Triton's interpreter. Where Triton or
PyTorch is missing, the check says so in one line and returns None (after the stub test, which needs
neither). The interpreter is plain Python: a check that runs past DEADLINE_S seconds is stopped.
"""

from __future__ import annotations

import difflib
import secrets
import signal
import threading
import types
from dataclasses import dataclass

import numpy as np

from helpers.check import CompileRejected, InputModified, NotSolvedYet, WrongAnswer, expect_failure
from helpers.compare import compare
from helpers.source import is_stub
from puzzles.triton import flash_attention, lang, layernorm, matmul, softmax, vector_add

OPS = {m.NAME: m for m in (vector_add, softmax, matmul, layernorm, flash_attention)}
DEADLINE_S = 30.0  # the interpreter runs a program in a few ms: the checks here take well under 1 s


@dataclass
class TritonResult:
    name: str
    cases: int
    where: str
    twin: str

    def __repr__(self):
        return f"Passed: {self.name}, {self.cases} cases ({self.where}), against the spec of {self.twin}."

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))


def op(name: str):
    if name not in OPS:
        close = difflib.get_close_matches(name, OPS, n=1)
        raise ValueError(
            f"no Triton exercise named {name!r}" + (f": did you mean {close[0]!r}?" if close else "")
            + f" (the names: {', '.join(OPS)})"
        )  # fmt: skip
    return OPS[name]


def _stub_of(module) -> types.SimpleNamespace:
    from helpers.puzzle import make_stub

    src = __import__("inspect").getsource(module.REFERENCE.fn)
    return types.SimpleNamespace(source=src, stub=make_stub(src))


def expected(twin, args: dict) -> dict:
    """The twin puzzle's spec on one case's inputs: {output: array}."""
    kw = {n: args[n] for n in twin.signature if n not in twin.outputs}
    want = twin.spec(**kw)
    return want if isinstance(want, dict) else {twin.outputs[0]: want}


def _shapes(args: dict) -> str:
    return ", ".join(
        f"{k} {'x'.join(map(str, v.shape))}" if isinstance(v, np.ndarray) else f"{k}={v}"
        for k, v in args.items()
        if not isinstance(v, np.ndarray) or v.ndim
    )


class _Deadline:
    """SIGALRM after `seconds` (main thread, Unix): the interpreter is Python, so the alarm stops it."""

    def __init__(self, seconds: float):
        self.seconds, self.fired, self.armed = seconds, False, False

    def _fire(self, *_):
        self.fired = True
        raise TimeoutError(f"stopped after {self.seconds:.0f} s")

    def __enter__(self):
        if (
            self.seconds
            and hasattr(signal, "setitimer")
            and threading.current_thread() is threading.main_thread()
        ):
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)


def check(name: str, kernel, seed: int | None = None) -> TritonResult | None:
    module = op(name)
    fn = lang.python_function(kernel)
    if is_stub(fn, _stub_of(module)):
        raise NotSolvedYet(
            f"{name}: `{fn.__name__}` is still the stub. Fill in its # FILL ME IN block, run its cell, "
            "then this one."
        )
    why = lang.why_not()
    if why:
        print(f"{name}: not run ({lang.short_why()}).")
        return None
    _, _, torch = lang.load()
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    again = f"(seed {seed}: tri.check({name!r}, {fn.__name__}, seed={seed}) repeats this run)"
    twin = module.TWIN
    cases = module.cases(np.random.default_rng(seed))
    # np.errstate: the interpreter computes masked lanes too (a 0 / 0 there is never stored)
    # the interpreter only: on a GPU the time goes to Triton's compiler, which an alarm must not cut
    interpreted = lang.mode() == "interpreter"
    with _Deadline(DEADLINE_S if interpreted else 0) as deadline, np.errstate(all="ignore"):
        for i, args in enumerate(cases):
            inputs = {k: v for k, v in args.items() if isinstance(v, np.ndarray) and k not in twin.outputs}
            want = expected(twin, args)
            # every array goes to the device as a tensor of its own; the inputs are read back after
            tensors = {k: torch.from_numpy(v.copy()).to(lang.device()) if isinstance(v, np.ndarray) else v
                       for k, v in args.items()}  # fmt: skip
            try:
                got = module.run(kernel, torch, tensors, lang.device())
            except TypeError:
                raise  # lang.launch's messages (a NumPy array, a tensor on the wrong device)
            except Exception as e:
                if deadline.fired:
                    raise WrongAnswer(
                        f"{name}, case {i}: the kernel ran past {DEADLINE_S:.0f} s in Triton's interpreter "
                        f"and was stopped (a loop that never ends?). {again}"
                    ) from None
                text = str(e).strip() or type(e).__name__
                raise CompileRejected(
                    f"{name}: Triton could not run `{fn.__name__}` on case {i} ({_shapes(args)}):\n"
                    f"{text}\n{again}"
                ) from None
            for k, v in inputs.items():
                if not np.array_equal(tensors[k].cpu().numpy(), v, equal_nan=True):
                    raise InputModified(f"{name}, case {i}: the kernel wrote into the input `{k}`. {again}")
            for out in module.OUTPUTS:
                diff = compare(want[out], got[out], twin)
                if diff:
                    raise WrongAnswer(
                        f"{name}, case {i} ({_shapes(args)}): output `{out}` differs from the spec.\n"
                        f"{diff}\n{again}"
                    )
    where = "compiled by Triton on the GPU" if lang.mode() == "gpu" else "Triton's interpreter, on the CPU"
    _PASSED.add(name)
    return TritonResult(name, len(cases), where, twin.name)


_PASSED: set = set()


def expect(exc: type, name: str, kernel, seed: int = 0):
    """A known-wrong kernel shown being caught (helpers.check.expect_failure); one line where Triton
    cannot run (the check would not run, so nothing could fail)."""
    if lang.why_not():
        print(f"{name}: not run ({lang.short_why()}).")
        return None
    return expect_failure(exc, check, name, kernel, seed=seed)


def summary() -> None:
    """The Triton kernels that passed their check in this session."""
    if lang.why_not():
        print(f"Triton: no kernel checked here ({lang.short_why()}).")
        return
    done = [n for n in OPS if n in _PASSED]
    print(
        f"Triton: {len(done)} of {len(OPS)} kernels passed their check ({lang.mode()}): "
        + (", ".join(done) or "-")
    )
