"""Issue 11 from the learner's side: every verdict true and useful. Each test is a known-wrong kernel
rejected for the right reason (on several seeds) next to a correct twin accepted."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from numba import cuda

import puzzles
from helpers.check import KernelDiagnosed, NotSolvedYet, check
from helpers.puzzle import Case, Puzzle
from helpers.sim.errors import DataRace, OutOfBounds, UninitializedRead

SEEDS = (0, 1, 2, 3)


# ------------------------------------------------------------ 1. stub judged by behaviour


@cuda.jit
def guard_kept_comment_no_guard(out, a, size):
    i = cuda.threadIdx.x
    # FILL ME IN (roughly 2 lines)
    out[i] = a[i] + 10


@cuda.jit
def guard_kept_comment_right(out, a, size):
    i = cuda.threadIdx.x
    # FILL ME IN (roughly 2 lines)
    if i < size:
        out[i] = a[i] + 10


@cuda.jit
def guard_renamed_stub(out, a, size):
    """A docstring and a different comment do not make it solved."""
    i = cuda.threadIdx.x  # noqa: F841 (the stub's own line)
    # I will do this later
    pass


def test_kept_fill_me_in_line_still_gets_its_diagnosis():
    for seed in SEEDS:
        with pytest.raises(KernelDiagnosed) as info:
            check(puzzles.get("guard"), guard_kept_comment_no_guard, seed=seed, gpu=False)
        assert isinstance(info.value.diagnostic, OutOfBounds)
        check(puzzles.get("guard"), guard_kept_comment_right, seed=seed, gpu=False)


def test_a_body_that_is_still_the_stub_is_not_solved_yet():
    with pytest.raises(NotSolvedYet):
        check(puzzles.get("guard"), guard_renamed_stub, seed=0, gpu=False)


TPB = 8


@cuda.jit
def matmul_stub_reading_uninitialised(out, a, b, size):
    # the stub's shared tiles read before anything is written: still a diagnosis, not "not solved"
    a_tile = cuda.shared.array((TPB, TPB), numba.float32)
    i = cuda.blockIdx.y * TPB + cuda.threadIdx.y
    j = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    # FILL ME IN (roughly 19 lines)
    if i < size and j < size:
        out[i, j] = a_tile[cuda.threadIdx.y, cuda.threadIdx.x]


def test_kept_comment_uninitialised_read_is_diagnosed():
    with pytest.raises(KernelDiagnosed):
        check(puzzles.get("matmul"), matmul_stub_reading_uninitialised, seed=0, gpu=False)


# ------------------------------------------------------------ 8. messages a learner can act on


@cuda.jit
def guard_forgotten(out, a, size):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10


def test_failure_in_jupyter_shows_the_verdict_not_the_harness_stack():
    from IPython.core.interactiveshell import InteractiveShell

    with pytest.raises(KernelDiagnosed) as info:
        check(puzzles.get("guard"), guard_forgotten, seed=0, gpu=False)
    lines = info.value._render_traceback_()
    text = "\n".join(lines)
    assert "KernelDiagnosed" in lines[0] and "failed on case" in lines[0]
    assert "out of bounds" in text.lower() and "%tb" in lines[-1]
    assert "helpers/check.py" not in text and 'File "' not in text
    # IPython really uses it
    shell = InteractiveShell.instance()
    try:
        raise info.value
    except KernelDiagnosed:
        etype, value, tb = shell._get_exc_info()
        assert hasattr(value, "_render_traceback_")


def test_expect_failure_prints_once_and_does_not_echo(capsys):
    from IPython.core.formatters import DisplayFormatter

    from helpers.check import expect_failure

    e = expect_failure(KernelDiagnosed, check, puzzles.get("guard"), guard_forgotten, seed=0, gpu=False)
    out = capsys.readouterr().out
    assert out.count("failed on case") == 1
    assert isinstance(e, KernelDiagnosed)
    assert DisplayFormatter().format(e) == ({}, {})  # the cell's value shows nothing


# ------------------------------------------------------------ 7. a verdict in seconds


@cuda.jit
def guard_slow_but_legal(out, a, size):
    i = cuda.threadIdx.x
    if i < size:
        v = a[i]
        for _ in range(200_000):  # ends, but far too late for a check
            v = v * 1.0
        out[i] = v + 10


def test_a_whole_check_has_one_deadline(monkeypatch):
    import time

    from helpers import check as harness
    from helpers.sim.errors import Runaway

    monkeypatch.setattr(harness, "CHECK_SECONDS", 1.0)
    t0 = time.monotonic()
    with pytest.raises(KernelDiagnosed) as info:
        check(puzzles.get("guard"), guard_slow_but_legal, seed=0, gpu=False)
    assert time.monotonic() - t0 < 4
    assert isinstance(info.value.diagnostic, Runaway)
    assert "1 s for all" in str(info.value) and "does far more work" in str(info.value)
    check(puzzles.get("guard"), guard_kept_comment_right, seed=0, gpu=False)  # its correct twin


# ------------------------------------------------------------ 6. the problem that changes the answer first


def test_public_tiled_matmul_leads_with_the_race_and_names_the_read_after():
    from mutants.gpu_puzzles.p14_matmul import matmul_public_no_second_sync

    from helpers.sim.errors import DataRace

    for seed in (0, 1, 2):
        with pytest.raises(KernelDiagnosed) as info:
            check(puzzles.get("matmul"), matmul_public_no_second_sync, seed=seed, gpu=False)
        assert isinstance(info.value.diagnostic, DataRace), str(info.value)
        text = str(info.value)
        order = [text.index(w) for w in ("DataRace", "UninitializedRead", "See what your kernel did")]
        assert order == sorted(order)
    check(puzzles.get("matmul"), puzzles.get("matmul").reference, seed=0, gpu=False)


@cuda.jit
def map_2d_reads_uninitialised_but_right(out, a, size):
    # threads outside the matrix read a shared slot nobody wrote; the value is never stored
    tile = cuda.shared.array((16, 16), numba.float32)
    i = cuda.threadIdx.y
    j = cuda.threadIdx.x
    if i < size and j < size:
        tile[i, j] = a[i, j]
    cuda.syncthreads()
    v = tile[i, j]
    if i < size and j < size:
        out[i, j] = v + 10


def test_an_uninitialised_read_that_changes_nothing_is_still_named_and_says_so():
    from helpers.sim.errors import UninitializedRead

    with pytest.raises(KernelDiagnosed) as info:
        check(puzzles.get("map_2d"), map_2d_reads_uninitialised_but_right, seed=0, gpu=False)
    assert isinstance(info.value.diagnostic, UninitializedRead)
    assert "Every output was right, but only by luck" in str(info.value)


# ------------------------------------------------------------ 8. a debugging print is not a budget breach


@cuda.jit
def map_with_debug_print(out, a):
    i = cuda.threadIdx.x
    print(a[i])  # reads made only to print them do not count
    out[i] = a[i] + 10


@cuda.jit
def map_reads_twice(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10
    out[i] = a[i] + 10


def test_debugging_print_does_not_make_a_correct_kernel_over_budget(capsys):
    from helpers.check import OverBudget

    for seed in (0, 1):
        check(puzzles.get("map"), map_with_debug_print, seed=seed, gpu=False)
        with pytest.raises(OverBudget) as info:
            check(puzzles.get("map"), map_reads_twice, seed=seed, gpu=False)
        assert info.value.field == "global_reads"


# ------------------------------------------------------------ 8. race advice fits the race


@cuda.jit
def dot_every_thread_writes(out, a, b, size):
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.threadIdx.x
    cache[i] = a[i] * b[i] if i < size else 0.0
    cuda.syncthreads()
    total = 0.0
    for k in range(TPB):
        total += cache[k]
    out[0] = total  # every thread writes the one output


@cuda.jit
def blocks_forgot_block_index(out, a, size):
    i = cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


def test_race_advice_fits_the_race():
    from mutants.gpu_puzzles.p14_matmul import matmul_public_no_second_sync

    from helpers.sim.errors import DataRace

    def race_text(name, kernel):
        with pytest.raises(KernelDiagnosed) as info:
            check(puzzles.get(name), kernel, seed=0, gpu=False)
        assert isinstance(info.value.diagnostic, DataRace), str(info.value)
        return str(info.value.diagnostic)

    one_cell = race_text("dot", dot_every_thread_writes)
    assert "let one thread write it" in one_cell and "Put a cuda.syncthreads()" not in one_cell
    block = race_text("blocks", blocks_forgot_block_index)
    assert "leaves out cuda.blockIdx" in block and "atomic" not in block
    barrier = race_text("matmul", matmul_public_no_second_sync)
    assert "has cuda.syncthreads() already" in barrier and "Put a cuda.syncthreads()" not in barrier


# ------------------------------------------------------------ 8. compile errors in plain words


@cuda.jit
def zip_whole_arrays(out, a, b):
    i = cuda.threadIdx.x
    out[i] = (a + b)[i]


@cuda.jit
def zip_right(out, a, b):
    i = cuda.threadIdx.x
    out[i] = a[i] + b[i]


@cuda.jit
def shared_sized_by_argument(out, a, size):
    cache = cuda.shared.array(size, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        cache[cuda.threadIdx.x] = a[i]
    cuda.syncthreads()
    if i < size:
        out[i] = cache[cuda.threadIdx.x] + 10


def guard_generator(out, a, size):
    i = cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10
        yield i


guard_generator = cuda.jit(guard_generator)


@cuda.jit
def guard_recursive(out, a, size):
    i = cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10
        guard_recursive(out, a, size - 1)


def test_compile_errors_in_plain_words():
    from helpers import ptx
    from helpers.check import CompileRejected

    for kernel, words in ((guard_generator, "generators are not supported"), (guard_recursive, "recursion")):
        with pytest.raises(CompileRejected) as info:
            check(puzzles.get("guard"), kernel, seed=0, gpu=False)
        assert words in str(info.value) and "not supported in a kernel" in str(info.value)
    check(puzzles.get("guard"), guard_kept_comment_right, seed=0, gpu=False)
    if not ptx.available():
        pytest.skip("no NVVM: the Numba compile check is off on this machine")
    with pytest.raises(CompileRejected) as info:
        check(puzzles.get("zip"), zip_whole_arrays, seed=0, gpu=False)
    text = str(info.value)
    assert "In plain words" in text and "element by element" in text and "SimArray" not in text
    with pytest.raises(CompileRejected) as info:
        check(puzzles.get("shared"), shared_sized_by_argument, seed=0, gpu=False)
    text = str(info.value)
    assert "must be a constant" in text and "The simulator says" in text and "`size`" in text
    check(puzzles.get("zip"), zip_right, seed=0, gpu=False)


def test_ch04_divergence_verdict_has_the_standard_header_and_honours_the_seed():
    from helpers.check import OverBudget

    p = puzzles.get("ch04_warp_uniform")
    branch = puzzles.get("ch04_parity_branch").reference
    for seed in (3, 7):
        with pytest.raises(OverBudget) as info:
            check(p, branch, seed=seed, gpu=False)
        text = str(info.value)
        assert info.value.field == "paths_per_warp"
        n = len(p.cases(np.random.default_rng(seed)))
        assert text.startswith(f"Puzzle `ch04_warp_uniform` failed on case 0 (cases 0 to {n - 1}):")
        assert f"(seed {seed}: puzzles.check('ch04_warp_uniform'" in text and f"seed={seed}" in text
    check(p, p.reference, seed=7, gpu=False)


# ------------------------------------------------------------ the simulator's items, from the learner's side


@cuda.jit
def shared_template_early_exit(out, a, size):
    # the original Puzzle 8 template line: threads past the end leave before the barrier
    cache = cuda.shared.array(TPB, numba.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= size:
        return
    cache[cuda.threadIdx.x] = a[i]
    cuda.syncthreads()
    out[i] = cache[cuda.threadIdx.x] + 10


def test_barrier_skipped_by_exiting_threads_is_one_verdict_on_every_seed():
    from helpers.sim.errors import BarrierDivergence

    for seed in SEEDS:
        with pytest.raises(KernelDiagnosed) as info:
            check(puzzles.get("shared"), shared_template_early_exit, seed=seed, gpu=False)
        assert isinstance(info.value.diagnostic, BarrierDivergence), str(info.value)
        assert "undefined" in str(info.value) and "add a barrier" not in str(info.value).lower()
    check(puzzles.get("shared"), puzzles.get("shared").reference, seed=0, gpu=False)


@cuda.jit
def axis_sum_row_assignment(out, a, size):
    cache = cuda.shared.array(TPB, numba.float32)
    row = cuda.blockIdx.y
    t = cuda.threadIdx.x
    cache[t] = a[row, t] if t < size else 0.0
    cuda.syncthreads()
    stride = TPB // 2
    while stride > 0:
        if t < stride:
            cache[t] += cache[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[row] = cache[0]  # a scalar into a row of shape (1,): valid Numba


def test_valid_numba_row_assignment_is_accepted():
    for seed in (0, 1):
        check(puzzles.get("axis_sum"), axis_sum_row_assignment, seed=seed, gpu=False)


@cuda.jit
def guard_exits(out, a, size):
    i = cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10
    if i == 0:
        raise SystemExit


@cuda.jit
def guard_huge_local(out, a, size):
    scratch = cuda.local.array(200_000, numba.float32)  # 800 KB per thread: past CUDA's limit
    i = cuda.threadIdx.x
    if i < size:
        scratch[0] = a[i]
        out[i] = scratch[0] + 10


def test_hostile_code_cannot_leave_the_check(monkeypatch):
    from helpers import ptx
    from helpers.check import CompileRejected, PuzzleFailure

    monkeypatch.setattr(ptx, "available", lambda: False)  # as on a machine without NVVM
    for kernel in (guard_exits, guard_huge_local):
        with pytest.raises(PuzzleFailure) as info:
            check(puzzles.get("guard"), kernel, seed=0, gpu=False)
        assert isinstance(info.value, (KernelDiagnosed, CompileRejected)), str(info.value)
    check(puzzles.get("guard"), guard_kept_comment_right, seed=0, gpu=False)


# ============================================================ issue 23: verdicts of the second half

SEEDS_23 = range(10)


# ------------------------------------------------------------ 4. a result that depends on block order


@cuda.jit
def last_block_without_ticket(out, partial, ticket, a, size):
    # no ticket: the block with the highest index adds the partials, as if it always ran last
    cache = cuda.shared.array(32, numba.float32)
    t, b = cuda.threadIdx.x, cuda.blockIdx.x
    i = b * 32 + t
    cache[t] = a[i] if i < size else 0.0
    stride = 16
    while stride > 0:
        cuda.syncthreads()
        if t < stride:
            cache[t] += cache[t + stride]
        stride //= 2
    if t == 0:
        partial[b] = cache[0]
    if b == cuda.gridDim.x - 1 and t == 0:
        total = numba.float32(0)
        for k in range(cuda.gridDim.x):
            total += partial[k]
        out[0] = total


def test_last_block_without_a_ticket_is_rejected_on_every_seed():
    """The simulator sees it first: a block reads partials nothing ordered before its read."""
    p = puzzles.get("last_block")
    assert not p.cross_block_races
    for seed in SEEDS_23:
        with pytest.raises(KernelDiagnosed) as info:
            check(p, last_block_without_ticket, seed=seed, gpu=False)
        assert isinstance(info.value.diagnostic, (DataRace, UninitializedRead)), info.value
        check(p, p.reference, seed=seed, gpu=False)


# A puzzle whose blocks talk through global memory by design (cross-block races off) and no work memory
# the simulator could catch a read of: only running the blocks in other orders shows the fault.


@cuda.jit
def _last_writer_wins(out, a):
    if cuda.threadIdx.x == 0:
        out[0] = a[cuda.blockIdx.x]  # every block writes out[0]: the last to run decides


@cuda.jit
def _max_of_blocks(out, a):
    if cuda.threadIdx.x == 0:
        cuda.atomic.max(out, 0, a[cuda.blockIdx.x])


def _order_puzzle():
    def cases(rng):
        return [
            Case(
                grid=n,
                block=32,
                args={"out": np.zeros(1, np.float32), "a": np.sort(rng.random(n)).astype(np.float32)},
            )
            for n in (5, 9)
        ]

    return Puzzle(
        name="order_demo",
        title="the largest element, one block per element",
        statement="out[0] = max(a), one block per element.",
        outputs=("out",),
        spec=lambda a: np.array([a.max()], np.float32),
        cases=cases,
        reference=_max_of_blocks,
        zeroed=("out",),
        cross_block_races=False,
        chapter="test",
    )


def test_a_result_that_depends_on_block_order_is_rejected_and_says_why():
    from helpers.check import WrongAnswer

    p = _order_puzzle()
    for seed in SEEDS_23:
        with pytest.raises(WrongAnswer) as info:
            check(p, _last_writer_wins, seed=seed, gpu=False)
        text = str(info.value)
        assert "depends on the order" in text and "does not flag races between blocks" in text, text
        check(p, p.reference, seed=seed, gpu=False)


def test_the_order_runs_catch_what_the_shuffled_run_missed(monkeypatch):
    """Force the first run's order to be the one that happens to work: the other orders still reject."""
    from helpers import runs
    from helpers.check import WrongAnswer

    real = runs.sim.launch

    def forward_first(*a, block_order="forward", **kw):
        return real(*a, block_order="forward" if block_order == "shuffle" else block_order, **kw)

    monkeypatch.setattr(runs.sim, "launch", forward_first)
    with pytest.raises(WrongAnswer) as info:
        check(_order_puzzle(), _last_writer_wins, seed=0, gpu=False)
    assert "right in the shuffled order, wrong with the blocks run last to first" in str(info.value)


