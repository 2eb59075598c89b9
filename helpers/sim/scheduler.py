"""One simulated launch: blocks one after another, the threads of a block as
greenlets that the scheduler interleaves at barriers and warp operations.

Deterministic: threads run in thread-id order until each blocks (at a barrier or
a warp operation) or ends; then warp operations whose lanes have all arrived
complete, then the block's barrier releases. Nothing depends on wall time.
"""
from __future__ import annotations

import bisect
import ctypes
import dis
import gc
import linecache
import re
import sys
import threading
from functools import partial
from itertools import chain
from operator import itemgetter

import numpy as np
from greenlet import greenlet

from . import errors as E
from .api import ALIASES, SimCuda
from .kernel import py_func, rebind
from .memory import SimArray, Storage, new_array
from .trace import ACCESS_DTYPE, WARP_SIZE, ArrayInfo, Site, Trace

RUN, BAR, WARP, DONE = 0, 1, 2, 3
STATIC_SHARED_LIMIT = 48 * 1024
_SIM_PREFIX = __name__.rsplit(".", 1)[0]


class Dim3(tuple):
    """(x, y, z) that also answers .x, .y, .z, like Numba's."""
    __slots__ = ()
    x = property(itemgetter(0))     # C-level getters: kernels read threadIdx.x on every line
    y = property(itemgetter(1))
    z = property(itemgetter(2))

    def __new__(cls, v):
        if isinstance(v, (int, np.integer)):
            v = (int(v),)
        v = tuple(int(a) for a in v)
        if not 1 <= len(v) <= 3:
            raise E.LaunchError(f"launch dimensions must have 1 to 3 entries, got {v}")
        return super().__new__(cls, v + (1,) * (3 - len(v)))


class Thread:
    __slots__ = ("b", "t", "tidx", "bidx", "warp", "lane", "epoch", "wepoch", "actor", "g",
                 "state", "wait", "result", "local")

    def __init__(self, b, t, tidx, bidx):
        self.b, self.t, self.tidx, self.bidx = b, t, tidx, bidx
        self.warp, self.lane = divmod(t, WARP_SIZE)
        self.epoch = self.wepoch = 0
        self.actor = (b, 0, self.warp, 0, t)
        self.state = RUN
        self.wait = self.result = None
        self.local = {}

    def advance(self, barrier):
        if barrier:
            self.epoch += 1
        else:
            self.wepoch += 1
        self.actor = (self.b, self.epoch, self.warp, self.wepoch, self.t)


class _Timeout(BaseException):
    """Delivered asynchronously by the watchdog; turned into Runaway."""


