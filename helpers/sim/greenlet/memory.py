# Over 400 lines: the hot path, every element access checked and recorded inline in one class.
"""Simulated memory: arrays whose every element access is checked and recorded.

A `Storage` is one allocation (a kernel argument, one block's copy of a
shared array, one thread's local array). A `SimArray` is what kernel code
holds: a view (offset, shape, strides in elements) onto a Storage. Indexing it
checks bounds (negative indices too), initialisation, races and read-only
arrays, then records the access in the running launch's trace.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from ..errors import KernelException, OutOfBounds, ReadOnlyWrite, UninitializedRead, Unsupported
from ..messages import scratch_text
from ..semantics import NUMBA_INT, gpu_int, half_overflow, half_overflow_text, unordered
from ..trace import ATOMIC, READ, WRITE
from . import order

_SPACE_WORDS = {
    "global": "global array",
    "shared": "shared array",
    "local": "local array",
    "const": "constant array",
}


class Storage:
    __slots__ = (
        "run",
        "data",
        "shape",
        "aid",
        "name",
        "space",
        "init",
        "readonly",
        "acc",
        "rd",
        "wr",
        "cross_block",
        "checked",
        "hb",
        "unsigned",
        "half",
        "widen",
    )

    def __init__(self, run, data, aid, name, space, *, initialised=True, readonly=False, cross_block=False):
        self.run = run
        self.data = data.reshape(-1)  # a flat view: writes land in `data`
        self.shape = data.shape
        self.aid = aid
        self.rd, self.wr = 4 * aid + READ, 4 * aid + WRITE  # trace records: array and kind in one
        self.name = name
        self.space = space
        self.init = None if initialised else bytearray(data.size)
        self.readonly = readonly
        # flat index -> [last writer actor, was it atomic, last reader actor, an earlier other reader]
        # (one dict and a mutable list: the race check is one lookup per access)
        self.acc = {}
        self.cross_block = cross_block  # global memory: accesses from different blocks conflict
        self.checked = run.races and space != "local"  # local arrays are private: no races
        self.hb = False  # work memory whose reads across blocks must be ordered by atomics (order.py)
        self.unsigned = (
            self.data.dtype.kind == "u"
        )  # NumPy wraps a negative float stored here: a GPU saturates
        self.half = self.data.dtype == np.float16  # a finite value past 65504 becomes inf: named
        self.widen = NUMBA_INT.get(self.data.dtype)  # a narrow integer, read as Numba types it
        run.storages[aid] = self


class SimArray:
    __slots__ = ("st", "offset", "shape", "strides", "ndim")

    def __init__(self, st, offset, shape, strides):
        self.st = st
        self.offset = offset
        self.shape = shape
        self.strides = strides
        self.ndim = len(shape)

    # --- what Numba lets kernels ask of an array
    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def dtype(self):
        return self.st.data.dtype

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    def __repr__(self):
        return f"<{_SPACE_WORDS[self.st.space]} {self.st.name} {self.dtype}{list(self.shape)}>"

    def _whole(self, op, other=None, reflected=False):
        verb, sym = _OPS[op]
        me = self.st.name
        if isinstance(other, SimArray):
            a, b = (other.st.name, me) if reflected else (me, other.st.name)
            what = f"{verb} two whole arrays (`{a}` {sym} `{b}`)"
            fix = f"{a}[i] {sym} {b}[i]"
        else:
            what = f"{verb} a whole array (`{me}`) and a number"
            fix = f"x {sym} {me}[i]" if reflected else f"{me}[i] {sym} x"
        raise self.st.run.error(
            Unsupported,
            f"{what} is not allowed in a kernel: a kernel works element by element, so index them, {fix}",
            2,
            array=me,
        )

    def __bool__(self):
        raise self.st.run.error(
            Unsupported,
            f"`{self.st.name}` is a whole array used as a condition: test an element, e.g. `if a[i] > 0:`",
            1,
            array=self.st.name,
        )

    def _number(self, *_):
        raise self.st.run.error(
            Unsupported,
            f"`{self.st.name}` is a whole array where a number is needed "
            "(int(), float(), math functions, an index): use an element, a[i]",
            1,
            array=self.st.name,
        )

    __int__ = __float__ = __index__ = __complex__ = _number

    def __array__(self, *a, **k):
        raise Unsupported(
            f"`{self.st.name}` is a device array inside a kernel: NumPy functions cannot "
            "run on it (Numba would refuse to compile this). Index it element by element."
        )

    # --- indexing
    def _locate(self, idx, depth):
        """Flat storage index for a full index, or a SimArray view for a partial/sliced one."""
        if type(idx) is not tuple:
            idx = (idx,)
        if len(idx) > self.ndim:
            raise self._oob(idx, f"{len(idx)} indices for a {self.ndim}-D array", depth + 1)
        off = self.offset
        shape, strides = [], []
        for k, i in enumerate(idx):
            n, st = self.shape[k], self.strides[k]
            if type(i) is not int:
                if isinstance(i, slice):
                    start, stop, step = i.start, i.stop, i.step
                    for v in (start, stop, step):
                        if v is not None and operator.index(v) < 0:
                            raise self._oob(
                                idx,
                                "negative slice bounds wrap around in Python; "
                                "write the index you mean explicitly",
                                depth + 1,
                            )
                    start, stop, step = i.indices(n)
                    off += start * st
                    shape.append(len(range(start, stop, step)))
                    strides.append(st * step)
                    continue
                try:
                    i = operator.index(i)
                except TypeError:
                    raise Unsupported(
                        f"index {i!r} into `{self.st.name}` is a {type(i).__name__}, not an integer: "
                        "CUDA indices must be integers (use int(...) or //)"
                    ) from None
            if i < 0 or i >= n:
                raise self._oob(idx, None, depth + 1)
            off += i * st
        if shape or len(idx) < self.ndim:
            return SimArray(
                self.st, off, tuple(shape) + self.shape[len(idx) :], tuple(strides) + self.strides[len(idx) :]
            )
        return off

    def _oob(self, idx, why, depth):
        run = self.st.run
        shown = ", ".join(str(i) for i in idx)
        if why is None:
            neg = any(type(i) is not slice and operator.index(i) < 0 for i in idx)
            if neg:
                why = (
                    "a negative index: Python and Numba silently wrap it to the end of the array, "
                    "real CUDA reads or writes memory before the array (garbage or a crash)"
                )
            else:
                why = (
                    f"past the end (shape {tuple(self.shape)}): a real GPU does no bounds check and "
                    "would silently read garbage or overwrite another array. Is a guard missing?"
                )
        return run.error(
            OutOfBounds,
            f"index [{shown}] into {_SPACE_WORDS[self.st.space]} `{self.st.name}` is out of bounds: {why}",
            depth + 1,
            array=self.st.name,
            index=idx,
        )

    def __getitem__(self, idx):
        if type(idx) is int and self.ndim == 1:
            if idx < 0 or idx >= self.shape[0]:
                raise self._oob((idx,), None, 1)
            flat = self.offset + idx * self.strides[0]
        elif (
            type(idx) is tuple
            and self.ndim == 2
            and len(idx) == 2
            and type(idx[0]) is int
            and type(idx[1]) is int
            and 0 <= idx[0] < self.shape[0]
            and 0 <= idx[1] < self.shape[1]
        ):
            flat = self.offset + idx[0] * self.strides[0] + idx[1] * self.strides[1]  # 2-D fast path
        else:
            flat = self._locate(idx, 1)
            if type(flat) is SimArray:
                return flat
        st = self.st
        run = st.run
        if st.init is not None and not st.init[flat]:
            if run.opts.defer_uninit:
                if len(run.deferred) < 4:
                    run.deferred.append(self._uninit(idx, 1))
            else:
                run.fail(self._uninit(idx, 1))
        if st.hb:
            w = run.hb.unseen_writer(run.cur.b, st.aid, flat)
            if w is not None:
                run.fail(order.race(run, st, idx, w))
        c = run.cur.actor
        if st.checked:
            s = st.acc.get(flat)
            if s is None:
                st.acc[flat] = [None, False, c, None]
            else:
                w = s[0]
                # semantics.unordered(w, c, st.cross_block) inlined (held equal to it by
                # tests/test_sim_semantics.py): the common case costs a few compares
                if (
                    w is not None
                    and w is not c
                    and (
                        (w[0] != c[0] and st.cross_block)
                        or (w[0] == c[0] and w[1] == c[1] and w[4] != c[4] and (w[2] != c[2] or w[3] == c[3]))
                    )
                ):
                    run.fail(
                        run.race(st, flat, idx, "reads", w, "wrote" if not s[1] else "atomically updated", 1)
                    )
                r = s[2]
                if r is None:
                    s[2] = c
                elif r[4] != c[4] or r[0] != c[0]:
                    s[3] = r
                    s[2] = c
                elif r is not c:
                    s[2] = c
        run.steps += 1
        if run.steps > run.max_steps:
            run.step()
        if run.tracing:
            f = sys._getframe(1)
            run.rec.append((c, st.rd, flat, f.f_code, f.f_lasti))
        if st.widen is not None:
            return st.widen(st.data[flat])
        return st.data[flat]

    def __setitem__(self, idx, value):
        if type(idx) is int and self.ndim == 1:
            if idx < 0 or idx >= self.shape[0]:
                raise self._oob((idx,), None, 1)
            flat = self.offset + idx * self.strides[0]
        elif (
            type(idx) is tuple
            and self.ndim == 2
            and len(idx) == 2
            and type(idx[0]) is int
            and type(idx[1]) is int
            and 0 <= idx[0] < self.shape[0]
            and 0 <= idx[1] < self.shape[1]
        ):
            flat = self.offset + idx[0] * self.strides[0] + idx[1] * self.strides[1]
        else:
            flat = self._locate(idx, 1)
            if type(flat) is SimArray:
                if flat.size != 1 or hasattr(value, "__len__"):
                    raise self.st.run.error(
                        Unsupported,
                        f"assigning to a slice of `{self.st.name}` ({len(flat.shape)}-D view of "
                        f"shape {flat.shape}): the simulator only takes a number stored into a one-element "
                        "view (as `out[row] = x` for an array of shape (rows, 1)); write elements one by one",
                        1,
                        array=self.st.name,
                        index=idx,
                    )
                # a number into a one-element view, as Numba allows: the element itself
                idx = (idx if type(idx) is tuple else (idx,)) + (0,) * len(flat.shape)
                flat = flat.offset
        st = self.st
        run = st.run
        c = run.cur.actor
        if st.readonly:
            raise self._readonly(idx, 1)
        if st.checked:
            s = st.acc.get(flat)
            if s is None:
                st.acc[flat] = [c, False, None, None]
            else:
                w = s[0]
                # semantics.unordered(w, c, st.cross_block) inlined, as in __getitem__
                if (
                    w is not None
                    and w is not c
                    and (
                        (w[0] != c[0] and st.cross_block)
                        or (w[0] == c[0] and w[1] == c[1] and w[4] != c[4] and (w[2] != c[2] or w[3] == c[3]))
                    )
                ):
                    run.fail(
                        run.race(st, flat, idx, "writes", w, "wrote" if not s[1] else "atomically updated", 1)
                    )
                r = s[2]
                if r is not None:
                    if r is not c and unordered(r, c, st.cross_block):
                        run.fail(run.race(st, flat, idx, "writes", r, "read", 1))
                    r = s[3]
                    if r is not None and unordered(r, c, st.cross_block):
                        run.fail(run.race(st, flat, idx, "writes", r, "read", 1))
                s[0] = c
                s[1] = False
        if st.init is not None:
            st.init[flat] = 1
        if st.hb:
            run.hb.wrote(run.cur.b, st.aid, flat)
        run.steps += 1
        if run.steps > run.max_steps:
            run.step()
        if run.tracing:
            f = sys._getframe(1)
            run.rec.append((c, st.wr, flat, f.f_code, f.f_lasti))
        if st.unsigned and isinstance(value, (float, np.floating)):
            value = gpu_int(value, st.data.dtype)
        if st.half and half_overflow(value):
            raise run.error(
                KernelException, half_overflow_text(value, st.name, _fmt(idx)), 1, array=st.name, index=idx
            )
        try:
            st.data[flat] = value
        except (TypeError, ValueError, OverflowError) as e:
            if st.data.dtype.kind in "iu" and isinstance(value, (int, float, np.number)):
                # out of the type's range or NaN: NumPy raises, a GPU wraps or saturates
                st.data[flat] = gpu_int(value, st.data.dtype)
                return
            raise run.error(
                Unsupported,
                f"cannot store {value!r} in `{st.name}` ({st.data.dtype}): {e}",
                1,
                array=st.name,
                index=idx,
            ) from None

    def _readonly(self, idx, depth):
        st = self.st
        what = "a constant array" if st.space == "const" else "an input"
        return st.run.error(
            ReadOnlyWrite,
            f"wrote `{st.name}`[{_fmt(idx)}], which is {what}: the kernel "
            "must not change it (the checker compares against the original values)",
            depth + 1,
            array=st.name,
            index=idx,
        )

    def _write(self, flat, idx, kind, depth):
        """The checks and record of a write (atomics; plain stores inline this in __setitem__)."""
        st = self.st
        run = st.run
        c = run.cur.actor
        if st.readonly:
            raise self._readonly(idx, depth + 1)
        if st.checked:
            atomic = kind == ATOMIC
            s = st.acc.get(flat)
            if s is None:
                s = st.acc[flat] = [None, False, None, None]
            w = s[0]
            if w is not None and not (atomic and s[1]) and unordered(w, c, st.cross_block):
                verb = "atomically updates" if atomic else "writes"
                run.fail(
                    run.race(st, flat, idx, verb, w, "wrote" if not s[1] else "atomically updated", depth + 1)
                )
            for other in (s[2], s[3]):
                if other is not None and unordered(other, c, st.cross_block):
                    run.fail(
                        run.race(
                            st,
                            flat,
                            idx,
                            "writes" if not atomic else "atomically updates",
                            other,
                            "read",
                            depth + 1,
                        )
                    )
            if atomic and w is not None and not s[1] and w == c:
                atomic = False  # this thread's own plain write stays visible to later racers
            s[0] = c
            s[1] = atomic
        if st.init is not None:
            st.init[flat] = 1
        run.steps += 1
        if run.steps > run.max_steps:
            run.step()
        if run.tracing:
            f = sys._getframe(depth + 1)
            run.rec.append((c, 4 * st.aid + kind, flat, f.f_code, f.f_lasti))

    def _uninit(self, idx, depth):
        st = self.st
        if st.space == "shared":
            who = "no thread of this block had written it yet"
            gpu = "a real GPU returns whatever an earlier kernel left in shared memory"
        elif st.space == "local":
            who = "this thread had not written it yet"
            gpu = "a real GPU returns whatever was in the register or stack slot"
        elif st.run.arrays[st.aid].role == "scratch":
            why = scratch_text(st.name, _fmt(idx))
            return st.run.error(UninitializedRead, why, depth + 1, array=st.name, index=idx)
        else:
            who = "no thread had written it yet (outputs start as garbage: the checker fills them with NaN)"
            gpu = "a real GPU returns whatever was in that memory"
        return st.run.error(
            UninitializedRead,
            f"read `{st.name}`[{_fmt(idx)}] but {who}; {gpu}. Is a barrier or an initialising write missing?",
            depth + 1,
            array=st.name,
            index=idx,
        )

    # --- atomics (called from helpers.sim.api)
    def atomic(self, idx, op, depth):
        flat = self._locate(idx, depth + 1)
        if type(flat) is SimArray:
            raise Unsupported(f"atomic on a slice of `{self.st.name}`: give a full index")
        st = self.st
        if st.init is not None and not st.init[flat]:
            st.run.fail(self._uninit(idx if type(idx) is tuple else (idx,), depth + 1))
        self._write(flat, idx, ATOMIC, depth)
        if st.run.hb is not None:
            st.run.hb.atomic(st.run.cur.b, st.aid, flat)
        old = st.data[flat]
        st.data[flat] = op(old)
        return old if st.widen is None else st.widen(old)


_OPS = {
    "add": ("adding", "+"),
    "sub": ("subtracting", "-"),
    "mul": ("multiplying", "*"),
    "truediv": ("dividing", "/"),
    "floordiv": ("dividing", "//"),
    "mod": ("taking the remainder of", "%"),
    "pow": ("raising", "**"),
    "matmul": ("multiplying", "@"),
    "and": ("combining", "&"),
    "or": ("combining", "|"),
    "xor": ("combining", "^"),
    "lshift": ("shifting", "<<"),
    "rshift": ("shifting", ">>"),
    "lt": ("comparing", "<"),
    "le": ("comparing", "<="),
    "gt": ("comparing", ">"),
    "ge": ("comparing", ">="),
}


def _binop(op, reflected):
    def f(self, other):
        self._whole(op, other, reflected)

    f.__name__ = f"__{'r' if reflected else ''}{op}__"
    return f


for _op in _OPS:
    setattr(SimArray, f"__{_op}__", _binop(_op, False))
    if _op not in ("lt", "le", "gt", "ge"):
        setattr(SimArray, f"__r{_op}__", _binop(_op, True))
        setattr(SimArray, f"__i{_op}__", _binop(_op, False))
SimArray.__neg__ = SimArray.__pos__ = SimArray.__abs__ = SimArray.__invert__ = lambda self: self._whole(
    "sub", 0, True
)


def _fmt(idx):
    return ", ".join(str(i) for i in idx) if type(idx) is tuple else str(idx)


def new_array(st):
    """A SimArray covering a whole Storage, with the storage's logical shape."""
    shape = st.shape
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return SimArray(st, 0, tuple(shape), tuple(reversed(strides)))
