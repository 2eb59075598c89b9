"""Warp operations over lanes: shuffles as gathers within 32-lane groups, votes as group
reductions, with the greenlet engine's checks: every lane of the mask (that exists) must reach the
same call with the same mask, each lane must be in its own mask, a shuffle must read a lane of the
group (else WarpDivergence)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..trace import WARP_SIZE
from .values import Mixed, V, lanes_of, split, truth

FULL = 0xFFFFFFFF


def _i32(bits: np.ndarray) -> np.ndarray:
    return (bits & FULL).astype(np.uint32).view(np.int32)


class Warps:
    """The warp operations of one launch (run.py owns the block state they read)."""

    def __init__(self, run: Any) -> None:
        self.run = run
        n = run.n
        self.lane = np.arange(n, dtype=np.int64) % WARP_SIZE
        self.base = np.arange(n, dtype=np.int64) - self.lane
        nw = -(-n // WARP_SIZE)
        exist = np.zeros(nw, np.int64)
        for w in range(nw):
            k = min(WARP_SIZE, n - w * WARP_SIZE)
            exist[w] = (1 << k) - 1
        self.exist = exist[np.arange(n) // WARP_SIZE]  # per lane: the lanes its warp has

    def _group(self, op: str, mask: Any) -> np.ndarray:
        """Per lane, the (existing) lanes of its group, after the greenlet engine's checks."""
        run = self.run
        ctl = run.ctl
        m = ctl.m
        if type(mask) is Mixed:
            from .values import as_int

            mask = as_int(mask)
        if type(mask) is V:
            a, _, d = split(mask)
            mk = a.astype(np.int64) & FULL
        else:
            mk = np.full(run.n, int(mask) & FULL, np.int64)
        lane, act = self.lane, ctl.act
        own = (mk >> lane) & 1
        if not own[act].all():
            i = int(act[np.flatnonzero(own[act] == 0)[0]])
            raise run.diag(
                "WarpDivergence",
                f"cuda.{op} with mask {int(mk[i]):#010x}, which does not include this thread's own "
                f"lane {int(lane[i])}: CUDA requires it (undefined behaviour)",
                lane=i,
            )
        group = mk & self.exist
        # lanes active at this call, per warp, as bits
        bits = np.zeros(len(m), np.int64)
        bits[act] = np.int64(1) << lane[act]
        nw = -(-run.n // WARP_SIZE)
        wbits = np.bitwise_or.reduce(np.pad(bits, (0, nw * WARP_SIZE - run.n)).reshape(nw, WARP_SIZE), axis=1)
        here = wbits[np.arange(run.n) // WARP_SIZE]
        missing = group & ~here
        if missing[act].any():
            i = int(act[np.flatnonzero(missing[act])[0]])
            j = (int(missing[i]) & -int(missing[i])).bit_length() - 1
            other = int(self.base[i]) + j
            kernel = ctl.fns[0] if ctl.fns else None
            why = (
                "had already finished the kernel"
                if kernel is not None and kernel.ret is not None and kernel.ret[other]
                else "runs another branch"
            )
            raise run.diag(
                "WarpDivergence",
                f"cuda.{op} with mask {int(mk[i]):#010x} needs every lane in the mask to reach it, but lane "
                f"{j} (thread {run._tidx(other)}) {why}: a real GPU hangs or returns garbage. Call warp "
                "operations where all lanes of the mask reach them, or pass the mask of those that do "
                "(cuda.activemask()).",
                lane=i,
            )
        if type(mask) is V:  # every lane of a group must pass the same mask
            ga = group[act]
            for k, i in enumerate(act.tolist()):
                g = int(ga[k])
                b = int(self.base[i])
                for j in range(WARP_SIZE):
                    if (g >> j) & 1 and mk[b + j] != mk[i]:
                        raise run.diag(
                            "WarpDivergence",
                            f"cuda.{op}: lanes of one group pass different masks",
                            lane=i,
                        )
        run.warp_step()
        self.mk = mk
        return group

    def shuffle(self, op: str, mask: Any, value: Any, arg: Any) -> Any:
        run = self.run
        group = self._group(op, mask)
        ctl = run.ctl
        lane = self.lane
        if type(arg) in (V, Mixed):
            from .values import as_int

            av = as_int(arg) if type(arg) is Mixed else arg
            a = split(av)[0].astype(np.int64)
        else:
            a = np.full(run.n, int(arg), np.int64)
        if op == "shfl_sync":
            src = a % WARP_SIZE
        elif op == "shfl_up_sync":
            src = np.where(lane - a >= 0, lane - a, lane)
        elif op == "shfl_down_sync":
            src = np.where(lane + a < WARP_SIZE, lane + a, lane)
        else:
            src = lane ^ a
            src = np.where(src < WARP_SIZE, src, lane)
        act = ctl.act
        ok = ((group >> np.clip(src, 0, 63)) & 1).astype(bool) & (src >= 0) & (src < WARP_SIZE)
        if not ok[act].all():
            i = int(act[np.flatnonzero(~ok[act])[0]])
            raise run.diag(
                "WarpDivergence",
                f"cuda.{op} in lane {int(lane[i])} reads the value of lane {int(src[i])}, which is not in "
                "the mask or does not exist in this block: on a real GPU the result is undefined",
                lane=i,
            )
        if run.tracing:
            pos = len(run.chunks)
            run.moves.append((run.b, run.epoch, act.copy(), self.base[act] + src[act], pos))  # lanes at once
        if type(value) not in (V, Mixed):
            return value
        srcg = np.where(ctl.m, self.base + src, np.arange(run.n))
        if type(value) is Mixed:
            from .values import combine

            return combine(
                [(mk[srcg] & ctl.m, v if type(v) is not V else V(v.a[srcg], v.w)) for mk, v in value.parts],
                run.n,
            )
        a, w, _ = split(value)
        return V(a[srcg], w)

    def vote(self, op: str, mask: Any, pred: Any) -> Any:
        run = self.run
        group = self._group(op, mask)
        ctl = run.ctl
        n = run.n
        if op == "eq_sync":
            vals = lanes_of(pred, n)
            out = np.zeros(n, bool)
            for i in ctl.act.tolist():
                g, b = int(group[i]), int(self.base[i])
                ls = [b + j for j in range(WARP_SIZE) if (g >> j) & 1]
                out[i] = all(vals[x] == vals[ls[0]] for x in ls)
            return V(out, True)
        t = truth(pred)
        t = np.broadcast_to(np.asarray(t, bool), (n,))
        bits = np.zeros(n, np.int64)
        bits[t] = np.int64(1) << self.lane[t]
        nw = -(-n // WARP_SIZE)
        wb = np.bitwise_or.reduce(np.pad(bits, (0, nw * WARP_SIZE - n)).reshape(nw, WARP_SIZE), axis=1)
        mine = wb[np.arange(n) // WARP_SIZE] & group
        if op == "ballot_sync":
            return V(_i32(mine), False)
        if op == "any_sync":
            return V(mine != 0, True)
        return V(mine == group, True)  # all_sync

    def match(self, op: str, mask: Any, value: Any) -> Any:
        run = self.run
        group = self._group(op, mask)
        ctl = run.ctl
        n = run.n
        vals = lanes_of(value, n)
        out = np.zeros(n, np.int64)
        same = np.zeros(n, bool)
        for i in ctl.act.tolist():
            g, b = int(group[i]), int(self.base[i])
            ls = [j for j in range(WARP_SIZE) if (g >> j) & 1]
            out[i] = sum(1 << j for j in ls if vals[b + j] == vals[i])
            same[i] = all(vals[b + j] == vals[b + ls[0]] for j in ls)
        if op == "match_any_sync":
            return V(_i32(out), False)
        return (V(_i32(np.where(same, self.mk, 0)), False), V(same, True))

    def syncwarp(self, mask: Any) -> None:
        self._group("syncwarp", mask)
        run = self.run
        run.wepoch[run.ctl.act] += 1
        run.wepoch_used = True

    def activemask(self) -> Any:
        run = self.run
        ctl = run.ctl
        n = run.n
        bits = np.zeros(n, np.int64)
        bits[ctl.act] = np.int64(1) << self.lane[ctl.act]
        nw = -(-n // WARP_SIZE)
        wb = np.bitwise_or.reduce(np.pad(bits, (0, nw * WARP_SIZE - n)).reshape(nw, WARP_SIZE), axis=1)
        run.warp_step()
        return V(wb[np.arange(n) // WARP_SIZE], True)