class Run:
    def __init__(self, kernel, griddim, blockdim, args, *, shared_bytes=0, roles=None, trace=True,
                 block_order="forward", seed=0, cross_block_races=True, races=True,
                 max_steps=5_000_000, timeout=30.0):
        import numba
        import numba.cuda as real_cuda

        self.griddim, self.blockdim = Dim3(griddim), Dim3(blockdim)
        nthreads = int(np.prod(self.blockdim))
        if nthreads > 1024 or self.blockdim[0] > 1024 or self.blockdim[1] > 1024 or self.blockdim[2] > 64:
            raise E.LaunchError(f"{tuple(self.blockdim)} threads per block: CUDA allows at most 1024 "
                                "threads per block (and at most 64 in z); the launch would fail")
        if min(self.griddim) < 1 or min(self.blockdim) < 1:
            raise E.LaunchError(f"grid {tuple(self.griddim)} x block {tuple(self.blockdim)}: every "
                                "dimension must be at least 1")
        if shared_bytes > STATIC_SHARED_LIMIT:
            raise E.LaunchError(f"{shared_bytes} bytes of dynamic shared memory: more than the 48 KiB a "
                                "block gets without opting in")
        self.fn0 = py_func(kernel)
        self.api = SimCuda(self)
        aliases = {id(getattr(real_cuda, n)): n for n in ALIASES if hasattr(real_cuda, n)}
        self.fn = rebind(kernel, self.api, real_cuda, numba, aliases)
        code = self.fn0.__code__
        self.params = code.co_varnames[:code.co_argcount]
        if len(args) != len(self.params):
            raise E.LaunchError(f"{self.fn0.__name__} takes {len(self.params)} arguments "
                                f"({', '.join(self.params)}) but the launch passed {len(args)}")
        self.shared_bytes = shared_bytes
        self.tracing, self.races = trace, races
        self.steps, self.max_steps, self.timeout = 0, max_steps, timeout
        self.rec, self.arrays = [], []
        self.decl = {}                       # shared/local declaration key -> (aid, name)
        self.const = {}
        self.cur = None
        self.cross_block = cross_block_races
        self.before, self.after = {}, {}
        self._writeback = []
        roles = roles or {}
        self.kargs = [self._arg(name, a, roles.get(name, "inout")) for name, a in zip(self.params, args)]
        nblocks = int(np.prod(self.griddim))
        if block_order == "forward":
            self.order = list(range(nblocks))
        elif block_order == "reverse":
            self.order = list(range(nblocks))[::-1]
        elif block_order == "shuffle":
            self.order = [int(b) for b in np.random.default_rng(seed).permutation(nblocks)]
        else:
            self.order = [int(b) for b in block_order]
            if sorted(self.order) != list(range(nblocks)):
                raise ValueError(f"block_order must be a permutation of range({nblocks})")
        self.static_shared = self.static_shared_max = 0
        self.warp_pending = False            # some thread waits at a warp operation
        self._tidxs = None                   # threadIdx of each thread, shared by all blocks

    # --- arguments
    def _arg(self, name, a, role):
        if hasattr(a, "__sim_array__"):
            a = a.__sim_array__()
        if isinstance(a, np.ndarray):
            data = a
            if not a.flags.c_contiguous:
                data = np.ascontiguousarray(a)
                self._writeback.append((a, data))
            aid = self._add_array(name, "global", data.shape, data.dtype, role)
            if self.tracing:
                self.before[name] = data.copy()
            st = Storage(self, data, aid, name, "global", initialised=(role != "out"),
                         readonly=(role == "in"), cross_block=self.cross_block)
            return new_array(st)
        if isinstance(a, (list, tuple, dict, set)):
            raise E.LaunchError(f"argument `{name}` is a {type(a).__name__}: kernels take NumPy arrays "
                                "(or device arrays) and numbers; Numba cannot pass a Python "
                                f"{type(a).__name__} to a GPU")
        if a is None or isinstance(a, str):
            raise E.LaunchError(f"argument `{name}` is {a!r}: kernels take arrays and numbers")
        return a

    def _add_array(self, name, space, shape, dtype, role=""):
        info = ArrayInfo(len(self.arrays), name, space, tuple(shape), np.dtype(dtype), role)
        self.arrays.append(info)
        return info.id

    # --- recording
    def step(self):
        self.steps += 1
        if self.steps > self.max_steps:
            raise self.error(E.Runaway, f"the kernel made more than {self.max_steps:,} memory accesses and "
                             "barriers: most likely a loop that never ends (a loop variable not advanced, "
                             "a stride of 0?). Raise helpers.sim.config.max_steps if it really needs more.")

    # --- errors
    @staticmethod
    def user_frame():
        f = sys._getframe(1)
        while f is not None and f.f_globals.get("__name__", "").startswith(_SIM_PREFIX):
            f = f.f_back
        return f

    def where(self, frame=None):
        f = frame or self.user_frame()
        if f is None:
            return None, ""
        return f.f_lineno, linecache.getline(f.f_code.co_filename, f.f_lineno).strip()

    def error(self, cls, msg, depth=0, *, array=None, index=None, thread=None, frame=None):
        t = thread or self.cur
        line, src = self.where(frame)
        head = ""
        if t is not None:
            head = f"block {tuple(t.bidx)}, thread {tuple(t.tidx)}"
        if line is not None:
            head += f", line {line}: `{src}`"
        return cls(f"{head}\n{msg}" if head else msg, block=t and tuple(t.bidx), thread=t and tuple(t.tidx),
                   line=line, source=src, array=array, index=index)

    def _who(self, actor):
        b, _, _, _, t = actor
        return f"thread {self._tidx(t)} of block {self._bidx(b)}"

    def _tidx(self, t):
        bx, by, _ = self.blockdim
        return (t % bx, (t // bx) % by, t // (bx * by))

    def _bidx(self, b):
        gx, gy, _ = self.griddim
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def race(self, st, flat, idx, verb, other, other_verb, depth):
        c = self.cur.actor
        where = "in the same barrier interval (no cuda.syncthreads() between them)"
        fix = "Put a cuda.syncthreads() between the two accesses, or give each thread its own element."
        if other[0] != c[0]:
            where = "in another block"
            fix = ("Blocks cannot wait for each other inside a kernel and run in any order: give each "
                   "element one owner block, or use cuda.atomic for accumulations.")
        elif other[2] == c[2] and other[1] == c[1]:
            fix += (" Lanes of one warp do not run in lockstep on Volta and later GPUs: cuda.syncwarp() "
                    "orders them.")
        idx_s = ", ".join(map(str, idx)) if type(idx) is tuple else str(idx)
        msg = (f"data race on {st.space} array `{st.name}`[{idx_s}]: this thread {verb} it while "
               f"{self._who(other)} {other_verb} it {where}. The result depends on which thread runs "
               f"first; on a real GPU it changes from run to run. {fix}")
        return self.error(E.DataRace, msg, array=st.name, index=idx)

    # --- shared, local and constant memory
    def _decl(self, key, frame, space, shape, dtype):
        if key not in self.decl:
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            m = re.search(r"(\w+)\s*=\s*[\w.]*" + space + r"\.array", line)
            name = m.group(1) if m else f"{space}@{frame.f_lineno}"
            self.decl[key] = (self._add_array(name, space, shape, dtype), name)
        return self.decl[key]

    def _shape_dtype(self, shape, dtype, what):
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        try:
            shape = tuple(int(s) for s in shape)
        except TypeError:
            raise self.error(E.LaunchError,
                             f"{what} shape {shape!r} must be an int or a tuple of ints") from None
        try:
            dt = np.dtype(dtype)
        except TypeError:
            from numba.np.numpy_support import as_dtype
            dt = as_dtype(dtype)
        return shape, dt

    def shared_array(self, shape, dtype, frame):
        key = (frame.f_code, frame.f_lasti)
        arr = self.block_shared.get(key)
        if arr is not None:
            return arr
        key = canon_site(*key)
        arr = self.block_shared.get(key)
        if arr is not None:
            self.block_shared[frame.f_code, frame.f_lasti] = arr
            return arr
        shape, dt = self._shape_dtype(shape, dtype, "cuda.shared.array")
        if shape in ((0,), ()):
            if not self.shared_bytes:
                raise self.error(E.LaunchError, "cuda.shared.array(0, ...) asks for dynamic shared memory "
                                 "but the launch gave none: pass its size in bytes as the 4th launch "
                                 "parameter, kernel[blocks, threads, 0, nbytes](...)", frame=frame)
            shape = (self.shared_bytes // dt.itemsize,)
        else:
            self.static_shared += int(np.prod(shape)) * dt.itemsize
            self.static_shared_max = max(self.static_shared_max, self.static_shared)
            if self.static_shared > STATIC_SHARED_LIMIT:
                raise self.error(E.LaunchError, f"{self.static_shared} bytes of static shared memory per "
                                 "block: CUDA allows 48 KiB; the kernel would not launch", frame=frame)
        aid, name = self._decl(key, frame, "shared", shape, dt)
        st = Storage(self, _poison(shape, dt), aid, name, "shared", initialised=False)
        arr = self.block_shared[key] = self.block_shared[frame.f_code, frame.f_lasti] = new_array(st)
        return arr

    def local_array(self, shape, dtype, frame):
        key = (frame.f_code, frame.f_lasti)
        t = self.cur
        arr = t.local.get(key)
        if arr is None:
            key = canon_site(*key)
            arr = t.local.get(key)
        if arr is None:
            shape, dt = self._shape_dtype(shape, dtype, "cuda.local.array")
            aid, name = self._decl(key, frame, "local", shape, dt)
            arr = t.local[key] = new_array(Storage(self, _poison(shape, dt), aid, name, "local",
                                                   initialised=False))
        return arr

    def const_array(self, ary, frame):
        arr = self.const.get(id(ary))
        if arr is None:
            if isinstance(ary, SimArray):
                raise self.error(E.Unsupported, "cuda.const.array_like needs a host NumPy array known when "
                                 "the kernel is compiled (a global), not a kernel argument", frame=frame)
            data = np.array(ary)
            aid, name = self._decl((id(ary), "const"), frame, "const", data.shape, data.dtype)
            arr = self.const[id(ary)] = new_array(Storage(self, data, aid, name, "const", readonly=True))
        return arr

    # --- barriers and warps
    def barrier(self, op, pred, frame):
        t = self.cur
        t.state, t.wait = BAR, (op, pred, frame)
        self.steps += 1
        if self.steps > self.max_steps:
            self.step()
        # _yield, inlined: the next thread is almost always the next one and already started
        threads = self.threads
        i = t.t + 1
        if i < len(threads):
            nxt = threads[i]
            if nxt.state == RUN and nxt.g:
                self.cur = nxt
                api = self.api
                api.threadIdx, api.laneid = nxt.tidx, nxt.lane
                nxt.g.switch()
                return t.result
        self._yield(t)
        return t.result

    def warp_op(self, op, mask, value, arg, frame):
        t = self.cur
        mask = int(mask) & 0xFFFFFFFF
        if not (mask >> t.lane) & 1:
            raise self.error(E.WarpDivergence, f"cuda.{op} with mask {mask:#010x}, which does not include "
                             f"this thread's own lane {t.lane}: CUDA requires it (undefined behaviour)")
        t.state, t.wait = WARP, (op, mask, frame, value, arg)
        self.warp_pending = True
        self.steps += 1
        if self.steps > self.max_steps:
            self.step()
        self._yield(t)
        return t.result

    def _yield(self, t):
        """Block `t`: switch straight to the next runnable thread of this round, or back to the scheduler."""
        threads = self.threads
        for i in range(t.t + 1, len(threads)):
            nxt = threads[i]
            if nxt.state == RUN:
                if not nxt.g:    # not started: start it from the scheduler, or stacks would nest
                    break
                self.cur = nxt
                self.api.threadIdx, self.api.laneid = nxt.tidx, nxt.lane
                nxt.g.switch()
                return
        self.sched.switch()

    def activemask(self, frame):
        # threads run one at a time here, so which lanes are active is only known once every lane of
        # the warp has arrived here, finished, or blocked elsewhere: wait like a warp operation
        t = self.cur
        t.state, t.wait = WARP, ("activemask", None, frame, None, None)
        self.warp_pending = True
        self.steps += 1
        if self.steps > self.max_steps:
            self.step()
        self._yield(t)
        return t.result

    def _resolve_warps(self):
        progressed = False
        for lanes in self.warps:
            waiting = [th for th in lanes if th.state == WARP and th.wait[0] == "activemask"]
            if waiting:   # lanes at one activemask call are the active ones there
                sites = {}
                for th in waiting:
                    sites.setdefault(_site(th), []).append(th)
                for group in sites.values():
                    m = sum(1 << g.lane for g in group)
                    for g in group:
                        g.result, g.state = m, RUN
                progressed = self.warp_pending = True   # other lanes of this warp may still wait
                continue
            by_lane = {th.lane: th for th in lanes}
            for th in lanes:
                if th.state != WARP:
                    continue
                op, mask = th.wait[:2]
                site = _site(th)
                group = [by_lane[ln] for ln in range(WARP_SIZE) if (mask >> ln) & 1 and ln in by_lane]
                for g in group:
                    if g.state == WARP and g.wait[:2] == (op, mask) and _site(g) == site:
                        continue
                    if g.state == DONE:
                        why = "had already finished the kernel"
                    elif g.state == BAR:
                        why = f"is waiting at cuda.{g.wait[0]}() on line {_line(g)[0]}"
                    else:
                        why = f"is waiting at cuda.{g.wait[0]} on line {_line(g)[0]}"
                    raise self._warp_error(th, op, mask, g, why)
                self._complete_warp_op(op, mask, group, by_lane)
                progressed = True
        return progressed

    def _warp_error(self, th, op, mask, g, why):
        line, src = _line(th)
        err = E.WarpDivergence(
            f"block {tuple(th.bidx)}, thread {tuple(th.tidx)}, line {line}: `{src}`\n"
            f"cuda.{op} with mask {mask:#010x} needs every lane in the mask to reach it, but lane "
            f"{g.lane} (thread {tuple(g.tidx)}) {why}: a real GPU hangs or returns garbage. Call warp "
            "operations where all lanes of the mask reach them, or pass the mask of those that do "
            "(cuda.activemask()).",
            block=tuple(th.bidx), thread=tuple(th.tidx), line=line, source=src)
        return err

    def _complete_warp_op(self, op, mask, group, by_lane):
        vals = {g.lane: g.wait[3] for g in group}
        if op == "syncwarp":
            for g in group:
                g.result = None
                g.advance(barrier=False)
        elif op in ("all_sync", "any_sync", "ballot_sync", "eq_sync"):
            preds = [vals[ln] for ln in sorted(vals)]
            # types as numba-cuda gives them: votes are booleans, a ballot is a signed int32
            if op == "all_sync":
                r = all(preds)
            elif op == "any_sync":
                r = any(preds)
            elif op == "eq_sync":
                r = all(p == preds[0] for p in preds)
            else:
                r = np.uint32(sum(1 << ln for ln, p in vals.items() if p)).view(np.int32)
            for g in group:
                g.result = r
        else:
            for g in group:
                arg = int(g.wait[4])
                if op == "shfl_sync":
                    src = arg % WARP_SIZE
                elif op == "shfl_up_sync":
                    src = g.lane - arg if g.lane - arg >= 0 else g.lane
                elif op == "shfl_down_sync":
                    src = g.lane + arg if g.lane + arg < WARP_SIZE else g.lane
                else:
                    src = g.lane ^ arg
                    src = src if src < WARP_SIZE else g.lane
                if src not in vals:
                    state = "does not exist in this block" if src not in by_lane else "is not in the mask"
                    line, text = _line(g)
                    raise E.WarpDivergence(
                        f"block {tuple(g.bidx)}, thread {tuple(g.tidx)}, line {line}: `{text}`\n"
                        f"cuda.{op} in lane {g.lane} reads the value of lane {src}, which {state} "
                        f"(mask {mask:#010x}): on a real GPU the result is undefined.",
                        block=tuple(g.bidx), thread=tuple(g.tidx), line=line, source=text)
                g.result = vals[src]
        for g in group:
            g.state = RUN

    def _resolve_barrier(self, threads):
        # fast path: every thread waits at one syncthreads, reached through one call instruction
        at = threads
        f = threads[0].wait[2] if threads[0].state == BAR else None
        if f is not None:
            code, lasti = f.f_code, f.f_lasti
            for th in threads:
                if th.state != BAR:
                    at = None
                    break
                f = th.wait[2]
                if f.f_lasti != lasti or f.f_code is not code:
                    at = None
                    break
            if at is not None:
                if threads[0].wait[0] == "syncthreads":   # plain barrier: no predicate to combine
                    for th in at:
                        th.result = None
                        th.state = RUN
                        th.epoch = e = th.epoch + 1
                        th.actor = (th.b, e, th.warp, th.wepoch, th.t)
                else:
                    self._release(at)
                return
        at = [th for th in threads if th.state == BAR]
        done = [th for th in threads if th.state == DONE]
        warp = [th for th in threads if th.state == WARP]
        if at and (done or warp):
            first, other = at[0], (done or warp)[0]
            if done:
                how = (f"{len(done)} thread(s), e.g. thread {tuple(other.tidx)}, had already finished the "
                       "kernel without reaching it")
            else:
                how = f"thread {tuple(other.tidx)} waits at cuda.{other.wait[0]} on line {_line(other)[0]}"
            line, src = _line(first)
            raise E.BarrierDivergence(
                f"block {tuple(first.bidx)}, thread {tuple(first.tidx)}, line {line}: `{src}`\n"
                f"cuda.syncthreads() was reached by {len(at)} thread(s) of the block, but {how}. Every "
                "thread of a block must reach the same barrier: is it inside an `if` (like `if i < size`) "
                "or after an early return? Move it out of the branch. A real GPU hangs or gives "
                "wrong results.", block=tuple(first.bidx), thread=tuple(first.tidx), line=line, source=src)
        if not at:
            th = warp[0]
            raise E.Deadlock(f"block {tuple(th.bidx)}: threads wait at warp operations that can never "
                             f"complete (thread {tuple(th.tidx)} at line {_line(th)[0]})",
                             block=tuple(th.bidx), thread=tuple(th.tidx), line=_line(th)[0])
        sites = {}
        for th in at:
            sites.setdefault(_site(th), th)
        if len(sites) > 1:
            a, b = list(sites.values())[:2]
            (la, sa), (lb, sb) = _line(a), _line(b)
            raise E.BarrierDivergence(
                f"block {tuple(a.bidx)}: threads wait at different barriers: thread {tuple(a.tidx)} at "
                f"line {la} (`{sa}`) and thread {tuple(b.tidx)} at line {lb} (`{sb}`). In CUDA all threads "
                "of a block must meet at the same syncthreads; a real GPU may hang or pair them up wrongly.",
                block=tuple(a.bidx), thread=tuple(a.tidx), line=la, source=sa)
        self._release(at)

    def _release(self, at):
        op = at[0].wait[0]
        preds = [th.wait[1] for th in at]
        r = None
        if op == "syncthreads_count":
            r = sum(preds)
        elif op == "syncthreads_and":
            r = int(all(preds))
        elif op == "syncthreads_or":
            r = int(any(preds))
        for th in at:
            th.result = r
            th.state = RUN
            th.epoch += 1
            th.actor = (th.b, th.epoch, th.warp, th.wepoch, th.t)

    # --- running
    def _thread_main(self, th):
        try:
            self.fn(*self.kargs)
        except E.SimulatorError:
            raise
        except Exception as e:
            tb = e.__traceback__
            frame = None
            while tb is not None:
                if not tb.tb_frame.f_globals.get("__name__", "").startswith(_SIM_PREFIX):
                    frame, line = tb.tb_frame, tb.tb_lineno
                tb = tb.tb_next
            src = linecache.getline(frame.f_code.co_filename, line).strip() if frame else ""
            where = f", line {line}: `{src}`" if frame else ""
            raise E.KernelException(
                f"block {tuple(th.bidx)}, thread {tuple(th.tidx)}{where}\n"
                f"the kernel raised {type(e).__name__}: {e}", block=tuple(th.bidx), thread=tuple(th.tidx),
                line=frame and line, source=src) from e

    def _run_block(self, b):
        bidx = Dim3(self._bidx(b))
        self.api.blockIdx = bidx
        self.block_shared = {}
        self.static_shared = 0
        n = int(np.prod(self.blockdim))
        if self._tidxs is None:
            self._tidxs = [Dim3(self._tidx(t)) for t in range(n)]
        threads = self.threads = [Thread(b, t, tidx, bidx) for t, tidx in enumerate(self._tidxs)]
        self.warps = [threads[w:w + WARP_SIZE] for w in range(0, n, WARP_SIZE)]
        self.sched = greenlet.getcurrent()
        for th in threads:
            th.g = greenlet(partial(self._thread_main, th))
        api = self.api
        while True:
            i = 0
            while i < n:
                th = threads[i]
                if th.state != RUN:
                    i += 1
                    continue
                self.cur = th
                api.threadIdx, api.laneid = th.tidx, th.lane
                th.g.switch()
                last = self.cur          # threads hand over to each other; `last` gave control back
                if last.g.dead:
                    last.state = DONE
                i = last.t + 1
            if threads[-1].state == DONE and all(th.state == DONE for th in threads):
                return
            if self.warp_pending:
                self.warp_pending = False
                if self._resolve_warps():
                    continue
            self._resolve_barrier(threads)

    def execute(self):
        fired = threading.Event()
        lock = threading.Lock()
        finished = [False]
        main = threading.get_ident()

        def watchdog():
            with lock:
                if not finished[0]:
                    fired.set()
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main),
                                                               ctypes.py_object(_Timeout))

        timer = threading.Timer(self.timeout, watchdog) if self.timeout else None
        if timer:
            timer.daemon = True
            timer.start()
        # the launch allocates millions of small objects (records, actors) and no cycles worth
        # collecting before it ends: the cyclic collector would only rescan them, over and over
        gc_was = gc.isenabled()
        gc.disable()
        try:
            for b in self.order:
                self._run_block(b)
        except _Timeout as e:
            raise self.error(E.Runaway, f"the kernel ran for more than {self.timeout:g} s in the simulator: "
                             "most likely a loop that never ends. Raise helpers.sim.config.timeout if it "
                             "really needs longer.", frame=_kernel_frame(e.__traceback__)) from None
        except E.SimulatorError as err:
            err.trace = self.trace()
            raise
        finally:
            if gc_was:
                gc.enable()
            if timer:
                with lock:
                    finished[0] = True
                timer.cancel()
                if fired.is_set():   # withdraw an exception that has not been delivered yet
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main), None)
        for orig, data in self._writeback:
            orig[...] = data
        return self

    def trace(self):
        if not self.tracing:
            return None
        rec = self.rec
        n = len(rec)
        acc = np.zeros(n, ACCESS_DTYPE)
        sites, lines, canon = [], {}, {}
        if n:
            # records are raw tuples (actor, 4 * array + kind, index, code, lasti), actor being the
            # thread's (block, epoch, warp, warp epoch, thread) at the time of the access; read column
            # by column (no object arrays: building and freeing them cost more than the rest together)
            def col(k):
                return np.fromiter(map(itemgetter(k), rec), dtype=np.int64, count=n)
            # many accesses share one actor tuple (a thread's, until its next barrier): unpack each once
            actor_ids = np.fromiter(map(id, map(itemgetter(0), rec)), dtype=np.int64, count=n)
            _, afirst, ainv = np.unique(actor_ids, return_index=True, return_inverse=True)
            actors = np.fromiter(chain.from_iterable(rec[i][0] for i in afirst.tolist()), dtype=np.int64,
                                 count=5 * len(afirst)).reshape(-1, 5)[ainv.reshape(-1)]
            block, epoch, thread = actors[:, 0], actors[:, 1], actors[:, 4]
            acc["block"], acc["epoch"], acc["thread"] = block, epoch, thread
            ak = col(1)
            acc["array"], acc["kind"] = ak >> 2, ak & 3
            acc["index"] = col(2)
            lastis = col(4)
            code_ids = np.fromiter(map(id, map(itemgetter(3), rec)), dtype=np.int64, count=n)
            _, cinv = np.unique(code_ids, return_inverse=True)
            _, first, inv = np.unique((cinv.astype(np.int64) << 32) | lastis, return_index=True,
                                      return_inverse=True)
            site_of = np.empty(len(first), np.int32)
            for j in np.argsort(first):          # sites numbered in order of first use
                code, lasti = rec[first[j]][3], int(lastis[first[j]])
                ck = canon_site(code, lasti)     # one site per instruction, however Python reports it
                if ck in canon:
                    site_of[j] = canon[ck]
                    continue
                canon[ck] = site_of[j] = len(sites)
                if code not in lines:
                    lines[code] = {off: ln for st, en, ln in code.co_lines() if ln
                                   for off in range(st, en, 2)}
                line = lines[code].get(ck[1], code.co_firstlineno)
                text = linecache.getline(code.co_filename, line).strip()
                sites.append(Site(len(sites), code.co_filename, line, text))
            site = site_of[inv.reshape(-1)]
            acc["site"] = site
            # occ: rank of each access among the same thread's accesses at the same site and epoch
            # (lexsort is stable: equal keys stay in execution order)
            order = np.lexsort((site, epoch, thread, block))
            new_group = np.empty(n, bool)
            new_group[0] = True
            ks = [k[order] for k in (block, thread, epoch, site)]
            np.not_equal(ks[0][1:], ks[0][:-1], out=new_group[1:])
            for k in ks[1:]:
                new_group[1:] |= k[1:] != k[:-1]
            idx = np.arange(n)
            start = np.maximum.accumulate(np.where(new_group, idx, 0))
            acc["occ"][order] = idx - start
        after = {name: a.st.data.reshape(a.st.shape).copy() for name, a in zip(self.params, self.kargs)
                 if isinstance(a, SimArray)}
        return Trace(tuple(self.griddim), tuple(self.blockdim), list(self.arrays), sites, acc,
                     dict(self.before), after)


