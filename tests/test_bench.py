"""python -m tools.bench on fake measurements: progress on stderr, the goals table with the peer
beside the ceiling, and the JSON file's shape (device, versions, every row, tuned configurations,
verdicts). The chapters and the device are fakes; nothing here needs a GPU."""

import json
import types

import pytest

from helpers import timing, tuning
from helpers.timing import Measurement
from tools import bench


def fake_chapters(tmp_path):
    def bench_a(scale=1.0):
        # a tuned knob: the fake timer makes 512 threads the winner
        choice = tuning.tune(
            "cha_kernel",
            {"256 threads": 256, "512 threads": 512},
            lambda tpb: timing.time_gpu(lambda: None) * (0.5 if tpb == 512 else 1.0),
            device="Fake GPU",
            path=tmp_path / "tuning.json",
        )
        return [
            Measurement("device copy (ceiling)", 1e-3, bytes=4 * 10**9, ceiling=True),  # 4000 GB/s
            Measurement("cha_kernel", 1e-3, bytes=3 * 10**9, config=choice.label),  # 3000 GB/s
            Measurement("cupy.thing (peer)", 1e-3, bytes=2 * 10**9, peer=True),  # 2000 GB/s
        ]

    def bench_b(scale=1.0):
        timing.time_gpu(lambda: None)
        return [
            Measurement("cuBLAS SGEMM (ceiling)", 1.0, flops=50 * 10**12, ceiling=True, peer=True),
            Measurement("chb_matmul", 1.0, flops=10 * 10**12, bytes=10**9),
        ]

    def bench_c(scale=1.0):
        raise AssertionError("chc_kernel: 3 of 100 elements wrong")

    a = types.SimpleNamespace(
        __name__="puzzles.pmpp.cha_x",
        benchmark=bench_a,
        GOAL={"ceiling": "copy", "fraction": 0.7, "best": "cha_kernel", "peer": 1.0},
        GOALS=[("cha_kernel", "cupy.thing (peer)", 2.0), ("cha_kernel", "copy", 0.5)],
    )
    b = types.SimpleNamespace(
        __name__="puzzles.pmpp.chb_y",
        benchmark=bench_b,
        GOAL={"ceiling": "sgemm", "fraction": 0.4, "best": "chb_matmul"},
    )
    c = types.SimpleNamespace(__name__="puzzles.pmpp.chc_z", benchmark=bench_c, GOAL=None)
    return [("cha", a), ("chb", b), ("chc", c)]


@pytest.fixture
def fake_gpu(tmp_path, monkeypatch):
    monkeypatch.setattr(timing, "skip_reason", lambda: None)

    def time_gpu(fn, **kw):
        fn()
        timing._progress_tick()
        return 1e-3

    monkeypatch.setattr(timing, "time_gpu", time_gpu)
    monkeypatch.setattr(timing, "SKIPPED_PEERS", [("chb peer", "cupy not installed")])
    monkeypatch.setattr(tuning, "CHOSEN", {})
    monkeypatch.delenv(tuning.READONLY_ENV, raising=False)  # a bench run writes the cache (conftest.py)
    monkeypatch.setattr(
        bench,
        "device_info",
        lambda: {
            "name": "Fake GPU",
            "compute_capability": "9.0",
            "multiprocessors": 132,
            "driver": "12.8",
            "runtime": "12.6",
        },
    )
    monkeypatch.setattr(bench, "chapter_modules", lambda only=(): fake_chapters(tmp_path))
    return tmp_path


