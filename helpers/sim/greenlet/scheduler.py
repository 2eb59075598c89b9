# Over 400 lines: one launch's state and its threads' interleaving; the parts that split off live beside it.
"""One simulated launch: blocks one after another, the threads of a block as greenlets that the
scheduler interleaves at barriers and warp operations.

Deterministic: threads run in thread-id order until each blocks (at a barrier or a warp
operation) or ends; then warp operations whose lanes have all arrived complete, then the block's
barrier releases. Nothing depends on wall time (the step budget stops a runaway; the wall clock is
only a backstop for loops that never call into the simulator).

The concerns live beside it (helpers/sim/greenlet/): spaces.py (arguments, shared, local, constant
memory), memory.py (checked arrays, race state), barriers.py, warps.py, assemble.py (trace
assembly), grid.py (cooperative groups' grid barrier: blocks run together), spin.py (spin-waits
that never end), races.py (a race's message and the fix that fits it), order.py (which work memory
one block may read of another's); and shared with the lockstep engine (helpers/sim/): binding.py (launch
validation), semantics.py (what operations mean), messages.py (every diagnostic's header),
options.py (the launch's options).
"""

from __future__ import annotations

import gc
import time
from functools import partial
from types import FrameType
from typing import Any, Sequence

import numpy as np
from greenlet import greenlet

from .. import binding
from .. import errors as E
from ..kernel import py_func, rebind
from ..messages import at_thread, diagnostic, kernel_frame, plain_words, runaway_text, source_at, user_frame
from ..options import Options
from ..semantics import SPIN_CHECK, Dim3
from ..trace import WARP_SIZE, ArrayInfo, Trace
from . import assemble, barriers, grid, order, races, spin, warps
from .api import ALIASES, SimCuda
from .memory import SimArray
from .spaces import Spaces, bind_arg
from .threads import BAR, DONE, GRID, RUN, SPIN, WARP, Thread, Wait
from .wallclock import Timeout, WallClock

# diagnostics held back while some threads of the block wait at a barrier: the thread that raised
# one may have skipped that barrier, and then the divergence is the verdict (the same on every seed)
_HELD = (E.DataRace, E.UninitializedRead, E.OutOfBounds)


