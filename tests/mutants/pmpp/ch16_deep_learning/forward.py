"""Mutants and variants of puzzles/pmpp/ch16_deep_learning.py; format: mutants/common.py."""

from numba import cuda, float32

from mutants.common import NO_BARRIER, OOB, RACE, WRONG, over
from puzzles.pmpp.ch16_deep_learning import BANK, BANK_BIAS, BANK_C, BANK_FS, BANK_K, IN_TILE, TILE, TPB

# ------------------------------------------------------------------ conv_forward


@cuda.jit
def forward_no_bias(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < y.shape[2] and col < y.shape[3]:
        acc = float32(0.0)  # the bias is forgotten
        for c in range(x.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc


@cuda.jit
def forward_no_guard(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    acc = b[k]  # every thread of the rounded-up grid computes and writes
    for c in range(x.shape[1]):
        for p in range(w.shape[2]):
            for q in range(w.shape[3]):
                acc += x[n, c, row + p, col + q] * w[k, c, p, q]
    y[n, k, row, col] = acc


@cuda.jit
def forward_window_transposed(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < y.shape[2] and col < y.shape[3]:
        acc = b[k]
        for c in range(x.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + q, col + p] * w[k, c, p, q]  # tap (p, q) reads pixel (q, p)
        y[n, k, row, col] = acc


@cuda.jit
def forward_bias_per_channel(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    if row < y.shape[2] and col < y.shape[3]:
        acc = float32(0.0)
        for c in range(x.shape[1]):
            acc = b[k]  # restarts the sum for every channel: only the last one survives
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc


@cuda.jit
def forward_flipped_filter(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    fs = w.shape[2]
    if row < y.shape[2] and col < y.shape[3]:
        acc = b[k]
        for c in range(x.shape[1]):
            for p in range(fs):
                for q in range(fs):
                    # textbook convolution flips the filter; the layer (like cuDNN) does not
                    acc += x[n, c, row + p, col + q] * w[k, c, fs - 1 - p, fs - 1 - q]
        y[n, k, row, col] = acc


@cuda.jit
def forward_z_filter_major(y, x, w, b):
    col, row = cuda.grid(2)
    n_img = x.shape[0]
    k = cuda.blockIdx.z // n_img  # the other numbering of (image, filter) pairs: still one each
    n = cuda.blockIdx.z % n_img
    if row >= y.shape[2] or col >= y.shape[3]:
        return
    acc = float32(0.0)
    for p in range(w.shape[2]):
        for q in range(w.shape[3]):
            for c in range(x.shape[1]):
                acc += w[k, c, p, q] * x[n, c, row + p, col + q]
    y[n, k, row, col] = acc + b[k]


@cuda.jit
def forward_flat_weights(y, x, w, b):
    col, row = cuda.grid(2)
    k_out = y.shape[1]
    n = cuda.blockIdx.z // k_out
    k = cuda.blockIdx.z % k_out
    c_in, fs = w.shape[1], w.shape[2]
    if row < y.shape[2] and col < y.shape[3]:
        acc = b[k]
        for r in range(c_in * fs * fs):  # one loop over the flattened filter, as im2col's rows
            c = r // (fs * fs)
            p = (r // fs) % fs
            q = r % fs
            acc += x[n, c, row + p, col + q] * w[k, c, p, q]
        y[n, k, row, col] = acc


# ------------------------------------------------------------------ conv_tiled (worked)


@cuda.jit
def tiled_no_second_barrier(y, x):
    bank = cuda.const.array_like(BANK)
    bias = cuda.const.array_like(BANK_BIAS)
    tile = cuda.shared.array((IN_TILE, IN_TILE), float32)
    acc = cuda.local.array(BANK_K, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    t = ty * TILE + tx
    n = cuda.blockIdx.z
    row0 = cuda.blockIdx.y * TILE
    col0 = cuda.blockIdx.x * TILE
    row = row0 + ty
    col = col0 + tx
    h, wd = x.shape[2], x.shape[3]
    inside = row < y.shape[2] and col < y.shape[3]
    for k in range(BANK_K):
        acc[k] = bias[k]
    for c in range(BANK_C):
        for i in range(t, IN_TILE * IN_TILE, TILE * TILE):
            r = row0 + i // IN_TILE
            s = col0 + i % IN_TILE
            tile[i // IN_TILE, i % IN_TILE] = x[n, c, r, s] if r < h and s < wd else float32(0.0)
        cuda.syncthreads()
        if inside:
            for k in range(BANK_K):
                for p in range(BANK_FS):
                    for q in range(BANK_FS):
                        acc[k] += tile[ty + p, tx + q] * bank[k, c, p, q]
        # no barrier: a fast thread loads channel c + 1 over the tile a neighbour still reads
    if inside:
        for k in range(BANK_K):
            y[n, k, row, col] = acc[k]


# ------------------------------------------------------------------ im2col


@cuda.jit
def im2col_tap_transposed(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + q * fs + p, j] = x[n, c, h + p, w + q]  # row of tap (q, p)


@cuda.jit
def im2col_channel_minor(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    c_in = x.shape[1]
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                # channel-minor rows: a valid layout, but not the one w.reshape(K, -1) multiplies
                xu[n, (p * fs + q) * c_in + c, j] = x[n, c, h + p, w + q]


@cuda.jit
def im2col_column_transposed(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    ho = x.shape[2] - fs + 1
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + p * fs + q, w * ho + h] = x[n, c, h + p, w + q]  # column-major pixels


@cuda.jit
def im2col_no_guard(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    h = j // wo
    w = j % wo
    for p in range(fs):
        for q in range(fs):
            xu[n, c * fs * fs + p * fs + q, j] = x[n, c, h + p, w + q]


@cuda.jit
def im2col_first_image(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + p * fs + q, j] = x[0, c, h + p, w + q]  # every image reads image 0


@cuda.jit
def im2col_wrong_width(xu, x, fs):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3]  # the input's width, not the output's: columns decode to the wrong pixels
    if j < xu.shape[2]:
        h = j // wo
        w = j % wo
        for p in range(fs):
            for q in range(fs):
                xu[n, c * fs * fs + p * fs + q, j] = x[n, c, h + p, w + q]


@cuda.jit
def im2col_per_element(xu, x, fs):
    # one thread per (row, column) entry of channel c's rows: more threads, one load and store each
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    if j < xu.shape[2]:
        for tap in range(fs * fs):
            p = tap // fs
            q = tap - p * fs
            xu[n, c * fs * fs + tap, j] = x[n, c, j // wo + p, j % wo + q]


@cuda.jit
def im2col_grid_stride(xu, x, fs):
    c = cuda.blockIdx.y
    n = cuda.blockIdx.z
    wo = x.shape[3] - fs + 1
    base = c * fs * fs
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while j < xu.shape[2]:  # a grid-stride loop: correct for any number of blocks
        h = j // wo
        w = j - h * wo
        for q in range(fs):
            for p in range(fs):
                xu[n, base + p * fs + q, j] = x[n, c, h + p, w + q]
        j += cuda.gridDim.x * cuda.blockDim.x


# ------------------------------------------------------------------ conv_gemm (worked)


@cuda.jit
def gemm_no_bias(y, wm, xu, b):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = cuda.blockIdx.z
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    rows, inner, cols = wm.shape[0], wm.shape[1], xu.shape[2]
    m_tile = cuda.shared.array((TILE, TILE), float32)
    n_tile = cuda.shared.array((TILE, TILE), float32)
    acc = float32(0.0)
    for t in range((inner + TILE - 1) // TILE):
        kk = t * TILE + tx
        m_tile[ty, tx] = wm[row, kk] if row < rows and kk < inner else float32(0.0)
        kk = t * TILE + ty
        n_tile[ty, tx] = xu[n, kk, col] if kk < inner and col < cols else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE):
            acc += m_tile[ty, i] * n_tile[i, tx]
        cuda.syncthreads()
    if row < rows and col < cols:
        y[n, row, col] = acc  # the bias is forgotten


# ------------------------------------------------------------------ maxpool and dgrad (worked)


@cuda.jit
def maxpool_not_strided(y, x):
    col, row = cuda.grid(2)
    nc = cuda.blockIdx.z
    n = nc // x.shape[1]
    c = nc % x.shape[1]
    if row < y.shape[2] and col < y.shape[3]:
        m = x[n, c, row, col]
        for p in range(2):
            for q in range(2):
                m = max(m, x[n, c, row + p, col + q])  # overlapping windows: stride 1, not POOL
        y[n, c, row, col] = m


@cuda.jit
def maxpool_starts_at_zero(y, x):
    col, row = cuda.grid(2)
    nc = cuda.blockIdx.z
    n = nc // x.shape[1]
    c = nc % x.shape[1]
    if row < y.shape[2] and col < y.shape[3]:
        m = float32(0.0)  # the inputs are negative too: a window of negatives reports 0
        for p in range(2):
            for q in range(2):
                m = max(m, x[n, c, row * 2 + p, col * 2 + q])
        y[n, c, row, col] = m


@cuda.jit
def dgrad_no_edge_test(dx, dy, w):
    col, row = cuda.grid(2)
    c_in = dx.shape[1]
    n = cuda.blockIdx.z // c_in
    c = cuda.blockIdx.z % c_in
    if row < dx.shape[2] and col < dx.shape[3]:
        acc = float32(0.0)
        for k in range(dy.shape[1]):
            for p in range(w.shape[2]):
                for q in range(w.shape[3]):
                    acc += dy[n, k, row - p, col - q] * w[k, c, p, q]  # row - p < 0 at the top edge
        dx[n, c, row, col] = acc


# ------------------------------------------------------------------ wgrad with atomics


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


# ------------------------------------------------------------------ wgrad as a reduction


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
        dw[k, c, p, q] = 0.0
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


MUTANTS = {
    "ch16_conv_forward": [
        ("forward_no_bias", forward_no_bias, *WRONG),
        ("forward_no_guard", forward_no_guard, *OOB),
        ("forward_window_transposed", forward_window_transposed, *WRONG),
        ("forward_bias_per_channel", forward_bias_per_channel, *WRONG),
        ("forward_flipped_filter", forward_flipped_filter, *WRONG),
    ],
    "ch16_conv_tiled": [
        ("tiled_no_second_barrier", tiled_no_second_barrier, *RACE),
    ],
    "ch16_im2col": [
        ("im2col_tap_transposed", im2col_tap_transposed, *WRONG),
        ("im2col_channel_minor", im2col_channel_minor, *WRONG),
        ("im2col_column_transposed", im2col_column_transposed, *WRONG),
        ("im2col_no_guard", im2col_no_guard, *OOB),
        ("im2col_first_image", im2col_first_image, *WRONG),
        ("im2col_wrong_width", im2col_wrong_width, *OOB),
    ],
    "ch16_conv_gemm": [
        ("gemm_no_bias", gemm_no_bias, *WRONG),
    ],
    "ch16_maxpool": [
        ("maxpool_not_strided", maxpool_not_strided, *WRONG),
        ("maxpool_starts_at_zero", maxpool_starts_at_zero, *WRONG),
    ],
    "ch16_conv_dgrad": [
        ("dgrad_no_edge_test", dgrad_no_edge_test, *OOB),
    ],
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
    ],
}
VARIANTS = {
    "ch16_conv_forward": [
        ("forward_z_filter_major", forward_z_filter_major),
        ("forward_flat_weights", forward_flat_weights),
    ],
    "ch16_im2col": [
        ("im2col_per_element", im2col_per_element),
        ("im2col_grid_stride", im2col_grid_stride),
    ],
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
