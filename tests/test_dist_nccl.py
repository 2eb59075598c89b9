"""The NCCL engine on a machine with 2 or more GPUs (one process per GPU), skipped with one line
elsewhere: every Comm call against NumPy, Numba device arrays as buffers, the ring all-reduce
against NCCL's own on every GPU here, and a hung collective stopped at its timeout, naming the rank
and the call. The lead runs it: `pytest -n0 -q tests/test_dist_nccl.py` (about 30 s)."""

from __future__ import annotations

import textwrap

import pytest

import helpers.dist as hd
from helpers.dist.missing import gpus, missing

WHY = missing("nccl") or (None if gpus() >= 2 else f"NCCL tests need 2 GPUs, this machine has {gpus()}")
pytestmark = pytest.mark.skipif(bool(WHY), reason=WHY or "")

EVERY_CALL = '''
import numpy as np


def every_call(comm):
    """Each call of the contract on CuPy arrays, then on Numba device arrays; rank 0 prints OK."""
    import cupy as cp
    from numba import cuda

    r, p = comm.rank, comm.size
    right, left = (r + 1) % p, (r - 1) % p
    x = cp.arange(6, dtype=cp.float32) + 10 * r
    got = cp.empty_like(x)
    if r % 2 == 0:
        comm.send(x, right)
        comm.recv(got, left)
    else:
        comm.recv(got, left)
        comm.send(x, right)
    assert float(got[0]) == 10 * left, (r, got)
    got[:] = -1
    reqs = [comm.irecv(got, left), comm.isend(x, right)]
    comm.waitall(reqs)
    assert float(got[0]) == 10 * left
    got[:] = -1
    comm.sendrecv(x, right, got, left)
    assert float(got[0]) == 10 * left
    total = comm.allreduce(x.copy())
    want = np.arange(6) * p + 10 * sum(range(p))
    assert np.allclose(total.get(), want), total
    out = cp.empty_like(x)
    comm.allreduce(x, out, op="max")
    assert np.allclose(out.get(), np.arange(6) + 10 * (p - 1))
    gathered = cp.empty(6 * p, cp.float32)
    comm.allgather(x, gathered)
    assert np.allclose(gathered.get(), np.concatenate([np.arange(6) + 10 * q for q in range(p)]))
    part = cp.empty(6 // p if 6 % p == 0 else 1, cp.float32)
    full = cp.ones(part.size * p, cp.float32) * (r + 1)
    comm.reduce_scatter(full, part)
    assert np.allclose(part.get(), p * (p + 1) / 2)
    comm.barrier()
    d = cuda.to_device(np.full(5, r + 1.0, np.float32))
    comm.allreduce(d)
    assert np.allclose(d.copy_to_host(), p * (p + 1) / 2)
    cuda.synchronize()
    if r == 0:
        print(f"every call OK on {p} ranks")


def hung(comm):
    import cupy as cp

    if comm.rank == 0:
        comm.allreduce(cp.ones(4, cp.float32))
        cp.cuda.runtime.deviceSynchronize()
'''


@pytest.fixture
def program(tmp_path, monkeypatch):
    (tmp_path / "nccl_program.py").write_text(textwrap.dedent(EVERY_CALL))
    monkeypatch.chdir(tmp_path)


def test_every_call_on_two_gpus(program):
    from helpers.dist.launch import launch

    assert "every call OK on 2 ranks" in launch(2, "nccl_program:every_call", engine="nccl", timeout=120)


def test_every_call_on_every_gpu(program):
    from helpers.dist.launch import launch

    n = gpus()
    assert f"every call OK on {n} ranks" in launch(n, "nccl_program:every_call", engine="nccl", timeout=120)


@pytest.mark.parametrize("ranks", sorted({2, gpus()}))
def test_ring_matches_nccl_allreduce(ranks):
    from helpers.dist.launch import launch

    target = "puzzles.dist.allreduce:against_engine"
    out = launch(ranks, target, engine="nccl", timeout=120, args=(1 << 20, 5))
    assert f"matches the nccl engine's allreduce on {ranks} ranks" in out


def test_a_hung_collective_times_out_naming_the_rank(program):
    from helpers.dist.launch import launch

    with pytest.raises(hd.DistTimeout) as info:
        launch(2, "nccl_program:hung", engine="nccl", timeout=30)
    assert "rank 0: allreduce (enqueued" in str(info.value), str(info.value)