class Run:
    def __init__(
        self, kernel: Any, griddim: Any, blockdim: Any, args: Sequence[Any], opts: Options | None = None
    ) -> None:
        import numba
        import numba.cuda as real_cuda

        self.griddim, self.blockdim = Dim3(griddim), Dim3(blockdim)
        threads = int(np.prod(self.griddim)) * int(np.prod(self.blockdim))
        self.opts = opts = (opts or Options()).resolved(threads)
        binding.check_dims(self.griddim, self.blockdim, opts.shared_bytes)
        self.fn0 = py_func(kernel)
        self.api = SimCuda(self)
        aliases = {id(getattr(real_cuda, n)): n for n in ALIASES if hasattr(real_cuda, n)}
        self.fn = rebind(kernel, self.api, real_cuda, numba, aliases)
        code = self.fn0.__code__
        self.params = code.co_varnames[: code.co_argcount]
        binding.check_arity(self.fn0, self.params, args)
        self.tracing, self.races = opts.trace, opts.races
        # `max_steps` is the next step count at which `step` looks (the hot path compares with it):
        # the limit, or earlier, to look for spin-waits (`next_look`: the counted look, every
        # SPIN_CHECK steps; earlier while a thread spins: an uncounted look for others like it)
        self.steps, self.step_limit, self.timeout = 0, opts.max_steps, opts.timeout
        self.max_steps = self.next_look = min(self.step_limit, SPIN_CHECK)
        self.spin_like: set = set()  # (addresses, values) the spinning threads watch (spin.py)
        self.rec: list = []
        self.moves: list = []  # (block, epoch, thread, src thread, len(rec)) per lane a shuffle fed
        self.arrays: list[ArrayInfo] = []
        self.storages: dict = {}  # array id -> its latest Storage (this block's, for shared)
        self.cur: Thread | None = None
        self.before: dict = {}
        self.writeback: list = []
        self.kargs = [
            bind_arg(self, name, a, opts.roles.get(name, "inout")) for name, a in zip(self.params, args)
        ]
        self.order = binding.block_order(opts.block_order, int(np.prod(self.griddim)), opts.seed)
        self.hb = None  # blocks that talk through work memory: their reads are ordered by atomics
        if not opts.cross_block_races and len(self.order) > 1 and "scratch" in opts.roles.values():
            self.hb = order.BlockOrder()
            for k in self.kargs:
                if isinstance(k, SimArray) and self.arrays[k.st.aid].role == "scratch":
                    k.st.hb = True
        self.spaces = Spaces(self)
        self.spin_probe: tuple | None = None  # the last look for a spin-wait (spin.py)
        self.warp_pending = False  # some thread waits at a warp operation
        self.held = False  # some thread holds back a diagnostic (see `fail`)
        self.deferred: list = []  # uninitialised reads run past (Options.defer_uninit), first few
        self.any_spin = False  # some thread of the block is in state SPIN
        self.coop = grid.uses_grid_sync(self.fn0)  # blocks run together, for a grid barrier
        self.parked: dict = {}  # block -> its saved state, while it waits at the grid barrier
        self.grid_sched: Any = None
        self.grid_held: list = []  # errors held in a kernel with a grid barrier, in the order found
        self._resident_checked = False
        self._tidxs: list | None = None  # threadIdx of each thread, shared by all blocks
        self._waits: list | None = None

    @property
    def static_shared_max(self) -> int:
        return self.spaces.static_shared_max

    def add_array(self, name: str, space: str, shape: tuple, dtype: Any, role: str = "") -> int:
        info = ArrayInfo(len(self.arrays), name, space, tuple(shape), np.dtype(dtype), role)
        self.arrays.append(info)
        return info.id

    # --- limits
    def step(self) -> None:
        """Called (by the hot paths, after counting their step) once `steps` passes `max_steps`."""
        if self.steps <= self.next_look:  # an early look, not counted
            self._look_next()
            if self.cur is not None and spin.spins_like_another(self):
                self._spin(self.cur, spin.EARLY)
            return
        self.steps += 1
        if self.steps > self.step_limit:
            raise self.error(E.Runaway, runaway_text(self.step_limit))
        self.next_look = min(self.step_limit, self.steps + SPIN_CHECK)
        self._look_next()
        if self.tracing and self.cur is not None and spin.looks_stuck(self):
            # the steps it took to see the spin are not the kernel's work: the budget gets them back,
            # so a spin-wait nobody ends is the Deadlock it is, however many threads spin
            self._spin(self.cur, 3 * SPIN_CHECK)

    def _spin(self, t: Thread, refund: int) -> None:
        """Let the other threads run: one of them may set what `t` waits for."""
        self.step_limit += refund
        t.state, t.result = SPIN, self.spin_probe  # what it watches, and the values it saw
        self.spin_like.add(self.spin_probe[2:])
        self._look_next()
        self.any_spin = True
        self._yield(t)

    def _look_next(self) -> None:
        """The next look: the counted one, or an early one while a thread spins."""
        self.max_steps = min(self.next_look, self.steps + spin.EARLY) if self.spin_like else self.next_look

    # --- diagnostics (memory.py raises through these)
    def error(
        self,
        cls: type[E.SimulatorError],
        msg: str,
        depth: int = 0,
        *,
        array: str | None = None,
        index: Any = None,
        thread: Thread | None = None,
        frame: FrameType | None = None,
    ) -> E.SimulatorError:
        return at_thread(cls, msg, thread or self.cur, frame or user_frame(), array=array, index=index)

    def who(self, actor: tuple) -> str:
        b, _, _, _, t = actor
        return f"thread {self.tidx_of(t)} of block {self.bidx_of(b)}"

    def tidx_of(self, t: int) -> tuple:
        bx, by, _ = self.blockdim
        return (t % bx, (t // bx) % by, t // (bx * by))

    def bidx_of(self, b: int) -> tuple:
        gx, gy, _ = self.griddim
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def race(
        self, st: Any, flat: int, idx: Any, verb: str, other: tuple, other_verb: str, depth: int
    ) -> E.SimulatorError:
        """The DataRace to `fail` with. A thread that already holds an error keeps it (`fail` drops any
        later one), so its diagnosis, which searches the trace, is not made."""
        if self.cur.error is not None:
            return self.cur.error
        return races.diagnose(self, st, flat, idx, verb, other, other_verb)

    def fail(self, err: E.SimulatorError) -> None:
        """Raise `err`, or hold it back when other threads of the block wait at a barrier in this
        thread's barrier interval: this thread may have skipped that barrier, and then the divergence is
        the verdict (the same on every seed and block order). A held thread runs on; the error is
        raised when it reaches the barrier after all, or named second to the divergence."""
        t = self.cur
        if t.error is None:
            # a kernel with a grid barrier holds every such error: this block, or another, may skip the
            # grid barrier, and then that divergence leads, whichever block ran first (see _run_grid)
            if not self.coop and not any(o.state == BAR and o.epoch == t.epoch for o in self.threads):
                raise err
            t.error = err
            self.held = True
            if self.coop:
                self.grid_held.append(err)

    def touched_since_barrier(self, th: Thread) -> bool:
        """Did `th` access memory, in its current barrier interval, at a line below the barrier the
        others wait at? (Unknown without a trace: then assume it did.)"""
        if not self.tracing:
            return True
        waiting = next((o for o in self.threads if o.state == BAR), None)
        bar_line = source_at(waiting.wait.frame)[0] if waiting else 0
        for r in reversed(self.rec):
            a = r[0]
            if a[0] == th.b and a[4] == th.t:
                if a[1] != th.epoch:
                    return False
                if (
                    r[3].co_name == waiting.wait.frame.f_code.co_name
                    and assemble.line_of(r[3], r[4]) > bar_line
                ):
                    return True
        return False

    # --- memories (api.py calls these)
    def shared_array(self, shape: Any, dtype: Any, frame: FrameType) -> SimArray:
        return self.spaces.shared_array(shape, dtype, frame)

    def local_array(self, shape: Any, dtype: Any, frame: FrameType) -> SimArray:
        return self.spaces.local_array(shape, dtype, frame)

    def const_array(self, ary: Any, frame: FrameType) -> SimArray:
        return self.spaces.const_array(ary, frame)

    # --- barriers and warps (the hot path: kept here, beside the thread switch)
    def barrier(self, op: str, pred: Any, frame: FrameType) -> Any:
        t = self.cur
        w = t.wait
        w.op, w.pred, w.frame = op, pred, frame
        t.state = BAR
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

    def warp_op(self, op: str, mask: Any, value: Any, arg: Any, frame: FrameType) -> Any:
        t = self.cur
        mask = int(mask) & 0xFFFFFFFF
        if not (mask >> t.lane) & 1:
            raise self.error(
                E.WarpDivergence,
                f"cuda.{op} with mask {mask:#010x}, which does not include "
                f"this thread's own lane {t.lane}: CUDA requires it (undefined behaviour)",
            )
        w = t.wait
        w.op, w.mask, w.value, w.arg, w.frame = op, mask, value, arg, frame
        t.state = WARP
        self.warp_pending = True
        self.steps += 1
        if self.steps > self.max_steps:
            self.step()
        self._yield(t)
        return t.result

    def activemask(self, frame: FrameType) -> int:
        # threads run one at a time here, so which lanes are active is only known once every lane of
        # the warp has arrived here, finished, or blocked elsewhere: wait like a warp operation
        t = self.cur
        w = t.wait
        w.op, w.mask, w.value, w.arg, w.frame = "activemask", 0, None, None, frame
        t.state = WARP
        self.warp_pending = True
        self.steps += 1
        if self.steps > self.max_steps:
            self.step()
        self._yield(t)
        return t.result

    def grid_sync(self, frame: FrameType) -> None:
        t = self.cur
        if not self._resident_checked:
            grid.check_residency(self, t, frame)
            self._resident_checked = True
        w = t.wait
        w.op, w.pred, w.frame = "cg.this_grid().sync", None, frame
        t.state = GRID
        self.steps += 1
        if self.steps > self.max_steps:
            self.step()
        self._yield(t)

    def _park(self, b: int) -> None:
        """This block waits at the grid barrier: hand over to the grid scheduler until it releases."""
        sp = self.spaces
        self.parked[b] = {
            "threads": self.threads,
            "warps": self.warps,
            "sched": self.sched,
            "blockIdx": self.api.blockIdx,
            "spaces": (sp.block_shared, sp.static_shared, sp.dynamic, sp.dynamic_state),
        }
        self.grid_sched.switch()
        st = self.parked.pop(b)
        self.threads, self.warps, self.sched = st["threads"], st["warps"], st["sched"]
        self.api.blockIdx = st["blockIdx"]
        sp.block_shared, sp.static_shared, sp.dynamic, sp.dynamic_state = st["spaces"]
        self.warp_pending = self.held = False

    def _run_grid(self) -> None:
        """All blocks at once (a kernel with a grid barrier): round-robin until each parks or ends."""
        self.grid_sched = greenlet.getcurrent()
        blocks = {b: greenlet(partial(self._run_block, b)) for b in self.order}
        while True:
            for b in self.order:
                if not blocks[b].dead:
                    blocks[b].switch()
            alive = [b for b in self.order if not blocks[b].dead]
            if not alive:
                if self.grid_held:  # every block reached every grid barrier: the held error stands
                    raise self.grid_held[0]
                return
            done = [b for b in self.order if blocks[b].dead]
            if done:
                raise grid.unfinished(self, done, self.parked)
            if self.grid_held:
                raise self.grid_held[0]
            grid.release(self, self.parked)

    def _yield(self, t: Thread) -> None:
        """Block `t`: switch straight to the next runnable thread of this round, or back to the scheduler."""
        threads = self.threads
        for i in range(t.t + 1, len(threads)):
            nxt = threads[i]
            if nxt.state == RUN:
                if not nxt.g:  # not started: start it from the scheduler, or stacks would nest
                    break
                self.cur = nxt
                self.api.threadIdx, self.api.laneid = nxt.tidx, nxt.lane
                nxt.g.switch()
                return
        self.sched.switch()

    # --- running
    def _thread_main(self, th: Thread) -> None:
        try:
            self.fn(*self.kargs)
        except _HELD as err:
            if th.error is None and any(o.state in (BAR, GRID) and o.epoch == th.epoch for o in self.threads):
                th.error = err  # decided when the barrier resolves (see barriers.resolve)
                th.killed = self.held = True
                if self.coop:
                    self.grid_held.append(err)
                return
            if th.error is not None:
                return  # a thread running on after a held error: it has left the barrier
            raise
        except E.SimulatorError:
            if th.error is not None:
                return
            raise
        except (Exception, SystemExit, KeyboardInterrupt) as e:  # never leave the launch
            if th.error is not None and not isinstance(e, (SystemExit, KeyboardInterrupt)):
                return  # garbage from a held error's poison value: the held error speaks
            frame, line = kernel_frame(e.__traceback__)
            line, src = source_at(frame, line)
            what = {
                SystemExit: "exit the program (sys.exit or raise SystemExit)",
                KeyboardInterrupt: "raise KeyboardInterrupt",
            }.get(type(e))
            msg = (
                f"the kernel tried to {what}: a GPU kernel cannot stop the program; the simulator "
                "stopped the kernel instead"
                if what
                else f"the kernel raised {type(e).__name__}: {plain_words(str(e))}"
            )
            raise diagnostic(
                E.KernelException, msg, block=th.bidx, thread=th.tidx, line=line, source=src
            ) from (e if what is None else None)

    def _run_block(self, b: int) -> None:
        bidx = Dim3(self.bidx_of(b))
        self.api.blockIdx = bidx
        self.spaces.reset_block()
        n = int(np.prod(self.blockdim))
        if self._tidxs is None:
            self._tidxs = [Dim3(self.tidx_of(t)) for t in range(n)]
        if self.coop or self._waits is None:
            self._waits = [Wait() for _ in range(n)]
        waits = self._waits
        threads = self.threads = [Thread(b, t, tidx, bidx, waits[t]) for t, tidx in enumerate(self._tidxs)]
        self.warps = [threads[w : w + WARP_SIZE] for w in range(0, n, WARP_SIZE)]
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
                last = self.cur  # threads hand over to each other; `last` gave control back
                if last.g.dead:
                    last.state = DONE
                i = last.t + 1
            if self.coop and any(th.state == GRID for th in threads):
                if all(th.state in (GRID, DONE) for th in threads):
                    if any(th.state == DONE for th in threads):
                        raise grid.partial_block(self, threads)
                    self._park(b)
                    continue
            if self.any_spin:
                self.any_spin = False
                spinning = [th for th in threads if th.state == SPIN]
                if spinning:
                    if spin.anything_changed(self, spinning):  # one of them may see it: look again
                        for th in spinning:
                            th.state = RUN
                        self.spin_like.clear()  # none spins now: no early looks until one does again
                        self._look_next()
                        continue
                    raise spin.stuck(self, spinning)
            if threads[-1].state == DONE and all(th.state == DONE for th in threads):
                held = next((th.error for th in threads if th.error is not None), None)
                if held is not None and not self.coop:  # (a grid's held errors: see _run_grid)
                    raise held
                return
            if self.warp_pending:
                self.warp_pending = False
                if warps.resolve_warps(self):
                    continue
            barriers.resolve(self, threads)

    def execute(self) -> "Run":
        limit = self.timeout
        if self.opts.deadline is not None:  # the caller's budget for a whole check
            limit = max(0.001, min(limit or float("inf"), self.opts.deadline - time.monotonic()))
        self.timeout = limit
        clock = WallClock(limit)
        # the launch allocates millions of small objects (records, actors) and no cycles worth
        # collecting before it ends: the cyclic collector would only rescan them, over and over
        gc_was = gc.isenabled()
        gc.disable()
        try:
            try:
                clock.start()  # inside the try: a deadline almost spent may fire at once
                if self.coop:
                    self._run_grid()
                else:
                    for b in self.order:
                        self._run_block(b)
            finally:
                # first thing after the run, before any handling: the clock can no longer fire, and
                # one that fired withdraws what it has not delivered (else a Timeout could land in
                # the middle of reporting another verdict and leave the launch as itself)
                clock.stop()
                if gc_was:
                    gc.enable()
        except Timeout as e:
            clock.stop()  # delivered inside the `finally` above, before the clock was stopped
            if gc_was:
                gc.enable()
            raise self.error(
                E.Runaway,
                f"the kernel ran for more than {self.timeout:g} s in the simulator: "
                "most likely a loop that never ends. Raise helpers.sim.config.timeout if it "
                "really needs longer.",
                frame=kernel_frame(e.__traceback__)[0],
            ) from None
        except E.SimulatorError as err:
            err.trace = self.trace()
            if self.deferred and err is not self.deferred[0]:
                err.secondary = list(self.deferred)
            raise
        for orig, data in self.writeback:
            orig[...] = data
        if self.deferred:  # the run went to its end: its outputs are there to judge the read by
            err = self.deferred[0]
            err.trace, err.completed = self.trace(), True
            raise err
        return self

    def trace(self) -> Trace | None:
        if not self.tracing:
            return None
        after = {
            name: a.st.data.reshape(a.st.shape).copy()
            for name, a in zip(self.params, self.kargs)
            if isinstance(a, SimArray)
        }
        return assemble.build(
            self.rec, self.griddim, self.blockdim, self.arrays, self.before, after, self.moves
        )
