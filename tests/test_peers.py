"""The library peers of the chapter benchmarks, on a CPU: each peer function is written against the
array API that CuPy, PyTorch and NumPy share, so NumPy stands in for CuPy here and must give the
chapter's answer (a peer that computes something else would be a false comparison). `timing.via`'s
plumbing is checked with a fake `cupy` module."""

import sys
import types

import numpy as np
import pytest

from helpers import timing
from puzzles.pmpp import ch02_vector_add as ch02
from puzzles.pmpp import ch03_grids as ch03
from puzzles.pmpp import ch05_memory_tiling as ch05
from puzzles.pmpp import ch06_performance as ch06
from puzzles.pmpp import ch07_convolution as ch07
from puzzles.pmpp import ch08_stencil as ch08
from puzzles.pmpp import ch09_histogram as ch09
from puzzles.pmpp import ch10_reduction as ch10
from puzzles.pmpp import ch11_scan as ch11
from puzzles.pmpp import ch12_merge as ch12

RNG = np.random.default_rng(17)


def correlate(a, w):
    """Zero-padded correlation by its definition, out[i] = sum_k w[k] a[i + k - r] (what
    cupyx.scipy.ndimage.correlate(mode="constant") and torch's convNd(padding=r) compute)."""
    r = w.shape[0] // 2
    p = np.pad(a.astype(np.float64), r)
    out = np.zeros(a.shape, np.float64)
    for k in np.ndindex(w.shape):
        out += float(w[k]) * p[tuple(slice(j, j + n) for j, n in zip(k, a.shape, strict=True))]
    return out


def test_elementwise_and_reduction_peers():
    a, b = RNG.standard_normal((2, 1001)).astype(np.float32)
    out = np.empty_like(a)
    assert np.array_equal(ch02._peer_add(np, a, b, out), a + b)
    ints = RNG.integers(-8, 9, 5003).astype(np.float32)
    assert ch10._peer_sum(np, ints) == ints.astype(np.float64).sum()
    assert np.array_equal(ch11._peer_cumsum(np, ints), np.cumsum(ints.astype(np.float64)).astype(np.float32))


def test_grayscale_and_matmul_peers():
    rgb = RNG.random((37, 53, 3), dtype=np.float32)
    w = np.array([0.21, 0.72, 0.07], np.float32)
    np.testing.assert_allclose(ch03._peer_gray(np, rgb, w), ch03.spec_grayscale(rgb, 37, 53), rtol=1e-6)
    m, n = RNG.standard_normal((2, 19, 19)).astype(np.float32)
    np.testing.assert_allclose(ch05._peer_matmul(np, m, n), ch05.spec_matmul(m, n, 19, 19, 19), rtol=1e-4)


def test_transpose_peer_is_a_contiguous_copy():
    a = RNG.standard_normal((33, 65)).astype(np.float32)
    t = ch06._peer_transpose(np, a)
    assert np.array_equal(t, a.T) and t.flags.c_contiguous


def test_convolution_peers_compute_the_chapter_kernels():
    a = RNG.uniform(-10, 10, (23, 31)).astype(np.float32)
    np.testing.assert_allclose(correlate(a, ch07.FILTER), ch07.conv2d(a, ch07.FILTER), rtol=1e-5, atol=1e-5)
    g = RNG.uniform(-10, 10, (7, 9, 11)).astype(np.float32)
    w = ch08.stencil_weights()
    assert np.count_nonzero(w) == 7
    got = correlate(g, w)[1:-1, 1:-1, 1:-1]
    np.testing.assert_allclose(got, ch08.stencil(g)[1:-1, 1:-1, 1:-1], rtol=1e-5, atol=1e-5)
    flipped = w[:, :, ::-1]  # a filter with x-1 and x+1 swapped must not pass
    assert not np.allclose(correlate(g, flipped)[1:-1, 1:-1, 1:-1], ch08.stencil(g)[1:-1, 1:-1, 1:-1])


def test_histogram_peer_uses_the_chapters_bins():
    data = RNG.integers(0, ch09.MAX_VALUE, 10_007).astype(np.int32)
    data[:5] = (0, ch09.MAX_VALUE - 1, ch09.BIN_WIDTH, ch09.BIN_WIDTH - 1, 2 * ch09.BIN_WIDTH)  # edges
    assert np.array_equal(ch09._peer_cupy_histogram(np, data), ch09.histogram(data))


def test_merge_peer():
    a, b = ch12._merge_inputs(RNG, 301, 77)
    assert np.array_equal(ch12._peer_merge(np, a, b), ch12.merge_spec(a, b, 301, 77))


@pytest.fixture
def fake_cupy(monkeypatch):
    """A `cupy` that is NumPy underneath, and a timing that needs no GPU."""
    fake = types.ModuleType("cupy")
    fake.asarray, fake.asnumpy = np.asarray, np.asarray
    fake.add, fake.sum, fake.cumsum = np.add, np.sum, np.cumsum
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(timing, "skip_reason", lambda: None)
    monkeypatch.setattr(timing, "time_gpu", lambda fn, **kw: (fn(), 1e-3)[1])
    monkeypatch.setattr(timing, "SKIPPED_PEERS", [])
    return fake


def test_via_runs_the_peer_on_views_and_checks_it(fake_cupy):
    a, b = RNG.standard_normal((2, 257)).astype(np.float32)
    out = np.zeros_like(a)
    row = timing.library_peer(
        "vector add",
        [timing.via("cupy", "cupy.add", ch02._peer_add, a, b, out)],
        bytes=3 * 4 * 257,
        check=lambda got: timing.validate("peer", got, a + b),
    )
    assert row.peer and row.name == "cupy.add (peer)" and row.seconds == 1e-3
    assert np.array_equal(out, a + b)  # the library wrote into the array it was handed

    def wrong(xp, a):
        return xp.cumsum(a) + 1

    ints = RNG.integers(-8, 9, 99).astype(np.float32)
    row = timing.library_peer(
        "scan",
        [
            timing.via("cupy", "cupy.cumsum", wrong, ints),
            timing.via("torch_absent", "torch.cumsum", wrong, ints),
        ],
        check=lambda got: timing.validate("peer", got, np.cumsum(ints), rtol=0, atol=0),
    )
    assert row is None
    ((name, why),) = timing.SKIPPED_PEERS
    assert name == "scan" and "cupy.cumsum: AssertionError" in why and "torch_absent not installed" in why
