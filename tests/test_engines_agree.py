"""The simulator's two engines agree: every registered puzzle's reference, stub,
variants and mutants go through the harness on one seed, once on the greenlet engine (the reference
engine) and once on "auto" (lockstep, falling back to greenlet on anything unsupported and on any
diagnostic). They must agree on the verdict (its class and text), the diagnostic (its class and
where it points: block, thread, line, array, index), the budget broken, and for every case run the
outputs, the trace as a multiset of rows and the numbers the views draw from it. Since "auto" re-runs
every diagnosis on greenlet, a kernel greenlet diagnoses is also run on "lockstep" alone, which must
name the same class (or Unsupported). Disagreements found and not fixed yet are listed, per kernel, in
KNOWN_DISAGREEMENTS.

The comparison functions are tested on doctored records (a wrong output, a trace missing a row, a
different diagnostic class) and on a fake "auto" engine, so this test can fail. A coverage test
keeps the fast path alive: the speed benchmark's scan and tiled matmul, and the references listed in
LOCKSTEP_REFERENCES, must run on lockstep without falling back."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import os
import re
from collections import Counter
from typing import Any, Callable, Iterator

import numpy as np
import pytest
from support import checked, stub_kernel
from test_exercises import CONTROLS, NAMES, seeds

import puzzles
from helpers import metrics, sim
from helpers.check import KernelDiagnosed, OverBudget, PuzzleFailure, Result, check
from helpers.puzzle import BEGIN, RunRecord
from helpers.sim import errors as E
from helpers.sim.trace import KIND_NAMES, Trace

ENGINES = ("greenlet", "auto")  # the reference engine first


@contextlib.contextmanager
def engine(name: str) -> Iterator[None]:
    """`helpers.sim.config.engine` set to `name` for the block, put back whatever happens."""
    before = sim.config.engine
    sim.config.engine = name
    try:
        yield
    finally:
        sim.config.engine = before


# ----------------------------------------------------------------------------- what a check did


@dataclasses.dataclass
class Outcome:
    """What one check of one kernel produced, in comparable form."""

    verdict: str  # "Passed" or the PuzzleFailure subclass's name
    message: str  # the verdict's text (repr of the Result for a pass), volatile parts removed
    diagnostic: str | None  # KernelDiagnosed: the helpers.sim.errors class's name
    where: tuple | None  # KernelDiagnosed: the diagnostic's (block, thread, line, source, array, index)
    budget: tuple | None  # OverBudget: (field, count, limit)
    maxima: dict  # a pass: the most per thread of each budget field
    runs: list  # RunRecords: every case's for a pass, the failing case's for a failure


_VOLATILE = (
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x?"),  # object addresses in a repr
)


def normalised(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def _plain(x: Any) -> Any:
    """`x` with NumPy scalars and arrays as Python values, for == and a readable repr."""
    if isinstance(x, (np.ndarray, np.generic)):
        return x.tolist()
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def where(err: BaseException | None) -> tuple | None:
    if err is None:
        return None
    return _plain(
        tuple(getattr(err, f, None) for f in ("block", "thread", "line", "source", "array", "index"))
    )


_TIMED_OUT = "the kernel ran for more than"  # Runaway by wall time: where it stopped is chance
_WHERE_LINE = re.compile(r"^block \(.*?\), thread \(.*?\), line \d+: `.*`$", re.M)


def timed_out(err: BaseException | None) -> bool:
    """A Runaway raised by the clock: which thread and line it stopped at, the seconds in its text and
    the accesses made before it depend on the machine's speed, on either engine."""
    return isinstance(err, E.Runaway) and _TIMED_OUT in str(err)


def summarize(got: Result | PuzzleFailure) -> Outcome:
    """An Outcome from what `check` returned or raised."""
    if isinstance(got, Result):
        return Outcome("Passed", normalised(repr(got)), None, None, None, _plain(got.maxima), list(got.runs))
    diag = got.diagnostic if isinstance(got, KernelDiagnosed) else None
    message = normalised(str(got))
    if timed_out(diag):
        message = _WHERE_LINE.sub("<where it stopped>", message)
        message = re.sub(rf"{_TIMED_OUT} [0-9.e+-]+ s", f"{_TIMED_OUT} ? s", message)
    return Outcome(
        type(got).__name__,
        message,
        type(diag).__name__ if diag is not None else None,
        "wherever the clock stopped it" if timed_out(diag) else where(diag),
        _plain((got.field, got.count, got.limit)) if isinstance(got, OverBudget) else None,
        {},
        [got.run] if got.run is not None else [],
    )


