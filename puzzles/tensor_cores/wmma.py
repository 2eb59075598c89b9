"""The other route to the tensor cores from Numba: CUDA C++'s `nvcuda::wmma`, compiled by NVRTC
and linked into a Numba kernel with `cuda.declare_device(..., link=...)`. One warp computes a
16x16x16 tile (C fp32 = A fp16 row-major @ B fp16 column-major); the C++ function follows Numba's
calling convention for foreign device functions (a pointer to the return value first, an int status).

`<mma.h>` comes with the pip CUDA runtime headers and includes `crt/mma.h` from the pip NVCC
headers (or both from a toolkit, where a CUDA 13 wheel lacks crt/mma.h): `include_dirs()` finds
them, and `use_headers()` hands them to numba-cuda's NVRTC
(`NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS`). Without a GPU, `compile_check()` compiles the same source
with NVRTC for sm_75 and returns its PTX (the `wmma.mma.sync` instruction is in it); the simulator
cannot run C++, so the kernel itself runs on a GPU only. The kernel hands the C++ function its arrays'
data pointers through a small intrinsic (no cffi)."""

from __future__ import annotations

import os
import tempfile

SOURCE = r"""
#include <mma.h>
using namespace nvcuda;

// One warp: c (16x16 fp32, row-major) = a (16x16 fp16, row-major) @ b (16x16 fp16, column-major).
extern "C" __device__ int wmma_tile(int *status, const __half *a, const __half *b, float *c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
    *status = 0;
    return 0;
}
"""


def include_dirs() -> list[str]:
    """The CUDA header folders for mma.h, the one holding `crt/mma.h` first: the pip wheels', else the
    toolkit's (a CUDA 13 wheel can ship mma.h without crt/mma.h; then the toolkit gives both)."""
    from helpers.cpp.nvrtc import include_dirs as cuda_include_dirs

    out = cuda_include_dirs("crt/mma.h")
    crt = [d for d in out if os.path.exists(os.path.join(d, "crt", "mma.h"))]
    if not crt:
        raise FileNotFoundError(
            "crt/mma.h (which mma.h includes) not found: install the CUDA headers from pip "
            "(nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12, which numba-cuda[cu12] brings) or set "
            "CUDA_HOME to a CUDA toolkit"
        )
    return crt + [d for d in out if d not in crt]


def source_file() -> str:
    """SOURCE written to a file (declare_device links a path)."""
    path = os.path.join(tempfile.gettempdir(), "massively_parallel_wmma_tile.cu")
    if not os.path.exists(path) or open(path).read() != SOURCE:
        with open(path, "w") as f:
            f.write(SOURCE)
    return path


def use_headers() -> None:
    """Point numba-cuda's NVRTC at the headers (before the first launch that links SOURCE)."""
    paths = ":".join(include_dirs())
    os.environ["NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS"] = paths
    from numba.cuda.cudadrv import nvrtc

    nvrtc.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS = paths  # read at import: set it where it is read


def compile_check(cc: tuple[int, int] = (7, 5)) -> str:
    """SOURCE compiled by NVRTC for `cc` (no GPU needed): its PTX, or RuntimeError with the log."""
    from cuda.bindings import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(SOURCE.encode(), b"wmma_tile.cu", 0, [], [])
    opts = [f"--gpu-architecture=compute_{cc[0]}{cc[1]}".encode(), b"-rdc=true"]
    opts += [f"-I{d}".encode() for d in include_dirs()]
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"NVRTC could not compile the wmma source: {log.decode(errors='replace')}")
    _, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    nvrtc.nvrtcGetPTX(prog, ptx)
    nvrtc.nvrtcDestroyProgram(prog)
    return ptx.decode(errors="replace")


def _data_pointer():
    """An intrinsic: a Numba array's data pointer, what the C++ function takes (no cffi needed)."""
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def data_pointer(typingctx, arr):
        def codegen(context, builder, signature, args):
            return context.make_array(signature.args[0])(context, builder, args[0]).data

        return types.CPointer(arr.dtype)(arr), codegen

    return data_pointer


def kernel(link: bool = True):
    """The Numba kernel calling the linked C++ function (GPU only: it compiles on first launch):
    kernel[1, 32](a, b_col_major, c) with flat arrays of 256: a and b float16 (a row-major, b
    column-major: b.T.ravel()), c float32 (row-major). `link=False` declares the function without
    the C++ file (tests compile the Numba side to PTX without a GPU)."""
    from numba import cuda, types

    ptr = types.CPointer
    sig = types.int32(ptr(types.float16), ptr(types.float16), ptr(types.float32))
    if link:
        use_headers()
        wmma_tile = cuda.declare_device("wmma_tile", sig, link=source_file())
    else:
        wmma_tile = cuda.declare_device("wmma_tile", sig)
    data_pointer = _data_pointer()

    @cuda.jit
    def wmma_kernel(a, b, c):
        wmma_tile(data_pointer(a), data_pointer(b), data_pointer(c))

    return wmma_kernel
