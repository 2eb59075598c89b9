"""Every number the notebooks' prose states about a view, computed from the same run the view draws
(helpers.metrics on case 0), and found in the prose: the text and the picture cannot drift apart."""

from __future__ import annotations

import pathlib

import pytest

import puzzles
from helpers import metrics
from helpers.check import run_once
from helpers.viz import style

SRC = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "src"


def prose(stem: str) -> str:
    """The notebook source's markdown and comments, on one line per paragraph (wrapping removed)."""
    text = next(SRC.glob(f"{stem}*.py")).read_text()
    return " ".join(line.lstrip("# ").strip() for line in text.splitlines())


def trace_of(name: str, kernel=None):
    p = puzzles.get(name)
    return run_once(p, kernel or p.reference, case=0, seed=0).trace


def by_array(items, trace):
    return {(trace.arrays[s.array].name, s.kind): s for s in items}


def full_warps(trace, array: str):
    return [
        c
        for c in metrics.coalescing(trace)
        if trace.arrays[c.access.array].name == array and len(c.access.lanes) == 32
    ]


# ---------------------------------------------------------------- notebook 05 (PMPP ch 6)


def test_05_naive_transpose_numbers():
    t = trace_of("ch06_transpose_naive")
    text = prose("05_")
    assert "Case 0 is a 40 x 36 matrix" in text and tuple(t.array("a").shape) == (40, 36)
    reads = full_warps(t, "a")
    assert reads and {(c.sectors, c.ideal) for c in reads} == {(32, 4)}
    lines = by_array(metrics.coalescing_by_site(t), t)
    read, write = lines[("a", 0)], lines[("out", 1)]
    assert style.pct(read.efficiency) == "12.5%" and read.worst == 32
    assert write.efficiency == 1.0 and write.worst == 4
    assert "32 sectors where 4 would do: 12.5% efficient, an eighth" in text
    assert "The write of `out` is ideal: 4 sectors per warp, 100%" in text


def test_05_tiled_transpose_numbers():
    t = trace_of("ch06_transpose_tiled")
    text = prose("05_")
    lines = by_array(metrics.coalescing_by_site(t), t)
    read, write = lines[("a", 0)], lines[("out", 1)]
    assert {c.sectors for c in full_warps(t, "a")} == {4, 5}
    assert style.pct(read.efficiency) == "90.9%" and write.efficiency == 1.0
    assert "needs 4 sectors, or 5 when the row starts in the middle of a sector" in text
    assert "90.9% over the case, against 12.5% before" in text
    banks = metrics.bank_conflicts_by_site(t)
    assert len(banks) == 2 and all(s.worst == 1 for s in banks)
    assert "Both are conflict-free: one pass each" in text


def test_05_unpadded_tile_is_a_32_way_conflict_and_rejected():
    from mutants.pmpp.ch06_performance.transpose import transpose_unpadded

    from helpers.check import OverBudget

    t = trace_of("ch06_transpose_tiled", transpose_unpadded)
    worst = {(t.arrays[s.array].name, s.kind): s.worst for s in metrics.bank_conflicts_by_site(t)}
    assert worst == {("tile", 1): 1, ("tile", 0): 32}
    assert "a 32-way conflict, 32 passes where 1 would do" in prose("05_")
    with pytest.raises(OverBudget) as e:
        puzzles.check("ch06_transpose_tiled", transpose_unpadded, seed=0, gpu=False)
    assert e.value.field == "bank_conflicts"


# ---------------------------------------------------------------- notebook 04 (PMPP ch 5)


@pytest.mark.parametrize("name", ["ch05_matmul_regtile", "ch05_matmul_prefetch"])
def test_04_register_tiled_shared_accesses_are_conflict_free(name):
    """The kernel comment says the padded, transposing stores hit 32 different banks; the banks view
    the notebook shows (case 1) must agree, and so must every other case."""
    p = puzzles.get(name)
    for case in range(len(p.cases(__import__("numpy").random.default_rng(0)))):
        t = run_once(p, p.reference, case=case, seed=0).trace
        assert {s.worst for s in metrics.bank_conflicts_by_site(t)} == {1}, (name, case)
    from puzzles.pmpp import ch05_memory_tiling as ch05

    assert ch05.BK * ch05.PAD == 32  # lane (r, kk) -> bank (kk * PAD + r) % 32: 32 different banks
    assert "those are 32\n    # different banks" in pathlib.Path(ch05.regtile.__file__).read_text()


def test_04_intensity_arithmetic():
    text = prose("04_")
    assert 2 / 8 == 0.25 and "2 / 8 = 0.25 FLOP per byte" in text
    assert f"{3.35 * 0.25:.2f}" == "0.84" and "caps it at 0.84 TFLOP/s" in text
    assert round(67 / 3.35) == 20 and "(67 / 3.35 = 20 FLOP/byte on an H100)" in text
    assert (16 / 4, 32 / 4) == (4, 8) and "4 at 16 x 16, 8 at 32 x 32" in text
    assert 128 * 128 / (2 * (128 + 128)) == 32 and "32 at 128 x 128" in text
    assert "two shared-memory reads per multiply-add" in text


def test_04_coarsening_and_register_arithmetic():
    from puzzles.pmpp import ch05_memory_tiling as ch05

    text = prose("04_")
    t, c, rm = ch05.TILE, ch05.COARSE, ch05.RM
    assert (t, c) == (8, 2) and "2.7 at `TILE = 8`, `COARSE = 2`, against 2." in text
    assert f"{2 * c * t / (4 * (1 + c)):.1f}" == "2.7" and t / 4 == 2
    # the 1-D register-tiled reference really makes RM + 1 shared reads per multiply-add step
    p = puzzles.get("ch05_matmul_rows")
    tr = run_once(p, p.reference, case=0, seed=0).trace
    steps = -(-p.cases(__import__("numpy").random.default_rng(0))[0].args["inner"] // t)
    assert metrics.thread_counts(tr)["shared_reads"].max() == (rm + 1) * t * steps
    assert "`RM + 1` shared reads then feed `RM` multiply-adds" in text