def outcome(puzzle_name: str, kernel: Callable, seed: int, engine_name: str, fresh: bool = False) -> Outcome:
    """Check `kernel` on `puzzle_name` (simulator only) with `engine_name` as the sim's engine; the
    check test_exercises.py made where it made it ("auto"), unless `fresh` (a patched engine)."""
    with engine(engine_name):
        try:
            got = checked(puzzles.get(puzzle_name), kernel, seed, fresh=fresh)
        except Exception as crash:  # noqa: BLE001 - an engine's own bug: a verdict to compare, named
            return Outcome(f"crashed: {type(crash).__name__}", str(crash), None, None, None, {}, [])
    return summarize(got)


# ----------------------------------------------------------------------------- comparisons

_ROW_FIELDS = ("block", "thread", "array", "index", "kind", "epoch", "site", "occ")


def _array_key(info) -> tuple:
    return (info.name, info.space, tuple(info.shape), np.dtype(info.dtype).str, info.role)


def canonical_rows(trace: Trace) -> np.ndarray:
    """The trace's rows as a sorted (rows, 8) int64 matrix in which array and site ids are replaced
    by ranks of engine-independent keys: an array by (name, space, shape, dtype, role), a site by its
    (file, line, text) and the multiset of its own rows. Two traces give equal matrices exactly when
    they hold the same accesses, whatever order each engine met (and so numbered) arrays and sites in."""
    acc = trace.acc
    if len(acc) == 0:
        return np.zeros((0, len(_ROW_FIELDS)), np.int64)
    keys = [_array_key(a) for a in trace.arrays]
    keys = [(k, sum(1 for j in keys[:i] if j == k)) for i, k in enumerate(keys)]  # twins: by order
    rank = {k: r for r, k in enumerate(sorted(set(keys)))}
    cols = {f: acc[f].astype(np.int64) for f in _ROW_FIELDS}
    cols["array"] = np.asarray([rank[k] for k in keys], np.int64)[cols["array"]]
    rest = [f for f in _ROW_FIELDS if f != "site"]
    mat = np.stack([cols[f] for f in rest], axis=1)
    order = np.lexsort([mat[:, j] for j in reversed(range(mat.shape[1]))] + [cols["site"]])
    mat, site = mat[order], cols["site"][order]
    ids, starts = np.unique(site, return_index=True)
    ends = np.r_[starts[1:], len(site)]
    site_key = {}
    for s, a, b in zip(ids.tolist(), starts.tolist(), ends.tolist()):
        info = trace.sites[s]
        site_key[s] = (info.filename, info.lineno, info.text, hashlib.sha1(mat[a:b].tobytes()).hexdigest())
    srank = {k: r for r, k in enumerate(sorted(set(site_key.values())))}
    cols_site = np.asarray([srank[site_key[s]] for s in site.tolist()], np.int64)
    full = np.concatenate([mat[:, :6], cols_site[:, None], mat[:, 6:]], axis=1)  # back in field order
    return full[np.lexsort([full[:, j] for j in reversed(range(full.shape[1]))])]


def _row_text(trace: Trace, row: tuple) -> str:
    d = dict(zip(_ROW_FIELDS, row))
    site = trace.sites[d["site"]]
    return (
        f"block {trace.block_index(d['block'])} thread {trace.thread_index(d['thread'])} "
        f"{KIND_NAMES[d['kind']]} {trace.arrays[d['array']].name}[flat {d['index']}] epoch {d['epoch']} "
        f"line {site.lineno} `{site.text}` occ {d['occ']}"
    )