def test_json_shape_and_goals_table(fake_gpu, capsys):
    path = fake_gpu / "out.json"
    assert bench.main(["--json", str(path)]) == 1  # chc failed validation
    out, err = capsys.readouterr()

    # progress on stderr: a bar per chapter, a dot per timed measurement
    assert "[" in err and "3/3" in err and "VALIDATION FAILED" in err
    assert err.count(".") >= 3
    # goals table: the peer beside the ceiling
    table = out[out.index("== goals on Fake GPU ==") :].splitlines()
    header = table[1]
    assert header.split()[:2] == ["chapter", "best"] and "peer" in header and "vs peer" in header
    cha = next(line for line in table if line.startswith("cha "))
    assert "75.0%" in cha and "150%" in cha and cha.rstrip().endswith("yes")
    chb = next(line for line in table if line.startswith("chb "))
    assert "20.0%" in chb and chb.rstrip().endswith("NO")
    assert "tuned cha_kernel: 512 threads" in out
    # the chapter's further GOALS, judged by timing.goal_rows: printed and kept in the JSON
    assert "goal: cha_kernel vs cupy.thing (peer): 1.50x (goal >= 2.00x): NO" in out
    assert "goal: cha_kernel vs copy: 0.75x (goal >= 0.50x): yes" in out

    data = json.loads(path.read_text())
    assert data["schema"] == 1 and data["command"].endswith(f"--json {path}")
    assert data["device"] == {
        "name": "Fake GPU",
        "compute_capability": "9.0",
        "multiprocessors": 132,
        "driver": "12.8",
        "runtime": "12.6",
    }
    assert set(data["packages"]) == {"numba", "numba-cuda", "numpy", "cupy", "torch"}
    assert data["packages"]["numpy"]  # installed here, so a version string
    assert set(data["chapters"]) == {"cha", "chb", "chc"}
    cha_rows = {r["name"]: r for r in data["chapters"]["cha"]["rows"]}
    kernel = cha_rows["cha_kernel"]
    assert kernel["seconds"] == 1e-3 and kernel["gbps"] == pytest.approx(3000) and kernel["gflops"] is None
    assert kernel["fraction_of_ceiling"] == pytest.approx(0.75)
    assert kernel["fraction_of_peer"] == pytest.approx(1.5)
    assert kernel["config"] == "512 threads" and not kernel["peer"] and not kernel["ceiling"]
    assert kernel["tuning"] == {"knob": "cha_kernel", "how": "searched", "cached": False, "spread": 0.0}
    assert cha_rows["cupy.thing (peer)"]["tuning"] is None
    assert cha_rows["cupy.thing (peer)"]["peer"] is True
    assert data["chapters"]["cha"]["ceilings"] == ["device copy (ceiling)"]
    assert data["chapters"]["cha"]["peers"] == ["cupy.thing (peer)"]
    chb_rows = {r["name"]: r for r in data["chapters"]["chb"]["rows"]}
    assert chb_rows["chb_matmul"]["gflops"] == pytest.approx(10_000)
    assert chb_rows["chb_matmul"]["fraction_of_ceiling"] == pytest.approx(0.2)
    assert data["chapters"]["chb"]["peers"] == ["cuBLAS SGEMM (ceiling)"]
    further = data["chapters"]["cha"]["further_goals"]
    assert [(g["variant"], g["against"], g["met?"]) for g in further] == [
        ("cha_kernel", "cupy.thing (peer)", "NO"),
        ("cha_kernel", "copy", "yes"),
    ]
    assert further[0]["ratio"] == pytest.approx(1.5) and data["chapters"]["chb"]["further_goals"] == []
    assert "rows" not in data["chapters"]["chc"]
    assert data["chapters"]["chc"]["error"].startswith("validation failed: chc_kernel")

    goals = {g["chapter"]: g for g in data["goals"]}
    assert set(goals["cha"]) == set(bench.GOAL_HEADER)
    assert goals["cha"]["met?"] == "yes" and goals["cha"]["vs peer"] == "150%"
    assert goals["chb"]["met?"] == "NO" and goals["chc"]["met?"] == "NO"

    tuned = data["tuning"]["cha_kernel"]
    assert tuned["label"] == "512 threads" and tuned["config"] == 512 and tuned["device"] == "Fake GPU"
    assert tuned["cached"] is False and set(tuned["timings"]) == {"256 threads", "512 threads"}
    assert (tuned["how"], tuned["spread"], tuned["default"], tuned["saved"]) == (
        "searched",
        0.0,
        "256 threads",
        True,
    )
    assert len(tuned["rounds"]["512 threads"]) == tuning.ROUNDS
    # the chapter's table says how the tuned row's config was chosen
    assert any(
        line.startswith("cha_kernel [512 threads]") and "searched, spread 0.0%" in line
        for line in out.splitlines()
    )
    assert data["skipped_peers"] == [{"peer": "chb peer", "why": "cupy not installed"}]


