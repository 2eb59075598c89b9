"""Known-wrong and correct ZeRO-1 steps for puzzles/dist/zero.py."""

from mutants.common import WRONG, M, mutate
from puzzles.dist.zero import zero1_step

_SHARD = "a, b = comm.rank * n, (comm.rank + 1) * n"
_RS = "comm.reduce_scatter(model.grad, mine)"
_AG = "    comm.allgather(model.params[a:b].copy(), model.params)\n"

MUTANTS = {
    "dist_zero1_step": [
        # the updated shards never shared: every rank's other parts keep the old values
        M(zero1_step, "zero_no_allgather", WRONG, (_AG, "")),
        # the shards gathered before the step: every rank ends with the old parameters
        M(zero1_step, "zero_gather_before_step", WRONG,
          (_AG, ""), ("    model.step_shard(", _AG + "    model.step_shard(")),
        # the next rank's part stepped with this rank's gradient
        M(zero1_step, "zero_wrong_shard", WRONG,
          (_SHARD, "s = (comm.rank + 1) % comm.size\n    a, b = s * n, (s + 1) * n")),
        # every rank steps the first part: the others are in nobody's shard
        M(zero1_step, "zero_same_shard", WRONG, (_SHARD, "a, b = 0, n")),
        # the sum of the ranks' gradients stepped (no weighting by the share of the batch)
        M(zero1_step, "zero_sum_not_mean", WRONG, ("    model.scale_grad((hi - lo) / B)\n", "")),
        # this rank's own part of its own gradient, never reduced
        M(zero1_step, "zero_no_reduce", WRONG, (_RS, "mine[:] = model.grad[a:b]")),
    ],
}  # fmt: skip

VARIANTS = {
    "dist_zero1_step": [
        # an all-reduce of the whole gradient, then this rank's part (twice the traffic, same step)
        ("zero_allreduce_then_part", mutate(
            zero1_step, "zero_allreduce_then_part",
            (_RS, "comm.allreduce(model.grad)\n    mine[:] = model.grad[a:b]"))),
        # the gathered parameters into a fresh buffer, copied in
        ("zero_gather_fresh", mutate(zero1_step, "zero_gather_fresh", (_AG, (
            "    full = np.empty_like(model.params)\n    comm.allgather(model.params[a:b].copy(), full)\n"
            "    model.params[:] = full\n")))),
    ],
}  # fmt: skip

SEEDS = {"dist_zero1_step": (0, 1, 2)}