def _unmatched(ta: Trace, tb: Trace) -> tuple[list, list]:
    """Rows of `ta` with no partner in `tb` and the other way round (as text, at most 3 each), the
    rows taken with their array and site as names so that numbering does not matter."""

    def named(t):
        return Counter(
            (
                r[0],
                r[1],
                _array_key(t.arrays[r[2]]),
                r[3],
                r[4],
                r[5],
                t.sites[r[6]].lineno,
                t.sites[r[6]].text,
                r[7],
            )
            for r in t.acc[list(_ROW_FIELDS)].tolist()
        )

    def raw(t, keep):
        out = []
        for r in t.acc[list(_ROW_FIELDS)].tolist():
            k = (
                r[0],
                r[1],
                _array_key(t.arrays[r[2]]),
                r[3],
                r[4],
                r[5],
                t.sites[r[6]].lineno,
                t.sites[r[6]].text,
                r[7],
            )
            if keep[k] > 0 and len(out) < 3:
                keep[k] -= 1
                out.append(_row_text(t, tuple(r)))
        return out

    ca, cb = named(ta), named(tb)
    return raw(ta, ca - cb), raw(tb, cb - ca)


def _summaries_by_line(trace: Trace, items) -> list:
    return sorted(
        (
            metrics.line_of(trace, s.site),
            trace.arrays[s.array].name,
            s.kind,
            s.count,
            s.total,
            s.ideal,
            s.worst,
        )
        for s in items
    )


def view_metrics(trace: Trace) -> dict:
    """The numbers the views and rules draw from a trace, with sites named by their line."""
    return _plain(
        {
            "thread counts": metrics.thread_counts(trace),
            "block atomics": metrics.block_atomics(trace),
            "shared bytes": metrics.shared_bytes(trace),
            "coalescing by line": sorted(metrics.coalescing_by_line(trace).items()),
            "coalescing by site": _summaries_by_line(trace, metrics.coalescing_by_site(trace)),
            "bank conflicts by site": _summaries_by_line(trace, metrics.bank_conflicts_by_site(trace)),
            "paths per warp": metrics.paths_per_warp(trace),
            "lane paths of block 0": metrics.lane_paths(trace, 0),
        }
    )


def trace_differences(ta: Trace | None, tb: Trace | None) -> list[str]:
    """What differs between two traces of one run, as sentences; [] when they agree."""
    if ta is None or tb is None:
        return (
            []
            if ta is tb
            else [f"trace: {'none' if ta is None else 'one'} vs {'none' if tb is None else 'one'}"]
        )
    out = []
    if (ta.grid, ta.block) != (tb.grid, tb.block):
        out.append(f"launch shape: {ta.grid}x{ta.block} vs {tb.grid}x{tb.block}")
    if sorted(map(_array_key, ta.arrays)) != sorted(map(_array_key, tb.arrays)):
        out.append(f"arrays: {[_array_key(a) for a in ta.arrays]} vs {[_array_key(a) for a in tb.arrays]}")
    for side in ("before", "after"):
        da, db = getattr(ta, side), getattr(tb, side)
        if set(da) != set(db):
            out.append(f"trace.{side}: arrays {sorted(da)} vs {sorted(db)}")
        for n in sorted(set(da) & set(db)):
            if not _same_array(np.asarray(da[n]), np.asarray(db[n])):
                out.append(f"trace.{side}[{n!r}] differs")
    if out:
        return out
    ra, rb = canonical_rows(ta), canonical_rows(tb)
    if ra.shape != rb.shape or not np.array_equal(ra, rb):
        only_a, only_b = _unmatched(ta, tb)
        out.append(
            f"trace rows: {len(ta.acc)} vs {len(tb.acc)}; only in greenlet's: {only_a or 'none'}; "
            f"only in auto's: {only_b or 'none'}"
            + ("" if only_a or only_b else " (same rows by name: the sites are split differently)")
        )
        return out
    if sorted(ta.moves.tolist()) != sorted(tb.moves.tolist()):
        out.append(f"shuffles (trace.moves): {len(ta.moves)} vs {len(tb.moves)} rows, or other lanes")
    # The metrics on the rows both engines record; which instruction a warp issued (`issue`) only
    # lockstep knows, and tests/test_warp_views.py holds its grouping to the hand-derived one.
    ma, mb = view_metrics(per_lane(ta)), view_metrics(per_lane(tb))
    out += [f"view metric {k!r} differs" for k in ma if ma[k] != mb[k]]
    return out