# ------------------------------------------------------------ 6. float64 arithmetic in a float32 exercise


@cuda.jit
def map_float64_accumulator(out, a):
    i = cuda.threadIdx.x
    acc = 0.0
    acc += a[i]
    out[i] = acc + 10


@cuda.jit
def map_float32_accumulator(out, a):
    i = cuda.threadIdx.x
    acc = numba.float32(0.0)
    acc += a[i]
    out[i] = acc + numba.float32(10)


def _needs_ptx():
    from helpers import ptx

    if not ptx.available():
        pytest.skip("NVVM not installed: no PTX to read")


def test_float64_arithmetic_is_noted_on_a_pass_and_rejected_where_the_puzzle_says():
    import dataclasses

    from helpers.check import OverBudget

    _needs_ptx()
    p = puzzles.get("map")
    assert p.float64 == "warn"
    result = check(p, map_float64_accumulator, seed=0, gpu=False)
    note = "\n".join(result.notes)
    assert "float64" in note and "acc = 0.0" in note and "numba.float32(" in note, note
    assert "Note:" in repr(result)
    assert check(p, map_float32_accumulator, seed=0, gpu=False).notes == ()
    strict = dataclasses.replace(p, float64="reject")
    for seed in (0, 1):
        with pytest.raises(OverBudget) as info:
            check(strict, map_float64_accumulator, seed=seed, gpu=False)
        assert info.value.field == "float64" and "acc = 0.0" in str(info.value)
        check(strict, map_float32_accumulator, seed=seed, gpu=False)


