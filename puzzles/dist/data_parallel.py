"""Data-parallel training of the course's GPT-2 (puzzles/llm/training): every rank holds the whole
model (replica.py), takes its share of the batch, and the gradients are all-reduced so that every
rank takes the same AdamW step, the one a single process takes on the full batch.

Rung:
- dist_dp_step (exercise): shard the batch, forward and backward on the shard, weight the gradient
  by the shard's share of the batch, all-reduce it, step.

The tolerance, derived. The all-reduced gradient and the single process's are float32 sums of the
same per-window terms in two orders (per shard, then across ranks). Each is within gradcheck.py's
bound of the float64 truth, e = 8 max|g_f32 - g_f64| + 64 u max|g_f64| per tensor (u = 2**-24, the
float32 error of the NumPy formulas on this batch, measured), so they are within 2e of each other.
AdamW's first step moves a parameter by lr * g / (|g| + eps) (m and v are g and g*g after the bias
correction), whose change under a change d of g is at most lr * d / (|g| - d + eps), and at most
2 lr; the parameters after the step may differ by that, plus 8 u (|p| + lr) of rounding.
Adam is nearly blind to the gradient's scale (g / |g|): a sum where a mean belongs would pass a check
of the parameters alone, so the gradient each rank steps with is checked first.
"""

import numpy as np

from helpers.dist import Case, Exercise
from helpers.verdicts import WrongAnswer
from puzzles.llm.training import reference
from puzzles.llm.training.gradcheck import perturbed_params
from puzzles.llm.training.reference import CONFIGS

from .replica import NumpyReplica

U = 2.0**-24
CFG = CONFIGS["check"]  # 1 layer, width 8, 4 positions: a step in milliseconds on a CPU
LR = 1e-2


# ---------------------------------------------------------------------------- the truth


def truth(params: dict, tokens, targets, lr: float, cfg=CFG) -> dict:
    """The single process's step on the full batch and the tolerances above: {grad, params, tol_g
    (per element), tol_p (per element)}."""
    one = NumpyReplica(cfg, params)
    one.forward(tokens, targets)
    one.backward()
    g32 = one.grad.copy()
    one.step(lr)
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    _, _, cache = reference.forward(p64, tokens, targets, cfg)
    g64 = reference.backward(p64, cache, cfg)
    tol = np.empty_like(g32, dtype=np.float64)
    for name, view in one.views(tol).items():
        got = one.views(g32)[name]
        e = 8 * np.abs(got - g64[name]).max() + 64 * U * np.abs(g64[name]).max()
        view[...] = 2 * e
    eps = reference.ADAM["eps"]
    step = lr * np.minimum(2.0, tol / (np.maximum(np.abs(g32) - tol, 0) + eps))
    p0 = np.concatenate([params[n].astype(np.float32).ravel() for n in one.order])
    return dict(
        grad=g32, params=one.params.copy(), tol_g=tol, tol_p=step + 8 * U * (np.abs(p0) + lr), replica=one
    )


class CheckedReplica(NumpyReplica):
    """A NumpyReplica that remembers which windows it saw (shared by the ranks of one case)."""

    def __init__(self, cfg, params, seen: dict, rank: int):
        super().__init__(cfg, params)
        self.seen, self.rank = seen, rank
        self.twice = None  # the other rank that computed one of this rank's windows too

    def forward(self, tokens, targets) -> float:
        for row in np.asarray(tokens):
            key = row.tobytes()
            if key in self.seen and self.seen[key] != self.rank and self.twice is None:
                self.twice = self.seen[key]  # judged after the run (spec), where verdicts are given
            self.seen[key] = self.rank
        return super().forward(tokens, targets)


# ---------------------------------------------------------------------------- cases


