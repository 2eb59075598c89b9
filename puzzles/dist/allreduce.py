"""The ring all-reduce, written by the learner over point-to-point messages.

Rungs:
- ring_allreduce (exercise): every rank's vector summed into every rank, in place, with a ring:
  a reduce-scatter (size - 1 steps: each rank ends owning the full sum of one chunk), then an
  all-gather (size - 1 steps: the finished chunks travel round). Each step a rank sends one chunk
  to its right neighbour and receives one from its left: 2 (size - 1) / size of the vector per
  rank whatever the rank count, which is why NCCL uses a ring for large messages.

Checked on in-process ranks (`helpers.dist.check`); `against_engine` runs it on real ranks
(`python -m helpers.dist.launch -n 4 --engine mpi puzzles.dist.allreduce:against_engine`) and
compares it with the engine's own all-reduce on the same data.
"""

from __future__ import annotations

import numpy as np

from helpers.dist import Case, Exercise, split

# ---------------------------------------------------------------------------- spec and cases


def spec(case: Case) -> list[dict]:
    total = np.sum([a["buf"].astype(np.float64) for a in case.args], axis=0).astype(np.float32)
    return [{"buf": total} for _ in range(case.size)]


def cases(rng: np.random.Generator) -> list[Case]:
    """Case 0 is the readable one (4 ranks, 2 elements each); then uneven chunks, 2 ranks, one
    element per rank, a single rank (nothing to send), and a longer uneven vector."""
    out = []
    for size, n, note in (
        (4, 8, "two elements per rank"),
        (3, 3 * int(rng.integers(1, 4)) + int(rng.integers(1, 3)), "uneven chunks"),
        (2, int(rng.integers(2, 10)), "two ranks: the left and right neighbour are the same rank"),
        (5, 5, "one element per rank"),
        (1, int(rng.integers(1, 6)), "a single rank: nothing to send"),
        (4, int(rng.integers(30, 60)) * 4 + int(rng.integers(1, 4)), "a longer vector, uneven chunks"),
    ):
        args = [{"buf": rng.uniform(-10, 10, n).astype(np.float32)} for _ in range(size)]
        out.append(Case(size, args, note=note))
    return out


# ---------------------------------------------------------------------------- the exercise


def ring_allreduce(comm, buf):
    """Replace `buf` on every rank by the sum of every rank's `buf`: a ring reduce-scatter, then a
    ring all-gather. Send only to the right, (rank + 1) % size; receive only from the left."""
    size, rank = comm.size, comm.rank
    right, left = (rank + 1) % size, (rank - 1) % size
    parts = split(buf.size, size)  # chunk c is buf[lo:hi] with (lo, hi) = parts[c]
    ### BEGIN SOLUTION
    # reduce-scatter: at step s, pass on chunk (rank - s), add the incoming chunk (rank - s - 1);
    # after size - 1 steps rank r holds the full sum of chunk (r + 1) % size
    for step in range(size - 1):
        lo, hi = parts[(rank - step) % size]
        rlo, rhi = parts[(rank - step - 1) % size]
        incoming = comm.xp.empty(rhi - rlo, buf.dtype)
        comm.sendrecv(buf[lo:hi], right, incoming, left)
        buf[rlo:rhi] += incoming
    # all-gather: pass the finished chunks round, each received straight into its place
    for step in range(size - 1):
        lo, hi = parts[(rank + 1 - step) % size]
        rlo, rhi = parts[(rank - step) % size]
        comm.sendrecv(buf[lo:hi], right, buf[rlo:rhi], left)
    ### END SOLUTION


STATEMENT = """\
Every rank holds a vector `buf` of the same length. Replace it, on every rank, by the sum of all
ranks' vectors: an **all-reduce**, written with point-to-point messages only, as a ring.

Cut `buf` into `size` chunks (`parts = split(buf.size, size)`: chunk `c` is `buf[lo:hi]`). Then:

1. **Reduce-scatter**, `size - 1` steps: at step `s`, send chunk `(rank - s) % size` to the right
   neighbour and receive chunk `(rank - s - 1) % size` from the left one into a fresh buffer; add it
   into your copy of that chunk. After the last step rank `r` holds the full sum of chunk
   `(r + 1) % size`.
2. **All-gather**, `size - 1` steps: pass the finished chunks round the same way, each received
   straight into its place in `buf`.

Every rank sends `2 (size - 1) / size` of the vector, whatever the rank count. Use
`comm.sendrecv(sendbuf, right, recvbuf, left)` (or `isend`/`irecv` and `wait()`); a blocking
`send` before its `recv` on every rank waits forever. Create buffers with `comm.xp` (NumPy here,
CuPy on GPUs) so the same function runs on NCCL."""

EXERCISES = [
    Exercise(
        name="ring_allreduce",
        title="Ring all-reduce",
        statement=STATEMENT,
        reference=ring_allreduce,
        spec=spec,
        cases=cases,
        outputs=("buf",),
        hints=(
            "Draw 4 ranks in a circle and 4 chunks per rank; follow chunk 0 as it travels right.",
            "A blocking send waits for the receiver: post both halves at once with comm.sendrecv.",
            "In step s of the reduce-scatter rank r sends chunk (r - s) and receives chunk (r - s - 1).",
            "The all-gather starts from the chunk each rank finished: (r + 1) % size.",
        ),
    )
]


# ---------------------------------------------------------------------------- real engines


def against_engine(comm, n: str = "100003", seed: str = "0", target: str = "") -> None:
    """On launched ranks: `target` ('module:function', default the reference) against the engine's
    own all-reduce on the same random data; rank 0 prints the verdict, a mismatch raises."""
    fn = ring_allreduce
    if target:
        from helpers.dist.rank import target as load

        fn = load(target)
    xp = comm.xp
    rng = np.random.default_rng(int(seed) * 1000 + comm.rank)
    data = rng.uniform(-10, 10, int(n)).astype(np.float32)
    mine, theirs = xp.asarray(data), xp.asarray(data)
    fn(comm, mine)
    comm.allreduce(theirs)
    got = np.asarray(mine.get() if hasattr(mine, "get") else mine)
    want = np.asarray(theirs.get() if hasattr(theirs, "get") else theirs)
    bad = ~np.isclose(got, want, rtol=1e-5, atol=1e-4)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(
            f"rank {comm.rank}: the ring differs from the engine's allreduce at {int(bad.sum())} of "
            f"{got.size} elements (first: index {i}, ring {got[i]!r}, engine {want[i]!r})"
        )
    comm.barrier()
    if comm.rank == 0:
        print(f"ring all-reduce matches the {comm.engine} engine's allreduce on {comm.size} ranks, n={n}")
