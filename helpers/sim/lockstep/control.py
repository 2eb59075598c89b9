"""Masks: which lanes run each statement. `if`, loops, `break`/`continue`, `return` and device
function calls keep a stack of frames; the transformed kernel (transform.py) calls these methods.

Inactive lanes keep computing garbage (cheap, never observed): only loads, stores, checks and
assignments look at the mask.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import errors as E
from .stop import Stop
from .values import ACTIVE, Mixed, V, truth, where

ENDLESS = 65_536  # trips of a loop that touches no memory before it is a Runaway (it can never end)
LOOP_CAP = 200_000  # trips of one loop in lockstep before handing over (a spin-wait, or a runaway)


class _Fn:
    __slots__ = ("entry", "ret", "val", "loops")

    def __init__(self, entry: np.ndarray) -> None:
        self.entry, self.ret, self.val, self.loops = entry, None, _NOVAL, []


class _Loop:
    __slots__ = ("entry", "brk", "cont", "trips", "wmark", "smark", "idle")

    def __init__(self, entry: np.ndarray) -> None:
        self.entry, self.brk, self.cont, self.trips, self.wmark = entry, None, None, 0, -1
        self.smark, self.idle = -1, 0  # steps at the last look; looks since the loop last took one


_NOVAL = object()
UNDEF = type("Unassigned", (), {"__repr__": lambda s: "<unassigned>"})()


class Control:
    def __init__(self, n: int, deadline: float) -> None:
        self.n = n
        self.all = np.ones(n, bool)
        self.deadline = deadline
        self.fns: list[_Fn] = []
        self.writes = 0  # memory writes so far (a while loop that makes none for long is a spin-wait)
        # the run's step count and its Runaway diagnostic (set by Run): a loop that takes no step at
        # all (no access, barrier or warp operation) for ENDLESS trips can never end
        self.steps_now: Any = None
        self.endless: Any = None
        self.set_mask(self.all)

    # --- the mask
    def set_mask(self, m: np.ndarray) -> None:
        self.m = m
        self.nact = c = int(np.count_nonzero(m)) if m is not self.all else self.n
        self.live = c > 0
        self.isfull = c == self.n
        ACTIVE[0] = m
        self._act = None
        fn = self.fns[-1] if self.fns else None
        # assignments may overwrite every lane when every lane of the function that is still in it runs
        if fn is None:
            self.assign_all = True
        else:
            alive = fn.entry if fn.ret is None else fn.entry & ~fn.ret
            self.assign_all = c == int(np.count_nonzero(alive))

    @property
    def act(self) -> np.ndarray:
        if self._act is None:
            self._act = np.flatnonzero(self.m)
        return self._act

    def _dead(self) -> np.ndarray | None:
        fn = self.fns[-1]
        d = fn.ret
        if fn.loops:
            lp = fn.loops[-1]
            for x in (lp.brk, lp.cont):
                if x is not None:
                    d = x if d is None else d | x
        return d

    # --- assignment under a mask
    def set(self, old: Any, new: Any, what: str = "a variable") -> Any:
        if self.assign_all:
            return new
        if not self.live:
            return old
        if old is UNDEF:
            if type(new) is V:
                u = ~self.m if new.u is None else new.u | ~self.m
                return V(new.a, new.w, u)
            kx = type(new)
            if kx in (int, float, bool) or isinstance(new, np.generic):
                a = np.full(self.n, new, dtype=np.asarray(new).dtype if isinstance(new, np.generic) else None)
                if kx is int:
                    a = a.astype(np.int64)
                elif kx is float:
                    a = a.astype(np.float64)
                return V(a, not isinstance(new, np.generic), ~self.m)
            if type(new) is Mixed:
                hole = V(np.zeros(self.n), True, np.ones(self.n, bool))  # unassigned: reading it fails
                return Mixed([(mk & self.m, v) for mk, v in new.parts] + [(~self.m, hole)])
            raise Stop.unsupported(f"{what} first assigned an object in only some threads")
        return where(self.m, new, old, self.n, what)

    # --- if / else
    def if_(self, c: Any) -> tuple:
        m0 = self.m
        t = truth(c)
        if type(t) is bool or type(t) is np.bool_:
            if t:
                return (m0, None)
            self.set_mask(np.zeros(self.n, bool) if self.live else m0)
            return (m0, False)
        self.set_mask(m0 & t)
        return (m0, t)

    def else_(self, tok: tuple) -> bool:
        m0, t = tok
        d = self._dead()
        if t is None:  # uniform true: the else branch runs no lane
            self.set_mask(np.zeros(self.n, bool))
            return False
        if t is False:
            self.set_mask(m0 if d is None else m0 & ~d)
            return self.live
        m = m0 & ~t
        self.set_mask(m if d is None else m & ~d)
        return self.live

    def endif(self, tok: tuple) -> None:
        m0 = tok[0]
        d = self._dead()
        self.set_mask(m0 if d is None else m0 & ~d)

    # --- loops
    def loop(self) -> _Loop:
        lp = _Loop(self.m)
        self.fns[-1].loops.append(lp)
        return lp

    def cond(self, lp: _Loop, c: Any) -> bool:
        lp.trips += 1
        if lp.trips & 1023 == 0:
            self._limits(lp)
            if self.steps_now is not None:
                s = self.steps_now()
                lp.idle = lp.idle + 1 if s == lp.smark else 0
                lp.smark = s
                if lp.idle:  # it reads nothing, so no other thread can end it: not a spin-wait
                    if lp.idle * 1024 >= ENDLESS:
                        raise self.endless(lp.trips)
                    return self._go_on(c)
            if lp.wmark == self.writes:
                raise Stop.runaway(
                    "a while loop ran 1,024 trips in lockstep without writing memory (a spin-wait "
                    "on something no thread changes?)"
                )
            lp.wmark = self.writes
        return self._go_on(c)

    def _go_on(self, c: Any) -> bool:
        """Does the loop take another trip, with condition value `c` (the mask narrowed to its lanes)?"""
        if not self.live:
            return False
        t = truth(c)
        if type(t) is bool or type(t) is np.bool_:
            if t:
                return True
            return False
        m = self.m & t
        if not m.any():
            return False
        if m.sum() != self.nact:
            self.set_mask(m)
        return True

    def _limits(self, lp: _Loop) -> None:
        if lp.trips > LOOP_CAP:
            raise Stop.runaway(f"a loop ran {LOOP_CAP:,} trips in lockstep (a spin-wait or an endless loop?)")
        if time.monotonic() > self.deadline:
            raise Stop.runaway("the time limit ran out in lockstep")

    def next(self, lp: _Loop) -> None:
        """End of one trip: lanes that continued come back."""
        if lp.cont is not None:
            m = self.m | lp.cont
            lp.cont = None
            self.set_mask(m)

    def endloop(self, lp: _Loop) -> None:
        fn = self.fns[-1]
        fn.loops.pop()
        m = lp.entry if fn.ret is None else lp.entry & ~fn.ret
        d = self._dead()
        self.set_mask(m if d is None else m & ~d)

    def brk(self, lp: _Loop) -> None:
        lp.brk = self.m if lp.brk is None else lp.brk | self.m
        self.set_mask(np.zeros(self.n, bool))

    def cont(self, lp: _Loop) -> None:
        lp.cont = self.m if lp.cont is None else lp.cont | self.m
        self.set_mask(np.zeros(self.n, bool))

    def each(self, lp: _Loop, seq: Any):
        """The trips of `for x in (a, b, c)`: a tuple, the same in every lane."""
        if type(seq) is not tuple:
            raise Stop.unsupported(f"a for loop over a {type(seq).__name__}")
        for v in seq:
            if not self.live:
                return
            lp.trips += 1
            yield v

    def range(self, lp: _Loop, *args: Any):
        """The trips of `for x in range(*args)`: Python ints when the bounds are uniform, else per-lane
        values with the mask narrowed to the lanes still in range."""
        if not any(type(a) is V for a in args):
            r = range(*args)
            for v in r:
                if not self.live:
                    return
                lp.trips += 1
                if lp.trips & 1023 == 0:
                    self._limits(lp)
                yield v
            return
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            start, stop, step = args[0], args[1], 1
        else:
            start, stop, step = args
        m0 = self.m
        vals = [_int_lanes(a, self.n, m0) for a in (start, stop, step)]
        cur, stop_a, step_a = vals
        if ((step_a == 0) & m0).any():
            raise Stop.diagnostic(E.KernelException, "range() arg 3 must not be zero")
        cur = cur.copy()
        first = True
        while True:
            if not first:
                if not self.live:
                    return
                cur += step_a
            first = False
            lp.trips += 1
            if lp.trips & 1023 == 0:
                self._limits(lp)
            inr = np.where(step_a > 0, cur < stop_a, cur > stop_a)
            m = self.m & inr
            if not m.any():
                return
            self.set_mask(m)
            yield V(cur.copy(), True)

    # --- functions
    def enter(self) -> _Fn:
        fn = _Fn(self.m)
        self.fns.append(fn)
        self.set_mask(self.m)
        return fn

    def ret(self, fn: _Fn, value: Any = None) -> None:
        if self.live:
            if fn.val is _NOVAL:
                if self.nact == int(np.count_nonzero(fn.entry if fn.ret is None else fn.entry & ~fn.ret)):
                    fn.val = value
                else:
                    fn.val = value  # lanes that return later fill theirs in (where() below)
            else:
                fn.val = where(self.m, value, fn.val, self.n, "a function's return value")
            fn.ret = self.m if fn.ret is None else fn.ret | self.m
        self.set_mask(np.zeros(self.n, bool))

    def done(self, fn: _Fn) -> bool:
        """Every lane that entered the function has returned: leave it for real."""
        return fn.ret is not None and not (fn.entry & ~fn.ret).any()

    def leave(self, fn: _Fn) -> Any:
        if self.live and fn.val is not _NOVAL:  # lanes falling off the end return None
            if fn.val is not None:
                raise Stop.unsupported("a function returns a value in some threads and None in others")
        self.fns.pop()
        self.set_mask(fn.entry)
        return None if fn.val is _NOVAL else fn.val

    # --- short-circuit operators and the ternary
    def and_(self, a: Any, rest) -> Any:
        return self._short(a, rest, True)

    def or_(self, a: Any, rest) -> Any:
        return self._short(a, rest, False)

    def _short(self, a: Any, rest, is_and: bool) -> Any:
        t = truth(a)
        if type(t) is bool or type(t) is np.bool_:
            return rest() if bool(t) == is_and else a
        m0 = self.m
        sub = m0 & t if is_and else m0 & ~t
        if not sub.any():
            return a
        self.set_mask(sub)
        try:
            b = rest()
        finally:
            self.set_mask(m0)
        if (m0 & ~sub).any():
            return where(sub, b, a, self.n, "`and`/`or`")
        return b

    def ifexp(self, c: Any, yes, no) -> Any:
        t = truth(c)
        if type(t) is bool or type(t) is np.bool_:
            return yes() if t else no()
        m0 = self.m
        my, mn = m0 & t, m0 & ~t
        if not mn.any():
            return yes()
        if not my.any():
            return no()
        self.set_mask(my)
        try:
            a = yes()
            self.set_mask(mn)
            b = no()
        finally:
            self.set_mask(m0)
        return where(t, a, b, self.n, "a conditional expression")

    def not_(self, x: Any) -> Any:
        t = truth(x)
        if type(t) is np.ndarray:
            return V(~t, True)
        return not t


def _int_lanes(x: Any, n: int, m: np.ndarray) -> np.ndarray:
    if type(x) is V:
        if x.a.dtype.kind not in "iub":
            raise Stop.diagnostic(E.KernelException, "range() of a float")
        return x.a.astype(np.int64)
    try:
        import operator

        return np.full(n, operator.index(x), np.int64)
    except TypeError:
        raise Stop.diagnostic(E.KernelException, "range() of a non-integer") from None
