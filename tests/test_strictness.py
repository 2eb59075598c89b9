"""The 15 ways other puzzle courses let wrong solutions pass (/work/shared/design.md), one test each.

Each test takes a kernel that exploits the weakness, where cheap first shows that it would pass
under the weak setting (arange inputs, zeroed outputs, b = a.T, one block, ...), then shows that
`puzzles.check` rejects it for the right reason. Positive controls live in test_puzzles.py
(every reference and variant passes on the same cases)."""

import pkgutil
from types import SimpleNamespace

import mutants.gpu_puzzles as _gp  # noqa: E402
import numpy as np
import pytest
from numba import cuda
from support import mutants_module  # noqa: E402

import puzzles
from helpers import sim
from helpers.check import (
    InputModified,
    KernelDiagnosed,
    NotSolvedYet,
    OverBudget,
    WrongAnswer,
    check,
    run_case,
)
from helpers.sim.errors import BarrierDivergence, DataRace, OutOfBounds, ReadOnlyWrite, UninitializedRead

# every GPU-puzzle mutant and variant kernel by name (they live in one mutants file per puzzle)
m = SimpleNamespace(
    **{
        k: v
        for mod in pkgutil.iter_modules(_gp.__path__)
        for k, v in vars(mutants_module(f"puzzles.gpu_puzzles.{mod.name}")).items()
    }
)

RNG = np.random.default_rng(1234)


def rejects(name, kernel, exc, diagnostic=None, seed=0):
    with pytest.raises(exc) as info:
        check(puzzles.get(name), kernel, seed=seed, gpu=False)
    if diagnostic is not None:
        assert type(info.value.diagnostic) is diagnostic, str(info.value)
    return info.value


def weak_run(kernel, grid, block, *args):
    """Run on the simulator the way a lenient checker would: outputs as given, no roles, no race check."""
    sim.launch(kernel, grid, block, list(args), races=False)


def f32(*shape):
    return RNG.uniform(-5, 5, shape).astype(np.float32)


def test_01_predictable_inputs():
    n = 8
    out, a = np.zeros(n, np.float32), np.arange(n, dtype=np.float32)
    weak_run(m.map_arange_hardcode, 1, n, out, a)
    assert np.array_equal(out, a + 10)  # passes with arange input
    rejects("map", m.map_arange_hardcode, WrongAnswer)
    rejects("map_2d", m.map_2d_arange_hardcode, WrongAnswer)


def test_02_all_ones_inputs_hide_swapped_indices():
    n = 4
    out, a = np.zeros((n, n), np.float32), np.ones((n, n), np.float32)
    weak_run(m.map_2d_transposed_read, 1, (n, n), out, a, n)
    assert np.array_equal(out, a + 10)  # passes with all-ones input
    rejects("map_2d", m.map_2d_transposed_read, WrongAnswer)
    rejects("blocks_2d", m.blocks_2d_transposed_read, WrongAnswer)
    rejects("broadcast", m.broadcast_swapped_axes, WrongAnswer)


@cuda.jit
def map_skips_first(out, a):
    i = cuda.threadIdx.x
    if i > 0:  # thread 0 "knows" its answer is 0 and skips the write
        out[i] = a[i] + 10


def test_03_zeroed_outputs_hide_skipped_writes():
    n = 6
    out, a = np.zeros(n, np.float32), f32(n)
    a[0] = -10.0  # expected out[0] == 0
    weak_run(map_skips_first, 1, n, out, a)
    assert np.array_equal(out, a + 10)  # passes when outputs start at zero
    err = rejects("map", map_skips_first, WrongAnswer)
    assert "never written" in str(err)


def test_04_zero_weight_at_index_0_hides_first_tap_errors():
    a_size, b_size = 10, 3
    a, b = f32(a_size), f32(b_size)
    b[0] = 0.0
    out = np.zeros(a_size, np.float32)
    weak_run(m.conv_first_tap_skipped, 2, 8, out, a, b, a_size, b_size)
    p = puzzles.get("conv")
    assert np.allclose(out, p.spec(a=a, b=b, a_size=a_size, b_size=b_size), atol=1e-4)
    rejects("conv", m.conv_first_tap_skipped, WrongAnswer)
    for seed in range(5):
        assert all(np.all(c.args["b"] != 0) for c in p.cases(np.random.default_rng(seed)))


def test_05_b_equal_to_a_transposed_hides_a_kernel_that_never_reads_b():
    n = 5
    a = f32(n, n)
    b = np.ascontiguousarray(a.T)
    out = np.zeros((n, n), np.float32)
    weak_run(m.matmul_never_reads_b, (1, 1), (8, 8), out, a, b, n)
    assert np.allclose(out, a @ b, atol=1e-4)
    rejects("matmul", m.matmul_never_reads_b, WrongAnswer)
    for c in puzzles.get("matmul").cases(np.random.default_rng(0)):
        assert not np.allclose(c.args["b"], c.args["a"].T)


def test_06_a_equal_to_b_hides_a_times_a_in_dot():
    n = 6
    a = f32(n)
    out = np.zeros(1, np.float32)
    weak_run(m.dot_a_squared, 1, 8, out, a, a.copy(), n)
    assert np.isclose(out[0], a @ a, atol=1e-4)
    rejects("dot", m.dot_a_squared, WrongAnswer)


def test_07_missing_guard_in_2d_lands_on_a_cell_that_gets_the_right_value():
    # On a GPU out[i, size] is out[i + 1, 0] in memory and receives a[i + 1, 0] + 10: right value,
    # wrong thread, no error. The simulator checks each index against its own axis.
    err = rejects("map_2d", m.map_2d_missing_guard, KernelDiagnosed, OutOfBounds)
    assert err.diagnostic.array in ("a", "out")
    rejects("map_2d", m.map_2d_guard_rows_only, KernelDiagnosed, OutOfBounds)
    rejects("blocks_2d", m.blocks_2d_guard_one_axis, KernelDiagnosed, OutOfBounds)


