"""What the transformed kernel declares and updates through lockstep's `Run` (a mixin of it): shared,
local and constant arrays (dynamic shared memory as one byte buffer per block, as on a GPU), and
atomics, ordered as the greenlet engine applies them."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .. import binding
from .. import errors as E
from ..poison import poison
from ..semantics import ATOMICS, COMMUTING
from .api import Cast
from .memory import COMMUTES, DEFERRED, USED, LArray, Storage
from .stop import Stop
from .transform import site_info


class Declarations:
    def declare(self, space: str, lineno: int, site: int, *args: Any, **kw: Any) -> LArray:
        ctl = self.ctl
        if not ctl.live:
            raise Stop.unsupported(f"an array declared where no thread runs (line {lineno})")
        if space == "const":
            ary = args[0] if args else kw["ary"]
            got = self.consts.get(id(ary))
            if got is None:
                if type(ary) is LArray:
                    raise Stop.diagnostic(E.Unsupported, "cuda.const.array_like of a kernel argument")
                data = np.array(ary)
                aid = self._decl((id(ary), "const"), site, "const", data.shape, data.dtype)
                got = self.consts[id(ary)] = LArray(
                    self, Storage(data, aid, self.arrays[aid].name, "const", readonly=True)
                )
            return got
        shape = args[0] if args else kw.get("shape")
        dtype = args[1] if len(args) > 1 else kw.get("dtype")
        got = self.block_decl.get(site)
        if got is not None:
            return got
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        shape = tuple(int(s) for s in shape)
        if isinstance(dtype, Cast):
            dtype = dtype.dt
        try:
            dt = np.dtype(dtype)
        except TypeError:
            from numba.np.numpy_support import as_dtype

            dt = as_dtype(dtype)
        if space == "shared":
            if shape in ((0,), ()):
                arr = self._dynamic(site, dt)
                self.block_decl[site] = arr
                return arr
            self.static_shared += int(np.prod(shape)) * dt.itemsize
            self.static_shared_max = max(self.static_shared_max, self.static_shared)
            if self.static_shared > binding.STATIC_SHARED_LIMIT:
                raise self.diag(
                    "LaunchError",
                    f"{self.static_shared} bytes of static shared memory per block: CUDA allows 48 KiB; "
                    "the kernel would not launch",
                )
            aid = self._decl(site, site, space, shape, dt)
            data = poison(shape, dt)
            arr = LArray(
                self, Storage(data, aid, self.arrays[aid].name, "shared", init=np.zeros(data.size, bool))
            )
        else:
            nbytes = int(np.prod(shape)) * dt.itemsize
            if nbytes > binding.LOCAL_LIMIT:
                m = re.search(r"(\w+)\s*=\s*[\w.]*local\.array", site_info(site).text)
                name = m.group(1) if m else f"local@{lineno}"
                raise self.diag(
                    "LaunchError",
                    f"local array `{name}` is {nbytes:,} bytes per thread: CUDA gives a thread at most "
                    f"{binding.LOCAL_LIMIT // 1024} KiB of local memory, so the kernel would not launch. "
                    "Use a smaller array, or shared or global memory.",
                    array=name,
                )
            aid = self._decl(site, site, space, shape, dt)
            data = poison((self.n,) + shape, dt)
            arr = LArray(
                self,
                Storage(
                    data, aid, self.arrays[aid].name, "local", init=np.zeros(data.size, bool), local=True
                ),
            )
        self.block_decl[site] = arr
        return arr

    def _dynamic(self, site: int, dt: np.dtype) -> LArray:
        """`cuda.shared.array(0, dt)`: a view of the block's one dynamic buffer from byte 0, as on a
        GPU; views of one element size share their initialisation and race state (spaces.py)."""
        nbytes = self.opts.shared_bytes
        if not nbytes:
            raise self.diag(
                "LaunchError",
                "cuda.shared.array(0, ...) asks for dynamic shared memory but the launch gave none: pass "
                "its size in bytes as the 4th launch parameter, kernel[blocks, threads, 0, nbytes](...)",
            )
        n = nbytes // dt.itemsize
        if self.dynamic is None:  # poisoned as the first declaration's dtype
            self.dynamic = np.zeros(nbytes, np.uint8)
            self.dynamic[: n * dt.itemsize].view(dt)[...] = poison((n,), dt)
        data = self.dynamic[: n * dt.itemsize].view(dt)
        aid = self._decl(site, site, "shared", (n,), dt)
        st = Storage(data, aid, self.arrays[aid].name, "shared", init=np.zeros(n, bool))
        state = self.dynamic_state.get(dt.itemsize)
        if state is None:
            self.dynamic_state[dt.itemsize] = (st.init, st.log)
        else:
            st.init, st.log = state
        return LArray(self, st)

    def _decl(self, key: Any, site: int, space: str, shape: tuple, dt: Any) -> int:
        if key not in self.decl:
            s = site_info(site)
            m = re.search(r"(\w+)\s*=\s*[\w.]*" + space + r"\.array", s.text)
            name = m.group(1) if m else f"{space}@{s.lineno}"
            self.decl[key] = self._add_array(name, space, shape, dt)
        return self.decl[key]

    def atomic(self, op: str, site: int, used: bool, ary: Any, *args: Any) -> Any:
        if type(ary) is not LArray:
            raise Stop.diagnostic(E.Unsupported, f"cuda.atomic.{op} on a {type(ary).__name__}")
        fn = ATOMICS.get(op)
        if fn is None:
            raise Stop.unsupported(f"cuda.atomic.{op}")
        if op == "compare_and_swap":
            idx, rest = (0,), args
        else:
            idx, rest = args[0], args[1:]
            idx = idx if type(idx) is tuple else (idx,)
        if not used and op in COMMUTING and ary.st.data.dtype.kind in "iu":
            cat = COMMUTES  # integer add/sub/and/or/xor/max/min, old value unused: any order
        elif used:
            cat = USED
        else:
            cat = DEFERRED
        self.site = site
        return ary.atomic(site, idx, fn, rest, cat)

    def atomic_order(self, st: Storage, fl: np.ndarray, cat: int) -> None:
        """The greenlet engine applies a barrier interval's atomics thread by thread. Lockstep gives
        the same result when every element gets only commuting integer updates whose old value is
        unused (applied at once, any order), or one instruction whose old values are used (lane
        order is thread order), or only updates whose old value is unused (deferred to the barrier
        and applied in thread-major order). Anything else is handed over."""
        seen = self.atomic_seen.setdefault(id(st), {})
        for f in np.unique(fl).tolist():
            prev = seen.get(f)
            if prev is not None and (prev != cat or cat == USED):
                raise Stop.unsupported(
                    "order-dependent atomics on one element more than once in a barrier interval"
                )
            seen[f] = cat
            if cat == DEFERRED:
                self.deferred.setdefault(id(st), set()).add(f)

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _apply_deferred(self) -> None:
        self.pending.sort(key=lambda e: e[0])
        for _, st, f, fn, vals in self.pending:
            st.data[f] = fn(st.data[f], *vals)
        self.pending = []
        self.deferred = {}
