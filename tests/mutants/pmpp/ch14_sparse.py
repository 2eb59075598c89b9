"""Mutants of puzzles/pmpp/ch14_sparse.py (SpMV); format: mutants/common.py.

Every case list starts with the 2-D Poisson matrix (rows of 3 to 5 entries, none empty), so a mistake
that shows on it fails the same way on every seed.
"""

import numba
from numba import cuda

from mutants.common import OOB, RACE, UNINIT, WRONG
from puzzles.pmpp import ch14_sparse as ch14
from puzzles.pmpp.ch14_sparse import FULL_MASK, spmv_csr_lanes

# ---------------------------------------------------------------- COO


@cuda.jit
def coo_no_atomic(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i < nnz:
        y[row[i]] += val[i] * x[col[i]]  # two nonzeros of one row: lost update


@cuda.jit
def coo_guard_le(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i <= nnz:
        cuda.atomic.add(y, row[i], val[i] * x[col[i]])


@cuda.jit
def coo_x_by_row(y, row, col, val, x, nnz, n_rows):
    i = cuda.grid(1)
    if i < nnz:
        cuda.atomic.add(y, row[i], val[i] * x[row[i]])  # x is indexed by the column


@cuda.jit
def coo_grid_stride(y, row, col, val, x, nnz, n_rows):
    for i in range(cuda.grid(1), nnz, cuda.gridsize(1)):
        cuda.atomic.add(y, row[i], x[col[i]] * val[i])


# ---------------------------------------------------------------- CSR, a thread per row


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


# ---------------------------------------------------------------- CSR, a warp per row


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


# ---------------------------------------------------------------- ELL


@cuda.jit
def ell_row_major(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(row_len[r]):
            i = r * width + t  # the layout is column-major
            s += ell_val[i] * x[ell_col[i]]
        y[r] = s


@cuda.jit
def ell_one_slot_too_many(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(row_len[r] + 1):
            i = t * n_rows + r
            s += ell_val[i] * x[ell_col[i]]
        y[r] = s


@cuda.jit
def ell_no_guard(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    s = numba.float32(0)
    for t in range(row_len[r]):
        i = t * n_rows + r
        s += ell_val[i] * x[ell_col[i]]
    y[r] = s


@cuda.jit
def ell_stride_width(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(row_len[r]):
            i = t * width + r  # stride between slots is n_rows
            s += ell_val[i] * x[ell_col[i]]
        y[r] = s


@cuda.jit
def ell_accumulates_into_y(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        for t in range(row_len[r]):
            i = t * n_rows + r
            y[r] += ell_val[i] * x[ell_col[i]]


@cuda.jit
def ell_sum_reset_in_loop(y, row_len, ell_col, ell_val, x, n_rows, width):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(row_len[r]):
            i = t * n_rows + r
            s = ell_val[i] * x[ell_col[i]]  # = instead of +=
        y[r] = s


@cuda.jit
def ell_all_slots(y, row_len, ell_col, ell_val, x, n_rows, width):
    # the book's first ELL kernel: every slot, padding included (padding adds 0 * x[0])
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for t in range(width):
            s += ell_val[t * n_rows + r] * x[ell_col[t * n_rows + r]]
        y[r] = s


@cuda.jit
def ell_grid_stride(y, row_len, ell_col, ell_val, x, n_rows, width):
    for r in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
        s = numba.float32(0)
        i = r
        for _ in range(row_len[r]):
            s += ell_val[i] * x[ell_col[i]]
            i += n_rows
        y[r] = s


# ---------------------------------------------------------------- hybrid


@cuda.jit
def hyb_coo_no_atomic(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)
    if i < coo_nnz:
        y[coo_row[i]] += coo_val[i] * x[coo_col[i]]


@cuda.jit
def hyb_ell_plain_store(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        y[i] = s  # the overflow's atomics race with it
    if i < coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])


@cuda.jit
def hyb_forgets_coo(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)


@cuda.jit
def hyb_coo_guard_le(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)
    if i <= coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])


@cuda.jit
def hyb_ell_row_major(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    width = ell_col.size // n_rows
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = i * width + t
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)
    if i < coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])


@cuda.jit
def hyb_else_branch(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    if i < n_rows:
        s = numba.float32(0)
        for t in range(row_len[i]):
            k = t * n_rows + i
            s += ell_val[k] * x[ell_col[k]]
        cuda.atomic.add(y, i, s)
    elif i < coo_nnz:  # threads below n_rows skip their COO entry
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])


@cuda.jit
def hyb_split_grid(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    # a grid-stride loop over n_rows + coo_nnz work items: ELL rows first, then COO entries
    for w in range(cuda.grid(1), n_rows + coo_nnz, cuda.gridsize(1)):
        if w < n_rows:
            s = numba.float32(0)
            for t in range(row_len[w]):
                s += ell_val[t * n_rows + w] * x[ell_col[t * n_rows + w]]
            cuda.atomic.add(y, w, s)
        else:
            j = w - n_rows
            cuda.atomic.add(y, coo_row[j], coo_val[j] * x[coo_col[j]])


@cuda.jit
def hyb_all_slots(y, row_len, ell_col, ell_val, coo_row, coo_col, coo_val, x, n_rows, coo_nnz):
    i = cuda.grid(1)
    width = ell_col.size // n_rows
    if i < coo_nnz:
        cuda.atomic.add(y, coo_row[i], coo_val[i] * x[coo_col[i]])
    if i < n_rows:
        s = numba.float32(0)
        for t in range(width):  # padding slots add 0 * x[0]
            s += ell_val[t * n_rows + i] * x[ell_col[t * n_rows + i]]
        cuda.atomic.add(y, i, s)


# ---------------------------------------------------------------- JDS


@cuda.jit
def jds_unpermuted_store(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            start = jd_ptr[d]
            if r >= jd_ptr[d + 1] - start:
                break
            s += jd_val[start + r] * x[jd_col[start + r]]
        y[r] = s  # r is a sorted position, not a row


@cuda.jit
def jds_no_length_check(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            s += jd_val[jd_ptr[d] + r] * x[jd_col[jd_ptr[d] + r]]
        y[perm[r]] = s


@cuda.jit
def jds_length_off_by_one(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            start = jd_ptr[d]
            if r > jd_ptr[d + 1] - start:
                break
            s += jd_val[start + r] * x[jd_col[start + r]]
        y[perm[r]] = s


@cuda.jit
def jds_no_guard(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    s = numba.float32(0)
    for d in range(n_diags):
        start = jd_ptr[d]
        if r >= jd_ptr[d + 1] - start:
            break
        s += jd_val[start + r] * x[jd_col[start + r]]
    y[perm[r]] = s


@cuda.jit
def jds_store_in_loop(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            start = jd_ptr[d]
            if r >= jd_ptr[d + 1] - start:
                break
            s += jd_val[start + r] * x[jd_col[start + r]]
            y[perm[r]] = s  # an empty row is never written


@cuda.jit
def jds_ell_indexing(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        for d in range(n_diags):
            if r >= jd_ptr[d + 1] - jd_ptr[d]:
                break
            s += jd_val[d * n_rows + r] * x[jd_col[d * n_rows + r]]  # diagonals are not n_rows long
        y[perm[r]] = s


@cuda.jit
def jds_while_loop(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    r = cuda.grid(1)
    if r < n_rows:
        s = numba.float32(0)
        d = 0
        while d < n_diags and jd_ptr[d] + r < jd_ptr[d + 1]:
            k = jd_ptr[d] + r
            s += x[jd_col[k]] * jd_val[k]
            d += 1
        y[perm[r]] = s


@cuda.jit
def jds_grid_stride(y, perm, jd_ptr, jd_col, jd_val, x, n_rows, n_diags):
    for r in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
        s = numba.float32(0)
        for d in range(n_diags):
            k = jd_ptr[d] + r
            if k < jd_ptr[d + 1]:
                s += jd_val[k] * x[jd_col[k]]
        y[perm[r]] = s


MUTANTS = {
    "ch14_spmv_coo": [
        ("no_atomic", coo_no_atomic, *RACE),
        ("guard_le", coo_guard_le, *OOB),
        ("x_by_row", coo_x_by_row, *WRONG),
    ],
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
    ],
    "ch14_spmv_ell": [
        ("row_major", ell_row_major, *WRONG),
        ("one_slot_too_many", ell_one_slot_too_many, *OOB),
        ("no_guard", ell_no_guard, *OOB),
        ("stride_width", ell_stride_width, *WRONG),
        ("accumulates_into_y", ell_accumulates_into_y, *UNINIT),
        ("sum_reset_in_loop", ell_sum_reset_in_loop, *WRONG),
    ],
    "ch14_spmv_hybrid": [
        ("coo_no_atomic", hyb_coo_no_atomic, *RACE),
        ("ell_plain_store", hyb_ell_plain_store, *RACE),
        ("forgets_coo", hyb_forgets_coo, *WRONG),
        ("coo_guard_le", hyb_coo_guard_le, *OOB),
        ("ell_row_major", hyb_ell_row_major, *WRONG),
        ("else_branch", hyb_else_branch, *WRONG),
    ],
    "ch14_spmv_jds": [
        ("unpermuted_store", jds_unpermuted_store, *WRONG),
        ("no_length_check", jds_no_length_check, *OOB),
        ("length_off_by_one", jds_length_off_by_one, *OOB),
        ("no_guard", jds_no_guard, *OOB),
        ("store_in_loop", jds_store_in_loop, *WRONG),
        ("ell_indexing", jds_ell_indexing, *OOB),
    ],
}

VARIANTS = {
    "ch14_spmv_coo": [("grid_stride", coo_grid_stride)],
    "ch14_spmv_csr": [("while_loop", csr_while_loop)],
    "ch14_spmv_csr_vector": [
        ("xor_butterfly", vec_xor_butterfly),
        ("start_end_in_registers", vec_start_end_in_registers),
        ("four_lanes_per_row", spmv_csr_lanes),
    ],
    "ch14_spmv_ell": [("all_slots", ell_all_slots), ("grid_stride", ell_grid_stride)],
    "ch14_spmv_hybrid": [("split_grid", hyb_split_grid), ("all_slots", hyb_all_slots)],
    "ch14_spmv_jds": [("while_loop", jds_while_loop), ("grid_stride", jds_grid_stride)],
}

# every puzzle of the chapter, references included, on three seeds (as its chapter tests ran them)
SEEDS = {p.name: (0, 1, 2) for p in ch14.PUZZLES}