def cases(rng):
    """2 ranks and an even batch; 2, 3 and 4 ranks with batches they do not divide."""
    out = []
    for size, B, note in ((2, 4, "equal shards"), (2, 5, "unequal shards"), (3, 7, "unequal shards"),
                          (4, 6, "unequal shards, some of one window")):  # fmt: skip
        params = perturbed_params(CFG, int(rng.integers(1 << 16)))
        while True:  # distinct windows, so that each can be traced to the rank that computed it
            tokens = rng.integers(0, CFG.V, (B, CFG.T)).astype(np.int32)
            if len({r.tobytes() for r in tokens}) == B:
                break
        targets = rng.integers(0, CFG.V, (B, CFG.T)).astype(np.int32)
        seen = {}
        args = [
            {"model": CheckedReplica(CFG, params, seen, r), "tokens": tokens, "targets": targets, "lr": LR}
            for r in range(size)
        ]
        case = Case(size, args, note=note)
        case.truth = truth(params, tokens, targets, LR)
        out.append(case)
    return out


def _first_bad(got, want, tol):
    bad = np.abs(got.astype(np.float64) - want) > tol
    bad |= ~np.isfinite(got)
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def spec(case):
    """Checks every rank's step against the single process's (raises WrongAnswer naming the rank,
    the parameter and what went wrong); nothing is left to compare afterwards."""
    t = case.truth
    head = f"dist_dp_step, {case.describe()}:\n\n"
    size, B = case.size, len(case.args[0]["tokens"])
    where = t["replica"]
    twice(case, head)
    for r, a in enumerate(case.args):
        model = a["model"]
        if len(model.stepped) != 1:
            raise WrongAnswer(f"{head}rank {r} called model.step {len(model.stepped)} times: one step, once.")
        g = model.stepped[0]
        i = _first_bad(g, t["grad"], t["tol_g"])
        if i is not None:
            name, k = _locate(where, i)
            ratio = np.dot(g, t["grad"]) / max(np.dot(t["grad"], t["grad"]), 1e-30)
            why = ""
            if abs(ratio - size) < 0.05 * size:
                why = (
                    f" The whole gradient is {ratio:.2f} x the full batch's: all-reduce sums the ranks' "
                    "gradients; weight each by its share of the batch (n_r / B) first."
                )
            elif B % size:
                why = (
                    f" B = {B} windows over {size} ranks: the shards are unequal, so a plain mean of the "
                    "ranks' mean gradients is not the batch's mean; weight each by n_r / B."
                )
            raise WrongAnswer(
                f"{head}rank {r} stepped with a gradient that is not the full batch's: {name}{k} is "
                f"{g[i]:.6g}, the single process's {t['grad'][i]:.6g} (tolerance {t['tol_g'][i]:.2g}).{why} "
                "Every rank must step with the same, all-reduced gradient of the whole batch."
            )
        i = _first_bad(model.params, t["params"], t["tol_p"])
        if i is not None:
            name, k = _locate(where, i)
            raise WrongAnswer(
                f"{head}rank {r}'s parameters after the step differ from the single process's: {name}{k} "
                f"is {model.params[i]:.6g}, expected {t['params'][i]:.6g} (tolerance {t['tol_p'][i]:.2g})."
            )
    first = case.args[0]["model"].params
    for r, a in enumerate(case.args[1:], 1):
        if not np.array_equal(a["model"].params, first):
            raise WrongAnswer(
                f"{head}ranks 0 and {r} hold different parameters: their replicas would drift apart."
            )
    return [{} for _ in range(size)]


def twice(case, head: str) -> None:
    """A window computed by two ranks: the gradient may still be right (each rank ran the whole batch
    and the mean of equal gradients is that gradient), but the work was not shared."""
    for r, a in enumerate(case.args):
        other = getattr(a["model"], "twice", None)
        if other is not None:
            raise WrongAnswer(
                f"{head}rank {r} computed a window that rank {other} computed too: each window of the "
                "batch belongs to one rank (take tokens[lo:hi] of your share, "
                "helpers.dist.split(B, comm.size)[comm.rank])."
            )


