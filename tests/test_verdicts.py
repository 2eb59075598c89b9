"""Issue 11 from the learner's side: every verdict true and useful. Each test is a known-wrong kernel
rejected for the right reason (on several seeds) next to a correct twin accepted."""

from __future__ import annotations

import numba
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