def per_lane(trace: Trace) -> Trace:
    """`trace` with warp accesses grouped by each lane's own count of executions (as greenlet records)."""
    acc = trace.acc.copy()
    acc["issue"] = -1
    return dataclasses.replace(trace, acc=acc)


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and contents (NaN where the other has NaN; bit-exact, -0.0 aside)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def run_differences(ra: RunRecord | None, rb: RunRecord | None) -> list[str]:
    """What differs between two runs of one case, as sentences; [] when they agree."""
    if ra is None or rb is None:
        return [] if ra is rb else ["one engine kept no run record"]
    out = []
    if ra.case_index != rb.case_index:
        out.append(f"case {ra.case_index} vs case {rb.case_index}")
    if timed_out(ra.diagnostic) and timed_out(rb.diagnostic):
        return out  # outputs and trace are those of the moment the clock ran out
    if set(ra.outputs) != set(rb.outputs):
        out.append(f"outputs {sorted(ra.outputs)} vs {sorted(rb.outputs)}")
    for n in sorted(set(ra.outputs) & set(rb.outputs)):
        a, b = np.asarray(ra.outputs[n]), np.asarray(rb.outputs[n])
        if not _same_array(a, b):
            out.append(f"output `{n}` differs: {_first_difference(a, b)}")
    da, db = ra.diagnostic, rb.diagnostic
    if type(da) is not type(db) or where(da) != where(db):
        out.append(
            f"run diagnostic: {type(da).__name__} at {where(da)} vs {type(db).__name__} at {where(db)}"
        )
    if (ra.launch is None) != (rb.launch is None):
        out.append(f"launch record: {ra.launch is not None} vs {rb.launch is not None}")
    elif ra.launch is not None:
        for f in ("shared_bytes", "steps"):
            x, y = getattr(ra.launch, f), getattr(rb.launch, f)
            if x != y:
                out.append(f"launch {f}: {x} vs {y}")
    out += trace_differences(ra.trace, rb.trace)
    return out


def _first_difference(a: np.ndarray, b: np.ndarray) -> str:
    if a.dtype != b.dtype or a.shape != b.shape:
        return f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
    bad = ~((a == b) | ((a != a) & (b != b)))
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {a.size} elements, first at {list(idx)}: {a[idx]!r} vs {b[idx]!r}"


def differences(a: Outcome, b: Outcome) -> list[str]:
    """What differs between two engines' outcomes of one check, as sentences; [] when they agree."""
    out = []
    for f in ("verdict", "diagnostic", "where", "budget", "maxima"):
        x, y = getattr(a, f), getattr(b, f)
        if x != y:
            out.append(f"{f}: {x!r} vs {y!r}")
    if a.message != b.message:
        la, lb = a.message.splitlines(), b.message.splitlines()
        k = next((i for i, (p, q) in enumerate(zip(la, lb)) if p != q), min(len(la), len(lb)))
        out.append(f"message differs at line {k + 1}: {la[k : k + 1]} vs {lb[k : k + 1]}")
    if len(a.runs) != len(b.runs):
        out.append(f"{len(a.runs)} vs {len(b.runs)} runs kept")
    for ra, rb in zip(a.runs, b.runs):
        out += [f"case {ra.case_index}: {d}" for d in run_differences(ra, rb)]
    return out


# ----------------------------------------------------------------------------- the agreement test


def kernels(name: str, mutants: bool | None = None) -> list[tuple[str, Callable]]:
    """(label, kernel) of everything registered for puzzle `name`: reference, stub, variants, mutants
    (unless MP_AGREE_MUTANTS=0, as in .ci/run's colab leg: the newest leg ran them)."""
    p, c = puzzles.get(name), CONTROLS[name]
    found = [("reference", p.reference)]
    if BEGIN in p.source:
        found.append(("stub", stub_kernel(p)))
    found += [(f"variant {v[0]}", v[1]) for v in c.VARIANTS.get(name, ())]
    if mutants if mutants is not None else os.environ.get("MP_AGREE_MUTANTS", "1") != "0":
        found += [(f"mutant {m[0]}", m[1]) for m in c.MUTANTS.get(name, ())]
    return found


