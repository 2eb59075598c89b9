"""PMPP chapter 20: chapter 8's 3-D seven-point stencil on several ranks, the grid cut along z into
slabs (slabs.py: geometry, the sweep, the truth); each step every rank sends its edge planes to its
neighbours, whose halos they become.

Rungs:
- dist_stencil_halo (exercise): compute every owned plane, then exchange the halos with sendrecv.
- dist_stencil_overlap (exercise): the edge planes first, their messages in flight (isend/irecv)
  while the interior is computed, then wait: the exchange hidden behind the computation (on a GPU
  the interior kernel runs on its stream while NCCL moves the halos).

Checked against chapter 8's stencil run serially, bit for bit (the sweep does the same arithmetic).
"""

import numpy as np

from helpers.dist import Case, Exercise
from helpers.verdicts import WrongAnswer

from .slabs import Slab, serial, slab

STEPS = 3  # a halo missing at step k shows in the owned planes at step k + 1


# ---------------------------------------------------------------------------- cases


def _grid(rng, size, nz):
    ny, nx = int(rng.integers(3, 7)), int(rng.integers(3, 8))
    return rng.uniform(-10, 10, (nz, ny, nx)).astype(np.float32)


def cases(rng):
    """2, 3 and 4 ranks; slabs of one plane (nz = ranks), uneven slabs, and a deeper grid."""
    out = []
    for size, nz, note in (
        (2, 2, "one plane per rank"),
        (2, 7, "uneven slabs"),
        (3, 3 * int(rng.integers(2, 4)), "even slabs"),
        (4, 4 + int(rng.integers(1, 4)), "uneven slabs, some of one plane"),
        (4, int(rng.integers(12, 16)), "a deeper grid"),
    ):
        a = _grid(rng, size, nz)
        grids = [Slab.of(a, size, r) for r in range(size)]
        for g in grids:
            g.history = []  # each step's planes and halos, for the verdict
        out.append(Case(size, [{"grid": g, "steps": STEPS} for g in grids], note=note))
        out[-1].truth = a  # the global grid (the slabs are changed by the run)
    return out


def spec(case):
    """The serial result's planes per rank; first, the step, rank and plane where the run first went
    wrong, and why (a WrongAnswer), read from the slabs' history."""
    states = [case.truth]
    for _ in range(STEPS):
        states.append(serial(states[-1], 1))
    diagnose(case, states)
    nz = case.truth.shape[0]
    return [{"return": states[-1][slice(*slab(nz, case.size, r))]} for r in range(case.size)]


def _which(plane, states, k, nz):
    """What a wrong plane holds, in words: NaN, or a plane of step k or k - 1."""
    if np.isnan(plane).any():
        return "NaN (out starts as NaN: no message filled it, or the one sent was not computed yet)"
    for when, s in (("this step's", states[k]), ("the previous step's", states[k - 1])):
        for z in range(nz):
            if np.array_equal(plane, s[z]):
                return f"{when} plane z={z}"
    return "values of no plane"


def diagnose(case, states) -> None:
    nz = case.truth.shape[0]
    for k in range(1, STEPS + 1):
        for r, args in enumerate(case.args):
            grid = args["grid"]
            hist = grid.history or []
            if len(hist) < k:
                raise WrongAnswer(
                    f"{case.describe()}: rank {r} swapped {len(hist)} times in {STEPS} steps: one "
                    "grid.swap() per step, after its exchange."
                )
            got, z0, n = hist[k - 1], grid.z0, grid.n
            for j in range(1, n + 1):
                if not np.array_equal(got[j], states[k][z0 + j - 1]):
                    raise WrongAnswer(
                        f"{case.describe()}: after step {k}, rank {r}'s plane z={z0 + j - 1} (its local "
                        f"plane {j}) is wrong: it holds {_which(got[j], states, k, nz)}. Sweep every "
                        f"plane 1 .. n of out once per step, from halos that hold the neighbours' planes."
                    )
            for j, z, side, who in ((0, z0 - 1, "below", r - 1), (n + 1, z0 + n, "above", r + 1)):
                if 0 <= who < case.size and not np.array_equal(got[j], states[k][z]):
                    raise WrongAnswer(
                        f"{case.describe()}: after step {k}, rank {r}'s halo {side} (local plane {j}) "
                        f"should hold rank {who}'s plane z={z} of this step; it holds "
                        f"{_which(got[j], states, k, nz)}. Each step, rank {who} must send that plane, "
                        f"after computing it, and rank {r} receive it into out[{j}] before the swap."
                    )


_COMMON = f"""

Each rank holds a `Slab` (`grid`): its planes of the global `nz x ny x nx` grid, cut along z.
`grid.u` and `grid.out` are arrays of `n + 2` planes: the rank's own planes are `1 .. n`, plane `0`
is the **halo below** (a copy of the last plane of rank `rank - 1`) and plane `n + 1` the **halo
above** (a copy of the first plane of rank `rank + 1`). `grid.sweep(lo, hi)` computes `out`'s planes
`lo .. hi-1` from `u`'s (chapter 8's stencil: plane `k` reads `u[k - 1]`, `u[k]`, `u[k + 1]`), and
`grid.swap()` makes `out` the next step's `u`. The first and last ranks have one neighbour each (the
global boundary planes keep their value: nothing outside the grid is read). Run `steps` = {STEPS}
steps; the result is checked against chapter 8's stencil run {STEPS} times on one process, exactly."""