def test_the_kernel_is_compiled_again_with_lines_only_for_a_finding_that_names_them(monkeypatch):
    """The line-info compile (a second compile of the kernel) is made for a float64 finding only: not
    where the puzzle allows float64, and not for a kernel without float64 arithmetic."""
    import dataclasses

    from helpers import ptx

    _needs_ptx()
    made = []
    real = ptx._with_lines
    monkeypatch.setattr(ptx, "_with_lines", lambda *a: made.append(a[0].__name__) or real(*a))
    monkeypatch.delenv(ptx.CACHE_ENV, raising=False)
    monkeypatch.setattr(ptx, "_cache", {})
    p = puzzles.get("map")
    assert (
        check(dataclasses.replace(p, float64="allow"), map_float64_accumulator, seed=0, gpu=False).notes == ()
    )
    assert check(p, map_float32_accumulator, seed=0, gpu=False).notes == ()
    assert made == []
    assert "acc = 0.0" in "\n".join(check(p, map_float64_accumulator, seed=0, gpu=False).notes)
    assert made == ["map_float64_accumulator"]


def test_float64_ops_are_read_from_ptx_with_their_lines():
    from helpers.float64 import float64_ops

    ptx = "\n".join(
        [
            '.file 1 "k.py"',
            ".loc 1 7 1",
            "mov.f64 %fd1, 0d0000000000000000;",
            "cvt.f64.f32 %fd2, %f1;",
            ".loc 1 8 1",
            "add.f64 %fd3, %fd1, %fd2;",
            "fma.rn.f64 %fd4, %fd3, %fd3, %fd3;",
            "add.f32 %f2, %f1, %f1;",
        ]
    )
    assert float64_ops(ptx, "k.py") == [("add.f64", 8), ("fma.rn.f64", 8)]
    assert float64_ops(ptx, "other.py") == [("add.f64", None), ("fma.rn.f64", None)]


