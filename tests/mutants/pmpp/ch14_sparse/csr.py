"""Mutants of puzzles/pmpp/ch14_sparse/csr.py (SpMV, CSR); format: mutants/common.py.

Every case list starts with the 2-D Poisson matrix (rows of 3 to 5 entries, none empty), so a mistake
that shows on it fails the same way on every seed.
"""

import numba
from numba import cuda

from mutants.common import OOB, RACE, UNINIT, WRONG, over
from puzzles.pmpp.ch14_sparse import FULL_MASK, csr, spmv_csr_lanes


@cuda.jit
def csr_reads_past_row_ptr(y, row_ptr, col, val, x, n_rows):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for k in range(row_ptr[r], row_ptr[r + 1] + 1):  # <= the next row's start
            s += val[k] * x[col[k]]
        y[r] = s


@cuda.jit
def csr_no_guard(y, row_ptr, col, val, x, n_rows):
    r = cuda.grid(1)
    s = numba.float32(0)
    for k in range(row_ptr[r], row_ptr[r + 1]):
        s += val[k] * x[col[k]]
    y[r] = s


@cuda.jit
def csr_accumulates_into_y(y, row_ptr, col, val, x, n_rows):
    r = cuda.grid(1)
    if r < n_rows:
        for k in range(row_ptr[r], row_ptr[r + 1]):
            y[r] += val[k] * x[col[k]]  # y is not zero to begin with


@cuda.jit
def csr_while_loop(y, row_ptr, col, val, x, n_rows):
    r = cuda.grid(1)
    if r < n_rows:
        k = row_ptr[r]
        end = row_ptr[r + 1]
        s = numba.float32(0)
        while k < end:
            s += x[col[k]] * val[k]
            k += 1
        y[r] = s


