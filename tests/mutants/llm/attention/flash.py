"""Known-wrong and known-right kernels for puzzles/llm/attention/flash.py (row and FlashAttention-style).

MUTANTS[puzzle] = [(name, kernel, expected exception, detail)]; VARIANTS[puzzle] = [(name, kernel)].
Format: mutants/common.py. Every mutant is a mistake a learner makes writing attention.
"""

import math

import numba
import numpy as np
from numba import cuda

from mutants.common import BARRIER, NO_BARRIER, OOB, RACE, WRONG, M, over
from puzzles.llm.attention import flash as la
from puzzles.llm.attention.common import BC, BR, MAX_D, NEG_INF


def _row_kernel(rescale_acc=True, rescale_l=True, keys_off=1, scale=True, subtract_max=True, update_max=True):
    @cuda.jit
    def kernel(out, q, k, v, causal):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        b = cuda.blockIdx.y
        T = q.shape[1]
        d = q.shape[2]
        acc = cuda.local.array(MAX_D, numba.float32)
        if i < T:
            sc = np.float32(1.0) / math.sqrt(np.float32(d)) if scale else np.float32(1.0)
            for c in range(d):
                acc[c] = 0.0
            m = NEG_INF
            lsum = np.float32(0.0)
            last = i + keys_off if causal else T
            for j in range(last):
                x = np.float32(0.0)
                for c in range(d):
                    x += q[b, i, c] * k[b, j, c]
                x *= sc
                m_new = max(m, x) if subtract_max else np.float32(0.0)
                alpha = math.exp(m - m_new) if subtract_max else 1.0
                p = math.exp(x - m_new)
                lsum = (lsum * alpha if rescale_l else lsum) + p
                for c in range(d):
                    acc[c] = (acc[c] * alpha if rescale_acc else acc[c]) + p * v[b, j, c]
                if update_max:
                    m = m_new
            for c in range(d):
                out[b, i, c] = acc[c] / lsum

    return kernel


row_no_rescale = _row_kernel(rescale_acc=False)


row_sum_not_rescaled = _row_kernel(rescale_l=False)


row_causal_off_by_one = _row_kernel(keys_off=0)


row_no_scale = _row_kernel(scale=False)


row_no_max_subtraction = _row_kernel(subtract_max=False)


row_max_never_updated = _row_kernel(update_max=False)


for _name in (
    "row_no_rescale",
    "row_sum_not_rescaled",
    "row_causal_off_by_one",
    "row_no_scale",
    "row_no_max_subtraction",
    "row_max_never_updated",
):
    globals()[_name].__name__ = _name


@cuda.jit
def row_two_pass(out, q, k, v, causal):
    # pass 1 finds the maximum, pass 2 sums with it: no rescaling, but K is read twice
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    acc = cuda.local.array(MAX_D, numba.float32)
    if i < T:
        last = i + 1 if causal else T
        r = np.float32(1.0) / math.sqrt(np.float32(d))
        m = NEG_INF
        for j in range(last):
            x = np.float32(0.0)
            for c in range(d):
                x += q[b, i, c] * k[b, j, c]
            m = max(m, x * r)
        for c in range(d):
            acc[c] = 0.0
        lsum = np.float32(0.0)
        for j in range(last):
            x = np.float32(0.0)
            for c in range(d):
                x += q[b, i, c] * k[b, j, c]
            p = math.exp(x * r - m)
            lsum += p
            for c in range(d):
                acc[c] += p * v[b, j, c]
        for c in range(d):
            out[b, i, c] = acc[c] / lsum


@cuda.jit
def row_branchy(out, q, k, v, causal):
    # rescale only when the maximum actually grows; the scale folded into a local copy of q
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    qs = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    if i >= T:
        return
    for c in range(d):
        qs[c] = q[b, i, c] / math.sqrt(np.float32(d))
        acc[c] = 0.0
    m = NEG_INF
    lsum = np.float32(0.0)
    j = 0
    while j < T and (causal == 0 or j <= i):
        x = np.float32(0.0)
        for c in range(d):
            x += qs[c] * k[b, j, c]
        if x > m:
            alpha = math.exp(m - x)
            lsum *= alpha
            for c in range(d):
                acc[c] *= alpha
            m = x
        p = math.exp(x - m)
        lsum += p
        for c in range(d):
            acc[c] += p * v[b, j, c]
        j += 1
    for c in range(d):
        out[b, i, c] = acc[c] / lsum