# ---------------------------------------------------------------------------- blocking exchange


def halo_stencil(comm, grid, steps):
    n = grid.n  # this rank's planes: 1 .. n
    below, above = comm.rank - 1, comm.rank + 1  # no neighbour: below < 0, above == comm.size
    for _ in range(steps):
        grid.sweep(1, n + 1)
        out = grid.out
        ### BEGIN SOLUTION
        if above < comm.size:
            comm.sendrecv(out[n], above, out[n + 1], above)
        if below >= 0:
            comm.sendrecv(out[1], below, out[0], below)
        ### END SOLUTION
        grid.swap()
    return grid.owned()


HALO = (
    """\
**Halo exchange.** After computing all its planes, each rank sends its top plane `out[n]` up (it is
the halo below of rank `rank + 1`) and its bottom plane `out[1]` down, and receives its own halos
`out[n + 1]` and `out[0]`, before the swap. Use `comm.sendrecv(sendbuf, dest, recvbuf, source)`,
which sends and receives at once: a blocking `send` to both neighbours before any `recv` waits
forever (every rank is sending, nobody receiving)."""
    + _COMMON
)

DIST_STENCIL_HALO = Exercise(
    name="dist_stencil_halo",
    title="Stencil on many ranks: halo exchange",
    statement=HALO,
    reference=halo_stencil,
    spec=spec,
    cases=cases,
    rtol=0.0,
    atol=0.0,
    hints=(
        "Rank r's halo above, out[n + 1], is rank r + 1's first plane out[1]; its halo below, out[0], "
        "is rank r - 1's last plane out[n].",
        "Pair the messages: with the rank above, send out[n] and receive out[n + 1]; with the rank "
        "below, send out[1] and receive out[0]. sendrecv does both halves of a pair at once.",
    ),
)


# ---------------------------------------------------------------------------- overlapped exchange


def overlap_stencil(comm, grid, steps):
    n = grid.n
    below, above = comm.rank - 1, comm.rank + 1
    for _ in range(steps):
        out = grid.out
        ### BEGIN SOLUTION
        grid.sweep(1, 2)  # the planes the neighbours need, first
        grid.sweep(n, n + 1)
        reqs = []
        if below >= 0:
            reqs += [comm.irecv(out[0], below), comm.isend(out[1], below)]
        if above < comm.size:
            reqs += [comm.irecv(out[n + 1], above), comm.isend(out[n], above)]
        grid.sweep(2, n)  # the interior, while the halos travel
        comm.waitall(reqs)
        ### END SOLUTION
        grid.swap()
    return grid.owned()


OVERLAP = (
    """\
**Overlap the exchange with the computation.** The halos depend only on the edge planes, `out[1]`
and `out[n]`. Compute those two first (`grid.sweep(1, 2)`, `grid.sweep(n, n + 1)`), post their
messages with `comm.isend` and the halos' with `comm.irecv`, compute the interior
(`grid.sweep(2, n)`) while the messages travel, and `wait` for every request before the swap. On a
GPU the interior kernel then runs while NCCL moves the halos, and the exchange costs nothing once the
interior takes longer than the messages. A buffer with a message in flight may not be touched until
its request is waited: the checker watches every one."""
    + _COMMON
)

DIST_STENCIL_OVERLAP = Exercise(
    name="dist_stencil_overlap",
    title="Stencil on many ranks: exchange overlapped with the interior",
    statement=OVERLAP,
    reference=overlap_stencil,
    spec=spec,
    cases=cases,
    rtol=0.0,
    atol=0.0,
    hints=(
        "Order: sweep the two edge planes; post irecv into out[0] / out[n + 1] and isend of out[1] / "
        "out[n] (only where the neighbour exists); sweep the interior 2 .. n-1; comm.waitall(reqs).",
        "A send posted before its plane is computed sends the old values (and the checker stops it: "
        "the buffer changes while the message is in flight).",
    ),
)


PUZZLES = []  # exercises for many ranks are `EXERCISES` (helpers.dist.check), not kernel puzzles
EXERCISES = [DIST_STENCIL_HALO, DIST_STENCIL_OVERLAP]


# ---------------------------------------------------------------------------- real engines


def on_ranks(comm, variant: str = "overlap", seed: str = "0", nz: str = "0") -> None:
    """On launched CPU ranks (MPI): the exercise's reference on a random grid (nz planes; 0: 3 per
    rank plus one), checked against the serial run bit for bit; rank 0 prints the verdict. (On GPUs:
    scaling.py, which runs the same functions on device slabs over NCCL.)"""
    fn = {"halo": halo_stencil, "overlap": overlap_stencil}[variant]
    rng = np.random.default_rng(int(seed))
    nz = int(nz) or 3 * comm.size + 1
    a = rng.uniform(-10, 10, (nz, 9, 11)).astype(np.float32)
    got = fn(comm, Slab.of(a, comm.size, comm.rank), STEPS)
    z0, z1 = slab(nz, comm.size, comm.rank)
    if not np.array_equal(got, serial(a, STEPS)[z0:z1]):
        raise AssertionError(f"rank {comm.rank}: planes {z0} .. {z1 - 1} differ from the serial run")
    comm.barrier()
    if comm.rank == 0:
        print(f"stencil ({variant}) on {comm.size} {comm.engine} ranks, {nz} planes: equal to the serial run")
