"""The NCCL engine: CuPy's `cupy.cuda.nccl` on device arrays (CuPy, Numba, anything with
`__cuda_array_interface__`), one process per GPU. Calls are enqueued on `comm.stream` (default: the
legacy default stream, where Numba and CuPy work also goes, so no extra ordering is needed; set a
stream to overlap). Non-blocking sends and receives are grouped (ncclGroupStart/End) and enqueued
at the next wait or blocking call, so a ring's send and receive never wait on each other; a
blocking call returns once enqueued, as NCCL's own do (the GPU keeps the order)."""

from __future__ import annotations

import json
import os
import time

from . import state
from .comm import Comm, Request
from .errors import BadCall, DistTimeout


def _nccl():
    from cupy.cuda import nccl

    return nccl


def _ptr(buf) -> int:
    return int(buf.__cuda_array_interface__["data"][0])


def _stream_ptr(stream) -> int:
    if stream is None or isinstance(stream, int):
        return stream or 0
    if hasattr(stream, "ptr"):  # CuPy
        return int(stream.ptr)
    handle = getattr(stream, "handle", None)  # Numba
    return int(getattr(handle, "value", handle) or 0)


def unique_id(rank: int, seconds: float = 120.0):
    """Rank 0 makes NCCL's id and writes it to $MP_DIST_STATE/nccl_id; the others read it."""
    nccl = _nccl()
    path = os.path.join(os.environ["MP_DIST_STATE"], "nccl_id")
    if rank == 0:
        uid = nccl.get_unique_id()
        with open(path + ".tmp", "w") as f:  # CuPy 14 gives bytes, older CuPy a tuple of ints
            json.dump({"bytes": isinstance(uid, bytes), "id": list(uid)}, f)
        os.replace(path + ".tmp", path)
        return uid
    end = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise DistTimeout(f"rank {rank}: rank 0 wrote no NCCL id within {seconds:.0f} s (did it start?)")
        time.sleep(0.01)
    with open(path) as f:
        saved = json.load(f)
    return bytes(saved["id"]) if saved["bytes"] else tuple(saved["id"])


def rank_device(rank: int, count: int) -> int:
    """The device index rank `rank` uses among the `count` this process sees: one process per GPU,
    so rank r takes device r (the launcher refuses more ranks than GPUs); a process that sees one GPU
    uses it (a scheduler gave each process its own through CUDA_VISIBLE_DEVICES)."""
    if count == 1:
        return 0
    if count < 1:
        raise BadCall(f"rank {rank}: the NCCL engine needs a CUDA device and this process sees none")
    if rank >= count:
        raise BadCall(
            f"rank {rank}: this process sees {count} GPU(s) (CUDA_VISIBLE_DEVICES?); NCCL needs one GPU "
            "per rank, so launch at most that many ranks"
        )
    return rank


def _numba_on(device: int, rank: int) -> str | None:
    """Make Numba's context the one of `device` (the GPU CuPy and NCCL use) and return its PCI bus id,
    or None where Numba cannot reach a GPU. Raises where Numba already works on another GPU (a
    context made before the Comm): its kernels would run there, not on this rank's GPU."""
    try:
        from numba import cuda

        if not cuda.is_available():
            return None
    except Exception:  # Numba absent or without a driver: CuPy arrays still work
        return None
    try:
        dev = cuda.select_device(device)
    except Exception as e:
        raise BadCall(
            f"rank {rank}: Numba cannot use GPU {device} ({type(e).__name__}: {e}); a Numba context was "
            "made on another GPU before the Comm: build the Comm (helpers.dist.world()) before any "
            "Numba array or kernel launch"
        ) from e
    return bus_id(dev.PCI_DOMAIN_ID, dev.PCI_BUS_ID, dev.PCI_DEVICE_ID)


def bus_id(domain: int, bus: int, device: int) -> str:
    """A PCI bus id as CUDA writes it (cudaDeviceGetPCIBusId): 0000:1B:00.0."""
    return f"{domain:04X}:{bus:02X}:{device:02X}.0"


def same_gpu(a: str | None, b: str | None) -> bool:
    """Whether two PCI bus ids name one GPU (None: unknown, taken as the same)."""
    return a is None or b is None or a.upper() == b.upper()


class NcclRequest(Request):
    def __init__(self, comm: NcclComm, what: str):
        self.comm, self.what = comm, what

    def wait(self) -> None:
        self.comm._flush()


