# Over 400 lines: V, Mixed and the operators between them are one type system, each part calling the others.
"""Lane values: one value per thread of a block, with the greenlet engine's Python typing.

The greenlet engine runs the kernel's Python per thread: indices are Python ints, array elements
NumPy scalars, and arithmetic between them follows NEP 50 (a Python number is "weak": it takes the
NumPy operand's dtype). A `V` holds one value per lane (a full-width array) and whether those values
are weak (Python int/float/bool, held as int64/float64/bool) or strong (a NumPy dtype), so that
vector arithmetic gives the dtypes and values the scalar code gives. Uniform values stay plain
Python or NumPy scalars; NumPy and Python then do the arithmetic themselves.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import errors as E

I64, F64, BOOL = np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.bool_)
_WEAK_OF = {bool: BOOL, int: I64, float: F64}


class LaneError(Exception):
    """A Python-level error a thread would raise (ZeroDivisionError...): the greenlet engine reports
    it as KernelException at the thread's line, so lockstep hands the launch over."""


class PerThread:
    """Python's operators on a per-thread value: each is one lane-wise `binop`/`unop`. A per-thread
    value has no single truth value, integer or iteration: code that needs one is unsupported."""

    __slots__ = ()
    __array_ufunc__ = None  # NumPy scalars defer to our reflected operators
    __hash__ = None

    def __bool__(self):
        raise E.Unsupported("a per-thread value used where Python needs one truth value")

    def __index__(self):
        raise E.Unsupported("a per-thread value used where Python needs one integer")

    def __iter__(self):
        raise E.Unsupported("iterating over a per-thread value")

    def __neg__(self):
        return unop("neg", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return unop("abs", self)

    def __invert__(self):
        return unop("invert", self)


def _operator(name: str, reflected: bool = False):
    if reflected:
        return lambda self, o: binop(name, o, self)
    return lambda self, o: binop(name, self, o)


for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift"):
    setattr(PerThread, f"__{_n}__", _operator(_n))
    setattr(PerThread, f"__r{_n}__", _operator(_n, reflected=True))
for _n in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(PerThread, f"__{_n}__", _operator(_n))
del _n


class V(PerThread):
    """Per-lane values: `a` full width (inactive lanes hold garbage), `w` weak, `u` lanes never
    assigned (None: all assigned)."""

    __slots__ = ("a", "w", "u", "c")

    def __init__(self, a: np.ndarray, w: bool, u: np.ndarray | None = None) -> None:
        self.a, self.w, self.u = a, w, u
        self.c = None  # (mask, largest active value as unsigned): bounds checks of a reused index

    def __repr__(self):
        return f"V({self.a!r}, weak={self.w})"


_UFUNC = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.true_divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "pow": np.power,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
_PYOP = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}
_CMP = frozenset(("lt", "le", "gt", "ge", "eq", "ne"))
_BITS = frozenset(("and", "or", "xor", "lshift", "rshift"))

# the lanes that count for Python-level errors (set by the running context)
ACTIVE: list = [None]


def active() -> np.ndarray | None:
    return ACTIVE[0]


def split(x: Any) -> tuple:
    """(array or scalar, weak, dtype) of a lane value or a uniform scalar."""
    t = type(x)
    if t is V:
        if x.u is not None:
            m = ACTIVE[0]
            if m is None or (x.u & m).any():
                raise LaneError("a variable read before any assignment in this thread (UnboundLocalError)")
        return x.a, x.w, x.a.dtype
    dt = _WEAK_OF.get(t)
    if dt is not None:
        return x, True, dt
    if isinstance(x, np.generic):
        if x.dtype.kind not in "biuf":
            raise E.Unsupported(f"arithmetic on a {x.dtype} value")
        return x, False, x.dtype
    raise E.Unsupported(f"arithmetic on a {type(x).__name__} per thread")


def _act(a: Any) -> Any:
    """`a`'s active lanes (a scalar as is)."""
    m = ACTIVE[0]
    if isinstance(a, np.ndarray) and m is not None:
        return a[m]
    return a


