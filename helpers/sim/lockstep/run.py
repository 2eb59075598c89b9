"""One launch in lockstep: blocks one after another in the launch's block order (as the greenlet
engine runs them), the threads of a block as lanes of NumPy vectors.

Everything the greenlet engine would diagnose is detected (or the launch is refused as
unsupported); the dispatcher (dispatch.py) then re-runs it on the greenlet engine, whose report is
the verdict. Called directly (`engine="lockstep"`), the diagnostics are raised here.

`Run` holds the launch and what the transformed kernel calls for loads, stores, barriers and
calls; declare.py adds array declarations and atomics, report.py the diagnostics, assemble.py
builds the trace.
"""

from __future__ import annotations

import math
import time
import types
from typing import Any, Sequence

import numpy as np

from .. import binding
from .. import errors as E
from ..kernel import _global_names, _is_dispatcher, is_cuda_module, py_func, uses_grid_sync
from ..options import Options
from ..semantics import ALIASES, MATH_FUNCTIONS, SPIN_CHECK, Dim3, greenlet_steps
from ..trace import ATOMIC, WRITE, ArrayInfo, Trace
from . import races
from .api import BUILTINS, LMATH, LMATH_FUNCTIONS, Cast, LCuda, NumbaProxy, NumpyProxy, cast
from .assemble import assemble
from .control import UNDEF, Control
from .declare import Declarations
from .memory import LArray, Storage
from .report import Reports
from .stop import Stop
from .transform import compile_fn
from .values import LaneError, Mixed, V, split, truth
from .warps import Warps


class Run(Declarations, Reports):
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
        self.ctl.steps_now, self.ctl.endless = (lambda: self.steps), self.endless
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
        self.moves: list = []  # (block, epoch, thread, src thread, len(chunks)) per lane a shuffle fed
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
            raise Stop.unsupported("cooperative grid sync (cuda.cg.this_grid().sync())")
        if not opts.cross_block_races and len(self.order) > 1 and "scratch" in opts.roles.values():
            # which block's writes another may read depends on atomics between them: the reference
            # engine follows that order (greenlet/order.py)
            raise Stop.unsupported("blocks that hand each other work memory (role 'scratch')")
        self.static_shared_max = 0

    # --- preparing the kernel
    def _sub(self, v: Any, module: str) -> Any:
        if is_cuda_module(v, self._cuda_mod):
            return self.cuda
        if v is self._numba:
            return NumbaProxy(self._numba, self.cuda)
        if v is np:
            return NumpyProxy(np)
        if v is math:
            return LMATH
        if id(v) in MATH_FUNCTIONS and isinstance(v, types.BuiltinFunctionType):
            return LMATH_FUNCTIONS[id(MATH_FUNCTIONS[id(v)])]  # `from math import exp`
        op = getattr(v, "_sim_op", None)
        if type(op) is str:  # the course's intrinsics (helpers/tensor_cores.py)
            return getattr(self.cuda, op)
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
                raise Stop.unsupported(f"argument `{name}` is not C-contiguous")
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
                        raise Stop.unsupported("a float index")
                    am = a[m]
                    if am.size and (am.min() < -obj.shape[k] or am.max() >= obj.shape[k]):
                        raise Stop.diagnostic(E.KernelException, "an index out of a global NumPy array")
                    cols.append(np.where(m, a, 0))
                else:
                    cols.append(i)
            return V(obj[tuple(cols)], False)
        raise Stop.unsupported(f"indexing a {type(obj).__name__} with a per-thread index")

    def st(self, value: Any, obj: Any, site: int, idx: tuple) -> None:
        if type(obj) is not LArray:
            raise Stop.unsupported(f"assigning into a {type(obj).__name__}")
        self.site = site
        obj.store(site, idx, value)

    def call(self, f: Any, *args: Any, **kw: Any) -> Any:
        if getattr(f, "_lockstep", False) or type(f) is Cast:
            return f(*args, **kw)
        shim = BUILTINS.get(f) if type(f) is type or isinstance(f, types.BuiltinFunctionType) else None
        if shim is not None:
            return shim(*args, **kw)
        if f is print:
            raise Stop.unsupported("print")
        if not any(type(a) in (V, Mixed) for a in args) and not any(
            type(a) in (V, Mixed) for a in kw.values()
        ):
            if any(type(a) is LArray for a in args):
                raise Stop.unsupported(f"calling {getattr(f, '__name__', f)} with an array")
            return f(*args, **kw)
        raise Stop.unsupported(f"calling {getattr(f, '__name__', f)!s} with per-thread values")

    def access(self, st: Storage, kind: int, site: int, fl: Any) -> None:
        ctl = self.ctl
        lanes = ctl.act
        k = ctl.nact
        self.steps += k
        if self.steps > self.max_steps:
            raise self.runaway()
        if kind == WRITE:  # (an atomic counts when it changes a value: memory.py)
            ctl.writes += 1
        if self.deferred and kind != ATOMIC:
            d = self.deferred.get(id(st))
            if d is not None and not d.isdisjoint(np.atleast_1d(fl).tolist()):
                raise Stop.unsupported("a plain access to an element with atomics pending in this interval")
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

    # --- running
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
                    raise Stop.unsupported("recursion") from None
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

    def greenlet_steps(self) -> int:
        return greenlet_steps(self.steps, self.opts.max_steps)

    def trace(self) -> Trace | None:
        return assemble(self) if self.tracing else None
