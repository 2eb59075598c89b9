"""Launch validation and argument binding: what CUDA and Numba check before a kernel runs."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import errors as E
from .options import BlockOrder
from .semantics import Dim3

STATIC_SHARED_LIMIT = 48 * 1024  # bytes of shared memory a block gets without opting in
LOCAL_LIMIT = 512 * 1024  # bytes of local memory per thread (CUDA's limit)


def check_dims(griddim: Dim3, blockdim: Dim3, shared_bytes: int) -> None:
    nthreads = int(np.prod(blockdim))
    if nthreads > 1024 or blockdim[0] > 1024 or blockdim[1] > 1024 or blockdim[2] > 64:
        raise E.LaunchError(
            f"{tuple(blockdim)} threads per block: CUDA allows at most 1024 "
            "threads per block (and at most 64 in z); the launch would fail"
        )
    if min(griddim) < 1 or min(blockdim) < 1:
        raise E.LaunchError(
            f"grid {tuple(griddim)} x block {tuple(blockdim)}: every dimension must be at least 1"
        )
    if shared_bytes > STATIC_SHARED_LIMIT:
        raise E.LaunchError(
            f"{shared_bytes} bytes of dynamic shared memory: more than the 48 KiB a "
            "block gets without opting in"
        )


def check_arity(fn: Any, params: Sequence[str], args: Sequence[Any]) -> None:
    if len(args) != len(params):
        raise E.LaunchError(
            f"{fn.__name__} takes {len(params)} arguments "
            f"({', '.join(params)}) but the launch passed {len(args)}"
        )


def block_order(order: BlockOrder, nblocks: int, seed: int) -> list[int]:
    """The order blocks run in, as block numbers."""
    if order == "forward":
        return list(range(nblocks))
    if order == "reverse":
        return list(range(nblocks))[::-1]
    if order == "shuffle":
        return [int(b) for b in np.random.default_rng(seed).permutation(nblocks)]
    out = [int(b) for b in order]
    if sorted(out) != list(range(nblocks)):
        raise ValueError(f"block_order must be a permutation of range({nblocks})")
    return out


def kernel_argument(name: str, a: Any) -> Any:
    """What a launch hands the kernel for argument `name`, before either engine wraps it: the NumPy
    array behind a device array (the array protocol: `__sim_array__()`), an array, or a number.
    Refuses what Numba cannot pass to a GPU."""
    if hasattr(a, "__sim_array__"):
        a = a.__sim_array__()
    if isinstance(a, np.ndarray):
        return a
    if isinstance(a, (list, tuple, dict, set)):
        raise E.LaunchError(
            f"argument `{name}` is a {type(a).__name__}: kernels take NumPy arrays "
            "(or device arrays) and numbers; Numba cannot pass a Python "
            f"{type(a).__name__} to a GPU"
        )
    if a is None or isinstance(a, str):
        raise E.LaunchError(f"argument `{name}` is {a!r}: kernels take arrays and numbers")
    return a
