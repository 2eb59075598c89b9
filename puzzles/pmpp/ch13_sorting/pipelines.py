"""Host pipelines built from the puzzle kernels: a whole radix sort (key-value, or keys only with the
coarsened kernels and a chunked scan), a float sort, a merge sort. Launches run on whichever engine
is active (the simulator on a CPU machine, else the GPU)."""

from __future__ import annotations

import numpy as np
from numba import cuda

from .common import C_TPB, COARSE, R_TPB, RADIX_BITS, TPB, blocks_of
from .float_keys import float_to_key, key_to_float
from .merge_sort import merge_pass
from .radix_count import radix_count, radix_count_coarse
from .radix_scan import chunk_sums, scan_counts
from .radix_scatter import radix_scatter, radix_scatter_coarse


def radix_sort(
    keys,
    vals,
    *,
    count=radix_count,
    scan=scan_counts,
    scatter=radix_scatter,
    tpb: int = R_TPB,
    bits: int = RADIX_BITS,
):
    """Sort key-value pairs (uint32 keys) with count, scan, scatter per pass; returns NumPy arrays.

    Launches run on whichever engine is active (the simulator on a CPU machine, else the GPU).
    """
    n = len(keys)
    tiles = blocks_of(n, tpb)
    k_in, v_in = cuda.to_device(np.asarray(keys, np.uint32)), cuda.to_device(np.asarray(vals, np.int32))
    k_out, v_out = cuda.device_array(n, np.uint32), cuda.device_array(n, np.int32)
    counts = cuda.device_array(tiles << bits, np.int32)
    offsets = cuda.device_array(tiles << bits, np.int32)
    sums = cuda.device_array(1, np.int32)
    for shift in range(0, 32, bits):
        count[tiles, tpb](counts, k_in, shift, n)
        scan[1, 32](offsets, counts, sums, tiles << bits, tiles << bits)  # one chunk: no totals needed
        scatter[tiles, tpb](k_out, v_out, k_in, v_in, offsets, shift, n)
        k_in, k_out, v_in, v_out = k_out, k_in, v_out, v_in
    return k_in.copy_to_host(), v_in.copy_to_host()


def radix_sort_keys_plan(
    n: int,
    *,
    count=radix_count_coarse,
    scan=scan_counts,
    scatter=radix_scatter_coarse,
    sums_kernel=chunk_sums,
    tpb: int = C_TPB,
    coarse: int = COARSE,
    bits: int = RADIX_BITS,
    scan_tpb: int = 32,
    scan_blocks: int = 1,
):
    """Buffers allocated once; returns run(d_keys) -> device array of the sorted keys (keys only).

    The input array is left as it was; two work buffers ping-pong between the 32 / bits passes.
    """
    tiles = blocks_of(n, tpb * coarse)
    bufs = [cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32)]
    counts = cuda.device_array(tiles << bits, np.int32)
    offsets = cuda.device_array(tiles << bits, np.int32)
    sums = cuda.device_array(scan_blocks, np.int32)
    chunk = blocks_of(tiles << bits, scan_blocks)

    def run(d_keys):
        src = d_keys
        for p, shift in enumerate(range(0, 32, bits)):
            dst = bufs[p % 2]
            count[tiles, tpb](counts, src, shift, n)
            if scan_blocks > 1:  # reduce, then scan: each block's carry-in from the chunk totals
                sums_kernel[scan_blocks, scan_tpb](sums, counts, tiles << bits, chunk)
            scan[scan_blocks, scan_tpb](offsets, counts, sums, tiles << bits, chunk)
            scatter[tiles, tpb](dst, src, offsets, shift, n)
            src = dst
        return src

    return run


def sort_floats(x, sort_keys=None):
    """Sort float32 values by radix-sorting their bits: flip to sortable keys, sort, flip back."""
    x = np.ascontiguousarray(x, np.float32)
    n = x.size
    keys = np.zeros(n, np.uint32)
    float_to_key[blocks_of(n, TPB), TPB](keys, x.view(np.uint32), n)
    if sort_keys is None:
        sorted_keys = radix_sort_keys_plan(n)(cuda.to_device(keys)).copy_to_host()
    else:
        sorted_keys = sort_keys(keys)
    bits = np.zeros(n, np.uint32)
    key_to_float[blocks_of(n, TPB), TPB](bits, sorted_keys, n)
    return bits.view(np.float32)


def merge_sort(keys, vals, *, kernel=merge_pass, tpb: int = TPB):
    """Stable merge sort of key-value pairs: passes of width 1, 2, 4, ... of `kernel`."""
    n = len(keys)
    k_in, v_in = cuda.to_device(np.asarray(keys, np.uint32)), cuda.to_device(np.asarray(vals, np.int32))
    k_out, v_out = cuda.device_array(n, np.uint32), cuda.device_array(n, np.int32)
    width = 1
    while width < n:
        kernel[blocks_of(n, tpb), tpb](k_out, v_out, k_in, v_in, width, n)
        k_in, k_out, v_in, v_out = k_out, k_in, v_out, v_in
        width *= 2
    return k_in.copy_to_host(), v_in.copy_to_host()
