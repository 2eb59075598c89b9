"""helpers.tuning with a fake timer (no GPU): the fastest median of interleaved rounds wins and is
cached per device; on a quiet GPU a later run reuses it after a re-check against the default; a
noisy search (a shared GPU) is not cached and uses the default, saying so in one line; a cached
winner that loses the re-check is searched again; another device, a changed grid or MP_RETUNE search
again; MP_TUNING_READONLY (the test suite's setting) never writes the cache."""

import json

import pytest

from helpers import tuning

GRID = {"128 threads": 128, "256 threads": 256, "512 threads": 512}  # the default: 128 threads


@pytest.fixture(autouse=True)
def writable(monkeypatch):
    """These tests are about writing the cache: the suite's read-only setting (conftest.py) is lifted."""
    monkeypatch.delenv(tuning.READONLY_ENV, raising=False)
    monkeypatch.delenv("MP_RETUNE", raising=False)
    monkeypatch.setattr(tuning, "CHOSEN", {})


def fake_timer(winner, calls, noise=None):
    """Seconds per setting: `winner` 1 ms, the others 2 ms and up; `noise(call number)` multiplies
    (a neighbour's load that comes and goes)."""

    def measure(setting):
        calls.append(setting)
        base = 1e-3 if setting == winner else 2e-3 + setting * 1e-6
        return base * (noise(len(calls)) if noise else 1.0)

    return measure


def quiet(i):  # a quiet GPU repeats within 1%
    return 1.0 + 0.01 * (i % 2)


def shared(i):  # another process's kernels: every fourth call takes 3x as long
    return 3.0 if i % 4 == 0 else 1.0


def test_fastest_median_wins_and_is_cached(tmp_path, capsys):
    path = tmp_path / "tuning.json"
    calls = []
    choice = tuning.tune(
        "ch10_reduce_shuffle", GRID, fake_timer(256, calls, quiet), device="GPU A", path=path
    )
    assert (choice.label, choice.config, choice.cached, choice.how) == (
        "256 threads",
        256,
        False,
        tuning.SEARCHED,
    )
    # interleaved rounds: every candidate once per round, ROUNDS rounds
    assert calls == [128, 256, 512] * tuning.ROUNDS
    assert choice.seconds == pytest.approx(1e-3, rel=0.02) and choice.spread <= 0.011
    assert set(choice.timings) == set(GRID) and all(len(t) == tuning.ROUNDS for t in choice.rounds.values())
    assert choice.default == "128 threads" and choice.saved
    saved = json.loads(path.read_text())["GPU A"]["ch10_reduce_shuffle"]
    assert (saved["label"], saved["config"], saved["default"]) == ("256 threads", 256, "128 threads")
    assert saved["spread"] == choice.spread and len(saved["rounds"]["512 threads"]) == tuning.ROUNDS
    assert tuning.CHOSEN["ch10_reduce_shuffle"] is choice
    assert capsys.readouterr().out == ""  # nothing to say on a quiet GPU


def test_quiet_rerun_reuses_the_cached_winner_after_a_recheck(tmp_path, capsys):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(256, [], quiet), device="GPU A", path=path)
    before = path.read_text()
    calls = []
    again = tuning.tune("k", GRID, fake_timer(256, calls, quiet), device="GPU A", path=path)
    assert (again.config, again.cached, again.how) == (256, True, tuning.CACHED)
    # the re-check: the cached winner and the default, interleaved; the other candidates untimed
    assert calls == [256, 128] * tuning.RECHECK_ROUNDS
    assert set(again.timings) == {"256 threads", "128 threads"} and again.spread <= 0.011
    assert again.seconds == pytest.approx(1e-3, rel=0.02)  # measured today, by the re-check
    assert path.read_text() == before and not again.saved  # a passed re-check leaves the cache alone
    assert "cached" in str(again) and "GPU A" in str(again) and again.summary().startswith("cached, spread")
    assert capsys.readouterr().out == ""


def test_cached_default_is_timed_once_per_round(tmp_path):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(128, [], quiet), device="GPU A", path=path)
    calls = []
    assert tuning.tune("k", GRID, fake_timer(128, calls, quiet), device="GPU A", path=path).cached
    assert calls == [128] * tuning.RECHECK_ROUNDS


