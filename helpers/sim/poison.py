"""The one poison policy: what memory holds before anything writes it.

A GPU leaves new device, shared and local memory uninitialised. Filling it with
values no correct kernel produces makes a read of it, or an output element
never written, visible: NaN for floats, a large odd sentinel for integers.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def poison(shape_or_like: Any, dtype: Any = None) -> np.ndarray:
    """A fresh C-ordered array of `shape_or_like` (a shape, or an array to copy shape and dtype
    from) filled with the poison value of `dtype`."""
    if hasattr(shape_or_like, "shape") and hasattr(shape_or_like, "dtype"):
        shape = shape_or_like.shape
        dtype = shape_or_like.dtype if dtype is None else dtype
    else:
        shape = shape_or_like
    dt = np.dtype(np.float64 if dtype is None else dtype)
    return np.full(shape, poison_value(dt), dt)


def poison_value(dt: np.dtype) -> Any:
    if dt.kind in "fc":
        return np.nan
    if dt.kind in "iu":
        return np.iinfo(dt).max // 3 + 7
    return 0
