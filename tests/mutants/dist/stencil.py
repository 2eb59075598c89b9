"""Known-wrong and correct halo exchanges for puzzles/dist/stencil.py."""

from helpers.dist import BufferInUse, CommDeadlock, RequestNotWaited
from mutants.common import WRONG, KernelDiagnosed, M, mutate
from puzzles.dist.stencil import halo_stencil, overlap_stencil

DEADLOCK = (KernelDiagnosed, CommDeadlock)
IN_USE = (KernelDiagnosed, BufferInUse)

_EDGES = "        grid.sweep(1, 2)  # the planes the neighbours need, first\n        grid.sweep(n, n + 1)\n"
_INTERIOR = "        grid.sweep(2, n)  # the interior, while the halos travel\n"
_DOWN = "reqs += [comm.irecv(out[0], below), comm.isend(out[1], below)]"
_UP = "reqs += [comm.irecv(out[n + 1], above), comm.isend(out[n], above)]"
_HALO_PAIRS = """        if above < comm.size:
            comm.sendrecv(out[n], above, out[n + 1], above)
        if below >= 0:
            comm.sendrecv(out[1], below, out[0], below)
"""

MUTANTS = {
    "dist_stencil_halo": [
        # every rank sends before it receives: each waits for a neighbour that is sending too
        M(
            halo_stencil,
            "halo_send_first",
            DEADLOCK,
            (
                _HALO_PAIRS,
                """        if above < comm.size:
            comm.send(out[n], above)
        if below >= 0:
            comm.send(out[1], below)
        if below >= 0:
            comm.recv(out[0], below)
        if above < comm.size:
            comm.recv(out[n + 1], above)
""",
            ),
        ),
        # a shift up only (each rank's top plane becomes its upper neighbour's halo below): the halo
        # above is never refreshed (NaN from step 2 on)
        M(
            halo_stencil,
            "halo_one_direction",
            WRONG,
            (
                _HALO_PAIRS,
                """        reqs = []
        if above < comm.size:
            reqs.append(comm.isend(out[n], above))
        if below >= 0:
            reqs.append(comm.irecv(out[0], below))
        comm.waitall(reqs)
""",
            ),
        ),
        # the bottom plane sent up: the neighbour's halo holds the wrong plane
        M(halo_stencil, "halo_wrong_plane", WRONG, ("sendrecv(out[n], above", "sendrecv(out[1], above")),
        # received into the wrong halo: the plane from above lands below
        M(halo_stencil, "halo_wrong_side", WRONG, ("out[n + 1], above)", "out[0], above)")),
        # exchanged before computing: the halos hold last step's planes
        M(
            halo_stencil,
            "halo_before_sweep",
            WRONG,
            ("        grid.sweep(1, n + 1)\n        out = grid.out\n", "        out = grid.out\n"),
            ("        grid.swap()\n", "        grid.sweep(1, n + 1)\n        grid.swap()\n"),
        ),
        # the neighbours swapped: rank 0 talks to rank 1 as if it were below, and its halo below
        # receives rank 1's top plane
        M(
            halo_stencil,
            "halo_wrong_neighbour",
            WRONG,
            ("below, above = comm.rank - 1, comm.rank + 1", "below, above = comm.rank + 1, comm.rank - 1"),
            ("if above < comm.size:", "if 0 <= above < comm.size:"),
            ("if below >= 0:", "if below < comm.size:"),
        ),
    ],
    "dist_stencil_overlap": [
        # the edge planes' sends posted before the planes are computed: the buffer changes in flight
        M(
            overlap_stencil,
            "overlap_send_before_compute",
            IN_USE,
            (_EDGES, ""),
            (_INTERIOR, "        grid.sweep(1, n + 1)\n"),
        ),
        # the interior computed after the wait, but the edges never: planes 1 and n stay NaN
        M(overlap_stencil, "overlap_no_edges", WRONG, (_EDGES, "")),
        # no wait: the function returns with messages in flight
        M(overlap_stencil, "overlap_no_wait", IN_USE, ("        comm.waitall(reqs)\n", "")),
        # blocking receive first: everyone waits for a message nobody has sent yet
        M(
            overlap_stencil,
            "overlap_recv_first",
            DEADLOCK,
            (_DOWN, "comm.recv(out[0], below)\n            reqs += [comm.isend(out[1], below)]"),
            (_UP, "comm.recv(out[n + 1], above)\n            reqs += [comm.isend(out[n], above)]"),
        ),
        # only the receives waited: the sends' requests are left behind
        M(
            overlap_stencil,
            "overlap_sends_not_waited",
            (KernelDiagnosed, RequestNotWaited),
            (_DOWN, "reqs.append(comm.irecv(out[0], below))\n            comm.isend(out[1], below)"),
            (_UP, "reqs.append(comm.irecv(out[n + 1], above))\n            comm.isend(out[n], above)"),
        ),
        # the interior misses its last plane
        M(overlap_stencil, "overlap_interior_short", WRONG, ("grid.sweep(2, n)", "grid.sweep(2, n - 1)")),
    ],
}

VARIANTS = {
    "dist_stencil_halo": [
        ("overlap_as_halo", mutate(overlap_stencil, "overlap_as_halo")),
        # a periodic shift: the end ranks also exchange (with each other) halos nobody reads
        (
            "halo_periodic",
            mutate(
                halo_stencil,
                "halo_periodic",
                (
                    _HALO_PAIRS,
                    """\
        up, down = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
        comm.sendrecv(out[n], up, out[0], down)
        comm.sendrecv(out[1], down, out[n + 1], up)
""",
                ),
            ),
        ),
        # non-blocking after the sweep: the same messages, posted together
        (
            "halo_nonblocking",
            mutate(
                halo_stencil,
                "halo_nonblocking",
                (
                    _HALO_PAIRS,
                    """        reqs = []
        if above < comm.size:
            reqs += [comm.isend(out[n], above), comm.irecv(out[n + 1], above)]
        if below >= 0:
            reqs += [comm.isend(out[1], below), comm.irecv(out[0], below)]
        comm.waitall(reqs)
""",
                ),
            ),
        ),
    ],
    "dist_stencil_overlap": [
        # sends posted first, receives second, each request waited on its own
        (
            "overlap_each_wait",
            mutate(
                overlap_stencil,
                "overlap_each_wait",
                ("comm.waitall(reqs)", "for r in reqs:\n            r.wait()"),
            ),
        ),
        # the receives posted before anything is computed (the sweeps never touch the halos)
        (
            "overlap_receives_first",
            mutate(
                overlap_stencil,
                "overlap_receives_first",
                (
                    _EDGES + "        reqs = []\n",
                    "        reqs = []\n"
                    "        if below >= 0:\n            reqs.append(comm.irecv(out[0], below))\n"
                    "        if above < comm.size:\n            reqs.append(comm.irecv(out[n + 1], above))\n"
                    "        grid.sweep(1, 2)\n        grid.sweep(n, n + 1)\n",
                ),
                (_DOWN, "reqs.append(comm.isend(out[1], below))"),
                (_UP, "reqs.append(comm.isend(out[n], above))"),
            ),
        ),
    ],
}

SEEDS = {"dist_stencil_halo": (0, 1, 2), "dist_stencil_overlap": (0, 1, 2)}