# ------------------------------------------------------------ 11. NaN the kernel wrote is not "never written"


@cuda.jit
def map_writes_nan(out, a):
    i = cuda.threadIdx.x
    x = a[i] + math.inf
    out[i] = x - math.inf  # inf - inf: NaN


def test_nan_written_by_the_kernel_is_told_apart_from_never_written():
    from helpers.check import WrongAnswer

    for seed in SEEDS_23:
        with pytest.raises(WrongAnswer) as info:
            check(puzzles.get("map"), map_writes_nan, seed=seed, gpu=False)
        text = str(info.value)
        assert "never written" not in text, text
        assert "written as NaN or inf by the kernel" in text and "x - math.inf" in text, text
    check(puzzles.get("map"), puzzles.get("map").reference, seed=0, gpu=False)


# ------------------------------------------------------------ 12. digits the tolerance needs; bit patterns


@cuda.jit
def map_slightly_off(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + numba.float32(10.0005)


def test_expected_and_got_never_print_the_same_digits():
    import re

    from helpers.check import WrongAnswer

    for seed in SEEDS_23:
        with pytest.raises(WrongAnswer) as info:
            check(puzzles.get("map"), map_slightly_off, seed=seed, gpu=False)
        text = str(info.value)
        pairs = re.findall(r"expected (\S+), got (\S+) \(off by \S+; the tolerance here is \S+\)", text)
        assert pairs and all(w != g for w, g in pairs), text


def test_bit_patterns_are_shown_as_floats_and_hex():
    from types import SimpleNamespace

    from helpers.compare import compare

    want = np.array([1.0, 2.5], np.float32).view(np.int32)
    got = np.array([1.0, -2.5], np.float32).view(np.int32)
    text = compare(want, got, SimpleNamespace(rtol=0, atol=0, bits=True))
    assert "expected 2.5 (0x40200000), got -2.5 (0xc0200000)" in text, text
    plain = compare(want, got, SimpleNamespace(rtol=0, atol=0, bits=False))
    assert "0x" not in plain


# ------------------------------------------------------------ 13. budget messages name the array and the rule


@cuda.jit
def map_reads_three_neighbours(out, a):
    i = cuda.threadIdx.x
    v = a[i]
    if i > 0:
        v = a[i - 1] * 0 + v
    if i > 1:
        v = a[i - 2] * 0 + v
    out[i] = v + 10


def test_budget_message_names_the_array_its_reads_and_the_exercise_rule():
    import dataclasses

    from helpers.check import OverBudget
    from helpers.rules import Budget

    p = puzzles.get("map")
    with pytest.raises(OverBudget) as info:
        check(p, map_reads_twice, seed=0, gpu=False)
    text = str(info.value)
    assert "`a` 2 times (1 distinct element, each about 2 times" in text and "load each value once" in text
    with pytest.raises(OverBudget) as info:
        check(p, map_reads_three_neighbours, seed=0, gpu=False)
    text = str(info.value)
    assert "each once" in text and "load each value once" not in text and "more than its share" in text
    ruled = dataclasses.replace(
        p, budget=Budget(global_reads=1, global_writes=1, advice={"global_reads": "read only a[i]."})
    )
    with pytest.raises(OverBudget) as info:
        check(ruled, map_reads_three_neighbours, seed=0, gpu=False)
    assert "The rule of this exercise: read only a[i]." in str(info.value)


# ------------------------------------------------------------ 14. "not solved yet" only for the stub


@cuda.jit
def map_guard_never_true(out, a):
    i = cuda.threadIdx.x
    if i > cuda.blockDim.x:
        out[i] = a[i] + 10


def test_a_written_kernel_that_writes_nothing_is_told_why_not_that_it_is_unsolved():
    from helpers.check import WrongAnswer

    for seed in SEEDS_23:
        with pytest.raises(WrongAnswer) as info:
            check(puzzles.get("map"), map_guard_never_true, seed=seed, gpu=False)
        text = str(info.value)
        assert "not solved yet" not in text and "wrote nothing to `out`" in text and "guard" in text, text
    with pytest.raises(NotSolvedYet):
        check(puzzles.get("guard"), guard_renamed_stub, seed=0, gpu=False)


# ------------------------------------------------------------ 15. no warnings, a close name, one numbering


@cuda.jit
def map_overflows(out, a):
    i = cuda.threadIdx.x
    big = a[i] * numba.float32(1e30)
    out[i] = big * big  # float32 overflow: inf (NumPy would warn)


def test_numpy_warnings_do_not_leak_before_the_verdict():
    import warnings

    from helpers.check import WrongAnswer

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(WrongAnswer):
            check(puzzles.get("map"), map_overflows, seed=0, gpu=False)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


def test_a_misspelt_name_gets_did_you_mean_not_every_name():
    with pytest.raises(KeyError) as info:
        puzzles.get("llm_softmax_online")
    text = str(info.value)
    assert "did you mean `llm1_softmax_online`?" in text and len(text) < 200, text
    with pytest.raises(KeyError) as info:
        puzzles.get("zzzzqqq")
    assert "puzzles.names()" in str(info.value)


def test_case_numbers_agree_between_the_header_and_the_show_line():
    import re

    for seed in SEEDS_23:
        with pytest.raises(KernelDiagnosed) as info:
            check(puzzles.get("guard"), guard_forgotten, seed=seed, gpu=False)
        text = str(info.value)
        head = int(re.search(r"failed on case (\d+) \(cases 0 to \d+\)", text).group(1))
        shown = int(re.search(r"case=(\d+)", text).group(1))
        assert head == shown == info.value.run.case_index


@cuda.jit
def float32_cos(out, a):
    i = cuda.threadIdx.x
    out[i] = math.cos(a[i] * numba.float32(3.0)) + math.sin(a[i])


def test_float32_trig_is_not_float64_although_libdevice_reduces_huge_arguments_in_float64():
    """libdevice's cosf/sinf reduce a huge argument with one float64 multiply (by 0d3BF921FB54442D19):
    library code inlined at the learner's line, not float64 arithmetic of the kernel (ch17's F^H d)."""
    from types import SimpleNamespace

    from helpers import ptx
    from helpers.float64 import float64_finding

    _needs_ptx()
    args = [np.zeros(4, np.float32), np.ones(4, np.float32)]
    text = ptx.ptx_check(float32_cos, args)
    assert "0d3BF921FB54442D19" in text  # the reduction is there...
    p = SimpleNamespace(name="t", float64="reject", signature=("out", "a"))
    assert float64_finding(p, float32_cos, args, text) is None  # ...and is not the kernel's


@cuda.jit
def scale_by_python_float(out, a, alpha):
    i = cuda.threadIdx.x
    acc = numba.float32(0)
    for _ in range(3):
        acc = acc * alpha + a[i]
    out[i] = acc


def test_float64_from_a_python_float_argument_is_named():
    from types import SimpleNamespace

    from helpers import ptx
    from helpers.float64 import float64_finding

    _needs_ptx()
    args = [np.zeros(4, np.float32), np.ones(4, np.float32), 0.5]
    p = SimpleNamespace(name="t", float64="warn", signature=("out", "a", "alpha"))
    found = float64_finding(p, scale_by_python_float, args, ptx.ptx_check(scale_by_python_float, args))
    assert found and "`alpha` arrives as float64" in found[0] and "alpha = numba.float32(alpha)" in found[0]
    args[2] = np.float32(0.5)
    assert float64_finding(p, scale_by_python_float, args, ptx.ptx_check(scale_by_python_float, args)) is None


def test_a_kernel_nvvm_refuses_only_with_line_info_is_not_rejected():
    """Line info is asked for only to name float64 lines: NVVM fails some kernels with it (this blur
    without a guard, numba-cuda 0.30) that compile without, and the verdict must be the plain compile's."""
    from mutants.pmpp.ch03_grids.blur import MUTANTS

    from helpers import ptx, runs

    kernel = next(k for name, k, *_ in MUTANTS["ch03_blur"] if name == "blur_no_guard")
    p = puzzles.get("ch03_blur")
    args, *_ = runs.prepare_args(p, p.cases_for(kernel, np.random.default_rng(0))[0])
    assert ".entry" in ptx.ptx_check(kernel, args)
