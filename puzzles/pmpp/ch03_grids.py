"""PMPP chapter 3, multidimensional grids and data: colour to grayscale, image blur, naive matmul.

Every kernel here maps a 2-D grid of 2-D blocks onto a 2-D output: x runs along columns (the fast,
contiguous index of a C-order array), y along rows.
"""

import math

import numpy as np
from numba import cuda, float32

from helpers import timing, tuning
from helpers.puzzle import Budget, Case, Puzzle, edge_sizes

__all__ = ["BLUR"]

CHAPTER = "pmpp-03"
BLUR = 1  # blur radius: a (2*BLUR+1) x (2*BLUR+1) window


@cuda.jit
def grayscale_kernel(gray, rgb, height, width):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < height and col < width:
        gray[row, col] = (
            float32(0.21) * rgb[row, col, 0]
            + float32(0.72) * rgb[row, col, 1]
            + float32(0.07) * rgb[row, col, 2]
        )


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
        out[row, col] = total / count
    ### END SOLUTION


@cuda.jit
def matmul_kernel(p, m, n, rows, inner, cols):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    ### BEGIN SOLUTION
    if row < rows and col < cols:
        acc = float32(0)
        for k in range(inner):
            acc += m[row, k] * n[k, col]
        p[row, col] = acc
    ### END SOLUTION


# ---------------------------------------------------------------------------- specs and cases


def spec_grayscale(rgb, height, width):
    w = np.array([0.21, 0.72, 0.07], np.float32)
    return (rgb * w).sum(axis=2, dtype=np.float32)


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


def spec_matmul(m, n, rows, inner, cols):
    return (m.astype(np.float64) @ n.astype(np.float64)).astype(np.float32)


def _grid2d(height, width, block):
    bx, by = block
    return (math.ceil(width / bx), math.ceil(height / by))


# (height, width, block): non-square images, sizes that are no multiple of the block, a single
# small block larger than the image, several blocks in both directions.
IMAGE_SHAPES = (
    ((11, 13), (8, 8)),
    ((5, 20), (16, 4)),
    ((3, 2), (4, 4)),
    ((17, 9), (4, 8)),
    ((24, 30), (8, 8)),
)


def _image_shapes(rng):
    """Case 0 the notebook's 11 x 13 in 8 x 8 blocks; then per seed one block shape of the list and,
    per axis, the edges around it (1, block-1, block, block+1, a few blocks) and a side wider (31-36)
    or taller (25-28) than the old fixed shapes, the two axes paired at random."""
    pair = rng.spawn(1)[0]  # its own stream: case 0's data stay what they were
    bx, by = IMAGE_SHAPES[int(pair.integers(1, len(IMAGE_SHAPES)))][1]
    ws = edge_sizes(rng, IMAGE_SHAPES[0][0][1], bx, (31, 36))[1:]
    hs = edge_sizes(rng, IMAGE_SHAPES[0][0][0], by, (25, 28))[1:]
    k = max(len(ws), len(hs))
    ws += [int(pair.integers(1, 3 * bx)) for _ in range(k - len(ws))]
    hs += [int(pair.integers(1, 3 * by)) for _ in range(k - len(hs))]
    return [IMAGE_SHAPES[0], *(((h, w), (bx, by)) for h, w in zip(pair.permutation(hs).tolist(), ws))]


def cases_grayscale(rng):
    out = []
    for (h, w), block in _image_shapes(rng):
        rgb = rng.random((h, w, 3), dtype=np.float32)
        out.append(
            Case(
                grid=_grid2d(h, w, block),
                block=block,
                args={"gray": np.empty((h, w), np.float32), "rgb": rgb, "height": h, "width": w},
            )
        )
    return out


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


MATMUL_SHAPES = (
    (9, 7, 13, (8, 8)),
    (4, 17, 3, (4, 4)),
    (20, 5, 11, (8, 4)),
    (1, 6, 10, (16, 2)),
    (13, 12, 14, (4, 8)),
)