def test_second_run_reads_the_tuning_cache(fake_gpu, capsys):
    bench.main(["--json", str(fake_gpu / "1.json")])
    bench.main(["--json", str(fake_gpu / "2.json")])
    capsys.readouterr()
    first = json.loads((fake_gpu / "1.json").read_text())["tuning"]["cha_kernel"]
    second = json.loads((fake_gpu / "2.json").read_text())["tuning"]["cha_kernel"]
    assert (first["cached"], second["cached"]) == (False, True)
    assert (first["how"], second["how"]) == ("searched", "cached")
    row = next(
        r for r in json.loads((fake_gpu / "2.json").read_text())["chapters"]["cha"]["rows"] if r["config"]
    )
    assert row["tuning"]["how"] == "cached" and row["tuning"]["cached"] is True
    assert set(second["timings"]) == {"512 threads", "256 threads"}  # re-checked against the default
    assert second["label"] == first["label"] == "512 threads"


def test_peer_goal_missed_or_unmeasured():
    rows = [
        Measurement("copy", 1.0, bytes=1000, ceiling=True),
        Measurement("k", 1.0, bytes=900),
        Measurement("lib (peer)", 1.0, bytes=1000, peer=True),
    ]
    module = types.SimpleNamespace(GOAL={"ceiling": "copy", "fraction": 0.8, "best": "k", "peer": 1.0})
    row = bench.goal_row("chx", module, rows)
    assert row[4] == "90.0%" and row[6] == "90%" and row[-1] == "NO"  # ceiling met, peer not
    row = bench.goal_row("chx", module, rows[:2])
    assert row[5] == "-" and row[-1] == "?"  # the peer goal cannot be judged without the peer
    old = types.SimpleNamespace(GOAL={"ceiling": "copy", "fraction": 0.8, "best": "k"})
    assert bench.goal_row("chx", old, rows[:2])[-1] == "yes"  # old GOALs (no peer key) still judged


def test_a_chapter_package_is_found_with_its_bench_submodule(tmp_path, monkeypatch):
    """A chapter package is timed through its `bench` submodule (where GOAL and GOALS live), whether or
    not its __init__ re-exports them; a plain module through itself; without either, no benchmark."""
    import importlib

    root = tmp_path / "fakecourse"
    code = "GOAL = None\ndef benchmark(scale=1.0):\n    return []\n"
    for pkg, init, sub in [
        ("cha", "", code),
        ("chb", "from .bench import GOAL, benchmark\n", code),
        ("chc", "", None),
    ]:
        (root / pkg).mkdir(parents=True)
        (root / pkg / "__init__.py").write_text(init)
        if sub:
            (root / pkg / "bench.py").write_text(sub)
    (root / "__init__.py").write_text("")
    (root / "chd.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = {
        n: bench.benchmark_of(importlib.import_module(f"fakecourse.{n}"))
        for n in ("cha", "chb", "chc", "chd")
    }
    assert {n: getattr(h, "__name__", None) for n, h in found.items()} == {
        "cha": "fakecourse.cha.bench",
        "chb": "fakecourse.chb.bench",
        "chc": None,
        "chd": "fakecourse.chd",
    }


def test_every_chapter_goal_is_checked_before_any_run(monkeypatch):
    """chapter_modules checks each GOAL (timing.check_goal): a wrong key names the chapter."""
    good = types.SimpleNamespace(__name__="x.good", GOAL={"best": "k", "ceiling": "copy", "fraction": 0.5})
    bad = types.SimpleNamespace(__name__="x.bad", GOAL={"best": "k", "ceiling": "copy", "fracton": 0.5})
    assert bench._checked([("cha", good)], timing) == [("cha", good)]
    with pytest.raises(ValueError, match=r"chb \(x.bad\): GOAL has unknown key\(s\) \['fracton'\]"):
        bench._checked([("cha", good), ("chb", bad)], timing)


