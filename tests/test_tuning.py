"""helpers.tuning with a fake timer: the fastest setting wins, the winner is cached per device and
reused, another device (or a changed grid, or MP_RETUNE) searches again."""

import json

import pytest

from helpers import tuning

GRID = {"128 threads": 128, "256 threads": 256, "512 threads": 512}


def fake_timer(winner, calls):
    def measure(setting):
        calls.append(setting)
        return 1e-3 if setting == winner else 2e-3 + setting * 1e-6

    return measure


def test_fastest_wins_and_is_cached(tmp_path):
    path = tmp_path / "tuning.json"
    calls = []
    choice = tuning.tune("ch10_reduce_shuffle", GRID, fake_timer(256, calls), device="GPU A", path=path)
    assert (choice.label, choice.config, choice.cached) == ("256 threads", 256, False)
    assert sorted(calls) == [128, 256, 512] and choice.seconds == pytest.approx(1e-3)
    assert set(choice.timings) == set(GRID)
    saved = json.loads(path.read_text())
    assert saved["GPU A"]["ch10_reduce_shuffle"]["label"] == "256 threads"
    assert saved["GPU A"]["ch10_reduce_shuffle"]["config"] == 256
    assert tuning.CHOSEN["ch10_reduce_shuffle"] is choice

    # same device: read from the cache, nothing timed, even if the timer now prefers another
    calls.clear()
    again = tuning.tune("ch10_reduce_shuffle", GRID, fake_timer(512, calls), device="GPU A", path=path)
    assert (again.config, again.cached, calls) == (256, True, [])
    assert "cached" in str(again) and "GPU A" in str(again)


def test_other_device_retunes_and_keeps_both(tmp_path):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(256, []), device="GPU A", path=path)
    calls = []
    b = tuning.tune("k", GRID, fake_timer(512, calls), device="GPU B", path=path)
    assert (b.config, b.cached, len(calls)) == (512, False, 3)
    saved = json.loads(path.read_text())
    assert saved["GPU A"]["k"]["config"] == 256 and saved["GPU B"]["k"]["config"] == 512


def test_changed_grid_or_retune_searches_again(tmp_path, monkeypatch):
    path = tmp_path / "tuning.json"
    tuning.tune("k", GRID, fake_timer(256, []), device="GPU A", path=path)
    calls = []
    smaller = {"128 threads": 128, "512 threads": 512}  # the cached winner is no longer a candidate
    assert tuning.tune("k", smaller, fake_timer(512, calls), device="GPU A", path=path).config == 512
    assert len(calls) == 2
    monkeypatch.setenv("MP_RETUNE", "1")
    calls.clear()
    assert tuning.tune("k", GRID, fake_timer(128, calls), device="GPU A", path=path).config == 128
    assert len(calls) == 3


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
