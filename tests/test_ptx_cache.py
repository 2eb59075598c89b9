"""The compile check's cache shared by the processes of one test run (helpers/ptx.py, MP_PTX_CACHE,
set by conftest.py): a kernel that compiled is not compiled again, in this process or another; what
it depends on (its code, the constants and device functions it names, the argument types) is in the
key, comments are not; a refusal is never cached."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from helpers import ptx
from helpers.float64 import float64_ops

SOURCE = """
import numba
from numba import cuda

SCALE = {scale}


@cuda.jit(device=True)
def helper(x):
    return x * {factor}


@cuda.jit
def kernel(out, a):
    i = cuda.grid(1)  # {comment}
    if i < a.size:
        out[i] = helper(a[i]) * SCALE
"""


def load(tmp_path, name, **fill):
    values = {"scale": 2, "factor": 3, "comment": "one thread per element", **fill}
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(SOURCE.format(**values)))
    namespace = {"__name__": name}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["kernel"]


ARGS = (np.zeros(8, np.float32), np.ones(8, np.float32))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "ptx"
    folder.mkdir()
    monkeypatch.setenv(ptx.CACHE_ENV, str(folder))
    monkeypatch.setattr(ptx, "_cache", {})  # this process's own memory, as in a fresh process
    return folder


def key(kernel):
    return ptx._compiled_before(kernel, ptx.arg_types(ARGS), ptx.T4)


def test_the_key_follows_the_code_not_the_comments(cache, tmp_path):
    base = key(load(tmp_path, "k0"))
    assert base is not None and base.parent == cache
    assert key(load(tmp_path, "k1", comment="another comment")) == base
    assert key(load(tmp_path, "k2", scale=5)) != base  # a constant it names
    assert key(load(tmp_path, "k3", factor=4)) != base  # its device function's code
    assert key(load(tmp_path, "k6", scale="numba.float32(2)")) != key(
        load(tmp_path, "k7", scale="numba.float64(2)")
    )
    doubles = ptx.arg_types([a.astype(np.float64) for a in ARGS])  # other argument types
    assert ptx._compiled_before(load(tmp_path, "k4"), doubles, ptx.T4) != base


def test_a_compiled_kernel_is_not_compiled_again(cache, tmp_path, monkeypatch):
    if not ptx.available():
        pytest.skip("NVVM not installed: cannot compile PTX here")
    ptx.ptx_check(load(tmp_path, "first"), ARGS)
    assert [p.name for p in cache.iterdir()] == [key(load(tmp_path, "again")).name]
    monkeypatch.setattr(ptx, "_cache", {})  # another process: only the folder is shared
    from numba import cuda

    monkeypatch.setattr(cuda, "compile_ptx", lambda *a, **k: pytest.fail("compiled again"))
    ptx.ptx_check(load(tmp_path, "again"), ARGS)


def test_a_refusal_is_not_cached(cache, tmp_path):
    if not ptx.available():
        pytest.skip("NVVM not installed: cannot compile PTX here")
    path = tmp_path / "bad.py"
    path.write_text("from numba import cuda\n\n\n@cuda.jit\ndef bad(out, a):\n    out[0] = [1, 2]\n")
    namespace = {"__name__": "bad"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    for _ in range(2):
        with pytest.raises(ptx.NumbaRejected):
            ptx.ptx_check(namespace["bad"], ARGS)
        ptx._cache.clear()
    assert list(cache.iterdir()) == []


def test_no_folder_no_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(ptx.CACHE_ENV, raising=False)
    assert key(load(tmp_path, "k5")) is None


def test_the_suite_names_the_same_variable():
    from pathlib import Path

    root_conftest = Path(__file__).resolve().parents[1] / "conftest.py"  # sets it for the whole run
    assert f'PTX_CACHE = "{ptx.CACHE_ENV}"' in root_conftest.read_text()


FACTORY = """
import numba
from numba import cuda


def make(scale):
    @cuda.jit
    def scaled(out, a):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i] * scale

    return scaled


@cuda.jit
def by_global(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * SCALE
"""


def factory(tmp_path):
    path = tmp_path / "factory.py"
    path.write_text(FACTORY)
    namespace = {"__name__": "factory"}
    exec(compile(FACTORY, str(path), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("bad_first", [False, True])
def test_kernels_of_one_factory_get_their_own_verdict(monkeypatch, tmp_path, bad_first):
    """A factory's kernels share one code object: the closure value decides whether each compiles
    and whether it does float64 arithmetic, so it is part of this process's key."""
    if not ptx.available():
        pytest.skip("NVVM not installed: cannot compile PTX here")
    monkeypatch.delenv(ptx.CACHE_ENV, raising=False)
    monkeypatch.setattr(ptx, "_cache", {})
    make = factory(tmp_path)["make"]
    f32, f64, bad = make(np.float32(0.1)), make(0.1), make("two")
    assert f32.py_func.__code__ is bad.py_func.__code__ is f64.py_func.__code__
    order = [bad, f32, f64] if bad_first else [f32, f64, bad]
    for kernel in order:
        if kernel is bad:
            with pytest.raises(ptx.NumbaRejected):
                ptx.ptx_check(kernel, ARGS)
        else:
            f64_ops = float64_ops(ptx.ptx_check(kernel, ARGS))
            assert bool(f64_ops) == (kernel is f64), kernel.py_func.__closure__[0].cell_contents


def test_specialized_copies_get_their_own_verdict(monkeypatch, tmp_path):
    """timing.specialize's copies share the code object and differ in the globals they read."""
    if not ptx.available():
        pytest.skip("NVVM not installed: cannot compile PTX here")
    from helpers.timing import specialize

    monkeypatch.delenv(ptx.CACHE_ENV, raising=False)
    monkeypatch.setattr(ptx, "_cache", {})
    root = factory(tmp_path)["by_global"]
    assert not float64_ops(ptx.ptx_check(specialize(root, SCALE=np.float32(0.1)), ARGS))
    with pytest.raises(ptx.NumbaRejected):
        ptx.ptx_check(specialize(root, SCALE=object()), ARGS)
    assert float64_ops(ptx.ptx_check(specialize(root, SCALE=0.1), ARGS))