def fallbacks(o: Outcome) -> list[str]:
    """Why "auto" left lockstep, for each run of an outcome that lockstep did not produce."""
    return [
        f"case {r.case_index}: {r.launch.fallback if r.launch is not None else 'no launch (diagnosed)'}"
        for r in o.runs
        if r.launch is None or r.launch.engine != "lockstep"
    ]


# (puzzle, kernel) -> the disagreement found and not fixed yet, as of the lockstep branch merged here.
# Listed ones are reported only if they stop disagreeing (then remove them from here).
KNOWN_DISAGREEMENTS: dict[tuple[str, str], str] = {
    ("matmul", "mutant public_no_second_sync"): "engine='lockstep' says UninitializedRead, greenlet DataRace",
    (
        "histogram",
        "mutant no_barrier_after_clear",
    ): "engine='lockstep' says DataRace, greenlet UninitializedRead",
    # lockstep alone, which does not order blocks, meets the unwritten partial first; greenlet sees the
    # write another block made with nothing ordering it (both true; auto gives greenlet's)
    ("grid_sync", "mutant block_barrier_only"): "engine='lockstep' says UninitializedRead, greenlet DataRace",
}


def kernel_problems(name: str, label: str, kernel: Callable, seed: int) -> list[str]:
    """What differs between the engines on one kernel: greenlet vs auto, and lockstep's own diagnosis."""
    ref, auto = (outcome(name, kernel, seed, e) for e in ENGINES)
    found = differences(ref, auto)
    if ref.diagnostic is not None:
        # "auto" re-runs any diagnosis on greenlet, which hides what lockstep itself found: on its own
        # it must name the same class (or say it cannot run the kernel)
        strict = outcome(name, kernel, seed, "lockstep")
        if strict.diagnostic != "Unsupported" and (strict.verdict, strict.diagnostic) != (
            ref.verdict,
            ref.diagnostic,
        ):
            found.append(
                f"engine='lockstep' gives {strict.verdict} {strict.diagnostic}, greenlet {ref.verdict} "
                f"{ref.diagnostic}"
            )
    if label == "reference" and name in LOCKSTEP_REFERENCES and (auto.verdict != "Passed" or fallbacks(auto)):
        found.append(f"the reference no longer runs on lockstep alone: {fallbacks(auto)}")
    return found


@pytest.mark.parametrize("name", NAMES)
def test_greenlet_and_auto_agree(name):
    seed = seeds(name)[0]
    problems = []
    for label, kernel in kernels(name):
        found = kernel_problems(name, label, kernel, seed)
        known = KNOWN_DISAGREEMENTS.get((name, label))
        if known and not found:
            problems.append(f"{name}: {label}: agrees now; remove it from KNOWN_DISAGREEMENTS ({known})")
        elif not known:
            problems += [f"{name}: {label} (seed {seed}): {d}" for d in found]
    assert not problems, (
        "the engines disagree (greenlet vs auto, and lockstep's own diagnoses):\n" + "\n".join(problems)
    )


def test_known_disagreements_name_registered_kernels():
    for name, label in KNOWN_DISAGREEMENTS:
        assert name in NAMES and label in dict(kernels(name, mutants=True)), (name, label)


# ----------------------------------------------------------------------------- the fast path is used