class NcclComm(Comm):
    engine = "nccl"

    def __init__(self, rank: int, size: int):
        import cupy

        nccl = _nccl()
        self.nccl, self.xp = nccl, cupy
        self.rank, self.size = rank, size
        device = rank_device(rank, cupy.cuda.runtime.getDeviceCount())
        cupy.cuda.Device(device).use()
        self.device = device
        self.pci_bus_id = cupy.cuda.Device(device).pci_bus_id
        self.numba_bus_id = _numba_on(device, rank)
        if not same_gpu(self.pci_bus_id, self.numba_bus_id):
            raise BadCall(
                f"rank {rank}: CuPy and NCCL use the GPU at {self.pci_bus_id} but Numba's kernels run on "
                f"{self.numba_bus_id}: build the Comm before any Numba array or kernel launch"
            )
        self.comm = nccl.NcclCommunicator(size, unique_id(rank), rank)
        self.stream = None  # the stream NCCL calls go on (None: the legacy default stream)
        self.pending: list = []  # non-blocking calls not yet enqueued
        self.types = {
            "float32": nccl.NCCL_FLOAT32,
            "float64": nccl.NCCL_FLOAT64,
            "float16": nccl.NCCL_FLOAT16,
            "int32": nccl.NCCL_INT32,
            "int64": nccl.NCCL_INT64,
            "uint8": nccl.NCCL_UINT8,
            "int8": nccl.NCCL_INT8,
        }
        self.ops = {"sum": nccl.NCCL_SUM, "prod": nccl.NCCL_PROD, "max": nccl.NCCL_MAX, "min": nccl.NCCL_MIN}

    def _dev(self, buf, what: str = "buffer"):
        buf = self._buffer(buf, what)
        if not hasattr(buf, "__cuda_array_interface__"):
            raise BadCall(
                f"rank {self.rank}: the NCCL engine sends device arrays (cupy or cuda.to_device(...)), "
                f"got {type(buf).__name__}"
            )
        name = str(buf.dtype)
        if name not in self.types:
            raise BadCall(f"rank {self.rank}: NCCL has no {name} type (use one of {', '.join(self.types)})")
        return _ptr(buf), int(buf.size), self.types[name]

    def _flush(self) -> None:
        if not self.pending:
            return
        s = _stream_ptr(self.stream)
        peers = ", ".join(f"{k} {'to' if k == 'send' else 'from'} rank {p}" for k, _, p in self.pending)
        state.enter(self.rank, f"{peers} (enqueued; the GPU waits in it until the peers post theirs)")
        self.nccl.groupStart()
        for kind, (ptr, n, t), peer in self.pending:
            (self.comm.send if kind == "send" else self.comm.recv)(ptr, n, t, peer, s)
        self.nccl.groupEnd()
        self.pending.clear()

    def _enqueue(self, what: str, fn, *args) -> None:
        """NCCL returns once the call is queued: the state file keeps the last call, where the GPU
        waits if some rank never makes its own (a launch's timeout names it)."""
        self._flush()
        state.enter(self.rank, f"{what} (enqueued; the GPU waits in it until every rank calls it)")
        fn(*args, _stream_ptr(self.stream))

    def isend(self, buf, dest: int) -> NcclRequest:
        dest = self._peer(dest, "destination")
        self.pending.append(("send", self._dev(buf), dest))
        return NcclRequest(self, f"isend to rank {dest}")

    def irecv(self, buf, source: int) -> NcclRequest:
        source = self._peer(source, "source")
        self.pending.append(("recv", self._dev(buf), source))
        return NcclRequest(self, f"irecv from rank {source}")

    def send(self, buf, dest: int) -> None:
        self.isend(buf, dest).wait()

    def recv(self, buf, source: int) -> None:
        self.irecv(buf, source).wait()

    def allreduce(self, sendbuf, recvbuf=None, op: str = "sum"):
        sp, n, t = self._dev(sendbuf)
        rp = sp if recvbuf is None else self._dev(recvbuf)[0]
        self._enqueue("allreduce", self.comm.allReduce, sp, rp, n, t, self.ops[self._op(op)])
        return sendbuf if recvbuf is None else recvbuf

    def allgather(self, sendbuf, recvbuf):
        sp, n, t = self._dev(sendbuf)
        self._enqueue("allgather", self.comm.allGather, sp, self._dev(recvbuf)[0], n, t)
        return recvbuf

    def reduce_scatter(self, sendbuf, recvbuf, op: str = "sum"):
        rp, n, t = self._dev(recvbuf)
        sp = self._dev(sendbuf)[0]
        self._enqueue("reduce_scatter", self.comm.reduceScatter, sp, rp, n, t, self.ops[self._op(op)])
        return recvbuf

    def barrier(self) -> None:
        """An all-reduce of one element, waited on the host (NCCL has no barrier of its own)."""
        import cupy

        one = cupy.zeros(1, cupy.float32)
        self.allreduce(one)
        state.enter(self.rank, "barrier")
        cupy.cuda.runtime.deviceSynchronize()
        state.leave(self.rank)

    def close(self) -> None:
        self._flush()
        import cupy

        cupy.cuda.runtime.deviceSynchronize()
        self.comm.destroy()
