"""Mutants of puzzles/pmpp/ch03_grids/blur.py."""

from numba import cuda, float32

from helpers.check import KernelDiagnosed, WrongAnswer
from helpers.sim.errors import OutOfBounds


@cuda.jit
def blur_no_edge_check(out, img, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < height and col < width:
        total = float32(0)
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                total += img[row + dr, col + dc]
        out[row, col] = total / 9


@cuda.jit
def blur_divide_by_nine(out, img, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < height and col < width:
        total = float32(0)
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                r = row + dr
                c = col + dc
                if r >= 0 and r < height and c >= 0 and c < width:
                    total += img[r, c]
        out[row, col] = total / 9


@cuda.jit
def blur_no_guard(out, img, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    total = float32(0)
    count = 0
    for dr in range(-1, 2):
        for dc in range(-1, 2):
            r = row + dr
            c = col + dc
            if r >= 0 and r < height and c >= 0 and c < width:
                total += img[r, c]
                count += 1
    out[row, col] = total / max(count, 1)


@cuda.jit
def blur_widest_example(out, img, height, width):
    # outputs bounded by the widest example image (30 columns) as well as by width
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < height and col < min(width, 30):
        total = float32(0)
        count = 0
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                r = row + dr
                c = col + dc
                if r >= 0 and r < height and c >= 0 and c < width:
                    total += img[r, c]
                    count += 1
        out[row, col] = total / count


MUTANTS = {
    "ch03_blur": [
        ("blur_no_edge_check", blur_no_edge_check, KernelDiagnosed, OutOfBounds),
        ("blur_divide_by_nine", blur_divide_by_nine, WrongAnswer, None),
        ("blur_no_guard", blur_no_guard, KernelDiagnosed, OutOfBounds),
        ("blur_widest_example", blur_widest_example, WrongAnswer, None),
    ],
}
VARIANTS: dict = {}
SEEDS = {
    "ch03_blur": (11,),
}