# references whose every case (first seed) runs on lockstep without falling back, as of the lockstep
# branch merged here: the list may grow, never shrink unnoticed. Left out on purpose: `last_block` and
# `ch11_lookback` (blocks that hand each other work memory: which write an atomic ordered before a read
# is the greenlet engine's check, helpers/sim/greenlet/order.py) and the grid-sync puzzles.
LOCKSTEP_REFERENCES: tuple[str, ...] = (
    "map",
    "zip",
    "guard",
    "map_2d",
    "broadcast",
    "blocks",
    "blocks_2d",
    "shared",
    "pool",
    "dot",
    "conv",
    "prefix_sum",
    "axis_sum",
    "matmul",
    "warp_sum",
    "warp_allreduce",
    "warp_scan",
    "block_sum",
    "block_scan",
    "vote",
    "compact",
    "histogram",
    "transpose_pad",
    "transpose_swizzle",
    "match_any",
    "occupancy",
    "llm3_attn_scores",
    "llm3_attn_softmax",
    "llm3_attn_pv",
    "llm3_attn_row",
    "llm3_attn_flash",
    "llm3_attn_flash_tiled",
    "llm4_linear",
    "llm4_linear_gelu",
    "llm4_residual_layernorm",
    "llm4_split_heads",
    "llm4_merge_heads",
    "llm2_crossentropy_forward",
    "llm2_crossentropy_softmax_backward",
    "llm2_gelu_forward",
    "llm2_gelu_backward",
    "llm2_residual_add",
    "llm2_adamw",
    "llm2_embedding_forward",
    "llm2_embedding_backward_atomic",
    "llm2_embedding_backward_buckets",
    "llm1_softmax_three_pass",
    "llm1_softmax_block",
    "llm1_softmax_warp",
    "llm1_softmax_online",
    "llm1_softmax_warp_cached",
    "llm1_layernorm_forward",
    "llm1_layernorm_welford",
    "llm1_layernorm_backward",
    "llm1_layernorm_param_partials",
    "llm1_rmsnorm",
    "machine_saxpy",
    "ch02_vecadd",
    "ch02_vecadd_grid_stride",
    "ch02_vecadd_x4",
    "ch03_grayscale",
    "ch03_blur",
    "ch03_matmul",
    "ch04_warp_lane",
    "ch04_parity_branch",
    "ch04_warp_uniform",
    "ch05_matmul_tiled",
    "ch05_matmul_dynamic",
    "ch05_matmul_coarse",
    "ch05_matmul_rows",
    "ch05_matmul_regtile",
    "ch05_matmul_prefetch",
    "ch06_transpose_naive",
    "ch06_transpose_tiled",
    "ch06_transpose_coarse",
    "ch07_conv2d_basic",
    "ch07_conv2d_const",
    "ch07_conv2d_tiled_in",
    "ch07_conv2d_tiled_cached",
    "ch07_conv2d_register",
    "ch08_stencil_basic",
    "ch08_stencil_shared",
    "ch08_stencil_coarse",
    "ch08_stencil_register",
    "ch09_hist_atomic",
    "ch09_hist_private_global",
    "ch09_hist_private_shared",
    "ch09_hist_coarse_contiguous",
    "ch09_hist_coarse_interleaved",
    "ch09_hist_aggregated",
    "ch09_hist_unrolled",
    "ch10_reduce_simple",
    "ch10_reduce_convergent",
    "ch10_reduce_shared",
    "ch10_reduce_segmented",
    "ch10_reduce_coarsened",
    "ch10_reduce_shuffle",
    "ch11_kogge_stone",
    "ch11_kogge_stone_exclusive",
    "ch11_kogge_stone_double",
    "ch11_brent_kung",
    "ch11_three_phase",
    "ch11_scan_blocks",
    "ch11_add_sums",
    "ch11_domino",
    "ch12_co_rank",
    "ch12_merge_basic",
    "ch12_merge_tiled",
    "ch12_merge_circular",
    "ch13_split",
    "ch13_radix_count",
    "ch13_chunk_sums",
    "ch13_scan_counts",
    "ch13_radix_scatter_direct",
    "ch13_radix_scatter",
    "ch13_radix_count_coarse",
    "ch13_radix_scatter_coarse",
    "ch13_float_to_key",
    "ch13_key_to_float",
    "ch13_merge_pass",
    "ch14_spmv_coo",
    "ch14_spmv_csr",
    "ch14_spmv_csr_vector",
    "ch14_spmv_ell",
    "ch14_spmv_hybrid",
    "ch14_spmv_jds",
    "ch15_bfs_push",
    "ch15_bfs_pull",
    "ch15_bfs_edge",
    "ch16_conv_forward",
    "ch16_conv_tiled",
    "ch16_im2col",
    "ch16_conv_gemm",
    "ch16_maxpool",
    "ch16_conv_dgrad",
    "ch16_conv_wgrad_atomic",
    "ch16_conv_wgrad_reduce",
    "ch17_mu",
    "ch17_fhd_scatter",
    "ch17_fhd_gather",
    "ch17_fhd_const",
    "ch18_dcs_scatter",
    "ch18_dcs_gather",
    "ch18_dcs_coarsened",
    "ch18_dcs_cutoff",
)


