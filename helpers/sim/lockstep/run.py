"""One launch in lockstep: blocks one after another in the launch's block order (as the greenlet
engine runs them), the threads of a block as lanes of NumPy vectors.

Everything the greenlet engine would diagnose is detected (or the launch is refused as
unsupported); the dispatcher (dispatch.py) then re-runs it on the greenlet engine, whose report is
the verdict. Called directly (`engine="lockstep"`), the diagnostics are raised here.
"""

from __future__ import annotations

import math
import re
import time
import types
from typing import Any, Sequence

import numpy as np

from .. import binding
from .. import errors as E
from ..kernel import _global_names, _is_dispatcher, py_func, uses_grid_sync
from ..messages import diagnostic, kernel_frame, runaway_text, scratch_text, source_at, user_frame
from ..options import Options
from ..poison import poison
from ..semantics import ALIASES, ATOMICS, COMMUTING, MATH_FUNCTIONS, SPIN_CHECK, Dim3, greenlet_steps
from ..trace import ACCESS_DTYPE, ATOMIC, READ, ArrayInfo, Site, Trace
from . import races
from .api import BUILTINS, LMATH, LMATH_FUNCTIONS, Cast, LCuda, NumbaProxy, NumpyProxy, cast
from .control import UNDEF, Control, Stop
from .memory import COMMUTES, DEFERRED, USED, LArray, Storage, words
from .transform import compile_fn, site_info
from .values import LaneError, Mixed, V, split, truth
from .warps import Warps