def _flash_kernel(
    rescale=True,
    barrier_before=True,
    barrier_after=True,
    causal_off=1,
    scale=True,
    guard_load=True,
    barrier_in_if=False,
):
    @cuda.jit
    def kernel(out, q, k, v, causal):
        kt = cuda.shared.array((BC, MAX_D), numba.float32)
        vt = cuda.shared.array((BC, MAX_D), numba.float32)
        qi = cuda.local.array(MAX_D, numba.float32)
        acc = cuda.local.array(MAX_D, numba.float32)
        sc = cuda.local.array(BC, numba.float32)
        t = cuda.threadIdx.x
        q0 = cuda.blockIdx.x * BR
        i = q0 + t
        b = cuda.blockIdx.y
        T = q.shape[1]
        d = q.shape[2]
        scl = np.float32(1.0) / math.sqrt(np.float32(d)) if scale else np.float32(1.0)
        if i < T:
            for c in range(d):
                qi[c] = q[b, i, c] * scl
                acc[c] = 0.0
        m = NEG_INF
        lsum = np.float32(0.0)
        last = min(T, q0 + BR) if causal else T
        for k0 in range(0, last, BC):
            if barrier_before:
                cuda.syncthreads()
            for e in range(t, BC * d, BR):
                r = e // d
                c = e % d
                if k0 + r < T or not guard_load:
                    kt[r, c] = k[b, k0 + r, c]
                    vt[r, c] = v[b, k0 + r, c]
            if barrier_after and not barrier_in_if:
                cuda.syncthreads()
            if i < T:
                if barrier_in_if:
                    cuda.syncthreads()
                hi = min(BC, T - k0)
                if causal:
                    hi = min(hi, i + causal_off - k0)
                m_tile = NEG_INF
                for r in range(hi):
                    x = np.float32(0.0)
                    for c in range(d):
                        x += qi[c] * kt[r, c]
                    sc[r] = x
                    m_tile = max(m_tile, x)
                if hi > 0:
                    m_new = max(m, m_tile)
                    alpha = math.exp(m - m_new)
                    lsum *= alpha
                    if rescale:
                        for c in range(d):
                            acc[c] *= alpha
                    for r in range(hi):
                        p = math.exp(sc[r] - m_new)
                        lsum += p
                        for c in range(d):
                            acc[c] += p * vt[r, c]
                    m = m_new
        if i < T:
            for c in range(d):
                out[b, i, c] = acc[c] / lsum

    return kernel


flash_no_rescale = _flash_kernel(rescale=False)


flash_no_barrier_between_tiles = _flash_kernel(barrier_before=False)


flash_no_barrier_after_load = _flash_kernel(barrier_after=False)


flash_causal_off_by_one = _flash_kernel(causal_off=0)


flash_no_scale = _flash_kernel(scale=False)


flash_tile_past_end = _flash_kernel(guard_load=False)


flash_barrier_in_if = _flash_kernel(barrier_in_if=True)


for _name in (
    "flash_no_rescale",
    "flash_no_barrier_between_tiles",
    "flash_no_barrier_after_load",
    "flash_causal_off_by_one",
    "flash_no_scale",
    "flash_tile_past_end",
    "flash_barrier_in_if",
):
    globals()[_name].__name__ = _name