def test_08_one_block_hides_local_versus_global_index_and_missing_halos():
    n = 8
    out, a = np.zeros(n, np.float32), f32(n)
    weak_run(m.blocks_local_index, 1, n, out, a, n)
    assert np.array_equal(out, a + 10)  # one block: local index == global index
    rejects("blocks", m.blocks_local_index, KernelDiagnosed, DataRace)
    out = np.zeros(n, np.float32)
    weak_run(m.pool_block_start_boundary, 1, 8, out, a, n)
    assert np.allclose(out, puzzles.get("pool").spec(a=a, size=n), atol=1e-5)  # no halo needed
    rejects("pool", m.pool_block_start_boundary, WrongAnswer)
    rejects("conv", m.conv_block_end_boundary, WrongAnswer)


def test_09_missing_syncthreads_and_barrier_in_a_branch():
    # every slot already written once: the missing barrier can only be seen as a race
    rejects("matmul", m.matmul_missing_second_sync, KernelDiagnosed, DataRace)
    rejects("prefix_sum", m.prefix_sum_missing_sync_in_loop, KernelDiagnosed, DataRace)
    # right after the loads: a race if the writer ran first, an uninitialised read if the reader did
    for name, kernel in (("pool", m.pool_missing_syncthreads), ("dot", m.dot_missing_syncthreads)):
        for seed in range(3):
            with pytest.raises(KernelDiagnosed) as info:
                check(puzzles.get(name), kernel, seed=seed, gpu=False)
            assert type(info.value.diagnostic) in (DataRace, UninitializedRead)
            assert "barrier" in str(info.value) or "race" in str(info.value).lower()
    rejects("shared", m.shared_barrier_in_branch, KernelDiagnosed, BarrierDivergence)
    rejects("prefix_sum", m.prefix_sum_barrier_in_branch, KernelDiagnosed, BarrierDivergence)
    rejects("matmul", m.matmul_barrier_in_branch, KernelDiagnosed, BarrierDivergence)


def test_10_budgets_are_enforced_not_printed():
    p = puzzles.get("matmul")
    case = p.cases(np.random.default_rng(0))[2]  # several tiles
    _, outputs = run_case(p, m.matmul_naive, case)[:2]
    want = p.spec(**{k: v for k, v in case.args.items() if k != "out"})
    assert np.allclose(outputs["out"], want, atol=1e-4)  # the naive kernel computes the right thing
    err = rejects("matmul", m.matmul_naive, OverBudget)
    assert err.field == "global_reads" and err.count > err.limit
    err = rejects("prefix_sum", m.prefix_sum_thread0_loop, OverBudget)
    assert err.field == "shared_reads"
    assert rejects("pool", m.pool_all_global, OverBudget).field == "global_reads"
    assert rejects("shared", m.shared_oversized, OverBudget).field == "shared_bytes"


def test_11_racy_writes_of_the_same_value():
    rejects("dot", m.dot_all_threads_write, KernelDiagnosed, DataRace)
    rejects("guard", m.guard_clamped_index, KernelDiagnosed, DataRace)
    rejects("prefix_sum", m.prefix_sum_all_threads_write, KernelDiagnosed, DataRace)


def test_12_uninitialised_shared_memory_is_not_zero():
    rejects("pool", m.pool_no_padding, KernelDiagnosed, UninitializedRead)
    rejects("matmul", m.matmul_no_zero_padding, KernelDiagnosed, UninitializedRead)
    rejects("prefix_sum", m.prefix_sum_no_zero_padding, KernelDiagnosed, UninitializedRead)


@cuda.jit
def map_zeroes_input(out, a):
    # a spec run on the modified `a` (all zeros) expects exactly the 10s this kernel writes
    i = cuda.threadIdx.x
    a[i] = 0.0
    out[i] = 10.0


def test_13_kernel_that_modifies_its_inputs():
    n = 8
    out, a = np.zeros(n, np.float32), f32(n)
    weak_run(map_zeroes_input, 1, n, out, a)
    assert np.array_equal(out, puzzles.get("map").spec(a=a))  # spec on the modified input agrees
    err = rejects("map", map_zeroes_input, (KernelDiagnosed, InputModified))
    if isinstance(err, KernelDiagnosed):
        assert type(err.diagnostic) is ReadOnlyWrite
    rejects("map", m.map_modifies_input, KernelDiagnosed, ReadOnlyWrite)
    rejects("zip", m.zip_writes_b, KernelDiagnosed, ReadOnlyWrite)


@cuda.jit
def map_writes_nothing(out, a):
    i = cuda.threadIdx.x  # noqa: F841
    # forgot the body


@cuda.jit
def map_writes_half(out, a):
    i = cuda.threadIdx.x
    if i % 2 == 0:
        out[i] = a[i] + 10


def test_14_stale_output_from_an_earlier_run():
    check(puzzles.get("map"), puzzles.get("map").reference, seed=0, gpu=False)  # a right answer first
    rejects("map", map_writes_nothing, NotSolvedYet)  # then nothing: no reuse
    err = rejects("map", map_writes_half, WrongAnswer)
    assert "never written" in str(err)


def test_15_negative_indices_wrap_silently():
    n = 8
    a = f32(n)
    # what Numba (and a GPU) does with a[-1]: reads the last element, no error
    assert a[-1] == a[n - 1]
    err = rejects("map", m.map_read_previous, KernelDiagnosed, OutOfBounds)
    assert "-1" in str(err)
    rejects("pool", m.pool_negative_halo, KernelDiagnosed, OutOfBounds)