def _locate(replica, i: int):
    """(parameter name, index) of element i of the flat buffer."""
    off = 0
    for n in replica.order:
        size = int(np.prod(replica.shapes[n]))
        if i < off + size:
            return n, [int(j) for j in np.unravel_index(i - off, replica.shapes[n])]
        off += size
    raise IndexError(i)


# ---------------------------------------------------------------------------- the exercise


def dp_step(comm, model, tokens, targets, lr):
    ### BEGIN SOLUTION
    B = len(tokens)
    lo, hi = (comm.rank * B) // comm.size, ((comm.rank + 1) * B) // comm.size
    model.forward(tokens[lo:hi], targets[lo:hi])
    model.backward()
    model.scale_grad((hi - lo) / B)
    comm.allreduce(model.grad)
    model.step(lr)
    ### END SOLUTION


STATEMENT = """\
**A data-parallel training step.** Every rank holds a replica of the model, the same parameters.
Each takes its share of the batch of `B` windows (`tokens`, `targets`: `B x T` bytes, the same on
every rank), runs `model.forward(tokens[lo:hi], targets[lo:hi])` (the mean loss of its windows) and
`model.backward()` (which overwrites `model.grad`, one flat float32 buffer, with the gradient of that
mean). The batch's loss is the mean over all `B` windows, so its gradient is the sum over ranks of
`n_r / B` times each rank's gradient (`n_r` = the rank's windows): `model.scale_grad(n_r / B)`, then
`comm.allreduce(model.grad)` (a sum, in place), then `model.step(lr)` (AdamW). Every rank then holds
the parameters one process would after a step on the whole batch. The check compares the gradient
each rank steps with and the parameters after, against the single process's, to a tolerance derived
from float32's rounding (the module's docstring); `B` need not be a multiple of the ranks."""

DIST_DP_STEP = Exercise(
    name="dist_dp_step",
    title="Data-parallel GPT-2 step",
    statement=STATEMENT,
    reference=dp_step,
    spec=spec,
    cases=cases,
    outputs=(),
    inputs=("tokens", "targets"),
    hints=(
        "Rank r's windows: lo, hi = r * B // size, (r + 1) * B // size (or helpers.dist.split).",
        "Order: forward, backward, scale_grad(n_r / B), allreduce, step. An all-reduce before backward "
        "finished sends a gradient that is not there yet.",
    ),
)

PUZZLES = []  # exercises for many ranks are `EXERCISES` (helpers.dist.check), not kernel puzzles
EXERCISES = [DIST_DP_STEP]


# ---------------------------------------------------------------------------- real engines


def on_ranks(comm, seed: str = "0", batch: str = "0") -> None:
    """On launched CPU ranks (MPI): the reference step on a batch of `batch` windows (0: 2 per rank
    plus one, so the shards are unequal), checked against the single process (each rank computes
    it); rank 0 prints the verdict."""
    rng = np.random.default_rng(int(seed))
    B = int(batch) or 2 * comm.size + 1
    params = perturbed_params(CFG, int(seed))
    tokens = rng.integers(0, CFG.V, (B, CFG.T)).astype(np.int32)
    targets = rng.integers(0, CFG.V, (B, CFG.T)).astype(np.int32)
    model = NumpyReplica(CFG, params)
    dp_step(comm, model, tokens, targets, LR)
    t = truth(params, tokens, targets, LR)
    for what, got, want, tol in (("gradient", model.stepped[0], t["grad"], t["tol_g"]),
                                 ("parameters", model.params, t["params"], t["tol_p"])):  # fmt: skip
        i = _first_bad(got, want, tol)
        if i is not None:
            name, k = _locate(t["replica"], i)
            raise AssertionError(f"rank {comm.rank}: {what} at {name}{k}: {got[i]} against {want[i]}")
    comm.barrier()
    if comm.rank == 0:
        print(f"data-parallel step on {comm.size} {comm.engine} ranks, B={B}: equal to one process's step")