def _kernel_frame(tb):
    """The innermost frame of a traceback that is not the simulator's (the learner's line)."""
    frame = None
    while tb is not None:
        if not tb.tb_frame.f_globals.get("__name__", "").startswith(_SIM_PREFIX):
            frame = tb.tb_frame
        tb = tb.tb_next
    return frame


def _line(th):
    """Line number and text where a waiting thread waits."""
    f = th.wait[2]
    return f.f_lineno, linecache.getline(f.f_code.co_filename, f.f_lineno).strip()


def _site(th):
    f = th.wait[2]
    return canon_site(f.f_code, f.f_lasti)


_CANON: dict = {}
_OFFSETS: dict = {}


def canon_site(code, lasti):
    """(code, offset of the instruction that owns `lasti`). Python 3.11+ reports a call made from a
    specialised instruction (e.g. BINARY_SUBSCR_GETITEM) at the end of its inline cache instead of
    at the instruction, so one access instruction would otherwise show up as two sites."""
    r = _CANON.get((code, lasti))
    if r is None:
        offs = _OFFSETS.get(code)
        if offs is None:
            offs = _OFFSETS[code] = [i.offset for i in dis.get_instructions(code)]
        r = _CANON[code, lasti] = (code, offs[bisect.bisect_right(offs, lasti) - 1])
    return r


def _poison(shape, dt):
    if dt.kind == "f" or dt.kind == "c":
        return np.full(shape, np.nan, dt)
    if dt.kind in "iu":
        return np.full(shape, np.iinfo(dt).max // 3, dt)
    return np.zeros(shape, dt)