def test_the_real_chapters_are_found_and_their_goals_valid():
    """Every chapter with a benchmark is found (modules or packages alike) and passes check_goal."""
    tags = [t for t, _ in bench.chapter_modules()]
    assert tags == [f"ch{n:02d}" for n in range(2, 19)] + [
        "tc",
        "llm1",
        "llm2",
        "llm3",
        "llm4",
        "llm5",
        "dist",
    ]
    assert [t for t, _ in bench.chapter_modules({"ch10", "llm3"})] == ["ch10", "llm3"]


def test_default_json_path_names_device():
    path = bench.default_json_path("NVIDIA H100 80GB HBM3")
    assert path.startswith("bench-nvidia-h100-80gb-hbm3-") and path.endswith(".json")


def test_profile_launcher_skips_without_gpu_and_names_bad_chapters(capsys):
    """`python -m tools.profile` (the launches behind the notebooks' profiler findings): on a machine
    without a GPU one line says why; a chapter with no study is refused, naming the ones there are."""
    from helpers import timing
    from tools import profile

    if timing.skip_reason() is None:
        pytest.skip("a GPU is present")
    assert profile.main(["ch08"]) == 0 and "skipped" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        profile.main(["ch99"])
    assert "ch99" in capsys.readouterr().err and "ch08" in profile.STUDIES


def test_assume_t4_needs_no_gpu_and_scales_a_results_file(tmp_path, capsys):
    """`--assume t4` prints the T4's datasheet roofs and every goal on it; with `--from`, an H100
    results file's rows scale by the datasheet ratio of their unit, a launch-bound row is flagged, and a
    file that is not a results file gets one line."""
    import json

    from tools import bench

    results = {
        "device": {"name": "NVIDIA H100 80GB HBM3"},
        "chapters": {
            "ch02": {"rows": [{"name": "my_vecadd", "seconds": 1e-3, "bytes": 3.0e9, "flops": 0}]},
            "ch05": {"rows": [{"name": "my_sgemm", "seconds": 2e-3, "bytes": 0, "flops": 1.0e11}]},
            "llm2": {"rows": [{"name": "tiny", "seconds": 5e-6, "bytes": 1.0e6, "flops": 0}]},
        },
    }
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(results))
    assert bench.main(["--assume", "t4", "--only", "ch02", "--only", "ch05", "--from", str(path)]) == 0
    out = capsys.readouterr().out
    assert "320 GB/s, 8.1 TFLOP/s FP32, 40 SMs, 64 KiB shared per SM" in out
    assert "ch05   prefetched" in out and "at most 5670 GFLOP/s" in out
    line = next(x for x in out.splitlines() if x.split()[:2] == ["ch02", "my_vecadd"])
    assert "3000 GB/s" in line and "287 GB/s" in line  # 3000 * 320 / 3350
    line = next(x for x in out.splitlines() if x.split()[:2] == ["ch05", "my_sgemm"])
    assert "50000 GFLOP/s" in line and "6045 GFLOP/s" in line  # 50 TFLOP/s * 8.1 / 67
    line = next(x for x in out.splitlines() if "tiny" in x)
    assert "0.052 ms" in line and "launch-bound" in line  # 5 us at 200 GB/s: latency, flagged
    with pytest.raises(SystemExit):
        bench.main(["--from", str(path)])
    (tmp_path / "bad.json").write_text("{}")
    assert bench.main(["--assume", "t4", "--only", "ch02", "--from", str(tmp_path / "bad.json")]) == 2
    assert "error: cannot scale" in capsys.readouterr().out


# what `ncu --import REPORT --csv --page raw` prints (abridged): a header, a units row, a row per launch
_STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
_NCU_COLUMNS = [
    ("ID", "", "0"),
    (
        "Kernel Name",
        "",
        "cudapy::puzzles::pmpp::ch18_electrostatics::dcs_fast::dcs_split_kernel$12(Array<float>)",
    ),
    ("Block Size", "", "(32, 8, 1)"),
    ("Grid Size", "", "(2, 512, 1)"),
    ("gpu__time_duration.sum", "msecond", "0.31"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "91.5"),
    ("launch__registers_per_thread", "register/thread", "40"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "88.2"),
    ("sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", "%", "45.1"),
    ("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "%", "97.3"),
    ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "%", "3.0"),
    (_STALL.format("barrier"), "inst", "0.20"),
    (_STALL.format("selected"), "inst", "1.00"),
    (_STALL.format("math_pipe_throttle"), "inst", "2.50"),
    (_STALL.format("long_scoreboard"), "inst", "0.05"),
    (_STALL.format("wait"), "inst", "0.70"),
]
NCU_CSV = "==PROF== Connected to process\n" + "\n".join(
    ",".join(f'"{c[k]}"' for c in _NCU_COLUMNS) for k in range(3)
)


