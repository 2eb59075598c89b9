"""ZeRO-1 (the optimizer state sharded): the data-parallel step of data_parallel.py with each rank
keeping AdamW's m and v for 1/size of the parameters only. The gradient is reduce-scattered (each
rank receives the batch's gradient for its shard, summed over ranks), each rank steps its shard, and
the updated shards are all-gathered into every rank's full parameters. A reduce-scatter and an
all-gather move what one all-reduce moves (a ring all-reduce is exactly those two halves): the same
traffic, and m and v take 2/size of the memory they took.

Rung:
- dist_zero1_step (exercise): reduce_scatter, step_shard, allgather.

Checked as data_parallel.py checks the plain step (the same single-process truth and tolerances),
plus: every parameter belongs to exactly one rank's shard.
"""

import numpy as np

from helpers.dist import Case, Exercise
from helpers.verdicts import WrongAnswer
from puzzles.llm.training.gradcheck import perturbed_params

from .data_parallel import CFG, LR, CheckedReplica, _first_bad, _locate, truth, twice
from .replica import NumpyReplica

# ---------------------------------------------------------------------------- cases


class ZeroReplica(CheckedReplica):
    """The checked replica with its buffers padded to a multiple of the ranks."""

    def __init__(self, cfg, params, seen: dict, rank: int, size: int):
        super().__init__(cfg, params, seen, rank)
        pad = -(-self.n // size) * size
        self.params = np.concatenate([self.params, np.zeros(pad - self.n, np.float32)])
        self.grad = np.zeros_like(self.params)
        self.m = self.v = None  # ZeRO-1: no full-size optimizer state


def cases(rng):
    out = []
    for size, B, note in (
        (2, 4, "equal shards"),
        (3, 5, "unequal shards, padded buffer"),
        (4, 6, "unequal shards"),
    ):
        params = perturbed_params(CFG, int(rng.integers(1 << 16)))
        while True:
            tokens = rng.integers(0, CFG.V, (B, CFG.T)).astype(np.int32)
            if len({r.tobytes() for r in tokens}) == B:
                break
        targets = rng.integers(0, CFG.V, (B, CFG.T)).astype(np.int32)
        seen = {}
        args = [
            {"model": ZeroReplica(CFG, params, seen, r, size), "tokens": tokens, "targets": targets, "lr": LR}
            for r in range(size)
        ]
        case = Case(size, args, note=note)
        case.truth = truth(params, tokens, targets, LR)
        out.append(case)
    return out


def spec(case):
    t = case.truth
    head = f"dist_zero1_step, {case.describe()}:\n\n"
    n = t["grad"].size
    owner = np.full(case.args[0]["model"].params.size, -1)
    twice(case, head)
    for r, a in enumerate(case.args):
        model = a["model"]
        if len(model.stepped) != 1 or not isinstance(model.stepped[0], tuple):
            raise WrongAnswer(
                f"{head}rank {r} must call model.step_shard once (it called a step "
                f"{len(model.stepped)} times)."
            )
        lo, hi, g = model.stepped[0]
        if (owner[lo:hi] >= 0).any():
            other = int(owner[lo:hi][owner[lo:hi] >= 0][0])
            raise WrongAnswer(
                f"{head}rank {r} stepped parameters {lo} .. {hi - 1}, some of which rank {other} stepped "
                "too: "
                "each rank owns one shard, rank r the r-th of size equal parts."
            )
        owner[lo:hi] = r
        want = np.zeros(hi - lo)
        inside = slice(lo, min(hi, n))
        want[: inside.stop - lo] = t["grad"][inside]
        tol = np.zeros(hi - lo)
        tol[: inside.stop - lo] = t["tol_g"][inside]
        i = _first_bad(g, want, tol)
        if i is not None:
            name, k = _locate(t["replica"], lo + i)
            raise WrongAnswer(
                f"{head}rank {r} stepped its shard {lo} .. {hi - 1} with a gradient that is not the batch's: "
                f"{name}{k} is {g[i]:.6g}, the single process's {want[i]:.6g}. reduce_scatter gives rank r "
                "the r-th part of the summed gradient: step the same part."
            )
    if (owner < 0).any():
        i = int(np.flatnonzero(owner < 0)[0])
        raise WrongAnswer(
            f"{head}parameter {i} is in no rank's shard: the shards must cover the whole buffer."
        )
    for r, a in enumerate(case.args):
        p = a["model"].params
        i = _first_bad(p[:n], t["params"], t["tol_p"])
        if i is not None:
            name, k = _locate(t["replica"], i)
            raise WrongAnswer(
                f"{head}rank {r}'s parameters after the step differ from the single process's at {name}{k} "
                f"(in rank {owner[i]}'s shard): {p[i]:.6g}, expected {t['params'][i]:.6g}. Every rank needs "
                "every updated shard: all-gather them after the step."
            )
    first = case.args[0]["model"].params
    for r, a in enumerate(case.args[1:], 1):
        if not np.array_equal(a["model"].params, first):
            raise WrongAnswer(
                f"{head}ranks 0 and {r} hold different parameters: their replicas would drift apart."
            )
    return [{} for _ in range(case.size)]


# ---------------------------------------------------------------------------- the exercise


def zero1_step(comm, model, tokens, targets, lr):
    B = len(tokens)
    lo, hi = (comm.rank * B) // comm.size, ((comm.rank + 1) * B) // comm.size
    model.forward(tokens[lo:hi], targets[lo:hi])
    model.backward()
    model.scale_grad((hi - lo) / B)
    ### BEGIN SOLUTION
    n = model.grad.size // comm.size  # the buffers are padded to a multiple of the ranks
    a, b = comm.rank * n, (comm.rank + 1) * n
    mine = np.empty(n, np.float32)
    comm.reduce_scatter(model.grad, mine)
    model.step_shard(mine, a, b, lr)
    comm.allgather(model.params[a:b].copy(), model.params)
    ### END SOLUTION


STATEMENT = """\
**ZeRO-1: shard the optimizer.** The data-parallel step keeps AdamW's two moments `m` and `v` for
every parameter on every rank: twice the model's memory, repeated `size` times. Give each rank one
shard instead. The flat buffers hold `model.grad.size` values, padded to a multiple of `comm.size`;
rank `r` owns the `r`-th of `size` equal parts, `[a, b)`. After the forward, backward and scaling of
the plain step (given): `comm.reduce_scatter(model.grad, mine)` leaves in `mine` (a new array of
`b - a` float32) the batch's gradient for this rank's part, summed over the ranks;
`model.step_shard(mine, a, b, lr)` takes the AdamW step on `model.params[a:b]` (m and v exist for
that part only); then `comm.allgather(shard, model.params)` gives every rank every updated part
(send a copy of your part: the receive buffer must not overlap the send buffer). The result must
equal the plain step's, to the same tolerance."""

DIST_ZERO1_STEP = Exercise(
    name="dist_zero1_step",
    title="ZeRO-1: sharded optimizer",
    statement=STATEMENT,
    reference=zero1_step,
    spec=spec,
    cases=cases,
    outputs=(),
    inputs=("tokens", "targets"),
    hints=(
        "n = model.grad.size // comm.size; a, b = comm.rank * n, (comm.rank + 1) * n.",
        "reduce_scatter(model.grad, mine) -> step_shard(mine, a, b, lr) -> "
        "allgather(model.params[a:b].copy(), model.params).",
    ),
)

PUZZLES = []
EXERCISES = [DIST_ZERO1_STEP]


# ---------------------------------------------------------------------------- real engines


def on_ranks(comm, seed: str = "0") -> None:
    """On launched CPU ranks (MPI): the ZeRO-1 reference against the single process's plain step."""
    rng = np.random.default_rng(int(seed))
    B = 2 * comm.size + 1
    params = perturbed_params(CFG, int(seed))
    tokens = rng.integers(0, CFG.V, (B, CFG.T)).astype(np.int32)
    targets = rng.integers(0, CFG.V, (B, CFG.T)).astype(np.int32)
    model = NumpyReplica(CFG, params, pad=comm.size)
    zero1_step(comm, model, tokens, targets, LR)
    t = truth(params, tokens, targets, LR)
    n = t["params"].size
    i = _first_bad(model.params[:n], t["params"], t["tol_p"])
    if i is not None:
        raise AssertionError(f"rank {comm.rank}: parameter {i}: {model.params[i]} against {t['params'][i]}")
    comm.barrier()
    if comm.rank == 0:
        print(f"ZeRO-1 step on {comm.size} {comm.engine} ranks: equal to one process's plain step")