def test_shared_gpu_search_is_not_cached_and_uses_the_default(tmp_path, capsys):
    path = tmp_path / "tuning.json"
    calls = []
    choice = tuning.tune("ch05 prefetched", GRID, fake_timer(512, calls, shared), device="GPU A", path=path)
    assert (choice.label, choice.config, choice.how, choice.cached) == (
        "128 threads",
        128,
        tuning.SHARED,
        False,
    )
    assert choice.spread > tuning.NOISY and not choice.saved and not path.exists()
    assert len(calls) == 2 * len(GRID)  # the second round already showed the noise: no third
    assert choice.seconds == choice.timings["128 threads"]  # the default's median, reported as measured
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("tuning ch05 prefetched: ")
    assert "shared GPU" in out and "not cached" in out and "'128 threads'" in out
    # the next (quiet) run searches, finds the real winner and caches it
    quiet_run = tuning.tune("ch05 prefetched", GRID, fake_timer(512, [], quiet), device="GPU A", path=path)
    assert (quiet_run.config, quiet_run.how, quiet_run.saved) == (512, tuning.SEARCHED, True)


def test_stale_cache_loses_the_recheck_and_is_searched_again(tmp_path, capsys):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(512, [], quiet), device="GPU A", path=path)
    # the cache says 512; today the default (128) is the fastest (a poisoned or outdated entry)
    calls = []
    choice = tuning.tune("k", GRID, fake_timer(128, calls, quiet), device="GPU A", path=path)
    assert calls[: 2 * tuning.RECHECK_ROUNDS] == [512, 128] * tuning.RECHECK_ROUNDS  # the re-check
    assert calls[2 * tuning.RECHECK_ROUNDS :] == [128, 256, 512] * tuning.ROUNDS  # then the search
    assert (choice.config, choice.cached, choice.how, choice.saved) == (128, False, tuning.RESEARCHED, True)
    assert json.loads(path.read_text())["GPU A"]["k"]["label"] == "128 threads"
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "beat the cached '512 threads'" in out and "searching again" in out


def test_a_close_default_does_not_unseat_the_cached_winner(tmp_path):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(512, [], quiet), device="GPU A", path=path)
    # the default now 1% faster than the winner: within LOST, the cache stands
    close = {512: 1.0e-3, 128: 0.99e-3, 256: 2e-3}
    choice = tuning.tune("k", GRID, lambda s: close[s], device="GPU A", path=path)
    assert (choice.config, choice.how) == (512, tuning.CACHED)


def test_noisy_recheck_keeps_the_cached_winner_and_says_so(tmp_path, capsys):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(512, [], quiet), device="GPU A", path=path)
    before = path.read_text()
    calls = []
    choice = tuning.tune("k", GRID, fake_timer(512, calls, shared), device="GPU A", path=path)
    assert (choice.config, choice.how, choice.cached) == (512, tuning.CACHED, True)
    assert choice.spread > tuning.NOISY and len(calls) == 2 * 2  # stopped after the second round
    assert path.read_text() == before
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "re-check" in out and "keeping the cached '512 threads'" in out


def test_readonly_searches_but_never_writes(tmp_path, monkeypatch):
    path = tmp_path / "tuning.json"
    monkeypatch.setenv(tuning.READONLY_ENV, "1")
    choice = tuning.tune("k", GRID, fake_timer(256, [], quiet), device="GPU A", path=path)
    assert (choice.config, choice.saved) == (256, False) and not path.exists()
    # it still reads a cache written by a bench run (and re-checks it)
    monkeypatch.delenv(tuning.READONLY_ENV)
    tuning.tune("k", GRID, fake_timer(512, [], quiet), device="GPU A", path=path)
    monkeypatch.setenv(tuning.READONLY_ENV, "1")
    again = tuning.tune("k", GRID, fake_timer(512, [], quiet), device="GPU A", path=path)
    assert (again.config, again.how) == (512, tuning.CACHED)
    # a stale cache is searched again but not rewritten
    before = path.read_text()
    stale = tuning.tune("k", GRID, fake_timer(128, [], quiet), device="GPU A", path=path)
    assert (stale.config, stale.how, stale.saved) == (128, tuning.RESEARCHED, False)
    assert path.read_text() == before


def test_the_suite_is_read_only(monkeypatch):
    """The root conftest.py sets MP_TUNING_READONLY in the first process, before xdist's workers and
    the notebooks' kernels start (they inherit it): notebooks run in parallel on one GPU must not
    write the cache a benchmark reuses. A value already set (MP_TUNING_READONLY=0) is kept."""
    import importlib.util
    import os
    import types
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("root_conftest", Path(__file__).parents[1] / "conftest.py")
    root = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root)
    assert root.TUNING_READONLY == tuning.READONLY_ENV
    monkeypatch.setenv(root.PTX_CACHE, "/nonexistent")  # not the first process: no folder made
    root.pytest_configure(types.SimpleNamespace())
    assert os.environ[tuning.READONLY_ENV] == "1" and tuning._flag(tuning.READONLY_ENV)
    monkeypatch.setenv(tuning.READONLY_ENV, "0")
    root.pytest_configure(types.SimpleNamespace())
    assert not tuning._flag(tuning.READONLY_ENV)


