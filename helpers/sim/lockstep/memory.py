"""Arrays in lockstep: each load or store is one gather or scatter over the active lanes, with the
greenlet engine's checks on the whole index vector (bounds, negative indices, unwritten elements,
read-only arrays) and one trace chunk (rows in `Trace.acc` format, assembled in run.py)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import errors as E
from ..messages import code_text, one_writer_text
from ..semantics import NUMBA_INT, gpu_int, half_overflow
from ..trace import ATOMIC, READ, WARP_SIZE, WRITE
from .stop import Stop
from .values import Mixed, V, as_int, lanes_of, split

COMMUTES, USED, DEFERRED = 1, 2, 3  # how an atomic instruction may be ordered (run.atomic_order)
_WORDS = {
    "global": "global array",
    "shared": "shared array",
    "local": "local array",
    "const": "constant array",
}


class Storage:
    """One allocation: a kernel argument, a block's shared array, the local arrays of every lane
    (`local`: one row per lane)."""

    __slots__ = (
        "data",
        "shape",
        "aid",
        "name",
        "space",
        "init",
        "readonly",
        "local",
        "size",
        "log",
        "xb",
        "scratch",
        "allinit",
    )

    def __init__(self, data, aid, name, space, *, init=None, readonly=False, local=False):
        self.data = data.reshape(-1)
        self.shape = tuple(data.shape[1:]) if local else tuple(data.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.aid, self.name, self.space = aid, name, space
        self.init = init  # flat bool array of written elements, or None (all initialised)
        self.readonly, self.local = readonly, local
        self.log: list = []  # this barrier interval's accesses: (flat, lanes, kind, wepochs)
        self.xb: Any = None  # global arrays: per-element last block that read / wrote / updated
        self.scratch: Any = None  # the race check's per-element owner (kept -1 between checks)
        self.allinit = False  # every element written (then reads need no initialisation check)


class LArray:
    """What the transformed kernel holds for an array: a view (offset, shape, strides in elements)."""

    __slots__ = ("st", "offset", "shape", "strides", "ndim", "run")

    def __init__(self, run, st, offset=0, shape=None, strides=None):
        self.run, self.st, self.offset = run, st, offset
        self.shape = st.shape if shape is None else shape
        if strides is None:
            strides, acc = [], 1
            for s in reversed(self.shape):
                strides.append(acc)
                acc *= s
            strides = tuple(reversed(strides))
        self.strides = strides
        self.ndim = len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def dtype(self):
        return self.st.data.dtype

    def __len__(self) -> int:
        return self.shape[0]

    def __bool__(self):
        raise Stop.diagnostic(E.Unsupported, f"whole array `{self.st.name}` used as a condition")

    # --- index work
    def _flat(self, idx: tuple, what: str) -> Any:
        """Flat storage index: an int (the same element for every lane) or a full-width int64 array;
        raises on an index out of bounds in an active lane. A partial index gives a view."""
        run = self.run
        if len(idx) == 1 and type(idx[0]) is tuple:
            idx = idx[0]
        if len(idx) > self.ndim:
            raise run.diag("OutOfBounds", f"{len(idx)} indices for a {self.ndim}-D array", self, idx)
        off = self.offset
        for k, i in enumerate(idx):
            n, s = self.shape[k], self.strides[k]
            if type(i) is Mixed:
                i = as_int(i)
            if type(i) is V:
                m = run.ctl.m
                c = i.c
                if c is not None and c[0] is m:
                    hi, a = c[1], c[2]
                else:
                    a, w, d = split(i)
                    if d.kind not in "iub":
                        raise Stop.unsupported(f"a {d} index into `{self.st.name}`")
                    if a.dtype != np.int64:
                        a = a.astype(np.int64)
                    # one reduction for both ends: negative indices are huge as unsigned
                    av = a.view(np.uint64) if run.ctl.isfull else a[m].view(np.uint64)
                    hi = int(av.max()) if av.size else 0
                    i.c = (m, hi, a)
                if hi >= n:
                    raise run.diag("OutOfBounds", None, self, idx)
                off = off + a * s if s != 1 else off + a
            elif type(i) is slice:
                raise Stop.unsupported(f"slicing `{self.st.name}`")
            else:
                try:
                    if type(i) is not int:
                        i = operator.index(i)
                except TypeError:
                    raise Stop.unsupported(f"index {i!r} into `{self.st.name}`") from None
                if i < 0 or i >= n:
                    raise run.diag("OutOfBounds", None, self, idx)
                off += i * s
        if len(idx) < self.ndim:
            if type(off) is not int:
                raise Stop.unsupported(f"a per-thread view of `{self.st.name}`")
            return LArray(run, self.st, off, self.shape[len(idx) :], self.strides[len(idx) :])
        return off

    def load(self, site: int, idx: tuple) -> Any:
        run = self.run
        ctl = run.ctl
        if not ctl.live:
            return _read(self.st.data.dtype.type(0))
        flat = self._flat(idx, "read")
        if type(flat) is LArray:
            return flat
        st = self.st
        uniform = type(flat) is int
        if st.local:
            lanes = ctl.act
            fl = flat if uniform else (flat if ctl.isfull else flat[lanes])
            phys = lanes * st.size + fl
            if st.init is not None and not st.init[phys].all():
                raise run.diag("UninitializedRead", None, self, idx)
            run.access(st, READ, site, fl)
            out = np.zeros(ctl.n, st.data.dtype)
            out[lanes] = st.data[phys]
            return _read(out)
        if uniform:
            if st.init is not None and not st.init[flat]:
                raise run.diag("UninitializedRead", None, self, idx)
            run.access(st, READ, site, flat)
            return _read(st.data[flat])
        if ctl.isfull:
            fl = flat
            if st.init is not None and not st.allinit:
                if not st.init[fl].all():
                    raise run.diag("UninitializedRead", None, self, idx)
                if st.size <= 65536:  # small arrays (shared tiles): look once whether all are written
                    st.allinit = bool(st.init.all())
            run.access(st, READ, site, fl)
            return _read(st.data[fl])
        fl = flat[ctl.m]
        if st.init is not None and not st.init[fl].all():
            raise run.diag("UninitializedRead", None, self, idx)
        run.access(st, READ, site, fl)
        safe = np.where(ctl.m, flat, fl[0]) if fl.size else np.zeros(ctl.n, np.int64)
        return _read(st.data[safe])

    def store(self, site: int, idx: tuple, value: Any) -> None:
        run = self.run
        ctl = run.ctl
        if not ctl.live:
            return
        flat = self._flat(idx, "write")
        st = self.st
        if type(flat) is LArray:
            raise Stop.unsupported(f"assigning to a slice of `{st.name}`")
        if st.readonly:
            raise run.diag("ReadOnlyWrite", None, self, idx)
        vals = _values(value, st.data.dtype, ctl)
        if st.data.dtype == np.float16 and half_overflow(vals):  # the reference engine names it
            raise Stop.diagnostic(E.KernelException, f"a float16 overflow storing into `{st.name}`")
        lanes = ctl.act
        if type(flat) is int:
            if ctl.nact > 1 and st.space != "local":
                run._order_matters()
                one_warp = int(lanes.min()) // WARP_SIZE == int(lanes.max()) // WARP_SIZE
                fix = one_writer_text(code_text(run.fn0.__code__), one_warp)
                raise run.diag(
                    "DataRace", f"several threads write one element in one instruction. {fix}", self, idx
                )
            fl = flat
        else:
            fl = flat if ctl.isfull else flat[ctl.m]
        if st.local:
            phys = lanes * st.size + fl
        else:
            phys = fl
        run.access(st, WRITE, site, fl)
        if st.init is not None:
            st.init[phys] = True
        if type(phys) is int and isinstance(vals, np.ndarray):
            vals = vals[-1]  # one element, several lanes (races off): the last thread's write stays
        st.data[phys] = vals

    def atomic(self, site: int, idx: tuple, fn, args: tuple, cat: int) -> Any:
        run = self.run
        ctl = run.ctl
        if not ctl.live:
            return self.st.data.dtype.type(0)
        flat = self._flat(idx, "atomic")
        st = self.st
        if type(flat) is LArray or st.local:
            raise Stop.unsupported(f"atomic on `{st.name}` (a view or a local array)")
        if st.readonly:
            raise run.diag("ReadOnlyWrite", None, self, idx)
        lanes = ctl.act
        fl = (
            np.full(len(lanes), flat, np.int64)
            if type(flat) is int
            else (flat if ctl.isfull else flat[ctl.m])
        )
        if st.init is not None and not st.init[fl].all():
            raise run.diag("UninitializedRead", None, self, idx)
        run.atomic_order(st, fl, cat)
        run.access(st, ATOMIC, site, fl)
        data = st.data
        per = [_lane_list(a, ctl) for a in args]
        if cat == DEFERRED:  # applied at the barrier, in the greenlet engine's thread-major order
            ctl.writes += 1
            seq = run.next_seq()
            rounds = run.wround[lanes].tolist()
            run.pending.extend(
                ((r, ln, seq), st, f, fn, [p[k] for p in per])
                for k, (r, ln, f) in enumerate(zip(rounds, lanes.tolist(), fl.tolist()))
            )
            return None
        olds = []
        for k, f in enumerate(fl.tolist()):
            old = data[f]
            data[f] = fn(old, *[p[k] for p in per])
            olds.append(old)
        if not np.array_equal(data[fl], np.asarray(olds, data.dtype), equal_nan=data.dtype.kind in "fc"):
            ctl.writes += 1  # a spin-wait's loop ends only when some access changes memory
        out = np.zeros(ctl.n, data.dtype)
        out[lanes] = olds
        return _read(out)


def _read(a: Any) -> Any:
    """Lanes (an array) or one value read from an array, typed as the greenlet engine reads them: a
    narrow integer as a Python int (weak lanes) or an int64 (semantics.NUMBA_INT)."""
    widen = NUMBA_INT.get(a.dtype)
    if type(a) is not np.ndarray:
        return a if widen is None else widen(a)
    if widen is None:
        return V(a, False)
    return V(a.astype(np.int64), widen is int)


def _lane_list(x: Any, ctl) -> list:
    if type(x) is Mixed:
        return [v for v, a in zip(lanes_of(x, ctl.n), ctl.m) if a]
    if type(x) is V:
        a, w, _ = split(x)
        a = a[ctl.act]
        return a.tolist() if w else list(a)
    return [x] * ctl.nact


def _values(value: Any, dt: np.dtype, ctl) -> Any:
    """The active lanes' values as the array's dtype, as `data[i] = value` converts each."""
    if type(value) is Mixed:
        out = np.empty(ctl.n, dt)
        for mk, v in value.parts:
            if not (mk & ctl.m).any():
                continue
            sub = mk[ctl.m] if not ctl.isfull else mk
            part = _values(v, dt, ctl)
            if isinstance(part, np.ndarray):
                out_act = part[sub]
            else:
                out_act = part
            idx = np.flatnonzero(mk & ctl.m)
            out[idx] = out_act
        return out if ctl.isfull else out[ctl.m]
    if type(value) is V:
        a, w, d = split(value)
        a = a if ctl.isfull else a[ctl.m]
        # into an integer array: wrap or saturate as a GPU store does (an int array assignment wraps)
        return gpu_int(a, dt) if dt.kind in "iu" and d.kind == "f" else a
    if isinstance(value, (bool, int, float, np.generic)):
        return gpu_int(value, dt) if dt.kind in "iu" and not isinstance(value, (bool, np.bool_)) else value
    raise Stop.unsupported(f"storing a {type(value).__name__} into an array")


def words(space: str) -> str:
    return _WORDS[space]