def binop(op: str, x: Any, y: Any) -> Any:
    if type(x) is Mixed or type(y) is Mixed:
        return mixed_op(lambda a, b: binop(op, a, b), x, y)
    tx, ty = type(x), type(y)
    if op == "pow" and not ((tx is not V or x.w) and (ty is not V or y.w)):
        return _scalar_pow(x, y)
    if tx is V and ty is V and not (x.w or y.w) and x.u is None and y.u is None:
        return V(_UFUNC[op](x.a, y.a), False)  # two NumPy dtypes: NumPy's promotion is the scalars'
    if tx is not V and ty is not V:  # two uniform values (a part of a Mixed): Python itself
        return _PYOP[op](x, y)
    xa, xw, xd = split(x)
    ya, yw, yd = split(y)
    f = _UFUNC[op]
    if xw and yw:  # Python semantics
        if op in _BITS:
            if xd.kind == "f" or yd.kind == "f":
                raise LaneError(f"unsupported operand types for {op}: float")
            if op in ("lshift", "rshift") and (np.asarray(_act(ya)) < 0).any():
                raise LaneError("negative shift count")
            if not (xd.kind == "b" and yd.kind == "b"):
                xa, ya = _as(xa, I64), _as(ya, I64)
        elif op not in _CMP:
            fl = xd.kind == "f" or yd.kind == "f"
            if op in ("truediv", "floordiv", "mod") and (np.asarray(_act(ya)) == 0).any():
                raise LaneError("division by zero")
            if op == "truediv":
                fl = True
            if op == "pow":
                if not fl and (np.asarray(_act(ya)) < 0).any():
                    raise LaneError("a negative integer power (a float in Python, per thread)")
                if fl:
                    b, e = np.asarray(_act(xa), F64), np.asarray(_act(ya), F64)
                    if ((b < 0) & (e != np.floor(e))).any() or ((b == 0) & (e < 0)).any():
                        raise LaneError("a power Python cannot take in floats")
            dt = F64 if fl else I64
            xa, ya = _as(xa, dt), _as(ya, dt)
            if not fl and op in ("add", "sub", "mul", "pow"):
                _no_overflow(op, xa, ya)
        else:
            if xd.kind == "f" or yd.kind == "f":
                xa, ya = _as(xa, F64), _as(ya, F64)
        r = f(xa, ya)
        if op == "pow" and r.dtype.kind == "f":
            if (np.isinf(_act(r)) & np.isfinite(_act(np.broadcast_to(xa, r.shape)))).any():
                raise LaneError("float power overflow")
        return V(r, True)
    if xw or yw:  # NEP 50: the Python number takes the NumPy dtype
        wa, wd, sd = (xa, xd, yd) if xw else (ya, yd, xd)
        if sd.kind in "iu":
            if wd.kind == "f":
                target = F64
                if xw:
                    ya = _as(ya, F64)
                else:
                    xa = _as(xa, F64)
            else:
                target = sd
                _fits(wa, sd)
        elif sd.kind == "f":
            target = sd
        elif sd.kind == "b":
            target = {"b": BOOL, "i": I64, "f": F64}[wd.kind]
            if xw:
                ya = _as(ya, target)
            else:
                xa = _as(xa, target)
        else:
            raise E.Unsupported(f"arithmetic on {sd}")
        if xw:
            xa = _as(xa, target)
        else:
            ya = _as(ya, target)
    r = f(xa, ya)
    if type(r) is not np.ndarray:  # two scalars cannot reach here, but keep NumPy's scalar
        return r
    return V(r, False)


def _scalar_pow(x: Any, y: Any) -> Any:
    """`**` with a NumPy-typed operand, lane by lane on NumPy scalars: NumPy's array power differs
    from its scalar power (powf, and x * x for a square) in the last bit, and the greenlet engine
    takes the scalar one."""
    m = ACTIVE[0]
    n = len(m)
    xs = lanes_of(x, n) if type(x) is V else None
    ys = lanes_of(y, n) if type(y) is V else None
    idx = np.flatnonzero(m).tolist()
    vals = [(xs[i] if xs is not None else x) ** (ys[i] if ys is not None else y) for i in idx]
    return from_lanes(vals, m, n, "`**`")


_SMALL = 1 << 31


