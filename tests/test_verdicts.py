"""Issue 11 from the learner's side: every verdict true and useful. Each test is a known-wrong kernel
rejected for the right reason (on several seeds) next to a correct twin accepted."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda

import puzzles
from helpers.check import KernelDiagnosed, NotSolvedYet, check
from helpers.sim.errors import OutOfBounds

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
