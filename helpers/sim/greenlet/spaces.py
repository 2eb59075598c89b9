"""Memory spaces: global arguments, shared, local and constant memory, allocated per launch / block /
thread, and the state (initialised elements, last accessors) that the race and initialisation
checks read.

Dynamic shared memory (`cuda.shared.array(0, dtype)`) is one buffer of bytes per block, as on a
GPU: every such declaration views it from byte 0, reinterpreted as its dtype, so two declarations
alias. Declarations of one element size also share their race and initialisation state, so one
thread writing `a[i]` and another reading `b[i]` of the same bytes is the race it is on hardware.
"""

from __future__ import annotations

import re
from types import FrameType
from typing import Any

import numpy as np

from .. import errors as E
from ..binding import LOCAL_LIMIT, STATIC_SHARED_LIMIT, kernel_argument
from ..messages import at_thread, source_at
from ..poison import poison
from .memory import SimArray, Storage, new_array
from .threads import canon_site


class Spaces:
    """The launch's on-chip memories; `reset_block` at the start of every block."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self.decl: dict = {}  # declaration key -> (array id, name)
        self.const: dict = {}
        self.static_shared = self.static_shared_max = 0
        self.reset_block()

    def reset_block(self) -> None:
        self.block_shared: dict = {}
        self.static_shared = 0
        self.dynamic: np.ndarray | None = None  # this block's dynamic shared bytes
        self.dynamic_state: dict = {}  # element size -> (init, acc) shared by its views

    def _name(self, key: Any, frame: FrameType, space: str, shape: tuple, dtype: np.dtype) -> tuple:
        if key not in self.decl:
            _, line = source_at(frame)
            m = re.search(r"(\w+)\s*=\s*[\w.]*" + space + r"\.array", line)
            name = m.group(1) if m else f"{space}@{frame.f_lineno}"
            self.decl[key] = (self.run.add_array(name, space, shape, dtype), name)
        return self.decl[key]

    def _shape_dtype(self, shape: Any, dtype: Any, what: str, frame: FrameType) -> tuple:
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        try:
            shape = tuple(int(s) for s in shape)
        except TypeError:
            raise at_thread(
                E.LaunchError,
                f"{what} shape {shape!r} must be an int or a tuple of ints",
                self.run.cur,
                frame,
            ) from None
        try:
            dt = np.dtype(dtype)
        except TypeError:
            from numba.np.numpy_support import as_dtype

            dt = as_dtype(dtype)
        return shape, dt

    def shared_array(self, shape: Any, dtype: Any, frame: FrameType) -> SimArray:
        bs = self.block_shared
        arr = bs.get((frame.f_code, frame.f_lasti))
        if arr is not None:
            return arr
        key = canon_site(frame.f_code, frame.f_lasti)
        arr = bs.get(key)
        if arr is None:
            arr = self._new_shared(key, shape, dtype, frame)
            bs[key] = arr
        bs[frame.f_code, frame.f_lasti] = arr
        return arr

    def _new_shared(self, key: Any, shape: Any, dtype: Any, frame: FrameType) -> SimArray:
        run = self.run
        shape, dt = self._shape_dtype(shape, dtype, "cuda.shared.array", frame)
        if shape in ((0,), ()):
            nbytes = run.opts.shared_bytes
            if not nbytes:
                raise at_thread(
                    E.LaunchError,
                    "cuda.shared.array(0, ...) asks for dynamic shared memory "
                    "but the launch gave none: pass its size in bytes as the 4th launch "
                    "parameter, kernel[blocks, threads, 0, nbytes](...)",
                    run.cur,
                    frame,
                )
            n = nbytes // dt.itemsize
            if self.dynamic is None:  # poisoned as the first declaration's dtype
                self.dynamic = np.zeros(nbytes, np.uint8)
                self.dynamic[: n * dt.itemsize].view(dt)[...] = poison((n,), dt)
            data = self.dynamic[: n * dt.itemsize].view(dt)
            aid, name = self._name(key, frame, "shared", (n,), dt)
            st = Storage(run, data, aid, name, "shared", initialised=False)
            if dt.itemsize not in self.dynamic_state:
                self.dynamic_state[dt.itemsize] = (st.init, st.acc)
            else:
                st.init, st.acc = self.dynamic_state[dt.itemsize]
            return new_array(st)
        self.static_shared += int(np.prod(shape)) * dt.itemsize
        self.static_shared_max = max(self.static_shared_max, self.static_shared)
        if self.static_shared > STATIC_SHARED_LIMIT:
            raise at_thread(
                E.LaunchError,
                f"{self.static_shared} bytes of static shared memory per "
                "block: CUDA allows 48 KiB; the kernel would not launch",
                run.cur,
                frame,
            )
        aid, name = self._name(key, frame, "shared", shape, dt)
        return new_array(Storage(run, poison(shape, dt), aid, name, "shared", initialised=False))

    def local_array(self, shape: Any, dtype: Any, frame: FrameType) -> SimArray:
        t = self.run.cur
        key = (frame.f_code, frame.f_lasti)
        arr = t.local.get(key)
        if arr is None:
            key = canon_site(*key)
            arr = t.local.get(key)
        if arr is None:
            shape, dt = self._shape_dtype(shape, dtype, "cuda.local.array", frame)
            aid, name = self._name(key, frame, "local", shape, dt)
            nbytes = int(np.prod(shape)) * dt.itemsize
            if nbytes > LOCAL_LIMIT:
                raise at_thread(
                    E.LaunchError,
                    f"local array `{name}` is {nbytes:,} bytes per thread: CUDA "
                    f"gives a thread at most {LOCAL_LIMIT // 1024} KiB of local memory, so the "
                    "kernel would not launch. Use a smaller array, or shared or global memory.",
                    t,
                    frame,
                    array=name,
                )
            arr = t.local[key] = new_array(
                Storage(self.run, poison(shape, dt), aid, name, "local", initialised=False)
            )
        return arr

    def const_array(self, ary: Any, frame: FrameType) -> SimArray:
        arr = self.const.get(id(ary))
        if arr is None:
            if isinstance(ary, SimArray):
                raise at_thread(
                    E.Unsupported,
                    "cuda.const.array_like needs a host NumPy array known when "
                    "the kernel is compiled (a global), not a kernel argument",
                    self.run.cur,
                    frame,
                )
            data = np.array(ary)
            aid, name = self._name((id(ary), "const"), frame, "const", data.shape, data.dtype)
            arr = self.const[id(ary)] = new_array(Storage(self.run, data, aid, name, "const", readonly=True))
        return arr


def bind_arg(run: Any, name: str, a: Any, role: str) -> Any:
    """What the kernel sees for argument `name`: a checked SimArray over a global array, the value
    for a number."""
    a = kernel_argument(name, a)
    if not isinstance(a, np.ndarray):
        return a
    data = a
    if not a.flags.c_contiguous:
        data = np.ascontiguousarray(a)
        run.writeback.append((a, data))
    aid = run.add_array(name, "global", data.shape, data.dtype, role)
    if run.tracing:
        run.before[name] = data.copy()
    st = Storage(
        run,
        data,
        aid,
        name,
        "global",
        initialised=role not in ("out", "scratch"),  # those start as garbage
        readonly=(role == "in"),
        cross_block=run.opts.cross_block_races,
    )
    return new_array(st)
