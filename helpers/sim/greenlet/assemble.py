"""Trace assembly: the launch's raw access records turned into a `Trace` (helpers.sim.trace).

Records are raw tuples (actor, 4 * array + kind, flat index, code, lasti), actor being the thread's
(block, epoch, warp, warp epoch, thread) at the time of the access, appended on the hot path.
"""

from __future__ import annotations

import linecache
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from ..trace import ACCESS_DTYPE, ArrayInfo, Site, Trace, moves_table
from .threads import canon_site


def build(
    rec: list,
    griddim: tuple,
    blockdim: tuple,
    arrays: list[ArrayInfo],
    before: dict,
    after: dict,
    moves: list = (),
) -> Trace:
    n = len(rec)
    acc = np.zeros(n, ACCESS_DTYPE)
    acc["issue"] = -1  # threads run one by one here: which instruction a warp issued is unknown
    sites: list[Site] = []
    lines: dict = {}
    canon: dict = {}
    if n:
        # read column by column (no object arrays: building and freeing them cost more than the rest)
        def col(k: int) -> np.ndarray:
            return np.fromiter(map(itemgetter(k), rec), dtype=np.int64, count=n)

        # many accesses share one actor tuple (a thread's, until its next barrier): unpack each once
        actor_ids = np.fromiter(map(id, map(itemgetter(0), rec)), dtype=np.int64, count=n)
        _, afirst, ainv = np.unique(actor_ids, return_index=True, return_inverse=True)
        actors = np.fromiter(
            chain.from_iterable(rec[i][0] for i in afirst.tolist()), dtype=np.int64, count=5 * len(afirst)
        ).reshape(-1, 5)[ainv.reshape(-1)]
        block, epoch, thread = actors[:, 0], actors[:, 1], actors[:, 4]
        acc["block"], acc["epoch"], acc["thread"] = block, epoch, thread
        ak = col(1)
        acc["array"], acc["kind"] = ak >> 2, ak & 3
        acc["index"] = col(2)
        lastis = col(4)
        code_ids = np.fromiter(map(id, map(itemgetter(3), rec)), dtype=np.int64, count=n)
        _, cinv = np.unique(code_ids, return_inverse=True)
        _, first, inv = np.unique(
            (cinv.astype(np.int64) << 32) | lastis, return_index=True, return_inverse=True
        )
        site_of = np.empty(len(first), np.int32)
        for j in np.argsort(first):  # sites numbered in order of first use
            code, lasti = rec[first[j]][3], int(lastis[first[j]])
            ck = canon_site(code, lasti)  # one site per instruction, however Python reports it
            if ck in canon:
                site_of[j] = canon[ck]
                continue
            canon[ck] = site_of[j] = len(sites)
            line = line_of(code, ck[1], lines)
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
    # a shuffle's position: the number of records made before it (acc rows are in record order)
    moved = moves_table(acc, np.arange(n), moves, int(np.prod(blockdim)))
    return Trace(tuple(griddim), tuple(blockdim), list(arrays), sites, acc, dict(before), after, moved)


def line_of(code: Any, offset: int, cache: dict | None = None) -> int:
    """Source line of the instruction at `offset` in `code`."""
    cache = {} if cache is None else cache
    if code not in cache:
        cache[code] = {off: ln for st, en, ln in code.co_lines() if ln for off in range(st, en, 2)}
    return cache[code].get(offset, code.co_firstlineno)
