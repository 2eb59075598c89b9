"""puzzles.summary: what a finished notebook prints, computed from this session's checks and the
mutants files (not canned), as built into puzzles/mutant_kinds.json by `python -m tools.nbbuild`."""

from __future__ import annotations

import importlib
import json
import pathlib
import pkgutil
from collections import Counter

import pytest

import puzzles
from tools import mutant_kinds

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(puzzles, "_PASSED", set())
    return puzzles


def test_nothing_passed_lists_what_is_left(fresh):
    text = fresh.summary_text("pmpp-06")
    assert text.startswith("chapter pmpp-06: 0 of 3 puzzles passed.")
    assert "still to pass: ch06_transpose_naive, ch06_transpose_tiled, ch06_transpose_coarse" in text
    assert "rejects" not in text and "Every check" not in text


def test_passing_checks_are_counted_with_their_mutants(fresh, capsys):
    fresh.check("ch06_transpose_tiled", fresh.get("ch06_transpose_tiled").reference, seed=0, gpu=False)
    text = fresh.summary_text("pmpp-06")
    assert "1 of 3 puzzles passed: ch06_transpose_tiled" in text
    table = importlib.import_module("mutants.pmpp.ch06_performance.transpose").MUTANTS
    mutants = table["ch06_transpose_tiled"]
    assert f"rejects the {len(mutants)} known-wrong kernels" in text
    kinds = Counter(puzzles._mutant_kinds()["ch06_transpose_tiled"])
    assert kinds["over budget: bank conflicts"] == 1
    for kind, n in kinds.items():
        assert f"{kind} ({n})" in text
    fresh.summary("pmpp-06")
    assert capsys.readouterr().out.strip() == text


def test_a_failed_check_does_not_count(fresh):
    from mutants.pmpp.ch06_performance.transpose import transpose_unpadded

    with pytest.raises(puzzles.harness.OverBudget):
        fresh.check("ch06_transpose_tiled", transpose_unpadded, seed=0, gpu=False)
    assert "0 of 3" in fresh.summary_text("pmpp-06")


def test_mutant_counts_match_the_mutants_files():
    """The summary's data (built from tests/mutants/) counts what every mutants file holds, for every
    puzzle, and names how each is caught."""
    import mutants

    real = {}
    for info in pkgutil.walk_packages(mutants.__path__, "mutants."):
        real.update(getattr(importlib.import_module(info.name), "MUTANTS", {}))
    shipped = json.loads((ROOT / mutant_kinds.FILE).read_text())
    assert shipped == puzzles._mutant_kinds()
    assert {p: len(v) for p, v in shipped.items()} == {p: len(v) for p, v in sorted(real.items())}
    from puzzles import dist  # exercises for many ranks: registered there, checked by tests/test_dist.py

    assert set(shipped) <= set(puzzles.names()) | set(dist.names())
    assert all(k != "a known mistake" for v in shipped.values() for k in v)


def test_a_package_gathering_its_op_files_mutants_counts_them_once(tmp_path):
    """A mutants package whose __init__ re-exports its op files' MUTANTS counts each mutant once; two
    files registering different mutants for one puzzle are an error naming both."""
    pkg = tmp_path / "gathered" / "ch"
    pkg.mkdir(parents=True)
    (tmp_path / "gathered" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .op import MUTANTS\n")
    (pkg / "op.py").write_text(
        "from helpers.check import WrongAnswer\nMUTANTS = {'p': [('m', None, WrongAnswer, None)]}\n"
    )
    assert mutant_kinds.kinds(tmp_path, "gathered") == {"p": ["a wrong answer"]}
    (pkg / "other.py").write_text(
        "from helpers.check import CompileRejected\nMUTANTS = {'p': [('n', None, CompileRejected, None)]}\n"
    )
    with pytest.raises(RuntimeError, match=r"gathered.ch.*gathered.ch.other register different mutants"):
        mutant_kinds.kinds(tmp_path, "gathered")


def test_the_words_for_each_way_a_mutant_is_caught():
    from mutants.common import NO_BARRIER, OOB, WRONG, over

    assert mutant_kinds.caught_as(*OOB) == "an out-of-bounds access"
    assert mutant_kinds.caught_as(*NO_BARRIER) == "a missing barrier"
    assert mutant_kinds.caught_as(*WRONG) == "a wrong answer"
    assert mutant_kinds.caught_as(*over("bank_conflicts")) == "over budget: bank conflicts"
    assert mutant_kinds.caught_as(KeyError, None) == "a known mistake"


def test_every_notebook_ends_with_its_summary():
    import pathlib

    src = pathlib.Path(puzzles.__file__).resolve().parents[1] / "notebooks" / "src"
    for f in sorted(src.glob("[0-9][0-9]_*.py")):
        tail = f.read_text().rstrip().splitlines()[-1]
        assert tail.startswith("puzzles.summary("), f.name
