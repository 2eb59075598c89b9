"""Training the course's GPT-2 (puzzles/llm/training, python -m tools.train): the NumPy reference's
gradients against finite differences; the kernels' gradients against float64 at every parameter on
the simulator (and the check failing with a wrong kernel swapped in); the kernels' AdamW steps equal
the reference's; the loss falls on a CPU; the data ships; each bad input gets its message; the
PyTorch twin agrees (skipped in one line without PyTorch)."""

from types import SimpleNamespace

import numpy as np
import pytest

from puzzles.llm.training import data, gradcheck, loop, reference
from tools import train

CHECK = reference.CONFIGS["check"]


def test_reference_gradients_match_finite_differences():
    cfg = reference.Config(L=2, C=8, NH=2, T=4, V=11)
    p = {k: v.astype(np.float64) for k, v in gradcheck.perturbed_params(cfg, 3).items()}
    rng = np.random.default_rng(3)
    tok, tgt = rng.integers(0, cfg.V, (2, cfg.T)), rng.integers(0, cfg.V, (2, cfg.T))
    _, _, cache = reference.forward(p, tok, tgt, cfg)
    g = reference.backward(p, cache, cfg)
    h = 1e-6
    for name, a in p.items():
        for idx in [tuple(int(rng.integers(0, s)) for s in a.shape) for _ in range(3)]:
            old = a[idx]
            a[idx] = old + h
            up = reference.forward(p, tok, tgt, cfg)[1]
            a[idx] = old - h
            down = reference.forward(p, tok, tgt, cfg)[1]
            a[idx] = old
            fd = (up - down) / (2 * h)
            assert abs(fd - g[name][idx]) <= 1e-6 + 1e-5 * abs(fd), (name, idx, fd, g[name][idx])


def test_kernels_gradients_pass_the_check_on_the_simulator(sim_engine):
    from puzzles.llm.training.kernels import KernelBackend

    rows = gradcheck.check(KernelBackend, CHECK)
    assert len(rows) == len(reference.param_shapes(CHECK))
    assert all(ok for *_, ok in rows), gradcheck.report(rows)


def test_the_check_fails_with_a_wrong_kernel(sim_engine):
    from mutants.llm.backward.attention import SOFTMAX_BACKWARD

    from puzzles.llm.training.kernels import KernelBackend

    no_dot = next(k for name, k, *_ in SOFTMAX_BACKWARD if name == "sb_no_row_dot")
    rows = gradcheck.check(KernelBackend, CHECK, kernels={"softmax_backward": no_dot})
    failed = {name for name, *_, ok in rows if not ok}
    assert "0.w_qkv" in failed, gradcheck.report(rows)


def test_a_learners_kernel_swaps_in_and_steps_match_the_reference(sim_engine):
    from mutants.llm.backward.attention import sb_two_arrays_pass

    from puzzles.llm.training.kernels import KernelBackend

    params = reference.init_params(CHECK, 0)
    kb = KernelBackend(CHECK, params, kernels={"softmax_backward": sb_two_arrays_pass})
    assert kb.sources()["softmax_backward"] == "yours" and kb.sources()["matmul_nt"] == "course solution"
    kw = dict(steps=3, B=2, eval_every=0, sample_chars=0, log=lambda s: None)
    got = loop.train(kb, CHECK, **kw).losses
    want = loop.train(loop.NumpyBackend(CHECK, params), CHECK, **kw).losses
    assert np.allclose(got, want, rtol=0, atol=1e-5), (got, want)
    with pytest.raises(KeyError, match="no kernel of the model is called"):
        KernelBackend(CHECK, params, kernels={"softmax_bwd": sb_two_arrays_pass})


def test_loss_falls_on_a_cpu():
    cfg = reference.Config(L=1, C=16, NH=2, T=16)
    be = loop.NumpyBackend(cfg, reference.init_params(cfg, 0))
    run = loop.train(be, cfg, steps=40, B=4, lr=1e-2, eval_every=40, sample_chars=20, log=lambda s: None)
    assert run.losses[0] > 5.4  # log(256) = 5.55: the uniform guess
    assert run.val[-1][1] < run.losses[0] - 1.5, run.val
    assert set(run.samples) == {"start", "end"}


