"""GPU-only CSR kernels for the benchmark's CSR search (no puzzle): the same CSR arrays, fewer
instructions per nonzero than the warp-per-row kernel.

Why the warp-per-row kernel loses to cuSPARSE on Poisson (5 nonzeros a row): a warp spends its row
set-up, its loop and a 5-step shuffle tree on 5 nonzeros, so 27 of 32 lanes idle and the kernel is
bound by issued instructions, not by DRAM. These kernels spend a warp's instructions on 32 nonzeros:
    spmv_csr_scalar32  a thread per row, 32-bit unsigned indices (Numba's int64 index arithmetic and
                       its negative-index wrap cost several integer instructions per load)
    spmv_csr_subwarp   LANES lanes per row, exactly one row per lane group (no grid-stride loop),
                       log2(LANES) shuffles, 32-bit unsigned indices
    spmv_csr_stream    CSR-Stream (Greathouse and Daga's CSR-Adaptive): a block's STREAM_ROWS rows
                       have their products val * x[col] computed by consecutive threads on
                       consecutive nonzeros (coalesced, every lane busy) into shared memory, then each
                       thread adds up its own row there; a block whose nonzeros overflow the buffer
                       falls back to a thread per row, so any CSR matrix is answered.
Indices are 32-bit: fine while nnz and the row count are below 2^31 (int32 row_ptr already says so).
"""

from __future__ import annotations

from numba import cuda, float32, uint32

FULL_MASK = 0xFFFFFFFF
LANES = 4  # spmv_csr_subwarp: lanes per row (the benchmark searches 2, 4, 8)
STREAM_ROWS = 256  # spmv_csr_stream: rows per block = threads per block
STREAM_BUF = 8 * 256  # spmv_csr_stream: products buffered in shared memory per block


@cuda.jit
def spmv_csr_scalar32(y, row_ptr, col, val, x, n_rows):
    r = uint32(uint32(cuda.blockIdx.x) * uint32(cuda.blockDim.x) + uint32(cuda.threadIdx.x))
    if r < n_rows:
        s = float32(0)
        k = uint32(row_ptr[r])
        end = uint32(row_ptr[uint32(r + uint32(1))])
        while k < end:
            s += val[k] * x[uint32(col[k])]
            k = uint32(k + uint32(1))
        y[r] = s


@cuda.jit
def spmv_csr_subwarp(y, row_ptr, col, val, x, n_rows):
    t = uint32(uint32(cuda.blockIdx.x) * uint32(cuda.blockDim.x) + uint32(cuda.threadIdx.x))
    r = uint32(t // uint32(LANES))  # a power of two: a shift
    sub = uint32(t % uint32(LANES))
    s = float32(0)
    if r < n_rows:
        k = uint32(uint32(row_ptr[r]) + sub)
        end = uint32(row_ptr[uint32(r + uint32(1))])
        while k < end:
            s += val[k] * x[uint32(col[k])]
            k = uint32(k + uint32(LANES))
    # every lane of the warp gets here (rows past the end add zeros): the shuffles see all 32
    offset = LANES // 2
    while offset > 0:  # a constant trip count: unrolled
        s += cuda.shfl_down_sync(FULL_MASK, s, offset)  # stays within the LANES-lane group
        offset //= 2
    if sub == 0 and r < n_rows:
        y[r] = s


@cuda.jit
def spmv_csr_stream(y, row_ptr, col, val, x, n_rows):
    buf = cuda.shared.array(STREAM_BUF, float32)
    tid = uint32(cuda.threadIdx.x)
    r0 = uint32(uint32(cuda.blockIdx.x) * uint32(STREAM_ROWS))
    r_end = min(uint32(r0 + uint32(STREAM_ROWS)), uint32(n_rows))
    start = uint32(row_ptr[r0])
    stop = uint32(row_ptr[r_end])
    r = uint32(r0 + tid)
    if stop - start <= uint32(STREAM_BUF):  # the same answer for the whole block: barrier is safe
        k = uint32(start + tid)
        while k < stop:  # consecutive threads, consecutive nonzeros
            buf[uint32(k - start)] = val[k] * x[uint32(col[k])]
            k = uint32(k + uint32(STREAM_ROWS))
        cuda.syncthreads()
        if r < r_end:
            s = float32(0)
            a = uint32(uint32(row_ptr[r]) - start)
            b = uint32(uint32(row_ptr[uint32(r + uint32(1))]) - start)
            while a < b:
                s += buf[a]
                a = uint32(a + uint32(1))
            y[r] = s
    elif r < r_end:  # long rows in this block: a thread per row
        s = float32(0)
        k = uint32(row_ptr[r])
        end = uint32(row_ptr[uint32(r + uint32(1))])
        while k < end:
            s += val[k] * x[uint32(col[k])]
            k = uint32(k + uint32(1))
        y[r] = s
