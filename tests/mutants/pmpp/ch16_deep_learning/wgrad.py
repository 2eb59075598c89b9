"""Mutants and variants of puzzles/pmpp/ch16_deep_learning/wgrad.py; format: mutants/common.py."""

from numba import cuda, float32

from mutants.common import NO_BARRIER, OOB, RACE, WRONG, M, over
from puzzles.pmpp.ch16_deep_learning import TPB, wgrad


@cuda.jit
def wgrad_plain_add(dw, dy, x):
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < dy.shape[2] and col < dy.shape[3]:
        g = dy[n, k, row, col]
        for c in range(x.shape[1]):
            for p in range(dw.shape[2]):
                for q in range(dw.shape[3]):
                    dw[k, c, p, q] += g * x[n, c, row + p, col + q]  # the weight-gradient race


@cuda.jit
def wgrad_no_guard(dw, dy, x):
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    g = dy[n, k, row, col]
    for c in range(x.shape[1]):
        for p in range(dw.shape[2]):
            for q in range(dw.shape[3]):
                cuda.atomic.add(dw, (k, c, p, q), g * x[n, c, row + p, col + q])


@cuda.jit
def wgrad_tap_transposed(dw, dy, x):
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < dy.shape[2] and col < dy.shape[3]:
        g = dy[n, k, row, col]
        for c in range(x.shape[1]):
            for p in range(dw.shape[2]):
                for q in range(dw.shape[3]):
                    cuda.atomic.add(dw, (k, c, q, p), g * x[n, c, row + p, col + q])


@cuda.jit
def wgrad_first_image(dw, dy, x):
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < dy.shape[2] and col < dy.shape[3]:
        g = dy[n, k, row, col]
        for c in range(x.shape[1]):
            for p in range(dw.shape[2]):
                for q in range(dw.shape[3]):
                    cuda.atomic.add(dw, (k, c, p, q), g * x[0, c, row + p, col + q])  # image 0's pixels


@cuda.jit
def wgrad_input_gradient_index(dw, dy, x):
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    fs = dw.shape[2]
    if row < dy.shape[2] and col < dy.shape[3]:
        g = dy[n, k, row, col]
        for c in range(x.shape[1]):
            for p in range(fs):
                for q in range(fs):
                    # the flipped pixel (dx's pattern mixed up with dw's)
                    cuda.atomic.add(dw, (k, c, p, q), g * x[n, c, row + fs - 1 - p, col + fs - 1 - q])


@cuda.jit
def wgrad_atomic_filter_major(dw, dy, x):
    col, row = cuda.grid(2)
    n_img = dy.shape[0]
    k = cuda.blockIdx.z // n_img
    n = cuda.blockIdx.z % n_img
    if row >= dy.shape[2] or col >= dy.shape[3]:
        return
    g = dy[n, k, row, col]
    for q in range(dw.shape[3]):
        for p in range(dw.shape[2]):
            for c in range(x.shape[1]):
                cuda.atomic.add(dw, (k, c, p, q), x[n, c, row + p, col + q] * g)


