"""Box blur: each output pixel the mean of the window around it, cut off at the image's edges.

Rungs:
- ch03_blur (exercise): a (2*BLUR+1)^2 window per thread; counts only the pixels that exist and never
  reads outside the image.
"""

import numpy as np
from numba import cuda, float32

from helpers.puzzle import Budget, Case, Puzzle

from .common import CHAPTER, _grid2d, _image_shapes

BLUR = 1  # blur radius: a (2*BLUR+1) x (2*BLUR+1) window


# ---------------------------------------------------------------------------- spec


def spec_blur(img, height, width):
    padded = np.pad(img.astype(np.float64), BLUR)
    ones = np.pad(np.ones_like(img, np.float64), BLUR)
    total = np.zeros(img.shape)
    count = np.zeros(img.shape)
    k = 2 * BLUR + 1
    for dr in range(k):
        for dc in range(k):
            total += padded[dr : dr + height, dc : dc + width]
            count += ones[dr : dr + height, dc : dc + width]
    return (total / count).astype(np.float32)


# ---------------------------------------------------------------------------- cases


def cases_blur(rng):
    out = []
    for (h, w), block in _image_shapes(rng):
        img = rng.uniform(-1, 2, (h, w)).astype(np.float32)
        out.append(
            Case(
                grid=_grid2d(h, w, block),
                block=block,
                args={"out": np.empty((h, w), np.float32), "img": img, "height": h, "width": w},
            )
        )
    return out


# ---------------------------------------------------------------------------- box blur


@cuda.jit
def blur_kernel(out, img, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    ### BEGIN SOLUTION
    if row < height and col < width:
        total = float32(0)
        count = 0
        for dr in range(-BLUR, BLUR + 1):
            for dc in range(-BLUR, BLUR + 1):
                r = row + dr
                c = col + dc
                if r >= 0 and r < height and c >= 0 and c < width:
                    total += img[r, c]
                    count += 1
        out[row, col] = total / float32(count)
    ### END SOLUTION


CH03_BLUR = Puzzle(
    name="ch03_blur",
    title="PMPP 3: Box blur",
    statement=f"""\
Each output pixel is the mean of the input pixels in the `{2 * BLUR + 1} x {2 * BLUR + 1}` window centred
on it (`BLUR = {BLUR}` pixels on each side). At the edges the window is cut off by the image: average
only the pixels that exist, and never read outside the image (a negative index would silently wrap
round in Numba, and on a GPU an index past the end reads whatever lies there).
Budget per thread: {(2 * BLUR + 1) ** 2} global reads, 1 global write.""",
    outputs=("out",),
    spec=spec_blur,
    cases=cases_blur,
    reference=blur_kernel,
    hints=(
        "Loop over row offsets and column offsets from -BLUR to BLUR.",
        "Count the pixels you actually add: corner pixels average 4 values, edge pixels 6.",
        "Check `0 <= r < height` and `0 <= c < width` for the neighbour before reading it.",
    ),
    budget=Budget(global_reads=(2 * BLUR + 1) ** 2, global_writes=1),
    chapter=CHAPTER,
)


PUZZLES = [CH03_BLUR]
