"""The sizes the CPU-vs-GPU study measures: small under CI (and under the test suite without a GPU:
conftest.py sets MP_SMALL_STUDIES), larger with a GPU."""

from __future__ import annotations

import os

from helpers import timing

SMALL_ENV = "MP_SMALL_STUDIES"  # "1": the CPU-only sizes are CI's (the test suite: it checks the study runs)


def size_caps() -> tuple:
    """(largest vector length, largest matmul n) to measure here: small under CI, larger with a GPU."""
    if os.environ.get("CI"):
        return 10**5, 128
    if timing.skip_reason():
        return (10**5, 128) if os.environ.get(SMALL_ENV) == "1" else (10**7, 256)
    return 10**8, 2048


def vector_sizes() -> list:
    top, _ = size_caps()
    return [int(10 ** (k / 2)) for k in range(6, 17) if 10 ** (k / 2) <= top]


def matmul_sizes() -> list:
    _, top = size_caps()
    return [n for n in (16, 32, 64, 128, 256, 512, 1024, 2048) if n <= top]