def test_entry_without_spread_is_searched_again(tmp_path):
    """A cache written before the rounds were kept (no spread) may hold a winner picked on a shared GPU."""
    path = tmp_path / "tuning.json"
    path.write_text(json.dumps({"GPU A": {"k": {"label": "512 threads", "config": 512, "seconds": 1e-3}}}))
    calls = []
    choice = tuning.tune("k", GRID, fake_timer(256, calls, quiet), device="GPU A", path=path)
    assert (choice.config, choice.how, len(calls)) == (256, tuning.SEARCHED, 3 * tuning.ROUNDS)
    assert json.loads(path.read_text())["GPU A"]["k"]["spread"] == choice.spread


def test_other_device_retunes_and_keeps_both(tmp_path):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(256, []), device="GPU A", path=path)
    calls = []
    b = tuning.tune("k", GRID, fake_timer(512, calls), device="GPU B", path=path)
    assert (b.config, b.cached, len(calls)) == (512, False, 3 * tuning.ROUNDS)
    saved = json.loads(path.read_text())
    assert saved["GPU A"]["k"]["config"] == 256 and saved["GPU B"]["k"]["config"] == 512


def test_changed_grid_or_retune_searches_again(tmp_path, monkeypatch):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(256, []), device="GPU A", path=path)
    calls = []
    smaller = {"128 threads": 128, "512 threads": 512}  # the cached winner is no longer a candidate
    assert tuning.tune("k", smaller, fake_timer(512, calls), device="GPU A", path=path).config == 512
    assert len(calls) == 2 * tuning.ROUNDS
    monkeypatch.setenv("MP_RETUNE", "1")
    calls.clear()
    assert tuning.tune("k", GRID, fake_timer(128, calls), device="GPU A", path=path).config == 128
    assert len(calls) == 3 * tuning.ROUNDS


def test_tuned_time_reports_todays_median(tmp_path):
    path = tmp_path / "tuning.json"
    choice, seconds = tuning.tuned_time("k", GRID, fake_timer(256, [], quiet), device="D", path=path)
    assert seconds == choice.seconds == choice.timings["256 threads"]
    choice, seconds = tuning.tuned_time("k", GRID, fake_timer(256, [], quiet), device="D", path=path)
    assert choice.cached and seconds == choice.timings["256 threads"]


def test_named_default(tmp_path, capsys):
    choice = tuning.tune(
        "k", GRID, fake_timer(512, [], shared), default="256 threads", device="D", path=tmp_path / "t.json"
    )
    assert (choice.config, choice.how) == (256, tuning.SHARED)
    with pytest.raises(ValueError, match="default '1024 threads' is not a candidate"):
        tuning.tune("k", GRID, lambda s: 1.0, default="1024 threads", device="D", path=tmp_path / "t.json")


def test_choice_for_a_table_row(tmp_path):
    a = tuning.tune(
        "ch03 grayscale", {"32x8": 1, "16x16": 2}, lambda s: s * 1e-3, device="D", path=tmp_path / "t"
    )
    b = tuning.tune(
        "vecadd", {"256 threads": 1, "512 threads": 2}, lambda s: s * 1e-3, device="D", path=tmp_path / "t"
    )
    c = tuning.tune(
        "vecadd_x4", {"256 threads": 1, "512 threads": 2}, lambda s: s * 1e-3, device="D", path=tmp_path / "t"
    )
    assert tuning.choice_for("grayscale", "block 32x8") is a  # the row's name is in the knob's name
    assert (
        tuning.choice_for("vecadd", "256 threads") is b and tuning.choice_for("vecadd_x4", "256 threads") is c
    )
    assert tuning.choice_for("other", "256 threads") is None  # two knobs with that label: no guess
    assert tuning.choice_for("vecadd", "") is None


def test_cache_path_env_and_bad_file(tmp_path, monkeypatch):
    monkeypatch.setenv("MP_TUNING_CACHE", str(tmp_path / "t.json"))
    assert tuning.cache_path() == tmp_path / "t.json"
    monkeypatch.delenv("MP_TUNING_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tuning.cache_path() == tmp_path / "xdg" / "massively-parallel" / "tuning.json"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert tuning.tune("k", GRID, fake_timer(512, []), device="D", path=bad).config == 512
    assert json.loads(bad.read_text())["D"]["k"]["label"] == "512 threads"


def test_no_candidates_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no candidates"):
        tuning.tune("k", {}, lambda s: 1.0, device="D", path=tmp_path / "t.json")
