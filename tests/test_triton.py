"""The Triton notebook's checks (puzzles/triton): what holds without Triton (no import of it, the stub
verdict, the NumPy-argument message, one line where it is absent, the notebook's exercises equal to the
references) and, where Triton and PyTorch are installed, every reference passing in the interpreter,
every known-wrong kernel of tests/triton_mutants.py rejected for its verdict on every seed, every
variant passing, and the sanitizer's exit turned into a message."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from helpers.check import NotSolvedYet
from helpers.puzzle import make_stub
from puzzles.triton import check, lang, sanitize

ROOT = Path(__file__).resolve().parents[1]
HAVE_TRITON = lang.why_not() is None
needs_triton = pytest.mark.skipif(not HAVE_TRITON, reason=f"{lang.why_not()}")


def test_importing_the_package_imports_neither_triton_nor_torch():
    code = (
        "import sys, puzzles.triton.check, puzzles.triton.bench, puzzles.triton.torch_profile, "
        "puzzles.triton.sanitize, puzzles.triton.show\n"
        "print(sorted(m for m in ('triton', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def _stub_kernel(module):
    """The exercise's stub, defined as a notebook cell defines it (with the course's lazy jit)."""
    import inspect
    import linecache

    src = "from __future__ import annotations\n" + make_stub(
        textwrap.dedent(inspect.getsource(module.REFERENCE.fn))
    )
    name = f"<stub {module.NAME}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)  # as IPython keeps a cell's source
    g = {"jit": lang.jit, "tl": lang.tl}
    exec(compile(src, name, "exec"), g)
    return g[module.REFERENCE.__name__]


@pytest.mark.parametrize("name", ["triton_softmax", "triton_matmul"])
def test_a_stub_is_not_solved_yet_with_or_without_triton(name):
    with pytest.raises(NotSolvedYet, match="still the stub"):
        check.check(name, _stub_kernel(check.OPS[name]))


def test_a_numpy_argument_is_named_with_its_fix():
    x = np.zeros(8, np.float32)
    with pytest.raises(
        TypeError, match=r"argument `out_ptr` of `add_kernel` is a NumPy array.*torch\.from_numpy"
    ):
        lang.launch(check.OPS["triton_vector_add"].REFERENCE, (1,), x, x, x, 8, BLOCK=8)


def test_an_unknown_name_suggests_the_close_one():
    with pytest.raises(ValueError, match="did you mean 'triton_softmax'"):
        check.check("triton_sofmax", check.OPS["triton_softmax"].REFERENCE)


@pytest.fixture
def absent(monkeypatch):
    monkeypatch.setattr(lang, "_STATE", {"why": "PyTorch is not installed: the cells are skipped."})


def test_where_triton_is_absent_each_cell_says_so_in_one_line(absent, capsys):
    triton, tl = lang.modules()

    def kernel(out_ptr, n, BLOCK: tl.constexpr):  # the annotation still reads
        pass

    k = triton.jit(kernel)
    assert check.check("triton_vector_add", check.OPS["triton_vector_add"].REFERENCE) is None
    check.expect(AssertionError, "triton_softmax", k)
    check.summary()
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [
        "triton_vector_add: not run (PyTorch is not installed).",
        "triton_softmax: not run (PyTorch is not installed).",
        "Triton: no kernel checked here (PyTorch is not installed).",
    ]
    with pytest.raises(RuntimeError, match="PyTorch is not installed"):
        k[(1,)]
    assert sanitize.why_not() == "Sanitizer not run (PyTorch is not installed)."


def _functions(source: str) -> dict:
    return {n.name: n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("name", ["triton_softmax", "triton_matmul"])
def test_the_notebook_exercise_is_the_reference(name):
    """The stub test compares a learner's kernel with the stub cut from the module's reference: the
    notebook's exercise cell must be that reference (decorator aside)."""
    import inspect

    ref = check.OPS[name].REFERENCE.fn
    nb = _functions((ROOT / "notebooks" / "src" / "27_triton.py").read_text())[ref.__name__]
    mine = _functions(textwrap.dedent(inspect.getsource(ref)))[ref.__name__]
    assert ast.dump(nb.args) == ast.dump(mine.args)
    assert [ast.dump(s) for s in nb.body] == [ast.dump(s) for s in mine.body]


# ------------------------------------------------------------------ with Triton (the interpreter here)


@needs_triton
@pytest.mark.parametrize("name", list(check.OPS))
def test_the_reference_passes(name):
    for seed in (0, 1):
        assert check.check(name, check.OPS[name].REFERENCE, seed=seed).cases >= 5


