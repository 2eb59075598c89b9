"""What chapter 3's op files share: the chapter tag, the 2-D launch arithmetic, the image shapes the
grayscale and blur cases draw from, and the notebook's synthetic test picture.
"""

import math

import numpy as np

from helpers.puzzle import edge_sizes

CHAPTER = "pmpp-03"


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