def test_lockstep_reference_list_names_puzzles():
    """The list is checked inside test_greenlet_and_auto_agree (whose auto run it reuses)."""
    assert len(LOCKSTEP_REFERENCES) == len(set(LOCKSTEP_REFERENCES))
    assert set(LOCKSTEP_REFERENCES) <= set(NAMES)


@pytest.mark.parametrize("kernel", ["scan 8x256", "matmul 64x64"])
def test_speed_benchmark_kernels_run_on_lockstep(kernel):
    from tools import sim_speed as speed

    fn, grid, block, args, ok = speed.cases()[kernel]
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with engine("auto"):
        fast = sim.launch(fn, grid, block, args, roles={"a": "in", "b": "in"})
    assert fast.engine == "lockstep" and fast.fallback is None, f"{kernel}: fell back: {fast.fallback}"
    assert ok(args), f"{kernel}: wrong answer on lockstep"
    with engine("greenlet"):
        slow = sim.launch(fn, grid, block, mine, roles={"a": "in", "b": "in"})
    assert slow.engine == "greenlet"
    assert _same_array(args[0], mine[0]), f"{kernel}: {_first_difference(args[0], mine[0])}"
    assert trace_differences(slow.trace, fast.trace) == []


# ----------------------------------------------------------------------------- the test can fail


@pytest.fixture(scope="module")
def passed() -> Outcome:
    """Greenlet's outcome of a passing reference with shared memory and a barrier."""
    o = outcome("dot", puzzles.get("dot").reference, 0, "greenlet", fresh=True)
    assert o.verdict == "Passed" and o.runs and len(o.runs[0].trace.acc) > 10
    return o


@pytest.fixture(scope="module")
def raced() -> PuzzleFailure:
    """Greenlet's failure of a mutant diagnosed with a DataRace."""
    kernel = next(m[1] for m in CONTROLS["dot"].MUTANTS["dot"] if m[3] is E.DataRace)
    with engine("greenlet"):
        with pytest.raises(KernelDiagnosed) as info:
            check(puzzles.get("dot"), kernel, seed=0, gpu=False)
    assert isinstance(info.value.diagnostic, E.DataRace)
    return info.value


def cloned(failure: PuzzleFailure) -> PuzzleFailure:
    """A deep copy of a verdict (its __init__ takes more than the message, so copy.deepcopy cannot)."""
    new = Exception.__new__(type(failure))
    new.args = failure.args
    new.__dict__.update(copy.deepcopy(failure.__dict__))
    return new


def doctored(o: Outcome, case: int = 0, **trace_fields) -> Outcome:
    """A deep copy of `o` whose case `case` trace has `trace_fields` replaced."""
    o = copy.deepcopy(o)
    run = o.runs[case]
    run.launch = dataclasses.replace(run.launch, trace=dataclasses.replace(run.trace, **trace_fields))
    return o


def test_agreeing_records_agree(passed, raced):
    assert differences(passed, copy.deepcopy(passed)) == []
    assert differences(summarize(raced), summarize(cloned(raced))) == []


def test_a_wrong_output_is_caught(passed):
    o = copy.deepcopy(passed)
    out = next(iter(o.runs[-1].outputs.values()))
    out.flat[0] = np.nextafter(out.flat[0], np.inf)  # one ulp
    assert any("output" in d for d in differences(passed, o))


def test_a_trace_missing_a_row_is_caught(passed):
    found = differences(passed, doctored(passed, acc=passed.runs[0].trace.acc[:-1]))
    assert any("trace rows" in d and "only in greenlet's: [" in d for d in found), found


def test_a_moved_row_is_caught(passed):
    acc = passed.runs[0].trace.acc.copy()
    acc["index"][0] += 1
    found = differences(passed, doctored(passed, acc=acc))
    assert any("trace rows" in d for d in found), found
    acc = passed.runs[0].trace.acc.copy()
    acc["thread"][-1] ^= 1  # the same access by the neighbouring thread
    assert differences(passed, doctored(passed, acc=acc))