def test_data_ships_and_tokenizes():
    text = data.DATA.read_text()
    assert 300_000 < len(text.encode()) < 450_000 and "MACBETH" in text
    assert "CC BY 2.5" in (data.DATA.parent / "SHAKESPEARE.md").read_text()
    assert data.decode(data.encode("To be, or not")) == "To be, or not"
    tr, va = data.split(data.load_tokens())
    assert len(va) / (len(tr) + len(va)) == pytest.approx(data.VAL_FRACTION, abs=1e-4)
    x, y = data.batch(tr, 3, 8, np.random.default_rng(0))
    assert x.shape == y.shape == (3, 8) and (x[:, 1:] == y[:, :-1]).all()


def test_the_wheel_ships_the_text():
    import tomllib
    from pathlib import Path

    cfg = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert "data/shakespeare.txt" in cfg["tool"]["setuptools"]["package-data"]["puzzles.llm.training"]


def test_bad_inputs_get_their_messages(capsys):
    with pytest.raises(SystemExit) as e:
        train.main(["--sizes", "tiny"])
    assert e.value.code == 2 and "unrecognized arguments: --sizes" in capsys.readouterr().err
    assert train.main(["--data", "/no/such/file.txt", "--steps", "1"]) == 2
    assert "training text /no/such/file.txt not found" in capsys.readouterr().err
    with pytest.raises(loop.TrainingError, match="does not fit: a step needs about"):
        loop.check_config(reference.CONFIGS["medium"], 10**6, 16 * 2**30, "the GPU")
    with pytest.raises(loop.TrainingError, match="not a multiple of the heads"):
        loop.check_config(reference.Config(L=1, C=10, NH=3, T=4), 1, None, "memory")
    params = reference.init_params(CHECK, 0)
    params["wpe"][2, 5] = np.inf
    with pytest.raises(
        loop.NonFinite,
        match=r"step 1: the loss is nan \(first non-finite value: logits\[0, \d, \d+\] = nan\)",
    ):
        loop.train(loop.NumpyBackend(CHECK, params), CHECK, steps=2, B=1, eval_every=0, sample_chars=0)


def test_the_pytorch_twin_agrees():
    pytest.importorskip("torch", reason="PyTorch is not installed: the comparison is skipped")
    from puzzles.llm.training.torch_model import TorchBackend

    cfg = reference.Config(L=1, C=16, NH=2, T=16)
    params = reference.init_params(cfg, 0)
    kw = dict(steps=10, B=2, eval_every=10, sample_chars=0, log=lambda s: None)
    ours = loop.train(loop.NumpyBackend(cfg, params), cfg, **kw)
    theirs = loop.train(TorchBackend(cfg, params, device="cpu"), cfg, **kw)
    assert np.abs(np.array(ours.losses) - theirs.losses).max() <= train.LOSS_TOL


@pytest.mark.parametrize("fused", [False, True])
def test_gpu_launch_shapes_compile_and_pass_on_the_simulator(sim_engine, monkeypatch, fused):
    """No GPU in CI: the model at the GPU's launch shapes (16 x 16 tiles, 64-row splits) passes the
    gradient check on the simulator, and every kernel it launches compiles to PTX with those
    arguments (what a GPU run would compile)."""
    from helpers import ptx
    from puzzles.llm.training import kernels

    if not ptx.available():
        pytest.skip("Numba's CUDA compiler is not available here: PTX not checked")
    compiled = {}

    class Checked:
        def __init__(self, k):
            self.k = k

        def __getitem__(self, launch_config):
            def launch(*args):
                name = ptx.py_func(self.k).__name__
                if name not in compiled:
                    ptx.ptx_check(self.k, [getattr(a, "_data", a) for a in args])
                    compiled[name] = True
                return self.k[launch_config](*args)

            return launch

    for name in ("zero_fill", "heads_of", "qkv_of"):
        monkeypatch.setattr(kernels, name, Checked(getattr(kernels, name)))

    class GpuShaped(kernels.KernelBackend):
        def __init__(self, *a, **kw):
            super().__init__(*a, tile=16, fused=fused, **kw)
            self.k = {n: Checked(k) for n, k in self.k.items()}
            self.fused = {n: Checked(k) for n, k in self.fused.items()}

    rows = gradcheck.check(GpuShaped, CHECK)
    assert all(ok for *_, ok in rows), gradcheck.report(rows)
    if not fused:
        assert len(compiled) == len(kernels.COURSE) - 1 + 3  # every launch but AdamW's (no step here)
    else:
        from puzzles.llm.training import fused as f

        assert set(f.FUSED) <= set(compiled), sorted(compiled)