@cuda.jit
def flash_per_key(out, q, k, v, causal):
    # the online softmax key by key inside the tile (no tile maximum)
    kt = cuda.shared.array((BC, MAX_D), numba.float32)
    vt = cuda.shared.array((BC, MAX_D), numba.float32)
    qi = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * BR + t
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    if i < T:
        for c in range(d):
            qi[c] = q[b, i, c] / math.sqrt(np.float32(d))
            acc[c] = 0.0
    m = NEG_INF
    lsum = np.float32(0.0)
    ntiles = (T + BC - 1) // BC
    if causal:
        ntiles = (min(T, cuda.blockIdx.x * BR + BR) + BC - 1) // BC
    for tile in range(ntiles):
        k0 = tile * BC
        cuda.syncthreads()
        for e in range(t, BC * d, BR):
            if k0 + e // d < T:
                kt[e // d, e % d] = k[b, k0 + e // d, e % d]
                vt[e // d, e % d] = v[b, k0 + e // d, e % d]
        cuda.syncthreads()
        for r in range(BC):
            j = k0 + r
            if i < T and j < T and (causal == 0 or j <= i):
                x = np.float32(0.0)
                for c in range(d):
                    x += qi[c] * kt[r, c]
                m_new = max(m, x)
                alpha = math.exp(m - m_new)
                p = math.exp(x - m_new)
                lsum = lsum * alpha + p
                for c in range(d):
                    acc[c] = acc[c] * alpha + p * vt[r, c]
                m = m_new
    if i < T:
        for c in range(d):
            out[b, i, c] = acc[c] / lsum


@cuda.jit
def flash_masked_scores(out, q, k, v, causal):
    # hidden keys get a score of -inf (weight exactly 0) instead of a shorter loop
    kt = cuda.shared.array((BC, MAX_D), numba.float32)
    vt = cuda.shared.array((BC, MAX_D), numba.float32)
    qi = cuda.local.array(MAX_D, numba.float32)
    acc = cuda.local.array(MAX_D, numba.float32)
    sc = cuda.local.array(BC, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * BR + t
    b = cuda.blockIdx.y
    T = q.shape[1]
    d = q.shape[2]
    r_sqrt = np.float32(1.0) / math.sqrt(np.float32(d))
    live = i < T
    if live:
        for c in range(d):
            qi[c] = q[b, i, c] * r_sqrt
            acc[c] = 0.0
    m = NEG_INF
    lsum = np.float32(0.0)
    end = T
    if causal:
        end = min(T, cuda.blockIdx.x * BR + BR)
    k0 = 0
    while k0 < end:
        cuda.syncthreads()
        for e in range(t, BC * d, BR):
            r = e // d
            if k0 + r < T:
                kt[r, e - r * d] = k[b, k0 + r, e - r * d]
                vt[r, e - r * d] = v[b, k0 + r, e - r * d]
        cuda.syncthreads()
        if live:
            n = min(BC, T - k0)
            m_tile = NEG_INF
            for r in range(n):
                if causal and k0 + r > i:
                    sc[r] = NEG_INF
                else:
                    x = np.float32(0.0)
                    for c in range(d):
                        x += qi[c] * kt[r, c]
                    sc[r] = x
                m_tile = max(m_tile, sc[r])
            m_new = max(m, m_tile)
            if m_new > NEG_INF:
                alpha = math.exp(m - m_new)
                lsum *= alpha
                for c in range(d):
                    acc[c] *= alpha
                for r in range(n):
                    p = math.exp(sc[r] - m_new)
                    lsum += p
                    for c in range(d):
                        acc[c] += p * vt[r, c]
                m = m_new
        k0 += BC
    if live:
        for c in range(d):
            out[b, i, c] = acc[c] / lsum


MUTANTS = {
    "llm3_attn_row": [
        ("online-softmax rescale of acc forgotten", row_no_rescale, *WRONG),
        ("running sum lsum not rescaled", row_sum_not_rescaled, *WRONG),
        ("causal mask off by one (key i skipped)", row_causal_off_by_one, *WRONG),
        ("scale 1/sqrt(d) missing", row_no_scale, *WRONG),
        ("no max subtraction: exp overflows on large scores", row_no_max_subtraction, *WRONG),
        ("running max never updated", row_max_never_updated, *WRONG),
        # notebook 22's old given code: a Python float scale makes the arithmetic float64 (float64="reject")
        M(
            la.attn_row,
            "row_python_float_scale",
            over("float64"),
            ("scale = np.float32(1.0) / math.sqrt(np.float32(d))", "scale = 1.0 / math.sqrt(d)"),
        ),
    ],
    "llm3_attn_flash": [
        ("online-softmax rescale forgotten", flash_no_rescale, *WRONG),
        ("no barrier between tiles", flash_no_barrier_between_tiles, *RACE),
        ("no barrier after loading a tile", flash_no_barrier_after_load, *NO_BARRIER),
        ("causal mask off by one (key i skipped)", flash_causal_off_by_one, *WRONG),
        ("scale 1/sqrt(d) missing", flash_no_scale, *WRONG),
        ("K tile read past the sequence end", flash_tile_past_end, *OOB),
        ("barrier inside `if i < T`", flash_barrier_in_if, *BARRIER),
    ],
}

VARIANTS = {
    "llm3_attn_row": [
        ("two passes: max first, then sum", row_two_pass),
        ("rescale only when the max grows", row_branchy),
    ],
    "llm3_attn_flash": [
        ("online softmax key by key in the tile", flash_per_key),
        ("masked keys scored -inf", flash_masked_scores),
    ],
}

SEEDS = {p.name: (0, 1, 2) for p in la.PUZZLES}  # references and worked kernels too
