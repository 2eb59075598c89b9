"""The sizes the CPU-vs-GPU study measures: small under CI, larger with a GPU."""

from __future__ import annotations

import os

from helpers import timing


def size_caps() -> tuple:
    """(largest vector length, largest matmul n) to measure here: small under CI, larger with a GPU."""
    if os.environ.get("CI"):
        return 10**5, 128
    if timing.skip_reason():
        return 10**7, 256
    return 10**8, 2048


def vector_sizes() -> list:
    top, _ = size_caps()
    return [int(10 ** (k / 2)) for k in range(6, 17) if 10 ** (k / 2) <= top]


def matmul_sizes() -> list:
    _, top = size_caps()
    return [n for n in (16, 32, 64, 128, 256, 512, 1024, 2048) if n <= top]