def test_a_learners_tiled_kernels_are_sized_for_the_gpu_launch(sim_engine):
    """Yours run at the launch's tile too: a notebook's `linear` (sized by its TILE = 4) launched with
    16 x 16 blocks without being recompiled writes past its shared tiles (an illegal address on a GPU,
    an out-of-bounds shared access here)."""
    import types

    from puzzles.llm.training import kernels

    def as_notebook_cell(k):  # the same source, defined in a notebook's own namespace
        f = k.py_func
        return kernels.cuda.jit(types.FunctionType(f.__code__, dict(f.__globals__), f.__name__))

    yours = {n: as_notebook_cell(kernels.COURSE[n]) for n in ("linear", "matmul_nt", "matmul_tn_split")}
    params = reference.init_params(CHECK, 0)
    kb = kernels.KernelBackend(CHECK, params, kernels=yours, tile=16)
    assert {kb.sources()[n] for n in yours} == {"yours"}
    kw = dict(steps=2, B=2, eval_every=0, sample_chars=0, log=lambda s: None)
    got = loop.train(kb, CHECK, **kw).losses
    want = loop.train(loop.NumpyBackend(CHECK, params), CHECK, **kw).losses
    assert np.allclose(got, want, rtol=0, atol=1e-5), (got, want)


L2 = reference.Config(L=2, C=8, NH=2, T=4)  # two layers: the fused residual + LayerNorm crosses layers


def test_fused_kernels_pass_the_check_and_cut_launches(sim_engine):
    from puzzles.llm.training import fused, kernels

    rows = gradcheck.check(kernels.KernelBackend, L2, fused=True)
    assert all(ok for *_, ok in rows), gradcheck.report(rows)
    tok = np.random.default_rng(0).integers(0, L2.V, (2, L2.T))
    counts = []
    for f in (False, True):
        kb = kernels.KernelBackend(L2, reference.init_params(L2, 0), fused=f)
        kb.step(tok, tok, 1e-3)  # the first step also fills the constant zero bias once
        launches, _ = kb.profile_step(tok, tok, 1e-3)
        counts.append(len(launches))
        assert all(gpu >= 0 and host >= 0 for _, gpu, host in launches)
    assert counts == [10 + 36 * L2.L, 10 + 26 * L2.L], counts
    assert set(fused.FUSED) <= {name for name, *_ in launches}


def test_a_wrong_fused_kernel_fails_the_check(sim_engine):
    """The residual's gradient dropped from the fused LayerNorm backward: the layers below see only
    the branch's gradient, so their weights' gradients are wrong and the check says so."""
    from puzzles.llm.training import kernels

    class Zeroed(kernels.KernelBackend):
        def __init__(self, *a, **kw):
            super().__init__(*a, fused=True, **kw)

        def _ln_back_add(self, dx, tmp, dw, db, dout, x, mean, rstd, w, dres, N, C):
            # the known-wrong kernel: dres replaced by zeros (what forgetting `dres[r, j] +` computes)
            zeros = self._buf("zeros", dres.shape)
            kernels.zero_fill[(1,), (128,)](zeros.reshape(-1), zeros.size)
            super()._ln_back_add(dx, tmp, dw, db, dout, x, mean, rstd, w, zeros, N, C)

    rows = gradcheck.check(Zeroed, L2)
    failed = {name for name, *_, ok in rows if not ok}
    assert "0.w_qkv" in failed and "wte" in failed, gradcheck.report(rows)


def test_a_learners_kernel_turns_its_fusion_off(sim_engine):
    from puzzles.llm.training import kernels

    yours = {"gelu_backward": kernels.COURSE["gelu_backward"]}
    kb = kernels.KernelBackend(CHECK, reference.init_params(CHECK, 0), kernels=yours, fused=True)
    assert "matmul_nt_gelu_backward" not in kb.fused and "linear_gelu_save" in kb.fused
    assert kb.sources()["gelu_backward"] == "yours"


def test_graphs_need_a_gpu(sim_engine):
    from helpers.device import STATE
    from puzzles.llm.training import graph, kernels

    if STATE.gpu_present():
        pytest.skip("a GPU is here: graphs run (the GPU batch times them)")

    with pytest.raises(graph.GraphError, match="need a GPU"):
        kernels.KernelBackend(CHECK, reference.init_params(CHECK, 0), graph=True)


