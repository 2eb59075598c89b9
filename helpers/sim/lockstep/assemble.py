"""Lockstep's trace assembly: the launch's access chunks (block, epoch, lanes, indices, array and
kind, site, occurrence) turned into a `Trace` (helpers.sim.trace), sites numbered in order of first
use as the greenlet engine numbers them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..trace import ACCESS_DTYPE, Site, Trace
from .transform import site_info


def assemble(run: Any) -> Trace:
    chunks = run.chunks
    order = sorted(run.first, key=run.first.get)
    site_map = np.zeros(max(run.first, default=0) + 1, np.int32)
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
            [np.full(ln, c[3], np.int64) if sc else c[3] for c, ln, sc in zip(chunks, lens.tolist(), scal)]
        )
        oscal = [type(c[6]) is not np.ndarray for c in chunks]
        occ = np.repeat(np.array([c[6] if sc else 0 for c, sc in zip(chunks, oscal)], np.int32), lens)
        if not all(oscal):
            ends = np.cumsum(lens).tolist()
            for k in np.flatnonzero(~np.array(oscal)).tolist():
                occ[ends[k] - lens[k] : ends[k]] = chunks[k][6]
        acc["index"], acc["occ"] = index, occ
    after = {st.name: st.data.reshape(st.shape).copy() for st in run.globals_st}
    return Trace(
        tuple(run.griddim), tuple(run.blockdim), list(run.arrays), sites, acc, dict(run.before), after
    )