@cuda.jit
def wgrad_atomic_flat(dw, dy, x):
    col, row = cuda.grid(2)
    k_out = dy.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    c_in, fs = dw.shape[1], dw.shape[2]
    if row < dy.shape[2] and col < dy.shape[3]:
        g = dy[n, k, row, col]
        for r in range(c_in * fs * fs):
            c = r // (fs * fs)
            p = (r // fs) % fs
            q = r % fs
            cuda.atomic.add(dw, (k, c, p, q), g * x[n, c, row + p, col + q])


@cuda.jit
def reduce_no_barrier(dw, dy, x):
    part = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    for i in range(t, dy.shape[0] * ho * wo, TPB):
        n = i // (ho * wo)
        acc += dy[n, k, (i // wo) % ho, i % wo] * x[n, c, (i // wo) % ho + p, i % wo + q]
    part[t] = acc
    stride = TPB // 2
    while stride >= 1:
        if t < stride:  # no barrier: a thread reads a partial sum its neighbour may not have written
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        dw[k, c, p, q] = part[0]


@cuda.jit
def reduce_every_thread_writes(dw, dy, x):
    part = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    for i in range(t, dy.shape[0] * ho * wo, TPB):
        n = i // (ho * wo)
        acc += dy[n, k, (i // wo) % ho, i % wo] * x[n, c, (i // wo) % ho + p, i % wo + q]
    part[t] = acc
    stride = TPB // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    dw[k, c, p, q] = part[0]  # TPB writers of one weight


@cuda.jit
def reduce_atomic_per_thread(dw, dy, x):
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    for i in range(t, dy.shape[0] * ho * wo, TPB):
        n = i // (ho * wo)
        acc += dy[n, k, (i // wo) % ho, i % wo] * x[n, c, (i // wo) % ho + p, i % wo + q]
    if t == 0:
        dw[k, c, p, q] = float32(0.0)
    cuda.syncthreads()
    cuda.atomic.add(dw, (k, c, p, q), acc)  # right answer, but the atomics the exercise removes


@cuda.jit
def reduce_unit_stride(dw, dy, x):
    part = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    for i in range(t, dy.shape[0] * ho * wo):  # step 1: positions counted by many threads
        n = i // (ho * wo)
        acc += dy[n, k, (i // wo) % ho, i % wo] * x[n, c, (i // wo) % ho + p, i % wo + q]
    part[t] = acc
    stride = TPB // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        dw[k, c, p, q] = part[0]


@cuda.jit
def reduce_row_decode_wrong(dw, dy, x):
    part = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    for i in range(t, dy.shape[0] * ho * wo, TPB):
        n = i // (ho * wo)
        h = (i // ho) % ho  # divides by the height instead of the width
        w = i % wo
        acc += dy[n, k, h, w] * x[n, c, h + p, w + q]
    part[t] = acc
    stride = TPB // 2
    while stride >= 1:
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        dw[k, c, p, q] = part[0]


@cuda.jit
def reduce_tree_too_short(dw, dy, x):
    part = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    for i in range(t, dy.shape[0] * ho * wo, TPB):
        n = i // (ho * wo)
        acc += dy[n, k, (i // wo) % ho, i % wo] * x[n, c, (i // wo) % ho + p, i % wo + q]
    part[t] = acc
    stride = TPB // 2
    while stride > 1:  # stops one step early: part[1] is never added
        cuda.syncthreads()
        if t < stride:
            part[t] += part[t + stride]
        stride //= 2
    if t == 0:
        dw[k, c, p, q] = part[0]


@cuda.jit
def reduce_serial_thread0(dw, dy, x):
    part = cuda.shared.array(TPB, float32)
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    i = t
    while i < dy.shape[0] * ho * wo:
        n = i // (ho * wo)
        rem = i - n * ho * wo
        h = rem // wo
        w = rem - h * wo
        acc += x[n, c, h + p, w + q] * dy[n, k, h, w]
        i += TPB
    part[t] = acc
    cuda.syncthreads()
    if t == 0:  # TPB partial sums added by one thread: slower, still one writer
        s = float32(0.0)
        for j in range(TPB):
            s += part[j]
        dw[k, c, p, q] = s


@cuda.jit
def reduce_shuffle(dw, dy, x):
    t = cuda.threadIdx.x
    c_in, fs = dw.shape[1], dw.shape[2]
    widx = cuda.blockIdx.x
    q = widx % fs
    p = (widx // fs) % fs
    c = (widx // (fs * fs)) % c_in
    k = widx // (fs * fs * c_in)
    ho, wo = dy.shape[2], dy.shape[3]
    acc = float32(0.0)
    for i in range(t, dy.shape[0] * ho * wo, TPB):
        n = i // (ho * wo)
        acc += dy[n, k, (i // wo) % ho, i % wo] * x[n, c, (i // wo) % ho + p, i % wo + q]
    # TPB is one warp: the lanes add through registers, no shared memory
    offset = TPB // 2
    while offset > 0:
        acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
        offset //= 2
    if t == 0:
        dw[k, c, p, q] = acc


# the first product taken before the loop, unguarded: right while every thread has one (N * HO * WO >=
# TPB), out of bounds on the case with 6 output positions
REDUCE_FIRST_PRODUCT_UNGUARDED = M(
    wgrad.conv_wgrad_reduce,
    "reduce_first_product_unguarded",
    OOB,
    (
        "    acc = float32(0.0)\n    for i in range(t, total, TPB):",
        "    n0 = t // (ho * wo)\n"
        "    acc = dy[n0, k, (t // wo) % ho, t % wo] * x[n0, c, (t // wo) % ho + p, t % wo + q]\n"
        "    for i in range(t + TPB, total, TPB):",
    ),
)


MUTANTS = {
    "ch16_conv_wgrad_atomic": [
        ("wgrad_plain_add", wgrad_plain_add, *RACE),
        ("wgrad_no_guard", wgrad_no_guard, *OOB),
        ("wgrad_tap_transposed", wgrad_tap_transposed, *WRONG),
        ("wgrad_first_image", wgrad_first_image, *WRONG),
        ("wgrad_input_gradient_index", wgrad_input_gradient_index, *WRONG),
    ],
    "ch16_conv_wgrad_reduce": [
        ("reduce_no_barrier", reduce_no_barrier, *NO_BARRIER),
        ("reduce_every_thread_writes", reduce_every_thread_writes, *RACE),
        ("reduce_atomic_per_thread", reduce_atomic_per_thread, *over("global_atomics_per_block")),
        ("reduce_unit_stride", reduce_unit_stride, *WRONG),
        ("reduce_row_decode_wrong", reduce_row_decode_wrong, *WRONG),
        ("reduce_tree_too_short", reduce_tree_too_short, *WRONG),
        REDUCE_FIRST_PRODUCT_UNGUARDED,
    ],
}

VARIANTS = {
    "ch16_conv_wgrad_atomic": [
        ("wgrad_atomic_filter_major", wgrad_atomic_filter_major),
        ("wgrad_atomic_flat", wgrad_atomic_flat),
    ],
    "ch16_conv_wgrad_reduce": [
        ("reduce_serial_thread0", reduce_serial_thread0),
        ("reduce_shuffle", reduce_shuffle),
    ],
}

SEEDS = {name: (0, 1, 2) for name in MUTANTS}
