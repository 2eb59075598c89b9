"""Known-wrong and correct data-parallel steps for puzzles/dist/data_parallel.py."""

from mutants.common import WRONG, M, mutate
from puzzles.dist.data_parallel import dp_step

_SCALE = "model.scale_grad((hi - lo) / B)"
_SHARD = "lo, hi = (comm.rank * B) // comm.size, ((comm.rank + 1) * B) // comm.size"

MUTANTS = {
    "dist_dp_step": [
        # each rank steps with its own shard's gradient: the replicas drift apart
        M(dp_step, "dp_no_allreduce", WRONG, ("    comm.allreduce(model.grad)\n", "")),
        # all-reduce sums: the gradient is size x the batch's (Adam alone would hardly see it)
        M(dp_step, "dp_sum_not_mean", WRONG, ("    model.scale_grad((hi - lo) / B)\n", "")),
        # a plain mean of the ranks' means: right for equal shards only
        M(dp_step, "dp_mean_of_means", WRONG, (_SCALE, "model.scale_grad(1 / comm.size)")),
        # B // size windows each: the last B % size windows are never trained on
        M(dp_step, "dp_drop_remainder", WRONG,
          (_SHARD, "n = B // comm.size\n    lo, hi = comm.rank * n, (comm.rank + 1) * n")),
        # the all-reduce before backward: it sums last step's buffer, backward then overwrites it
        M(dp_step, "dp_allreduce_before_backward", WRONG,
          ("    model.backward()\n", ""),
          ("    model.step(lr)\n", "    model.backward()\n    model.step(lr)\n")),
        # the sum lands in a fresh buffer that the step never reads (a stale gradient is stepped)
        M(dp_step, "dp_result_ignored", WRONG,
          ("comm.allreduce(model.grad)", "total = comm.allreduce(model.grad, model.grad.copy())")),
        # no sharding: every rank runs the whole batch (right gradient, size x the work)
        M(dp_step, "dp_whole_batch_everywhere", WRONG,
          ("model.forward(tokens[lo:hi], targets[lo:hi])", "model.forward(tokens, targets)"),
          ("model.scale_grad((hi - lo) / B)", "model.scale_grad(1 / comm.size)")),
    ],
}  # fmt: skip

VARIANTS = {
    "dist_dp_step": [
        # interleaved shards: rank r takes windows r, r + size, ...
        (
            "dp_strided",
            mutate(
                dp_step,
                "dp_strided",
                (_SHARD, "idx = list(range(comm.rank, B, comm.size))\n    lo, hi = 0, len(idx)"),
                ("model.forward(tokens[lo:hi], targets[lo:hi])", "model.forward(tokens[idx], targets[idx])"),
            ),
        ),
        # the sum into a separate buffer, copied back, and the mean taken after
        (
            "dp_scale_after",
            mutate(
                dp_step,
                "dp_scale_after",
                ("    model.scale_grad((hi - lo) / B)\n", ""),
                (
                    "comm.allreduce(model.grad)",
                    "model.scale_grad(hi - lo)\n    total = comm.allreduce(model.grad, model.grad.copy())\n"
                    "    model.grad[:] = total\n    model.scale_grad(1 / B)",
                ),
            ),
        ),
    ],
}

SEEDS = {"dist_dp_step": (0, 1, 2)}