def test_ncu_summary_reads_ncu_csv_and_names_the_limits(monkeypatch, capsys):
    """tools.ncu_summary (GPU machines: ncu on tools.profile's launches) on a fake report: short kernel
    name, time in microseconds, the busiest pipes and the top three stalls ("selected" is no stall);
    metrics the report lacks print as "-"; the ncu command asks for the sections and the metrics;
    without ncu on PATH it fails loudly."""
    from tools import ncu_summary

    (row,) = ncu_summary.summarise(NCU_CSV)
    assert row["name"] == "dcs_split_kernel" and row["block"] == "(32, 8, 1)"
    assert row["time_us"] == pytest.approx(310.0) and row["SM %"] == 91.5 and row["regs"] == 40
    assert row["pipes"] == [("xu", 97.3), ("fma", 45.1)]
    assert row["stalls"] == [("math_pipe_throttle", 2.5), ("wait", 0.7), ("barrier", 0.2)]
    assert row["warp/elem"] is None  # no element count given
    text = ncu_summary.render([row])
    assert "dcs_split_kernel" in text and "xu 97%" in text and "math_pipe_throttle 2.50" in text
    assert row["mem %"] is None and " - " in text
    cmd = ncu_summary.command("ch18", "/tmp/r/ncu-ch18.csv")
    assert cmd[0] == "ncu" and cmd[-3:] == ["-m", "tools.profile", "ch18"] and "WarpStateStats" in cmd
    assert ",".join(ncu_summary.METRICS) in cmd and "/tmp/r/ncu-ch18.csv" in cmd
    mangled = "_ZN7puzzles4pmpp18ch05_memory_tiling8sgemm_v416v4_matmul_kernelB2v1B104cw51cXE5ArrayIfLi1E"
    demangled = (
        "puzzles::pmpp::ch05_memory_tiling::sgemm_v4::v4_matmul_kernel[abi:v1][abi:cw51cX](Array<float>)"
    )
    newer = "lookback32::lookback_u32[v5,cw51cXTLSU](Array<float, 1, C, mutable, aligned>, long long)"
    assert ncu_summary.short_name(mangled) == ncu_summary.short_name(demangled) == "v4_matmul_kernel"
    assert ncu_summary.short_name(newer) == "lookback_u32"
    with pytest.raises(ValueError, match="no ncu raw-page CSV header"):
        ncu_summary.summarise("ncu: no kernels were profiled")
    monkeypatch.setattr(ncu_summary.shutil, "which", lambda _: None)
    assert (
        ncu_summary.main(["ch18"]) == 1 and "ncu (Nsight Compute) is not on PATH" in capsys.readouterr().err
    )


def test_ncu_summary_counts_instructions_per_element():
    """--print-units base leaves the units row empty (time in ns); instruction counts divide by the
    study's elements; stalls past the top three are left out."""
    from tools import ncu_summary

    header = ["ID", "Kernel Name", *ncu_summary.METRICS]
    stalls = [_STALL.format(s) for s in ("barrier", "long_scoreboard", "wait", "math")]
    kernel = "puzzles::pmpp::ch14_sparse::csr_fast::spmv_csr_subwarp[abi:v1](Array<float>)"
    values = ["0", kernel, "250000", "40", "80", "75", "90", "30", "100", "24", "1000", "32000"]
    lines = [
        "==PROF== Connected to process 1",
        ",".join(f'"{h}"' for h in header + stalls),
        ",".join('""' for _ in header + stalls),  # the units row
        ",".join(f'"{v}"' for v in values + ["0.5", "6.25", "1.5", "0.1"]),
    ]
    assert len(ncu_summary.rows_of(lines)) == 1
    (row,) = ncu_summary.summarise("\n".join(lines), 1000)
    assert row["name"] == "spmv_csr_subwarp" and row["time_us"] == pytest.approx(250.0)
    assert row["warp/elem"] == 1.0 and row["thread/elem"] == 32.0 and row["theo %"] == 100
    assert row["stalls"] == [("long_scoreboard", 6.25), ("wait", 1.5), ("barrier", 0.5)]
    text = ncu_summary.render([row])
    assert "250.0" in text and "32.00" in text and "long_scoreboard 6.25, wait 1.50, barrier 0.50" in text