class Run:
    def __init__(self, kernel: Any, griddim: Any, blockdim: Any, args: Sequence[Any], opts: Options) -> None:
        import numba
        import numba.cuda as real_cuda

        self.griddim, self.blockdim = Dim3(griddim), Dim3(blockdim)
        self.opts = opts = opts.resolved(int(np.prod(self.griddim)) * int(np.prod(self.blockdim)))
        binding.check_dims(self.griddim, self.blockdim, opts.shared_bytes)
        self.fn0 = py_func(kernel)
        code = self.fn0.__code__
        self.params = code.co_varnames[: code.co_argcount]
        binding.check_arity(self.fn0, self.params, args)
        self.n = int(np.prod(self.blockdim))
        limit = opts.timeout or float("inf")
        deadline = time.monotonic() + limit
        if opts.deadline is not None:
            deadline = min(deadline, opts.deadline)
        self.ctl = Control(self.n, deadline)
        self.cuda = LCuda(self)
        # races are always looked for: with races=False the reference engine runs past them in its
        # thread order, which lockstep does not reproduce, so a race then hands the launch over
        self.tracing, self.races = opts.trace, True
        # the greenlet engine adds one step per look for spin-waits (every SPIN_CHECK steps): stop a
        # little early so that its limit is never the one that would have fired
        self.steps, self.max_steps = 0, opts.max_steps - opts.max_steps // SPIN_CHECK - 2
        self.arrays: list[ArrayInfo] = []
        self.before: dict = {}
        self.decl: dict = {}
        self.consts: dict = {}
        self.chunks: list = []
        self.first: dict = {}  # site -> first use key, for numbering sites as the greenlet engine does
        self._numba, self._cuda_mod = numba, real_cuda
        self._aliases = {id(getattr(real_cuda, n)): n for n in ALIASES if hasattr(real_cuda, n)}
        self._memo: dict = {}
        self.fn = self._prepare(self.fn0)
        self.warps = Warps(self)
        self.globals_st: list[Storage] = []
        self.kargs = [
            self._bind(name, a, opts.roles.get(name, "inout")) for name, a in zip(self.params, args)
        ]
        self.order = binding.block_order(opts.block_order, int(np.prod(self.griddim)), opts.seed)
        if uses_grid_sync(self.fn0):
            # blocks wait for each other there: the reference engine runs them together, so that a
            # block skipping the grid barrier is the verdict, not the races that follow from it
            raise Stop("unsupported: cooperative grid sync (cuda.cg.this_grid().sync())")
        if not opts.cross_block_races and len(self.order) > 1 and "scratch" in opts.roles.values():
            # which block's writes another may read depends on atomics between them: the reference
            # engine follows that order (greenlet/order.py)
            raise Stop("unsupported: blocks that hand each other work memory (role 'scratch')")
        self.static_shared_max = 0

    # --- preparing the kernel
    def _sub(self, v: Any, module: str) -> Any:
        if v is self._cuda_mod:
            return self.cuda
        if v is self._numba:
            return NumbaProxy(self._numba, self.cuda)
        if v is np:
            return NumpyProxy(np)
        if v is math:
            return LMATH
        if id(v) in MATH_FUNCTIONS and isinstance(v, types.BuiltinFunctionType):
            return LMATH_FUNCTIONS[id(MATH_FUNCTIONS[id(v)])]  # `from math import exp`
        if _is_dispatcher(v):
            return self._prepare(v.py_func)
        if isinstance(v, types.FunctionType) and v.__module__ == module:
            return self._prepare(v)
        name = self._aliases.get(id(v))
        if name is not None:
            return getattr(self.cuda, name)
        if type(v).__module__.startswith("numba.core.types"):
            try:
                return cast(v)
            except Exception:  # noqa: BLE001 - not a number type
                return v
        if isinstance(v, type) and issubclass(v, np.generic):
            return cast(v)
        return v

    def _prepare(self, fn: types.FunctionType) -> types.FunctionType:
        if fn in self._memo:
            return self._memo[fn]
        c = compile_fn(fn)  # (the greenlet engine's launch checks ran on the kernel already)
        g = dict(fn.__globals__)
        if fn.__closure__:  # a kernel made by a factory: its free variables read as globals here
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                g[name] = cell.cell_contents
        g["_C"], g["_R"], g["_U"] = self.ctl, self, UNDEF
        new = types.FunctionType(c.code, g, fn.__name__)
        new._lockstep = True
        self._memo[fn] = new
        root = self.fn0.__module__
        for name in _global_names(fn.__code__) | set(fn.__code__.co_freevars):
            if name in g and name not in ("_C", "_R", "_U"):
                g[name] = self._sub(g[name], root)
        return new

    def _bind(self, name: str, a: Any, role: str) -> Any:
        a = binding.kernel_argument(name, a)
        if isinstance(a, np.ndarray):
            if not a.flags.c_contiguous:
                raise Stop(f"unsupported: argument `{name}` is not C-contiguous")
            aid = self._add_array(name, "global", a.shape, a.dtype, role)
            if self.tracing:
                self.before[name] = a.copy()
            st = Storage(
                a,
                aid,
                name,
                "global",
                init=None if role not in ("out", "scratch") else np.zeros(a.size, bool),
                readonly=(role == "in"),
            )
            self.globals_st.append(st)
            return LArray(self, st)
        return a

    def _add_array(self, name, space, shape, dtype, role="") -> int:
        info = ArrayInfo(len(self.arrays), name, space, tuple(shape), np.dtype(dtype), role)
        self.arrays.append(info)
        return info.id

    # --- what the transformed kernel calls
    def ld(self, obj: Any, site: int, idx: tuple) -> Any:
        if type(obj) is LArray:
            self.site = site
            return obj.load(site, idx)
        if not any(type(i) is V for i in idx):
            return obj[idx if len(idx) > 1 else idx[0]]
        if isinstance(obj, np.ndarray):  # a module-level NumPy array: not traced, as in the greenlet engine
            m = self.ctl.m
            cols = []
            for k, i in enumerate(idx):
                if type(i) is V:
                    a, _, d = split(i)
                    if d.kind not in "iub":
                        raise Stop("unsupported: a float index")
                    am = a[m]
                    if am.size and (am.min() < -obj.shape[k] or am.max() >= obj.shape[k]):
                        raise Stop("diagnostic: an index out of a global NumPy array (KernelException)")
                    cols.append(np.where(m, a, 0))
                else:
                    cols.append(i)
            return V(obj[tuple(cols)], False)
        raise Stop(f"unsupported: indexing a {type(obj).__name__} with a per-thread index")

    def st(self, value: Any, obj: Any, site: int, idx: tuple) -> None:
        if type(obj) is not LArray:
            raise Stop(f"unsupported: assigning into a {type(obj).__name__}")
        self.site = site
        obj.store(site, idx, value)

    def call(self, f: Any, *args: Any, **kw: Any) -> Any:
        if getattr(f, "_lockstep", False) or type(f) is Cast:
            return f(*args, **kw)
        shim = BUILTINS.get(f) if type(f) is type or isinstance(f, types.BuiltinFunctionType) else None
        if shim is not None:
            return shim(*args, **kw)
        if f is print:
            raise Stop("unsupported: print")
        if not any(type(a) in (V, Mixed) for a in args) and not any(
            type(a) in (V, Mixed) for a in kw.values()
        ):
            if any(type(a) is LArray for a in args):
                raise Stop(f"unsupported: calling {getattr(f, '__name__', f)} with an array")
            return f(*args, **kw)
        raise Stop(f"unsupported: calling {getattr(f, '__name__', f)!s} with per-thread values")

    def declare(self, space: str, lineno: int, site: int, *args: Any, **kw: Any) -> LArray:
        ctl = self.ctl
        if not ctl.live:
            raise Stop(f"unsupported: an array declared where no thread runs (line {lineno})")
        if space == "const":
            ary = args[0] if args else kw["ary"]
            got = self.consts.get(id(ary))
            if got is None:
                if type(ary) is LArray:
                    raise Stop("diagnostic: cuda.const.array_like of a kernel argument (Unsupported)")
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
            raise Stop(f"diagnostic: cuda.atomic.{op} on a {type(ary).__name__} (Unsupported)")
        fn = ATOMICS.get(op)
        if fn is None:
            raise Stop(f"unsupported: cuda.atomic.{op}")
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
                raise Stop(
                    "unsupported: order-dependent atomics on one element more than once in a barrier interval"
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

    def access(self, st: Storage, kind: int, site: int, fl: Any) -> None:
        ctl = self.ctl
        lanes = ctl.act
        k = ctl.nact
        self.steps += k
        if self.steps > self.max_steps:
            raise self.runaway()
        if kind:
            ctl.writes += 1
        if self.deferred and kind != ATOMIC:
            d = self.deferred.get(id(st))
            if d is not None and not d.isdisjoint(np.atleast_1d(fl).tolist()):
                raise Stop("unsupported: a plain access to an element with atomics pending in this interval")
        if self.races and st.space in ("shared", "global"):
            st.log.append((fl, lanes, kind, self.wepoch[lanes] if self.wepoch_used else None, site))
            if st.space == "global":
                self.touched[id(st)] = st
        if self.tracing:
            occ = self.occ
            c = occ.get(site)
            if ctl.isfull:
                if c is None:
                    o = 0
                    occ[site] = 1
                elif type(c) is int:
                    o = c
                    occ[site] = c + 1
                else:
                    o = c.copy()
                    c += 1
            else:
                if type(c) is not np.ndarray:
                    c = occ[site] = np.full(self.n, c or 0, np.int32)
                o = c[lanes]
                c[lanes] += 1
            self.chunks.append((self.b, self.epoch, lanes, fl, 4 * st.aid + kind, site, o))
            f = self.first.get(site)
            if f is None or f[0] == self.pos:  # a site first used in an earlier block keeps its key
                first = int(lanes[0])
                key = (self.pos, self.epoch, int(self.wround[first]), first, len(self.chunks))
                if f is None or key < f:
                    self.first[site] = key

    def runaway(self) -> E.SimulatorError:
        return self.diag("Runaway", runaway_text(self.opts.max_steps))

    def warp_step(self, count: bool = True) -> None:
        ctl = self.ctl
        self.steps += ctl.nact
        if self.steps > self.max_steps:
            raise self.runaway()
        if count:
            self.wround[ctl.act] += 1

    def barrier(self, op: str, pred: Any) -> Any:
        ctl = self.ctl
        if not ctl.live:
            return None
        if not ctl.isfull:
            raise self.diag(
                "BarrierDivergence",
                f"cuda.{op}() was reached by {ctl.nact} of the block's {self.n} threads (the others "
                "returned or took another branch): every thread of the block must reach it",
                lane=int(np.flatnonzero(~ctl.m)[0]),
            )
        self.steps += self.n
        if self.steps > self.max_steps:
            raise self.runaway()
        self._end_interval()
        self.epoch += 1
        self.occ = {}
        self.wround[:] = 0
        if op == "syncthreads":
            return None
        t = truth(pred)
        if type(t) is np.ndarray:
            cnt = int(np.count_nonzero(t))
        else:
            cnt = self.n if t else 0
        if op == "syncthreads_count":
            return cnt
        if op == "syncthreads_and":
            return int(cnt == self.n)
        return int(cnt > 0)

    def _end_interval(self) -> None:
        self.atomic_seen = {}
        if self.pending:
            self._apply_deferred()
        if not self.races:
            return
        cross = self.opts.cross_block_races
        for arr in self.block_decl.values():
            st = arr.st
            if st.log and st.space == "shared":
                races.check_interval(st, self.n, None, self._race_in_block(st))
        for st in self.touched.values():
            if st.log:
                if cross:
                    self.block_acc.setdefault(id(st), (st, []))[1].extend(st.log)
                races.check_interval(st, self.n, None, self._race_in_block(st))

    def _race_in_block(self, st: Storage):
        def report(flat, a, b, ka, kb, site):
            self._order_matters()
            where = _unravel(flat, st.shape)
            shown = ", ".join(map(str, where))
            verbs = {READ: "read", 1: "wrote", ATOMIC: "atomically updated"}
            raise self.diag(
                "DataRace",
                f"data race on {st.space} array `{st.name}`[{shown}]: this thread {verbs[kb]} it while "
                f"thread {self._tidx(a)} of block {self._bidx(self.b)} {verbs[ka]} it in the same barrier "
                "interval (no cuda.syncthreads() between them). The result depends on which thread runs "
                "first. Put a cuda.syncthreads() between the two accesses, or give each thread its own "
                "element.",
                array=st.name,
                index=where[0] if len(where) == 1 else where,
                lane=b,
                site=site,
            )

        return report

    # --- running
    def _tidx(self, t: int) -> tuple:
        bx, by, _ = self.blockdim
        return (t % bx, (t // bx) % by, t // (bx * by))

    def _bidx(self, b: int) -> tuple:
        gx, gy, _ = self.griddim
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def _order_matters(self) -> None:
        if not self.opts.races:
            raise Stop(
                "unsupported: accesses whose order matters (races are off: the reference engine's "
                "thread order decides)"
            )

    def diag(
        self,
        cls: str,
        why: str | None,
        arr: Any = None,
        idx: Any = None,
        *,
        array: str | None = None,
        index: Any = None,
        lane: int | None = None,
        site: int | None = None,
        tb: Any = None,
    ) -> E.SimulatorError:
        """A diagnostic in the standard shape (raised by the caller): block, thread, line, array, index.
        `tb`: the traceback of an exception the kernel raised, for its line."""
        klass = getattr(E, cls)
        ctl = self.ctl
        name = array
        if arr is not None:
            name = arr.st.name
            comps = idx[0] if len(idx) == 1 and type(idx[0]) is tuple else idx
            if lane is None and ctl.live:
                lane = int(self._bad_lane(arr, comps, cls))
            index = tuple(_at_lane(i, lane) for i in comps)
            shown = ", ".join(map(str, index))
            if len(index) == 1 and cls != "OutOfBounds":
                index = index[0]  # as the kernel wrote it, as the greenlet engine reports it
            space = words(arr.st.space)
            if why is None:
                why = {
                    "OutOfBounds": "is out of bounds: "
                    + (
                        "a negative index: Python and Numba silently wrap it to the end of the array, real "
                        "CUDA reads or writes memory before the array (garbage or a crash)"
                        if any(
                            type(v) is int and v < 0 for v in (index if type(index) is tuple else (index,))
                        )
                        else f"past the end (shape {tuple(arr.shape)}): a real GPU does no bounds check and "
                        "would silently read garbage or overwrite another array. Is a guard missing?"
                    ),
                    "UninitializedRead": {
                        "shared": "was read but no thread of this block had written it yet; a real GPU "
                        "returns whatever an earlier kernel left in shared memory.",
                        "local": "was read but this thread had not written it yet; a real GPU returns "
                        "whatever was in the register or stack slot.",
                    }.get(
                        arr.st.space,
                        "was read but no thread had written it yet (outputs start as garbage: the checker "
                        "fills them with NaN); a real GPU returns whatever was in that memory.",
                    )
                    + " Is a barrier or an initialising write missing?",
                    "ReadOnlyWrite": "was written, but it is an input (or a constant): the kernel must not "
                    "change it (the checker compares against the original values)",
                }.get(cls, "")
            why = f"index [{shown}] into {space} `{name}` {why}"
            if cls == "UninitializedRead" and self.arrays[arr.st.aid].role == "scratch":
                why = scratch_text(name, shown)
            site = self.site if site is None else site
        if lane is None and ctl.live:
            lane = int(ctl.act[0])
        if site is not None:
            info = site_info(site)
            line, src = info.lineno, info.text
        elif tb is not None:
            line, src = source_at(*kernel_frame(tb))
        else:
            line, src = source_at(user_frame())
        return diagnostic(
            klass,
            f"{why} (found by the lockstep engine; engine='greenlet' gives the reference report)",
            block=self._bidx(self.b),
            thread=None if lane is None or lane < 0 else self._tidx(lane),
            line=line,
            source=src,
            array=name,
            index=index,
        )

    def _bad_lane(self, arr: LArray, idx: tuple, cls: str) -> int:
        ctl = self.ctl
        st = arr.st
        if cls == "UninitializedRead" and st.init is not None:
            flat = arr._flat(tuple(idx), "read")
            flat = np.broadcast_to(np.asarray(flat, np.int64), (self.n,))
            phys = np.arange(self.n) * st.size + flat if st.local else flat
            bad = ctl.m & ~st.init[np.where(ctl.m, phys, 0)]
            if bad.any():
                return int(np.flatnonzero(bad)[0])
        if cls == "OutOfBounds":
            bad = np.zeros(self.n, bool)
            for k, i in enumerate(idx):
                if type(i) is V and k < arr.ndim:
                    bad |= (i.a < 0) | (i.a >= arr.shape[k])
            bad &= ctl.m
            if bad.any():
                return int(np.flatnonzero(bad)[0])
        return int(ctl.act[0])

    def execute(self) -> "Run":
        ctl = self.ctl
        with np.errstate(all="ignore"):
            for pos, b in enumerate(self.order):
                self.pos, self.b = pos, b
                self.cuda.blockIdx = Dim3(self._bidx(b))
                self.block_decl: dict = {}
                self.dynamic = None  # this block's dynamic shared bytes
                self.dynamic_state: dict = {}  # element size -> (init, race log) its views share
                self.static_shared = 0
                self.epoch = 0
                self.occ: dict = {}
                self.touched: dict = {}
                self.block_acc: dict = {}
                self.atomic_seen: dict = {}
                self.pending: list = []  # deferred atomics of this interval: (order key, storage, ...)
                self.deferred: dict = {}  # storage id -> elements with deferred atomics
                self.seq = 0
                self.wepoch = np.zeros(self.n, np.int64)  # syncwarps passed, per lane (race order)
                self.wepoch_used = False
                self.wround = np.zeros(self.n, np.int64)  # warp operations passed this interval
                ctl.fns = []
                ctl.set_mask(ctl.all)
                try:
                    self.fn(*self.kargs)
                except (Stop, E.SimulatorError):
                    raise
                except LaneError as e:
                    raise self.diag("KernelException", f"a thread raised: {e}") from None
                except RecursionError:
                    raise Stop("unsupported: recursion") from None
                except (SystemExit, KeyboardInterrupt) as e:  # never leave the launch (as the reference)
                    raise self.diag(
                        "KernelException",
                        f"the kernel tried to stop the program ({type(e).__name__})",
                        tb=e.__traceback__,
                    ) from None
                except Exception as e:  # noqa: BLE001 - a Python error in some thread: the reference reports it
                    raise self.diag(
                        "KernelException", f"the kernel raised {type(e).__name__}: {e}", tb=e.__traceback__
                    ) from None
                self.steps += 0
                self._end_interval()
                if self.opts.races and self.opts.cross_block_races:  # (blocks run in the reference's order)
                    for st, acc in self.block_acc.values():
                        races.check_blocks(st, b, acc, self._race_across(st))
        return self

    def _race_across(self, st: Storage):
        def report(flat, other, kind, okind, site):
            where = _unravel(flat, st.shape)
            shown = ", ".join(map(str, where))
            raise self.diag(
                "DataRace",
                f"data race on global array `{st.name}`[{shown}]: block {self._bidx(self.b)} and block "
                f"{self._bidx(other)} both touched it, at least one writing: in another block, and blocks "
                "run in any order. Give each element one owner block, or use cuda.atomic for accumulations.",
                array=st.name,
                index=where[0] if len(where) == 1 else where,
                site=site,
                lane=-1,
            )

        return report

    def greenlet_steps(self) -> int:
        return greenlet_steps(self.steps, self.opts.max_steps)

    def trace(self) -> Trace | None:
        if not self.tracing:
            return None
        chunks = self.chunks
        order = sorted(self.first, key=self.first.get)
        site_map = np.zeros(max(self.first, default=0) + 1, np.int32)
        sites = []
        for k, s in enumerate(order):
            site_map[s] = k
            info = site_info(s)
            sites.append(Site(k, info.filename, info.lineno, info.text))
        nc = len(chunks)
        lens = np.fromiter((len(c[2]) for c in chunks), np.int64, nc)
        n = int(lens.sum())
        acc = np.zeros(n, ACCESS_DTYPE)
        if n:

            def rep(k: int) -> np.ndarray:
                return np.repeat(np.fromiter((c[k] for c in chunks), np.int64, nc), lens)

            acc["block"], acc["epoch"] = rep(0), rep(1)
            acc["thread"] = np.concatenate([c[2] for c in chunks])
            ak = rep(4)
            acc["array"], acc["kind"] = ak >> 2, ak & 3
            acc["site"] = site_map[rep(5)]
            # index and occ: arrays for most chunks, one number for the rest
            scal = [type(c[3]) is not np.ndarray for c in chunks]
            index = np.concatenate(
                [
                    np.full(ln, c[3], np.int64) if sc else c[3]
                    for c, ln, sc in zip(chunks, lens.tolist(), scal)
                ]
            )
            oscal = [type(c[6]) is not np.ndarray for c in chunks]
            occ = np.repeat(np.array([c[6] if sc else 0 for c, sc in zip(chunks, oscal)], np.int32), lens)
            if not all(oscal):
                ends = np.cumsum(lens).tolist()
                for k in np.flatnonzero(~np.array(oscal)).tolist():
                    occ[ends[k] - lens[k] : ends[k]] = chunks[k][6]
            acc["index"], acc["occ"] = index, occ
        after = {st.name: st.data.reshape(st.shape).copy() for st in self.globals_st}
        return Trace(
            tuple(self.griddim), tuple(self.blockdim), list(self.arrays), sites, acc, dict(self.before), after
        )


def _unravel(flat: int, shape: tuple) -> tuple:
    if not shape:
        return (flat,)
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _at_lane(i: Any, lane: int | None) -> Any:
    if type(i) is V:
        return int(i.a[lane]) if lane is not None else "per-thread"
    try:
        return int(i)
    except (TypeError, ValueError):
        return i
