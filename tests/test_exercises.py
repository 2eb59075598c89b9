"""Every registered puzzle, one way: the reference passes on its seeds without a note, the stub is
NotSolvedYet, each mutant in its module's mutants file (tests/mutants/, mirroring puzzles/) is rejected for
its stated reason on every seed, each variant passes, and each view draws the reference's run (the
access map's coloured cells are the cells its trace touched).

The checks go through `support.checked`: test_engines_agree.py compares the same checks on the
greenlet engine, and reads these instead of making them again."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from support import checked, controls, stub_kernel  # noqa: E402

import puzzles  # noqa: E402
from helpers import viz  # noqa: E402
from helpers.check import KernelDiagnosed, NotSolvedYet, OverBudget, PuzzleFailure, run_once  # noqa: E402
from helpers.puzzle import BEGIN, END  # noqa: E402
from helpers.sim.trace import READ  # noqa: E402
from helpers.viz import access  # noqa: E402

NAMES = puzzles.names()
CONTROLS = {n: controls(puzzles.module_of(n)) for n in NAMES}
# puzzles whose modules have no mutants file yet keep their chapter tests' seed
DEFAULT_SEEDS = {"puzzles.pmpp.ch0": (11,), "puzzles.pmpp.ch1": (3,)}
for _m in ("ch06", "ch07", "ch08", "ch09"):
    DEFAULT_SEEDS[f"puzzles.pmpp.{_m}"] = (3,)


def seeds(name: str) -> tuple:
    c = CONTROLS[name]
    if name in c.SEEDS:
        return tuple(c.SEEDS[name])
    mod = puzzles.module_of(name)
    return next((s for prefix, s in DEFAULT_SEEDS.items() if mod.startswith(prefix)), (0,))


def passes(name: str, kernel, seed: int):
    """The Result of checking `kernel` on puzzle `name`; a failure is raised, as check would."""
    got = checked(puzzles.get(name), kernel, seed)
    if isinstance(got, PuzzleFailure):
        raise got
    return got


def assert_rejected(name: str, mutant: str, kernel, exc, detail, seed: int) -> None:
    got = checked(puzzles.get(name), kernel, seed)
    assert isinstance(got, PuzzleFailure), f"{mutant} (seed {seed}) passed: {got!r}"
    assert type(got) is exc, f"{mutant} (seed {seed}): {got}"
    if exc is KernelDiagnosed:
        allowed = detail if isinstance(detail, tuple) else (detail,)
        assert type(got.diagnostic) in allowed, f"{mutant} (seed {seed}): {got}"
    elif exc is OverBudget:
        assert got.field == detail, f"{mutant} (seed {seed}): {got}"


@pytest.mark.parametrize("name", NAMES)
def test_reference_passes(name):
    for seed in seeds(name):
        result = passes(name, puzzles.get(name).reference, seed)
        assert repr(result).startswith(f"Passed: {name}") and len(result.runs) == result.cases
        # the course's answer earns no warning (a float64 `1.0 / math.sqrt(n)` in a float32 kernel did)
        assert not result.notes, f"{name}'s reference passes with a note: {result.notes}"


@pytest.mark.parametrize("name", [n for n in NAMES if BEGIN in puzzles.get(n).source])
def test_stub_is_not_solved(name):
    p = puzzles.get(name)
    assert "FILL ME IN" in p.stub and BEGIN not in p.stub and END not in p.stub
    with pytest.raises(NotSolvedYet):
        passes(name, stub_kernel(p), seeds(name)[0])


@pytest.mark.parametrize(
    "name,mutant,kernel,exc,detail",
    [pytest.param(n, *m, id=f"{n}-{m[0]}") for n in NAMES for m in CONTROLS[n].MUTANTS.get(n, ())],
)
def test_mutant_is_rejected_for_the_right_reason(name, mutant, kernel, exc, detail):
    for seed in seeds(name):
        assert_rejected(name, mutant, kernel, exc, detail, seed)


@pytest.mark.parametrize(
    "name,variant,kernel",
    [pytest.param(n, *v, id=f"{n}-{v[0]}") for n in NAMES for v in CONTROLS[n].VARIANTS.get(n, ())],
)
def test_correct_variant_passes(name, variant, kernel):
    for seed in seeds(name):
        passes(name, kernel, seed)


@pytest.mark.parametrize("name", [n for n in NAMES if BEGIN in puzzles.get(n).source])
def test_every_exercise_with_a_mutants_file_has_two_mutants(name):
    c = CONTROLS[name]
    if not (c.MUTANTS or c.VARIANTS):
        pytest.skip(f"{puzzles.module_of(name)}: mutants still in its chapter test file")
    assert len(c.MUTANTS.get(name, ())) >= 2, name


def test_mutants_files_name_registered_puzzles():
    for n, c in CONTROLS.items():
        for key in (*c.MUTANTS, *c.VARIANTS, *c.SEEDS):
            assert puzzles.module_of(key) == puzzles.module_of(n), f"{key} is not in {puzzles.module_of(n)}"


def coloured_cells(fig, panels: list) -> set:
    """(block, array, epoch, flat index) of every cell the access map coloured, read back from the
    figure: each panel's cells (one polygon each, or one image per big array) whose face is not the
    colour of an untouched cell."""
    empty = np.array(matplotlib.colors.to_rgba(viz.style.EMPTY))
    out = set()
    for ax, block, lay in panels:
        assert ax.figure is fig
        where = {}
        for p in lay.placed:
            if p.size > access.BIG_ARRAY:
                (img,) = [
                    im
                    for im in ax.images
                    if tuple(im.get_extent()) == (p.x0, p.x0 + p.cols, p.y0 + p.rows, p.y0)
                ]
                faces = np.asarray(img.get_array()).reshape(-1, 4)[: p.size]
                out |= {
                    (block, p.array, p.epoch, int(i)) for i in np.flatnonzero(np.any(faces != empty, axis=1))
                }
            else:
                for i in range(p.size):
                    where[(p.x0 + i % p.cols, p.y0 + i // p.cols)] = (p.array, p.epoch, i)
        for coll in ax.collections:
            if not isinstance(coll, matplotlib.collections.PolyCollection):
                continue
            for path, face in zip(coll.get_paths(), coll.get_facecolors()):
                x, y = path.vertices[0]
                if not np.allclose(face, empty):
                    out.add((block, *where[(x, y)]))
    return out


def touched_cells(trace, panels: list) -> set:
    """(block, array, epoch, flat index) of every cell the trace says a panel's block read or wrote,
    for the array copies the panel places."""
    out = set()
    for _, block, lay in panels:
        rows = trace.acc[trace.acc["block"] == block]
        for p in lay.placed:
            sel = rows[rows["array"] == p.array]
            if p.epoch >= 0:
                sel = sel[sel["epoch"] == p.epoch]
            out |= {(block, p.array, p.epoch, int(i)) for i in np.unique(sel["index"]) if 0 <= i < p.size}
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_view_renders(name, monkeypatch):
    """Every view draws the reference's run of case 0 (the one its check kept, when seed 0 is checked):
    each a titled Figure, and the access map colours exactly the cells the trace touched."""
    p = puzzles.get(name)
    kept = checked(p, p.reference, 0) if 0 in seeds(name) else None
    run = kept.runs[0] if kept is not None and kept.runs and kept.runs[0].trace is not None else None
    run = run or run_once(p, p.reference)  # one simulation, every view drawn from it
    panels = []
    real = access._draw_panel

    def spy(ax, trace, lay, block, *args, **kwargs):
        panels.append((ax, block, lay))
        return real(ax, trace, lay, block, *args, **kwargs)

    monkeypatch.setattr(access, "_draw_panel", spy)
    for view in viz.VIEWS:
        fig = viz.draw(run, view)
        assert isinstance(fig, matplotlib.figure.Figure) and fig.get_suptitle()
        if view == "access":
            assert panels, "the access map drew no block"
            drawn = coloured_cells(fig, panels)
            assert drawn and drawn == touched_cells(run.trace, panels), name


@pytest.mark.parametrize("wrong", ["no reads", "another block"])
def test_the_view_check_fails_a_wrong_picture(wrong, monkeypatch):
    """Negative control for test_every_view_renders: an access map that forgets the reads, or draws
    another block's accesses in a panel, no longer matches its trace."""
    p = puzzles.get("blocks")
    run = run_once(p, p.reference)
    assert run.trace.nblocks > 1
    real_panel, real_faces = access._draw_panel, access._faces
    panels = []

    def spy(ax, trace, lay, block, *args, **kwargs):
        panels.append((ax, block, lay))
        shown = (block + 1) % trace.nblocks if wrong == "another block" else block
        return real_panel(ax, trace, lay, shown, *args, **kwargs)

    def faces(sel, size, colors):
        return real_faces(sel[sel["kind"] != READ] if wrong == "no reads" else sel, size, colors)

    monkeypatch.setattr(access, "_draw_panel", spy)
    monkeypatch.setattr(access, "_faces", faces)
    fig = viz.draw(run, "access")
    assert coloured_cells(fig, panels) != touched_cells(run.trace, panels)


def test_two_mutants_of_one_name_keep_their_own_source():
    """Lockstep reads a kernel's source back by its file name: mutants of one name made from two
    exercises' kernels must not share one (one would run the other's text)."""
    import inspect
    import linecache

    from mutants.common import mutate

    first, second = puzzles.get("map").reference, puzzles.get("zip").reference
    made = [mutate(k, "same_name") for k in (first, second)]
    texts = ["".join(linecache.getlines(m.py_func.__code__.co_filename)) for m in made]
    assert texts[0] != texts[1]
    for kernel, text in zip((first, second), texts):
        body = inspect.getsource(kernel.py_func).split("\n", 2)[2]  # below the decorator and def lines
        assert body.strip().splitlines()[0].strip() in text