def _no_overflow(op: str, x: Any, y: Any) -> None:
    """Python ints do not wrap: operands this small cannot leave int64; larger ones are checked
    exactly (in Python) on the active lanes, and a result past 64 bits hands the launch over."""
    ax, ay = _act(x), _act(y)
    mx = int(np.max(np.abs(ax))) if np.size(ax) else 0
    my = int(np.max(np.abs(ay))) if np.size(ay) else 0
    if op != "pow" and mx < _SMALL and my < _SMALL:
        return
    if op == "pow" and my > 64 and mx > 1:
        raise LaneError("a Python int power past 64 bits (the greenlet engine keeps it exact)")
    f = _PYOP[op]
    xs = np.broadcast_to(ax, np.broadcast(ax, ay).shape).tolist()
    ys = np.broadcast_to(ay, np.broadcast(ax, ay).shape).tolist()
    if any(not -(1 << 63) <= f(a, b) < (1 << 63) for a, b in zip(xs, ys)):
        raise LaneError("a Python int past 64 bits (the greenlet engine keeps it exact)")


def _fits(w: Any, dt: np.dtype) -> None:
    info = np.iinfo(dt)
    a = _act(w)
    if np.size(a) and (np.min(a) < info.min or np.max(a) > info.max):
        raise LaneError(f"Python int out of bounds for {dt}")


def _as(a: Any, dt: np.dtype) -> Any:
    if isinstance(a, np.ndarray):
        return a if a.dtype == dt else a.astype(dt)
    return dt.type(a)


def unop(op: str, x: Any) -> Any:
    if type(x) is Mixed:
        return mixed_op(lambda a, _: unop(op, a), x, 0)
    if type(x) is not V:
        return {"neg": operator.neg, "abs": abs, "invert": operator.invert}[op](x)
    a, w, d = split(x)
    if op == "neg":
        if w and d.kind == "b":
            a = _as(a, I64)
        r = np.negative(a)
    elif op == "abs":
        if w and d.kind == "b":
            a = _as(a, I64)
        r = np.abs(a)
    else:
        if d.kind == "f":
            raise LaneError("bad operand type for unary ~: float")
        if w and d.kind == "b":
            a = _as(a, I64)
        r = np.invert(a)
    return V(r, w) if isinstance(r, np.ndarray) else r


def truth(x: Any) -> Any:
    """Per-lane truth as a bool array, or one Python bool for a uniform value."""
    if type(x) is V:
        a, _, d = split(x)
        return a if d.kind == "b" else a != 0
    if type(x) is Mixed:
        act = ACTIVE[0]
        out = np.zeros(len(x.parts[0][0]), bool)
        for mk, v in x.parts:
            here = mk & act
            if not here.any():
                continue
            ACTIVE[0] = here
            try:
                t = truth(v)
            finally:
                ACTIVE[0] = act
            out |= mk & t
        return out
    try:
        return bool(x)
    except Exception as e:  # noqa: BLE001 - an array or object used as a condition
        raise E.Unsupported(f"{type(x).__name__} used as a condition") from e


def tkey(x: Any) -> tuple:
    """The Python type a value has in the greenlet engine (merging needs equal ones)."""
    t = type(x)
    if t is V:
        return (x.w, x.a.dtype)
    if t is Mixed:
        return ("mixed", id(x))
    dt = _WEAK_OF.get(t)
    if dt is not None:
        return (True, dt)
    if isinstance(x, np.generic):
        return (False, x.dtype)
    return (None, id(x))


def full(x: Any, n: int) -> np.ndarray:
    """`x` as a full-width array (x uniform or a V)."""
    if type(x) is V:
        return x.a
    return np.full(n, x, dtype=tkey(x)[1])