def test_ncu_summary_on_a_real_h100_csv(monkeypatch, capsys, tmp_path):
    """tests/data/ncu-ch14.csv: two launches of `python -m tools.ncu_summary ch14` on an H100 (the
    CSV cut to the columns the summary reads): CSR-Vector (a warp per row) issues 54 warp
    instructions per nonzero against scalar CSR's 0.68. Read back by name, and through `run` with a
    stand-in for ncu that leaves the CSV where the command says."""
    from pathlib import Path

    from tools import ncu_summary

    data = Path(__file__).parent / "data" / "ncu-ch14.csv"
    assert ncu_summary.main([str(data)]) == 0
    out = capsys.readouterr().out
    vector = next(ln for ln in out.splitlines() if "spmv_csr_vector" in ln)
    scalar = next(ln for ln in out.splitlines() if "spmv_csr_scalar32" in ln)
    assert out.startswith("ch14: 2 kernel launches, 20,963,328 elements each")
    assert "1626.7" in vector and "54.02" in vector and "long_scoreboard 6.82" in vector
    assert "79.8" in scalar and "0.68" in scalar and "long_scoreboard 52.27" in scalar
    (v, s) = ncu_summary.summarise(data.read_text())
    assert (v["occ %"], v["theo %"], v["regs"]) == (pytest.approx(57.7, abs=0.1), pytest.approx(62.5), 47)
    assert s["DRAM %"] == pytest.approx(81.2, abs=0.1) and s["pipes"] == []

    def fake_ncu(cmd):
        Path(cmd[cmd.index("--log-file") + 1]).write_text(data.read_text())
        return types.SimpleNamespace(returncode=0)

    monkeypatch.setattr(ncu_summary.shutil, "which", lambda _: "/usr/bin/ncu")
    monkeypatch.setattr(ncu_summary.subprocess, "run", fake_ncu)
    assert ncu_summary.main(["ch14", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "ncu-ch14.csv").exists() and "54.02" in capsys.readouterr().out
    monkeypatch.setattr(ncu_summary.subprocess, "run", lambda cmd: types.SimpleNamespace(returncode=3))
    assert ncu_summary.run(["ch08"], tmp_path) == 1 and "ch08: ncu exited with 3" in capsys.readouterr().err


def test_tensor_core_goal_judges_the_fastest_validated_gemm():
    """puzzles.tensor_cores.bench: the goal row is the fastest tensor-core GEMM of the run (a pipelined
    candidate on an H100), renamed BEST with its former name in its config, which the goals table
    shows; the other rows keep their names."""
    from puzzles.tensor_cores import bench as tc

    rows = [
        Measurement(tc.MMA128, 2.4e-3, flops=2 * 4096**3, config="m16n8k16"),
        Measurement(tc.PIPE64, 0.43e-3, flops=2 * 4096**3),
        Measurement(tc.PIPE, 0.45e-3, flops=2 * 4096**3),
        Measurement(tc.HGEMM, 0.27e-3, flops=2 * 4096**3, peer=True, ceiling=True),
    ]
    tc.judge_fastest(rows)
    assert [r.name for r in rows] == [tc.MMA128, tc.BEST, tc.PIPE, tc.HGEMM]
    assert rows[1].config == "cp.async 3 stages + ldmatrix, 4 warps of 64x64"
    row = bench.goal_row("tc", tc, rows)
    assert row[1] == f"{tc.BEST} [cp.async 3 stages + ldmatrix, 4 warps of 64x64]" and row[4] == "62.8%"
    assert row[-1] == "yes"
    alone = [Measurement(tc.MMA128, 2.4e-3, flops=1.0, config="m16n8k16")]
    assert tc.judge_fastest(alone)[0].config == "mma.sync, 128x128 tiles, m16n8k16"
