"""helpers.timing on a CPU machine: arithmetic, formatting, and skipping cleanly without a GPU."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers import timing, tuning
from helpers.timing import Measurement


def _gpu_present():
    return timing.skip_reason() is None


def rows_bw():
    return [
        Measurement("naive", 2e-3, bytes=3 * 10**9),  # 1500 GB/s
        Measurement("best", 1e-3, bytes=3 * 10**9),  # 3000 GB/s
        Measurement("device copy (ceiling)", 0.5e-3, bytes=2 * 10**9, ceiling=True),  # 4000 GB/s
    ]


def test_rates():
    m = Measurement("x", 0.002, bytes=4_000_000, flops=10**9)
    assert m.gbps == pytest.approx(2.0)
    assert m.gflops == pytest.approx(500.0)
    assert Measurement("zero", 0.0, bytes=1).gbps == 0.0


def test_fraction_of_ceiling_bytes():
    rows = rows_bw()
    assert timing.fraction_of_ceiling(rows, "best") == pytest.approx(0.75)
    assert timing.fraction_of_ceiling(rows, "naive") == pytest.approx(0.375)
    assert timing.fraction_of_ceiling(rows, "device copy (ceiling)") == pytest.approx(1.0)


def test_fraction_uses_ceiling_of_same_unit():
    rows = [
        Measurement("tiled", 1.0, bytes=10**9, flops=10 * 10**12),  # 10 TFLOP/s
        Measurement("copy", 1e-3, bytes=4 * 10**9, ceiling=True),  # bytes ceiling
        Measurement("cuBLAS", 1.0, flops=50 * 10**12, ceiling=True),  # 50 TFLOP/s
    ]
    # flops rows are judged against the flops ceiling even though they also count bytes
    assert timing.fraction_of_ceiling(rows, "tiled") == pytest.approx(0.2)


def test_fraction_errors_name_the_problem():
    with pytest.raises(KeyError, match="nope"):
        timing.fraction_of_ceiling(rows_bw(), "nope")
    with pytest.raises(ValueError, match="no ceiling"):
        timing.fraction_of_ceiling([Measurement("a", 1.0, bytes=1)], "a")
    with pytest.raises(ValueError, match="neither"):
        timing.fraction_of_ceiling([Measurement("a", 1.0)], "a")


def test_table_columns_and_percentages():
    text = timing.table(rows_bw())
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["variant", "time"]
    assert "GB/s" in lines[0] and "GFLOP/s" in lines[0] and "% of ceiling" in lines[0]
    best = next(line for line in lines if line.startswith("best"))
    assert "1.000 ms" in best and "3000.0" in best and "75.0%" in best
    naive = next(line for line in lines if line.startswith("naive"))
    assert "37.5%" in naive
    ceil = next(line for line in lines if line.startswith("device copy"))
    assert "100.0%" in ceil and "*" in ceil
    assert lines[-1] == "* measured ceiling"
    # columns line up: every body row as long as the header row
    assert len({len(line) for line in lines[:-1]}) == 1


def test_table_without_ceiling_prints_dashes():
    text = timing.table([Measurement("lonely", 2.5e-6, bytes=1000)])
    row = text.splitlines()[2]
    assert "2.5 us" in row and row.rstrip().endswith("-")
    assert "measured ceiling" not in text


def test_validate():
    timing.validate("ok", np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    with pytest.raises(AssertionError, match=r"v3: 1 of 3 elements wrong; first at index 1"):
        timing.validate("v3", np.array([1.0, 5.0, 3.0]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(AssertionError, match=r"v2d: .*index \(1, 0\)"):
        timing.validate("v2d", np.array([[1.0, 2.0], [0.0, 4.0]]), np.array([[1.0, 2.0], [3.0, 4.0]]))
    with pytest.raises(AssertionError, match="shape"):
        timing.validate("shape", np.zeros(3), np.zeros(4))
    with pytest.raises(AssertionError, match="got nan"):
        timing.validate("nan", np.array([np.nan]), np.array([1.0]))


def test_bar_chart_draws_ceiling_line():
    fig = timing.bar_chart(rows_bw(), title="vector add")
    ax = fig.axes[0]
    assert ax.get_title() == "vector add"
    assert len(ax.patches) == 2  # the ceiling is a line, not a bar
    assert ax.lines and ax.lines[0].get_ydata()[0] == pytest.approx(4000.0)
    assert ax.get_ylabel() == "GB/s"
    plt.close(fig)


def test_bar_chart_flops():
    rows = [
        Measurement("tiled", 1.0, flops=10**12),
        Measurement("cuBLAS", 1.0, flops=5 * 10**12, ceiling=True),
    ]
    fig = timing.bar_chart(rows, title="sgemm")
    assert fig.axes[0].get_ylabel() == "GFLOP/s"
    plt.close(fig)


@pytest.mark.skipif(_gpu_present(), reason="a GPU is present")
def test_skip_reason_without_gpu():
    reason = timing.skip_reason()
    assert isinstance(reason, str) and "\n" not in reason and "skipped" in reason
    with pytest.raises(RuntimeError, match="skipped"):
        timing.time_gpu(lambda: None)
    with pytest.raises(RuntimeError):
        timing.copy_ceiling()


def test_skip_reason_sim_engine_forced(monkeypatch):
    monkeypatch.setenv("MP_ENGINE", "sim")
    assert "simulator" in timing.skip_reason()


@pytest.mark.skipif(not _gpu_present(), reason="needs a CUDA GPU")
def test_gpu_copy_ceiling_and_timing():
    from numba import cuda

    m = timing.copy_ceiling(64 << 20)
    assert m.ceiling and m.bytes == 2 * (64 << 20) and m.gbps > 50
    d = cuda.device_array(1 << 20, np.float32)
    assert timing.time_gpu(lambda: d.copy_to_device(d), warmup=1, reps=5) > 0


# ---------------------------------------------------------------------------- library peers


def rows_with_peer():
    return [
        *rows_bw(),
        Measurement("cupy.sum (peer)", 1.5e-3, bytes=3 * 10**9, peer=True),  # 2000 GB/s
        Measurement("cuBLAS", 1.0, flops=50 * 10**12, ceiling=True, peer=True),
        Measurement("tiled", 1.0, flops=25 * 10**12, config="128x128"),
    ]


def test_fraction_of_peer_same_unit():
    rows = rows_with_peer()
    assert timing.fraction_of_peer(rows, "best") == pytest.approx(1.5)  # 3000 / 2000 GB/s
    assert timing.fraction_of_peer(rows, "tiled") == pytest.approx(0.5)  # against cuBLAS, not CuPy sum
    assert timing.peer_for(rows, "tiled").name == "cuBLAS"
    assert timing.fraction_of_peer(rows_bw(), "best") is None  # no peer measured
    with pytest.raises(KeyError, match="nope"):
        timing.fraction_of_peer(rows, "nope")


def test_table_marks_peer_and_config(monkeypatch):
    monkeypatch.setattr(tuning, "CHOSEN", {})  # "128x128" chosen by no tuning search in this process
    lines = timing.table(rows_with_peer()).splitlines()
    assert any(line.startswith("cupy.sum (peer)") and "50.0%" in line for line in lines)
    assert any(line.startswith("tiled [128x128]") and "50.0%" in line for line in lines)
    assert lines[-1].startswith("(peer)") and lines[-2] == "* measured ceiling"
    assert any(line.startswith("cuBLAS (peer) *") for line in lines)  # ceiling and peer at once


def test_table_says_how_a_tuned_config_was_chosen(monkeypatch, tmp_path, capsys):
    """A row whose config a tuning search chose: a "tuning" column says searched now / cached /
    default on a shared GPU, with the spread of its rounds; other rows show a dash."""
    monkeypatch.setattr(tuning, "CHOSEN", {})
    monkeypatch.delenv(tuning.READONLY_ENV, raising=False)
    path = tmp_path / "tuning.json"
    grid = {"64x64": 1, "128x128": 2}
    tuning.tune("tiled", grid, lambda s: 1e-3 / s, device="D", path=path)
    lines = timing.table(rows_with_peer()).splitlines()
    assert lines[0].split()[-1] == "tuning"
    assert any(
        line.startswith("tiled [128x128]") and line.endswith("searched, spread 0.0%") for line in lines
    )
    assert any(line.startswith("naive ") and line.endswith(" -") for line in lines)
    assert lines[-2].startswith("tuning: the config [in brackets]")
    tuning.tune("tiled", grid, lambda s: 1e-3 / s, device="D", path=path)  # from the cache, re-checked
    assert "cached, spread 0.0%" in timing.table(rows_with_peer())
    calls = iter(range(100))
    noisy = tuning.tune("tiled", grid, lambda s: 1e-3 * (1 + next(calls) % 3), device="E", path=path)
    rows = [Measurement("tiled", 1.0, flops=1, config=noisy.label)]
    assert "default (shared GPU), spread" in timing.table(rows)
    assert "not cached" in capsys.readouterr().out


def test_library_peer_passes_over_missing_and_wrong(monkeypatch, capsys):
    monkeypatch.setattr(timing, "skip_reason", lambda: None)
    monkeypatch.setattr(timing, "time_gpu", lambda fn, **kw: (fn(), 2e-3)[1])
    monkeypatch.setattr(timing, "SKIPPED_PEERS", [])
    launches = []

    def missing():
        import cupy_that_is_not_installed  # noqa: F401

    def wrong():
        return (lambda: launches.append("wrong"), lambda: np.zeros(3))

    def right():
        return (lambda: launches.append("right"), lambda: np.ones(3))

    def check(got):
        timing.validate("peer", got, np.ones(3))

    row = timing.library_peer(
        "sum", [("cupy.sum", missing), ("bad.sum", wrong), ("torch.sum", right)], bytes=4000, check=check
    )
    assert row.peer and not row.ceiling and row.name == "torch.sum (peer)" and row.gbps == pytest.approx(2e-3)
    assert launches == ["wrong", "right", "right"]
    assert timing.library_peer("sum", [("cupy.sum", missing)], bytes=4) is None
    assert timing.SKIPPED_PEERS == [("sum", "cupy.sum: cupy_that_is_not_installed not installed")]
    assert "peer sum skipped" in capsys.readouterr().out


def test_library_peer_skips_without_gpu(monkeypatch):
    monkeypatch.setattr(timing, "skip_reason", lambda: "No CUDA GPU here: timing skipped.")
    monkeypatch.setattr(timing, "SKIPPED_PEERS", [])
    assert timing.library_peer("sum", [("cupy.sum", lambda: 1 / 0)]) is None
    assert timing.SKIPPED_PEERS == [("sum", "No CUDA GPU here: timing skipped.")]


def test_progress_callback_called_per_measurement(monkeypatch):
    ticks = []
    timing.set_progress(lambda: ticks.append(1))
    try:
        timing._progress_tick()
        timing._progress_tick()
    finally:
        timing.set_progress(None)
    timing._progress_tick()
    assert ticks == [1, 1]


def rows_sgemm():
    n = 4096
    return [
        timing.Measurement("naive", 0.5, bytes=3 * 4 * n * n, flops=2 * n**3, intensity=0.25),
        timing.Measurement("tiled 32", 0.05, bytes=3 * 4 * n * n, flops=2 * n**3, intensity=8.0),
        timing.Measurement("regtile 128", 0.01, bytes=3 * 4 * n * n, flops=2 * n**3, intensity=32.0),
        timing.Measurement("cuBLAS (ceiling)", 0.005, flops=2 * n**3, ceiling=True),
        timing.Measurement("copy (ceiling)", 0.001, bytes=2 * 10**9, ceiling=True),
    ]


def test_roofline_points_use_the_measured_roofs():
    bw, peak, points = timing.roofline_points(rows_sgemm())
    assert bw == pytest.approx(2000.0)  # 2 GB in 1 ms
    assert peak == pytest.approx(2 * 4096**3 / 0.005 / 1e9)
    by_name = {p[0]: p for p in points}
    assert set(by_name) == {"naive", "tiled 32", "regtile 128"}  # ceilings are not points
    name, x, y, roof = by_name["naive"]
    assert x == 0.25 and y == pytest.approx(2 * 4096**3 / 0.5 / 1e9)
    assert roof == pytest.approx(0.25 * 2000.0)  # under the bandwidth roof
    assert by_name["regtile 128"][3] == pytest.approx(min(peak, 32 * 2000.0))


def test_roofline_intensity_defaults_to_flops_per_byte():
    r = timing.Measurement("x", 1.0, bytes=100, flops=400)
    assert r.flop_per_byte == 4.0
    assert timing.Measurement("y", 1.0, bytes=100, flops=400, intensity=2.5).flop_per_byte == 2.5


def test_roofline_chart_draws_roofs_and_one_point_per_variant():
    fig = timing.roofline(rows_sgemm(), title="sgemm")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.collections) == 3  # one scatter per variant
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("GB/s copy" in t for t in labels) and any("FLOP peak" in t for t in labels)
    assert any(t.startswith("naive (") and "of its roof" in t for t in labels)


def test_roofline_without_flops_says_why():
    with pytest.raises(ValueError, match="no variant counts flops"):
        timing.roofline(rows_bw(), title="vector add")


# ---------------------------------------------------------------------------- goals and the SGEMM ceiling


def test_check_goal_returns_the_goal_or_names_what_is_wrong():
    goal = {"best": "k", "ceiling": "copy", "fraction": 0.8, "peer": 1.0}
    assert timing.check_goal(goal) is goal and timing.check_goal(None) is None
    assert timing.check_goal({"best": "block, fused", "ceiling": "block, op by op", "fraction": 1.5})
    for bad, message in [
        ({"best": "k", "ceiling": "copy", "fraction": 0.8, "peers": 1.0}, r"unknown key\(s\) \['peers'\]"),
        ({"best": "k", "fraction": 0.8}, r"lacks \['ceiling'\]"),
        ({"best": "k", "ceiling": "copy", "fraction": "80%"}, r"GOAL\['fraction'\] = '80%'"),
        ({"best": "k", "ceiling": "copy", "fraction": 0}, r"GOAL\['fraction'\] = 0: a fraction above 0"),
        ({"best": "", "ceiling": "copy", "fraction": 0.8}, r"GOAL\['best'\] is empty"),
        ({"best": "k", "ceiling": "copy", "fraction": True}, r"GOAL\['fraction'\] = True"),
        ([("k", "copy", 0.8)], "a GOAL is a dict or None, not list"),
    ]:
        with pytest.raises(ValueError, match=message):
            timing.check_goal(bad)


def test_goal_rows_judges_against_the_ceiling_of_the_unit_or_a_named_row():
    rows = [
        timing.Measurement("copy (ceiling)", 1.0, bytes=1000, ceiling=True),
        timing.Measurement("sgemm (ceiling)", 1.0, flops=10_000, ceiling=True),
        timing.Measurement("k", 1.0, bytes=900),
        timing.Measurement("mm", 1.0, flops=5_000),
        timing.Measurement("torch k", 1.0, bytes=800, peer=True),
    ]
    got = timing.goal_rows(
        rows,
        [
            ("k", "copy", 0.8),
            ("mm", "sgemm", 0.6),
            ("k", "torch k", 1.0),
            ("k", "absent", 1.0),
            ("gone", "copy", 1),
        ],
    )
    assert [(n, a, None if r is None else round(r, 3), need, met) for n, a, r, need, met in got] == [
        ("k", "copy", 0.9, 0.8, "yes"),
        ("mm", "sgemm", 0.5, 0.6, "NO"),  # the FLOP/s ceiling, not the copy
        ("k", "torch k", 1.125, 1.0, "yes"),
        ("k", "absent", None, 1.0, "?"),
        ("gone", "copy", None, 1, "?"),
    ]


def test_torch_or_reason_and_sgemm_ceiling_without_a_gpu():
    torch, why = timing.torch_or_reason()
    assert (torch is None) == (why is not None)
    if torch is None:
        assert why.endswith("its row is skipped.")
    if timing.skip_reason() is not None:
        with pytest.raises(RuntimeError, match="timing skipped"):
            timing.sgemm_ceiling(64)
