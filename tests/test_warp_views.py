"""What the pictures say about warps: a warp access is the instruction the warp issued (divergent
loops included), and values that travelled through shuffles feed the write they reached."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numba import cuda

import puzzles
from helpers import metrics, sim
from helpers.viz import analysis as an

WARP = 32
ROW_LENGTHS = [33, 40, 5, 70, 31, 64, 1, 45]  # lanes run different numbers of trips in most rows


@cuda.jit
def warp_per_row(out, data, starts, nrows):
    lane = cuda.threadIdx.x % 32
    for r in range(cuda.threadIdx.x // 32, nrows, cuda.blockDim.x // 32):  # a warp loops over rows
        s = 0.0
        for j in range(starts[r] + lane, starts[r + 1], 32):  # lanes strided over the row: coalesced
            s += data[j]
        if lane == 0:
            out[r] = s


def _rows_case():
    starts = np.r_[0, np.cumsum(ROW_LENGTHS)].astype(np.int64)
    data = np.random.default_rng(0).uniform(-1, 1, starts[-1]).astype(np.float32)
    return np.zeros(len(ROW_LENGTHS), np.float32), data, starts, len(ROW_LENGTHS)


def _data_accesses(trace):
    aid = trace.array("data").id
    return [w for w in trace.warp_accesses(space="global") if w.array == aid]


@pytest.mark.parametrize("engine", ["lockstep", "auto"])
def test_a_warp_access_in_a_divergent_loop_is_one_row_of_the_warp(engine):
    out, data, starts, n = _rows_case()
    trace = sim.launch(warp_per_row, 1, 64, (out, data, starts, n), engine=engine).trace
    accesses = _data_accesses(trace)
    for w in accesses:
        row = int(np.searchsorted(starts, w.indices[0], side="right") - 1)
        assert (w.indices >= starts[row]).all() and (w.indices < starts[row + 1]).all(), "mixes rows"
        assert ((w.indices - starts[row]) % WARP == w.lanes).all(), "mixes trips"
    # every row's elements are read by ceil(len / 32) warp instructions
    assert len(accesses) == sum(-(-m // WARP) for m in ROW_LENGTHS)
    eff = [c.efficiency for c in metrics.coalescing(trace) if c.access.array == trace.array("data").id]
    assert min(eff) >= 0.5  # a row's tail (one element) needs one sector: never worse than half here


def test_grouping_by_a_lanes_own_trip_count_would_mix_rows():
    """The negative control: without the issued instruction (as the greenlet engine records), the
    n-th execution of the load is another row for lanes that ran more trips in an earlier row."""
    out, data, starts, n = _rows_case()
    trace = sim.launch(warp_per_row, 1, 64, (out, data, starts, n), engine="lockstep").trace
    acc = trace.acc.copy()
    acc["issue"] = -1
    blind = dataclasses.replace(trace, acc=acc)
    mixed = 0
    for w in _data_accesses(blind):
        rows = np.searchsorted(starts, w.indices, side="right") - 1
        mixed += len(np.unique(rows)) > 1
    assert mixed > 0


def _warp_sum_edges(engine, drop_moves=False):
    p = puzzles.get("warp_sum")
    case = p.cases(np.random.default_rng(0))[0]
    args = tuple(np.copy(v) if isinstance(v, np.ndarray) else v for v in case.args.values())
    trace = sim.launch(p.reference, case.grid, case.block, args, engine=engine).trace
    if drop_moves:
        trace = dataclasses.replace(trace, moves=trace.moves[:0])
    a, o = trace.array("a").id, trace.array("out").id
    e = an.edges(trace, 0)
    fed = e[(e["dst_array"] == o) & (e["dst_index"] == 0) & (e["src_array"] == a)]
    return set(fed["src_index"].tolist()), int(case.args["size"])


@pytest.mark.parametrize("engine", ["greenlet", "lockstep"])
def test_a_warp_reduction_write_is_fed_by_every_lanes_read(engine):
    fed, size = _warp_sum_edges(engine)
    assert fed == set(range(size))


def test_without_the_shuffles_only_the_writers_own_read_feeds_it():
    fed, size = _warp_sum_edges("lockstep", drop_moves=True)
    assert fed == {0} and size > 1


def test_both_engines_record_the_same_shuffles():
    p = puzzles.get("warp_scan")
    case = p.cases(np.random.default_rng(1))[0]
    got = []
    for engine in ("greenlet", "lockstep"):
        args = tuple(np.copy(v) if isinstance(v, np.ndarray) else v for v in case.args.values())
        trace = sim.launch(p.reference, case.grid, case.block, args, engine=engine).trace
        got.append(sorted(trace.moves.tolist()))
    assert got[0] == got[1] and len(got[0]) > 0