def test_the_profile_prints_where_the_time_goes(sim_engine, capsys):
    """The --profile path end to end on the simulator (times are simulated; the GPU gives real ones):
    both tables, fused with fewer launches, and a bound verdict."""
    assert train.main(["--device", "sim", "--profile", "--batch", "1"]) == 0
    out = capsys.readouterr().out
    assert "course kernels, one launch per op: 46 launches" in out, out
    assert "course kernels, fused: 36 launches" in out, out
    assert out.count("bound by the ") == 2 and "layernorm_backward_add" in out
    assert out.count("GPU times: simulated") == 2, out


def test_graph_capture_ends_and_names_the_driver_error(monkeypatch):
    """graph.capture against a fake driver (no GPU here): begin, the launches, end, instantiate, in
    that order; a launch that raises still ends the capture; a failed end names the driver's error;
    Graph.launch replays on the same stream."""
    from types import SimpleNamespace

    from puzzles.llm.training import graph

    calls = []

    class Err(int):
        name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"

    def fake(end_err=0):
        return SimpleNamespace(
            CUstreamCaptureMode=SimpleNamespace(CU_STREAM_CAPTURE_MODE_RELAXED=2),
            cuStreamBeginCapture=lambda s, m: calls.append(("begin", s, m)) or (0,),
            cuStreamEndCapture=lambda s: calls.append(("end", s)) or (Err(end_err), "graph"),
            cuGraphInstantiate=lambda g, f: calls.append(("instantiate", g)) or (0, "exec"),
            cuGraphLaunch=lambda e, s: calls.append(("launch", e, s)) or (0,),
        )

    stream = SimpleNamespace(_graph_raw="raw")
    monkeypatch.setattr(graph, "_driver", lambda: fake())
    g = graph.capture(stream, lambda: calls.append(("kernels",)))
    g.launch()
    assert [c[0] for c in calls] == ["begin", "kernels", "end", "instantiate", "launch"]
    assert calls[-1] == ("launch", "exec", "raw")
    calls.clear()
    with pytest.raises(ZeroDivisionError):
        graph.capture(stream, lambda: 1 / 0)
    assert [c[0] for c in calls] == ["begin", "end"]
    monkeypatch.setattr(graph, "_driver", lambda: fake(end_err=901))
    with pytest.raises(graph.GraphError, match="cuStreamEndCapture.*CAPTURE_INVALIDATED"):
        graph.capture(stream, lambda: None)


def test_graph_buffers_survive_other_batch_shapes(sim_engine):
    """With a graph, sampling (batch 1, other lengths) must not replace the buffers a captured graph
    writes: each batch shape keeps its own, and a step reads its own shape's loss. A fake graph
    module stands in for the driver (capture records, launch replays the same Python launches)."""
    from types import SimpleNamespace

    from puzzles.llm.training import kernels

    kb = kernels.KernelBackend(L2, reference.init_params(L2, 0))
    captured = {}

    def capture(stream, launch):
        captured["buffers"] = dict(kb._acts)
        return SimpleNamespace(launch=launch)

    kb.graph = SimpleNamespace(capture=capture)
    tok = np.random.default_rng(0).integers(0, L2.V, (2, L2.T))
    want = loop.NumpyBackend(L2, reference.init_params(L2, 0))
    assert abs(kb.step(tok, tok, 1e-3) - want.step(tok, tok, 1e-3)) < 1e-5
    kb.logits(tok[:1, :3])  # another shape, as sampling does
    assert all(kb._by_shape[(2, L2.T)][k] is v for k, v in captured["buffers"].items())
    assert abs(kb.step(tok, tok, 1e-3) - want.step(tok, tok, 1e-3)) < 1e-5  # the replay's loss


class _FakeGPU:
    """One in-order GPU stream and a host clock (seconds): launches cost the host `host_s` each and
    run `dur` on the GPU once the GPU gets to them; a hold lasts until release or `give_up_s`.
    Faults: `wait_in_step` (the step waits for the GPU before its launches, as a copy from pageable
    memory does), `events_elsewhere` (events on an idle other stream: they complete when recorded)."""

    def __init__(self, host_s=30e-6, give_up_s=1.0, wait_in_step=False, events_elsewhere=False):
        self.now, self.host_s, self.give_up_s = 0.0, host_s, give_up_s
        self.wait_in_step, self.events_elsewhere = wait_in_step, events_elsewhere
        self.items, self.can_hold = [], True

    def _run(self):  # when each queued item starts and ends; the end of the last one
        t = 0.0
        for it in self.items:
            start = max(it["enq"], t)
            if it["kind"] == "hold":
                rel = it.get("release")
                t = min(rel if rel is not None else float("inf"), start + self.give_up_s)
            elif it["kind"] == "event":
                it["ev"].t = t = start
            else:
                t = start + it["dur"]
        return t

    def event(self):
        return SimpleNamespace(t=None)

    def record(self, ev):
        if self.events_elsewhere:
            ev.t = self.now
        else:
            self.items.append(dict(kind="event", enq=self.now, ev=ev))

    def done(self, ev):
        self._run()
        return ev.t <= self.now

    def elapsed_ms(self, a, b):
        self._run()
        return (b.t - a.t) * 1e3

    def synchronize(self):
        self.now = max(self.now, self._run())

    def hold(self):
        self.items.append(dict(kind="hold", enq=self.now))

    def release(self):
        for h in self.items:
            if h["kind"] == "hold":
                h.setdefault("release", self.now)

    def clock(self):
        return self.now

    def step(self, durations):
        def issue(timer):
            if self.wait_in_step:
                self.synchronize()
            for i, dur in enumerate(durations):

                def launch(dur=dur):
                    self.now += self.host_s
                    self.items.append(dict(kind="kernel", enq=self.now, dur=dur))

                timer.time(f"k{i % 3}", launch)

        return issue


