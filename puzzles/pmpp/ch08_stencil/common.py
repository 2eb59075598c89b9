"""What chapter 8's op files share: the seven coefficients, the tile geometry, the NumPy truth, the
grid shapes and values every rung's cases draw, and the statement's common paragraph.

Arrays are indexed a[z, y, x] (x fastest); interior points get
out = C0*a + CXM*west + CXP*east + CYM*south + CYP*north + CZM*below + CZP*above,
boundary points keep their input value (a fixed boundary condition).
"""

import numpy as np

from helpers.puzzle import edge_sizes

CHAPTER = "pmpp-08"


# Seven distinct coefficients, so a neighbour taken from the wrong side shows up.
# float32 so the kernel computes in float32 (a Python float would promote every term to float64).
C0 = np.float32(0.5)
CXM, CXP = np.float32(0.0625), np.float32(-0.125)
CYM, CYP = np.float32(0.1875), np.float32(-0.25)
CZM, CZP = np.float32(0.3125), np.float32(-0.375)
COEFFS = (C0, CXM, CXP, CYM, CYP, CZM, CZP)


IN_TILE = 6  # shared: IN_TILE^3 threads per block; coarse/register: IN_TILE^2 (32 on a GPU)
OUT_TILE = IN_TILE - 2  # outputs per block along each tiled axis
Z_STEPS = 4  # coarse/register: z planes each block computes


# ---------------------------------------------------------------------------- spec


def stencil(a):
    """NumPy truth (float64 inside, float32 out)."""
    a64 = a.astype(np.float64)
    C0, CXM, CXP, CYM, CYP, CZM, CZP = map(float, COEFFS)
    out = a64.copy()
    c = a64[1:-1, 1:-1, 1:-1]
    out[1:-1, 1:-1, 1:-1] = (
        C0 * c
        + CXM * a64[1:-1, 1:-1, :-2]
        + CXP * a64[1:-1, 1:-1, 2:]
        + CYM * a64[1:-1, :-2, 1:-1]
        + CYP * a64[1:-1, 2:, 1:-1]
        + CZM * a64[:-2, 1:-1, 1:-1]
        + CZP * a64[2:, 1:-1, 1:-1]
    )
    return out.astype(np.float32)


def spec(a, nz, ny, nx):
    return stencil(a)


# ---------------------------------------------------------------------------- cases


SHAPES = ((5, 7, 10), (3, 4, 5), (9, 6, 5), (4, 9, 7), (7, 5, 13))  # (nz, ny, nx)


def _shapes(rng, bx, by, bz):
    """Case 0 the notebook's 5 x 7 x 10; then per seed, per axis, the edges around one block of
    `bx` x `by` x `bz` outputs (1, block-1, block, block+1, a few blocks) and a side longer than the old
    fixed shapes (x 14-17, y and z 10-12); x ascending against z descending keeps every volume small."""
    pair = rng.spawn(1)[0]  # its own stream: case 0's data stay what they were
    nz0, ny0, nx0 = SHAPES[0]
    xs = edge_sizes(rng, nx0, bx, (14, 17))[1:]
    ys = edge_sizes(rng, ny0, by, (10, 12))[1:]
    zs = edge_sizes(rng, nz0, bz, (10, 12))[1:]
    k = max(len(xs), len(ys), len(zs))
    xs = sorted(xs + [int(pair.integers(1, 2 * bx + 1)) for _ in range(k - len(xs))])
    ys = pair.permutation(ys + [int(pair.integers(1, 2 * by + 1)) for _ in range(k - len(ys))]).tolist()
    zs = sorted(zs + [int(pair.integers(1, 2 * bz + 1)) for _ in range(k - len(zs))], reverse=True)
    return [SHAPES[0], *zip(zs, ys, xs)]


def _args(rng, shape):
    nz, ny, nx = shape
    return {
        "out": np.empty(shape, np.float32),
        "a": rng.uniform(-10, 10, shape).astype(np.float32),
        "nz": nz,
        "ny": ny,
        "nx": nx,
    }


# ---------------------------------------------------------------------------- statements


_COMMON = """

`a` and `out` are `nz x ny x nx` float32 grids indexed `[z, y, x]`. An interior point
(`1 <= z < nz-1`, same for y and x) gets
`C0*a[z,y,x] + CXM*a[z,y,x-1] + CXP*a[z,y,x+1] + CYM*a[z,y-1,x] + CYP*a[z,y+1,x]
+ CZM*a[z-1,y,x] + CZP*a[z+1,y,x]`; a boundary point keeps its value: `out[z,y,x] = a[z,y,x]`.
The coefficients are module constants."""