def cases_matmul(rng):
    out = []
    # (rows, inner, cols, block): no square matrix has inner == rows == cols, so swapped loops or
    # indices go out of bounds or give wrong values instead of passing by symmetry
    # case 0 the notebook's; then per seed rows and cols at the edges around a block drawn from the
    # list, a side longer than before, and inner from 1 to 12
    pair = rng.spawn(1)[0]  # its own stream: case 0's data stay what they were
    bx, by = MATMUL_SHAPES[int(pair.integers(1, len(MATMUL_SHAPES)))][3]
    cs = edge_sizes(rng, 13, bx, (15, 18))[1:]
    rs = edge_sizes(rng, 9, by, (21, 24))[1:]
    k = max(len(cs), len(rs))
    cs += [int(pair.integers(1, 3 * bx)) for _ in range(k - len(cs))]
    rs += [int(pair.integers(1, 3 * by)) for _ in range(k - len(rs))]
    shapes = [MATMUL_SHAPES[0]] + [
        (r, int(pair.integers(1, 13)), c, (bx, by)) for r, c in zip(pair.permutation(rs).tolist(), cs)
    ]
    for rows, inner, cols, block in shapes:
        m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
        n = rng.uniform(-2, 2, (inner, cols)).astype(np.float32)
        out.append(
            Case(
                grid=_grid2d(rows, cols, block),
                block=block,
                args={
                    "p": np.empty((rows, cols), np.float32),
                    "m": m,
                    "n": n,
                    "rows": rows,
                    "inner": inner,
                    "cols": cols,
                },
            )
        )
    return out


PUZZLES = [
    Puzzle(
        name="ch03_grayscale",
        title="PMPP 3: Colour to grayscale",
        statement="""\
`rgb` is a `height x width x 3` image (red, green, blue in [0, 1]); write
`gray[r, c] = 0.21 * red + 0.72 * green + 0.07 * blue`. The launch is a 2-D grid of 2-D blocks:
`x` indexes columns and `y` rows, so neighbouring threads of a warp touch neighbouring pixels of
one row. The grid is rounded up in both directions, so threads past the right or bottom edge must
do nothing. Budget per thread: 3 global reads, 1 global write.""",
        outputs=("gray",),
        spec=spec_grayscale,
        cases=cases_grayscale,
        reference=grayscale_kernel,
        budget=Budget(global_reads=3, global_writes=1),
        chapter=CHAPTER,
    ),
    Puzzle(
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
    ),
    Puzzle(
        name="ch03_matmul",
        title="PMPP 3: Matrix multiplication, one output per thread",
        statement="""\
`p = m @ n` with `m` of shape `rows x inner` and `n` of shape `inner x cols`. Thread `(row, col)`
computes the dot product of row `row` of `m` and column `col` of `n`. No two sizes are equal, so the
shapes tell you which index goes where. Accumulate in float32 (`float32(0)`): a float64 accumulator
is up to 64 times slower on consumer GPUs. Budget per thread: `2 * inner` global reads, 1 write:
every element of `m` and `n` is read from global memory `cols` and `rows` times over, the waste
chapter 5 removes.""",
        outputs=("p",),
        spec=spec_matmul,
        cases=cases_matmul,
        reference=matmul_kernel,
        hints=(
            "Guard on both `row < rows` and `col < cols`.",
            "`m[row, k]` walks along a row of m, `n[k, col]` down a column of n.",
        ),
        budget=Budget(global_reads=lambda c: 2 * c.args["inner"], global_writes=1),
        rtol=1e-4,
        atol=1e-4,
        chapter=CHAPTER,
    ),
]

# grayscale reads 12 bytes and writes 4 per pixel: a streaming kernel, judged against the copy
GOAL = {"ceiling": "copy", "fraction": 0.8, "best": "grayscale"}