def _controls(kind):
    sys.path.insert(0, str(ROOT / "tests"))
    from triton_mutants import TRITON_MUTANTS, TRITON_VARIANTS

    table = TRITON_MUTANTS if kind == "mutants" else TRITON_VARIANTS
    return [(op, *entry) for op, entries in table.items() for entry in entries]


@needs_triton
@pytest.mark.parametrize("op, label, kernel, verdict", _controls("mutants"), ids=lambda v: str(v)[:30])
def test_a_known_wrong_kernel_is_rejected_for_its_reason_on_every_seed(op, label, kernel, verdict):
    for seed in (0, 1, 2):
        with pytest.raises(verdict):
            check.check(op, kernel, seed=seed)


@needs_triton
@pytest.mark.parametrize("op, label, kernel", _controls("variants"), ids=lambda v: str(v)[:30])
def test_a_correct_kernel_written_differently_passes(op, label, kernel):
    for seed in (0, 1, 2):
        check.check(op, kernel, seed=seed)


@needs_triton
@pytest.mark.skipif(HAVE_TRITON and sanitize.why_not() is not None, reason="triton-viz does not import here")
@pytest.mark.skipif(
    HAVE_TRITON and lang.mode() != "interpreter", reason="CPU tensors: the interpreter's test"
)
def test_the_sanitizer_exit_becomes_a_message():
    sys.path.insert(0, str(ROOT / "tests"))
    from triton.runtime.interpreter import ASTTransformer
    from triton_mutants import add_unmasked

    before = dict(vars(ASTTransformer))
    torch = lang.load()[2]
    a, b, out = torch.randn(100), torch.randn(100), torch.empty(100)
    with pytest.raises(
        sanitize.OutOfBounds, match=r"outside the tensor `\w_ptr` \(\d+ bytes past its end\).*line"
    ):
        sanitize.sanitize(add_unmasked, (2,), out, a, b, 100, BLOCK=64)
    sanitize.sanitize(check.OPS["triton_vector_add"].REFERENCE, (2,), out, a, b, 100, BLOCK=64)
    # triton-viz's loop rewriting is undone: later kernels run in the plain interpreter
    assert dict(vars(ASTTransformer)) == before


def test_the_profile_timeline_takes_each_block_s_kernels_from_its_last_forward(tmp_path):
    """On synthetic profiler events (no GPU here): a kernel belongs to the block range that started
    last before it; the picture draws one lane per block."""
    from types import SimpleNamespace as N

    from puzzles.triton import torch_profile

    def ev(name, start, end, device="DeviceType.CPU"):
        return N(name=name, time_range=N(start=start, end=end), device_type=device)

    events = [ev("Numba block", 0, 5), ev("torch block", 100, 105), ev("Numba block", 200, 205)]
    events += [ev("torch block", 300, 305), ev("old", 10, 20, "DeviceType.CUDA")]
    events += [ev(f"k{i}", 210 + 10 * i, 218 + 10 * i, "DeviceType.CUDA") for i in range(3)]
    events += [ev("sgemm", 310, 340, "DeviceType.CUDA")]
    lanes = torch_profile.last_forward_kernels(N(events=lambda: events))
    assert lanes == {
        "Numba block": [("k0", 0, 8), ("k1", 10, 18), ("k2", 20, 28)],
        "torch block": [("sgemm", 0, 30)],
    }
    torch_profile.timeline(lanes, tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 1000


@needs_triton
def test_a_kernel_triton_cannot_run_is_compile_rejected_with_its_message():
    from helpers.check import CompileRejected

    @lang.jit
    def typo(out_ptr, x_ptr, rows, cols, BLOCK: lang.tl.constexpr):
        row = tl.program_id(0)  # noqa: F821 (tl: bound when Triton compiles it)
        tl.store(out_ptr + row, tl.load(x_ptr + rowz))  # noqa: F821

    with pytest.raises(CompileRejected, match=r"(?s)Triton could not run `typo` on case 0.*rowz"):
        check.check("triton_softmax", typo, seed=0)


@needs_triton
def test_a_kernel_that_never_ends_is_stopped_in_the_interpreter(monkeypatch):
    from helpers.check import WrongAnswer

    if lang.mode() != "interpreter":
        pytest.skip("the deadline is the interpreter's (a GPU kernel cannot be interrupted)")

    @lang.jit
    def forever(out_ptr, x_ptr, rows, cols, BLOCK: lang.tl.constexpr):
        acc = 0
        for _ in range(0, 1 << 30):  # a learner's loop bound gone wrong
            acc += 1
        tl.store(out_ptr + tl.program_id(0), acc)  # noqa: F821

    monkeypatch.setattr(check, "DEADLINE_S", 1.0)
    with pytest.raises(WrongAnswer, match="ran past 1 s in Triton's interpreter and was stopped"):
        check.check("triton_softmax", forever, seed=0)