def where(c: np.ndarray, x: Any, y: Any, n: int, what: str = "a value") -> Any:
    """Per lane: x where c, else y. Lanes whose values differ in Python type give a `Mixed`."""
    kx, ky = tkey(x), tkey(y)
    if kx != ky or kx[0] == "mixed":
        if kx[0] is None or ky[0] is None:
            if x is y:
                return x
            raise E.Unsupported(f"{what}: a per-thread choice between objects")
        parts = [(c & mk, v) for mk, v in parts_of(x, n)] + [(~c & mk, v) for mk, v in parts_of(y, n)]
        return combine(parts, n)
    if kx[0] is None:
        if x is y:
            return x
        raise E.Unsupported(f"{what}: a per-thread choice between objects")
    if type(x) is not V and type(y) is not V and (x == y or (x != x and y != y)):
        return x
    ux = x.u if type(x) is V else None
    uy = y.u if type(y) is V else None
    u = None
    if ux is not None or uy is not None:
        u = np.where(c, ux if ux is not None else False, uy if uy is not None else False)
        if not u.any():
            u = None
    return V(np.where(c, full(x, n), full(y, n)), kx[0], u)


class Mixed(PerThread):
    """Lanes whose values differ in Python type, as in the greenlet engine (`a[i] if i < n else 0`:
    a NumPy float32 in some threads, a Python int in others): disjoint (mask, value) parts, each of
    one type. Arithmetic runs part by part, so every lane computes with its own types."""

    __slots__ = ("parts",)

    def __init__(self, parts: list) -> None:
        self.parts = parts


def parts_of(x: Any, n: int) -> list:
    if type(x) is Mixed:
        return x.parts
    return [(np.ones(n, bool), x)]


def combine(parts: list, n: int) -> Any:
    """One value from disjoint (mask, value) parts: a V when they share a type, else a Mixed."""
    groups: dict = {}
    for mk, v in parts:
        if mk.any():
            groups.setdefault(tkey(v), []).append((mk, v))
    if not groups:
        return parts[0][1]
    out = []
    for k, ps in groups.items():
        mk, v = ps[0]
        if len(ps) == 1:
            out.append((mk, v))
            continue
        arr = full(v, n).copy()
        allm = mk.copy()
        for mk2, v2 in ps[1:]:
            arr = np.where(mk2, full(v2, n), arr)
            allm |= mk2
        out.append((allm, V(arr, k[0])))
    if len(out) == 1:
        return out[0][1]
    return Mixed(out)


def mixed_op(f, x: Any, y: Any) -> Any:
    act = ACTIVE[0]
    n = len(act)
    res = []
    for mx, vx in parts_of(x, n):
        for my, vy in parts_of(y, n):
            mm = mx & my & act
            if not mm.any():
                continue
            ACTIVE[0] = mm
            try:
                r = f(vx, vy)
            finally:
                ACTIVE[0] = act
            res.append((mm, r))
    if not res:
        return f(parts_of(x, n)[0][1], parts_of(y, n)[0][1])
    return combine(res, n)


def as_int(x: Mixed) -> V:
    """A mixed integer value (an index): int64 lanes, as every integer type indexes the same."""
    out = None
    for mk, v in x.parts:
        a, _, d = split(v) if type(v) is V else (v, True, np.asarray(v).dtype)
        if d.kind not in "iub":
            raise E.Unsupported("a float index")
        out = np.where(mk, a, 0 if out is None else out)
    return V(out.astype(np.int64), True)


def _tname(k: tuple) -> str:
    if k[0] is None:
        return "object"
    if k[0]:
        return {"b": "bool", "i": "int", "f": "float"}[k[1].kind]
    return f"numpy.{k[1].name}"


def lanes_of(x: Any, n: int) -> list:
    """Each lane's value as the greenlet engine would hold it (Python numbers or NumPy scalars)."""
    if type(x) is Mixed:
        out = [None] * n
        for mk, v in x.parts:
            vals = lanes_of(v, n)
            for i in np.flatnonzero(mk).tolist():
                out[i] = vals[i]
        return out
    if type(x) is V:
        if x.w:
            return x.a.tolist()
        return list(x.a)
    return [x] * n


def from_lanes(vals: list, m: np.ndarray, n: int, what: str) -> Any:
    """A lane value from per-lane Python results (for active lanes `m`)."""
    if not vals:
        return V(np.zeros(n), True)
    kinds = {tkey(v) for v in vals}
    if len(kinds) != 1:
        raise E.Unsupported(f"{what} returns values of different types in different threads")
    (k,) = kinds
    if k[0] is None:
        raise E.Unsupported(f"{what} returns an object per thread")
    out = np.zeros(n, k[1])
    out[m] = vals
    return V(out, k[0])