def test_image(height=48, width=64):
    """A small synthetic RGB picture (no downloads): sky gradient, a sun, grass, a red square."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    img = np.zeros((height, width, 3), np.float32)
    sky = y < 0.65 * height
    img[..., 2] = np.where(sky, 0.95 - 0.4 * y / height, 0.1)
    img[..., 1] = np.where(sky, 0.6 - 0.3 * y / height, 0.55 + 0.1 * np.sin(x / 3))
    img[..., 0] = np.where(sky, 0.3, 0.15)
    sun = (x - 0.75 * width) ** 2 + (y - 0.25 * height) ** 2 < (0.12 * height) ** 2
    img[sun] = (1.0, 0.9, 0.2)
    box = (abs(x - 0.3 * width) < 0.1 * width) & (abs(y - 0.6 * height) < 0.15 * height)
    img[box] = (0.85, 0.1, 0.1)
    return np.clip(img, 0, 1)


# ---------------------------------------------------------------------------- GPU only


def benchmark(scale: float = 1.0) -> list:
    """Grayscale and blur against the copy ceiling; naive matmul against cuBLAS where CuPy exists."""
    rng = np.random.default_rng(4)
    # validation on an odd-sized image at several block shapes
    h, w = 517, 1031
    rgb = rng.random((h, w, 3), dtype=np.float32)
    img = rng.uniform(-1, 2, (h, w)).astype(np.float32)
    drgb, dimg, dout = cuda.to_device(rgb), cuda.to_device(img), cuda.device_array((h, w), np.float32)
    for block in ((16, 16), (32, 8), (8, 32), (32, 32), (32, 4), (64, 4), (128, 2)):
        grid = _grid2d(h, w, block)
        grayscale_kernel[grid, block](dout, drgb, h, w)
        timing.validate(f"grayscale (block {block})", dout.copy_to_host(), spec_grayscale(rgb, h, w))
        blur_kernel[grid, block](dout, dimg, h, w)
        timing.validate(f"blur (block {block})", dout.copy_to_host(), spec_blur(img, h, w))

    side = max(256, int(8192 * math.sqrt(scale)))  # 256 MiB gray image at scale 1
    rgb = rng.random((side, side, 3), dtype=np.float32)
    drgb, dout = cuda.to_device(rgb), cuda.device_array((side, side), np.float32)
    img = rgb[..., 0].copy()
    dimg = cuda.to_device(img)
    gray = spec_grayscale(rgb, side, side)
    blocks = {f"{bx}x{by}": (bx, by) for bx, by in ((32, 8), (32, 4), (64, 4), (16, 16), (128, 2))}
    rows = []
    for name, kernel, args, nbytes in (
        ("grayscale", grayscale_kernel, (dout, drgb, side, side), 16 * side * side),
        ("blur 3x3", blur_kernel, (dout, dimg, side, side), 8 * side * side),
    ):
        # the block shape, tuned on this GPU (cached per device)
        choice, seconds = tuning.tuned_time(
            f"ch03 {name}",
            blocks,
            lambda block, k=kernel, a=args: timing.time_gpu(lambda: k[_grid2d(side, side, block), block](*a)),
        )
        rows.append(timing.Measurement(name, seconds, bytes=nbytes, config=f"block {choice.label}"))
        kernel[_grid2d(side, side, choice.config), choice.config](*args)
        want = spec_blur(img, side, side) if name.startswith("blur") else gray
        timing.validate(name, dout.copy_to_host(), want)
    dw = cuda.to_device(np.array([0.21, 0.72, 0.07], np.float32))
    peer = timing.library_peer(
        "grayscale",
        [
            timing.via("cupy", "cupy matmul (rgb @ weights)", _peer_gray, drgb, dw),
            timing.via("torch", "torch matmul (rgb @ weights)", _peer_gray, drgb, dw),
        ],
        bytes=16 * side * side,
        check=lambda got: timing.validate("grayscale peer", got, gray, rtol=1e-4),
    )
    if peer is not None:
        rows.append(peer)
    rows.append(timing.copy_ceiling(4 * side * side))
    rows.extend(_matmul_rows(rng, scale))
    return rows


def _matmul_rows(rng, scale):
    rows, inner, cols = 300, 257, 411
    m = rng.normal(0, 1, (rows, inner)).astype(np.float32)
    n = rng.normal(0, 1, (inner, cols)).astype(np.float32)
    dm, dn, dp = cuda.to_device(m), cuda.to_device(n), cuda.device_array((rows, cols), np.float32)
    for block in ((16, 16), (32, 8), (8, 8)):
        matmul_kernel[_grid2d(rows, cols, block), block](dp, dm, dn, rows, inner, cols)
        timing.validate(
            f"naive matmul (block {block})",
            dp.copy_to_host(),
            spec_matmul(m, n, rows, inner, cols),
            rtol=1e-3,
            atol=1e-3,
        )
    size = max(256, int(2048 * scale ** (1 / 3)))
    dm = cuda.to_device(rng.normal(0, 1, (size, size)).astype(np.float32))
    dn = cuda.to_device(rng.normal(0, 1, (size, size)).astype(np.float32))
    dp = cuda.device_array((size, size), np.float32)
    block = (16, 16)
    grid = _grid2d(size, size, block)
    seconds = timing.time_gpu(
        lambda: matmul_kernel[grid, block](dp, dm, dn, size, size, size), warmup=1, reps=5
    )
    out = [timing.Measurement(f"naive matmul {size}", seconds, bytes=3 * 4 * size * size, flops=2 * size**3)]
    ceiling = timing.sgemm_ceiling(size)
    if ceiling is not None:
        ceiling.peer = True  # cuBLAS is what a user calls instead, and the ceiling at once
        out.append(ceiling)
    return out


def _peer_gray(xp, rgb, weights):
    """What a user would write instead: one matrix-vector product over the colour axis."""
    return rgb @ weights