def test_sites_numbered_in_another_order_agree_but_merged_sites_do_not(passed):
    trace = passed.runs[0].trace
    n = len(trace.sites)
    assert n >= 2
    perm = np.arange(n)[::-1]  # site s becomes n-1-s
    sites = [None] * n
    for s in range(n):
        sites[perm[s]] = dataclasses.replace(trace.sites[s], id=int(perm[s]))
    acc = trace.acc.copy()
    acc["site"] = perm[acc["site"]]
    assert differences(passed, doctored(passed, acc=acc, sites=sites)) == []
    # two sites of one line made one: the same rows by name, but grouped into warp accesses otherwise
    first, second = next(
        (a.id, b.id) for a in trace.sites for b in trace.sites if a.id < b.id and a.lineno == b.lineno
    )
    acc = trace.acc.copy()
    acc["site"][acc["site"] == second] = first
    found = differences(passed, doctored(passed, acc=acc))
    assert any("sites are split differently" in f for f in found), found


def test_a_different_diagnostic_is_caught(raced):
    other = cloned(raced)
    d = raced.diagnostic
    other.diagnostic = E.OutOfBounds(
        str(d), block=d.block, thread=d.thread, line=d.line, source=d.source, array=d.array, index=d.index
    )
    found = differences(summarize(raced), summarize(other))
    assert any(f.startswith("diagnostic:") for f in found), found
    other = cloned(raced)
    other.diagnostic.thread = (0, 0, 0) if tuple(d.thread) != (0, 0, 0) else (1, 0, 0)
    assert any(f.startswith("where:") for f in differences(summarize(raced), summarize(other)))
    other = cloned(raced)
    other.args = (str(raced).replace("block", "blok", 1),)
    assert any(f.startswith("message") for f in differences(summarize(raced), summarize(other)))


def test_a_verdict_of_another_class_is_caught(passed, raced):
    found = differences(passed, summarize(raced))
    assert any(f.startswith("verdict:") for f in found), found


def test_a_fake_auto_engine_is_caught(monkeypatch):
    """The whole path, from `check` to the comparison: an "auto" that drops the last trace row of
    each launch, or changes one output element, is told apart from greenlet."""
    real = sim.launch

    def dropping(*args, **kw):
        got = real(*args, **kw)
        if sim.config.engine == "auto" and got.trace is not None and len(got.trace.acc):
            got = dataclasses.replace(got, trace=dataclasses.replace(got.trace, acc=got.trace.acc[:-1]))
        return got

    def scribbling(kernel, grid, block, args, **kw):
        got = real(kernel, grid, block, args, **kw)
        if sim.config.engine == "auto":
            out = args[0]
            out.flat[-1] = out.flat[-1] + 1
        return got

    name, kernel = "map", puzzles.get("map").reference
    greenlet = outcome(name, kernel, 0, "greenlet", fresh=True)
    monkeypatch.setattr(sim, "launch", dropping)
    found = differences(greenlet, outcome(name, kernel, 0, "auto", fresh=True))
    assert any("trace rows" in f for f in found), found
    monkeypatch.setattr(sim, "launch", scribbling)
    found = differences(greenlet, outcome(name, kernel, 0, "auto", fresh=True))
    assert any(f.startswith("verdict:") for f in found), found  # map checks every output: WrongAnswer


def test_a_fallback_is_seen(passed):
    """The coverage check reads Launch.engine: greenlet's runs count as fallbacks, lockstep's do not."""
    assert len(fallbacks(passed)) == len(passed.runs)
    o = copy.deepcopy(passed)
    for r in o.runs:
        r.launch = dataclasses.replace(r.launch, engine="lockstep", fallback=None)
    assert fallbacks(o) == []
    o.runs[-1].launch = None
    assert len(fallbacks(o)) == 1


def test_a_shuffle_from_another_lane_is_caught():
    """Two records of warp_sum that differ only in which lane one shuffle read from."""
    with engine("greenlet"):
        o = summarize(check(puzzles.get("warp_sum"), puzzles.get("warp_sum").reference, seed=0, gpu=False))
    moves = o.runs[0].trace.moves.copy()
    assert len(moves)
    moves["src"][0] ^= 1
    found = differences(o, doctored(o, moves=moves))
    assert any("shuffles" in f for f in found), found