DURS = [5e-6, 20e-6, 3e-6] * 20  # 60 small kernels, 28 us of GPU time per three; the host 30 us a launch


def test_the_profile_times_each_kernel_on_the_gpu_not_the_hosts_gaps():
    """gpu_timer.measure against a fake GPU: with the step queued behind the hold every pair spans its
    kernel (the fake's durations exactly) and the check line says reliable."""
    from puzzles.llm.training import gpu_timer

    d = _FakeGPU()
    m = gpu_timer.measure(d, d.step(DURS))
    assert [round(g * 1e3, 9) for _, g, _ in m.rows] == [round(x * 1e6, 9) for x in DURS]
    assert all(abs(h - 0.03) < 1e-9 for *_, h in m.rows)
    assert m.reliable and abs(m.step_ms - sum(DURS) * 1e3) < 1e-9, m.sanity()
    assert "reliable" in m.sanity() and "UNRELIABLE" not in m.sanity()


@pytest.mark.parametrize(
    "fault, why",
    [
        (dict(wait_in_step=True), "the hold ended before the host had queued"),
        (dict(give_up_s=1e-3), "the hold ended before the host had queued"),  # 60 launches take 1.8 ms
        (dict(events_elsewhere=True), "not on one stream"),
    ],
)
def test_the_profile_says_when_its_gpu_times_are_the_hosts(fault, why):
    """The known-wrong setups, the first the old profile's bug (a synchronous copy in the step): each
    pair then measures the host's launch gap (30 us, not the kernel's 3-20 us) and the check says so."""
    from puzzles.llm.training import gpu_timer

    d = _FakeGPU(**fault)
    m = gpu_timer.measure(d, d.step(DURS))
    assert not m.reliable and why in m.sanity(), m.sanity()
    assert "UNRELIABLE" in m.sanity()
    if fault != dict(give_up_s=1e-3):
        assert m.gpu_ms > 1.5 * sum(DURS) * 1e3  # what the old table showed: host gaps as GPU time


def test_the_hold_kernel_compiles_and_reads_its_flag_afresh():
    """The profile's hold (no GPU here: its PTX): the flag is read by an atomic inside the loop, so the
    release reaches it (a plain load may be hoisted or served from L1 and spin to the poll limit)."""
    from helpers import ptx
    from puzzles.llm.training import gpu_timer

    if not ptx.available():
        pytest.skip("Numba's CUDA compiler is not available here: PTX not checked")
    from numba import cuda, int32

    code, _ = cuda.compile_ptx(gpu_timer.wait_for_flag.py_func, (int32[::1], int32), cc=(7, 5))
    assert "atom.global.add" in code and "nanosleep" in code


def test_every_speed_row_is_validated_against_the_reference(capsys):
    """--speed's rows: equal first losses pass; a row off by more than LOSS_TOL, or with no losses, is
    named; a row that did not run (its reason printed) has no number to check."""
    got = train.validate(
        {"eager": [5.0, 4.9], "graph": [5.0, 4.9 + 1e-6], "wrong": [5.0, 4.8], "broken": [], "off": None},
        "eager",
    )
    assert got["eager"] == "the reference" and got["graph"] == "validated"
    assert got["wrong"].startswith("FAILED") and got["broken"].startswith("NOT VALIDATED")
    assert got["off"] == "not run"  # a row that failed to run printed its reason; no number to check
    assert "wrong: FAILED" in capsys.readouterr().out