@cuda.jit
def vec_reads_past_row_ptr(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x % 32
    warp = cuda.grid(1) // 32
    for r in range(warp, n_rows, cuda.gridsize(1) // 32):
        s = numba.float32(0)
        for k in range(row_ptr[r] + lane, row_ptr[r + 1] + 1, 32):
            s += val[k] * x[col[k]]
        offset = 16
        while offset > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        if lane == 0:
            y[r] = s


@cuda.jit
def vec_no_reduction(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x % 32
    warp = cuda.grid(1) // 32
    for r in range(warp, n_rows, cuda.gridsize(1) // 32):
        s = numba.float32(0)
        for k in range(row_ptr[r] + lane, row_ptr[r + 1], 32):
            s += val[k] * x[col[k]]
        if lane == 0:
            y[r] = s  # lane 0's share only


@cuda.jit
def vec_every_lane_writes(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x % 32
    warp = cuda.grid(1) // 32
    for r in range(warp, n_rows, cuda.gridsize(1) // 32):
        s = numba.float32(0)
        for k in range(row_ptr[r] + lane, row_ptr[r + 1], 32):
            s += val[k] * x[col[k]]
        offset = 16
        while offset > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        y[r] = s  # 32 lanes, 32 different partial sums


@cuda.jit
def vec_half_tree(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x % 32
    warp = cuda.grid(1) // 32
    for r in range(warp, n_rows, cuda.gridsize(1) // 32):
        s = numba.float32(0)
        for k in range(row_ptr[r] + lane, row_ptr[r + 1], 32):
            s += val[k] * x[col[k]]
        offset = 8  # lanes 16..31 never reach lane 0
        while offset > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        if lane == 0:
            y[r] = s


@cuda.jit
def vec_warp_in_block(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32  # every block takes the same rows
    for r in range(warp, n_rows, cuda.blockDim.x // 32):
        s = numba.float32(0)
        for k in range(row_ptr[r] + lane, row_ptr[r + 1], 32):
            s += val[k] * x[col[k]]
        offset = 16
        while offset > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        if lane == 0:
            y[r] = s


@cuda.jit
def vec_whole_row_per_lane(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x % 32
    warp = cuda.grid(1) // 32
    for r in range(warp, n_rows, cuda.gridsize(1) // 32):
        s = numba.float32(0)
        for k in range(row_ptr[r], row_ptr[r + 1]):  # every lane adds the whole row
            s += val[k] * x[col[k]]
        offset = 16
        while offset > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        if lane == 0:
            y[r] = s


@cuda.jit
def vec_xor_butterfly(y, row_ptr, col, val, x, n_rows):
    lane = cuda.laneid
    warp = cuda.grid(1) // 32
    for r in range(warp, n_rows, cuda.gridsize(1) // 32):
        s = numba.float32(0)
        for k in range(row_ptr[r] + lane, row_ptr[r + 1], 32):
            s += val[k] * x[col[k]]
        for offset in (1, 2, 4, 8, 16):  # every lane ends with the total
            s += cuda.shfl_xor_sync(FULL_MASK, s, offset)
        if lane == 31:
            y[r] = s


@cuda.jit
def vec_start_end_in_registers(y, row_ptr, col, val, x, n_rows):
    lane = cuda.threadIdx.x & 31
    n_warps = cuda.gridsize(1) >> 5
    r = cuda.grid(1) >> 5
    while r < n_rows:
        start = row_ptr[r]
        end = row_ptr[r + 1]
        s = numba.float32(0)
        k = start + lane
        while k < end:
            s += val[k] * x[col[k]]
            k += 32
        s += cuda.shfl_down_sync(FULL_MASK, s, 16)
        s += cuda.shfl_down_sync(FULL_MASK, s, 8)
        s += cuda.shfl_down_sync(FULL_MASK, s, 4)
        s += cuda.shfl_down_sync(FULL_MASK, s, 2)
        s += cuda.shfl_down_sync(FULL_MASK, s, 1)
        if lane == 0:
            y[r] = s
        r += n_warps


@cuda.jit
def vec_contiguous_chunks(y, row_ptr, col, val, x, n_rows):
    # right sums, wrong technique: lane l walks its own contiguous chunk of the row (uncoalesced)
    lane = cuda.threadIdx.x % 32
    warp = cuda.grid(1) // 32
    for r in range(warp, n_rows, cuda.gridsize(1) // 32):
        start = row_ptr[r]
        end = row_ptr[r + 1]
        per = (end - start + 31) // 32
        s = numba.float32(0)
        for k in range(start + lane * per, min(start + (lane + 1) * per, end)):
            s += val[k] * x[col[k]]
        offset = 16
        while offset > 0:
            s += cuda.shfl_down_sync(FULL_MASK, s, offset)
            offset //= 2
        if lane == 0:
            y[r] = s


MUTANTS = {
    "ch14_spmv_csr": [
        ("reads_past_row_ptr", csr_reads_past_row_ptr, *OOB),
        ("no_guard", csr_no_guard, *OOB),
        ("accumulates_into_y", csr_accumulates_into_y, *UNINIT),
    ],
    "ch14_spmv_csr_vector": [
        ("reads_past_row_ptr", vec_reads_past_row_ptr, *OOB),
        ("no_reduction", vec_no_reduction, *WRONG),
        ("every_lane_writes", vec_every_lane_writes, *RACE),
        ("half_tree", vec_half_tree, *WRONG),
        ("warp_in_block", vec_warp_in_block, *RACE),
        ("whole_row_per_lane", vec_whole_row_per_lane, *WRONG),
        ("contiguous_chunks", vec_contiguous_chunks, *over("lanes_interleaved")),
    ],
}

VARIANTS = {
    "ch14_spmv_csr": [("while_loop", csr_while_loop)],
    "ch14_spmv_csr_vector": [
        ("xor_butterfly", vec_xor_butterfly),
        ("start_end_in_registers", vec_start_end_in_registers),
        ("four_lanes_per_row", spmv_csr_lanes),
    ],
}

SEEDS = {p.name: (0, 1, 2) for p in csr.PUZZLES}
