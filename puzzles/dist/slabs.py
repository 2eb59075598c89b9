"""The 3-D stencil of chapter 8 cut into slabs along z: which planes each rank owns, the sweep of a
range of a slab's planes (NumPy on CPU ranks, a Numba kernel on a GPU), scatter and gather, and the
serial truth. stencil.py's exercises move the halos; this file does the arithmetic.

A rank that owns global planes [z0, z1) holds them as local planes 1 .. n (n = z1 - z0) of an array
of n + 2 planes: local plane 0 is the halo below (global z0 - 1), local plane n + 1 the halo above
(global z1). The end ranks' outer halo is never read: global planes 0 and nz - 1 keep their value
(chapter 8's fixed boundary), so nothing outside the grid is needed.
"""

import math

import numpy as np
from numba import cuda

from puzzles.pmpp.ch08_stencil.common import C0, CXM, CXP, CYM, CYP, CZM, CZP, stencil


class SplitError(ValueError):
    """The grid cannot be cut into the requested number of slabs."""


def slab(nz: int, size: int, rank: int) -> tuple[int, int]:
    """(z0, z1): the global planes rank `rank` of `size` owns; the first nz % size ranks get one more."""
    if size < 1 or not 0 <= rank < size:
        raise SplitError(f"rank {rank} of {size}: a rank is 0 .. size - 1 and size is at least 1")
    if nz < size:
        raise SplitError(
            f"{nz} planes cannot be shared by {size} ranks (each needs at least one plane): "
            f"run with at most {nz} ranks, or make the grid deeper"
        )
    base, extra = divmod(nz, size)
    z0 = rank * base + min(rank, extra)
    return z0, z0 + base + (rank < extra)


def scatter(a: np.ndarray, size: int, rank: int) -> np.ndarray:
    """Rank `rank`'s slab of the global grid `a`, halos included where a neighbour exists (the end
    ranks' outer halo is NaN: it must never be read)."""
    nz = a.shape[0]
    z0, z1 = slab(nz, size, rank)
    u = np.full((z1 - z0 + 2,) + a.shape[1:], np.nan, np.float32)
    lo, hi = max(z0 - 1, 0), min(z1 + 1, nz)
    u[lo - (z0 - 1) : hi - (z0 - 1)] = a[lo:hi]
    return u


def gather(slabs: list) -> np.ndarray:
    """The global grid from every rank's slab (owned planes only, rank order)."""
    return np.concatenate([s[1:-1] for s in slabs])


def serial(a: np.ndarray, steps: int) -> np.ndarray:
    """The truth: chapter 8's stencil applied `steps` times on one process (float64 inside, float32
    out, as `ch08.stencil`)."""
    for _ in range(steps):
        a = stencil(a)
    return a


# ---------------------------------------------------------------------------- one rank's slab


class Slab:
    """One rank's two buffers of n + 2 planes: `u` (this step's values, halos included) and `out`
    (the next step's). `sweep(lo, hi)` computes out's local planes lo .. hi-1 from u's; `swap()`
    makes out the new u; `owned()` is a copy of u's planes 1 .. n. NumPy here; GpuSlab on a GPU."""

    def __init__(self, u: np.ndarray, z0: int, nz: int):
        self.u, self.out = u, np.full_like(u, np.nan)  # out's halos: NaN until a message lands
        self.n, self.z0, self.nz = u.shape[0] - 2, z0, nz
        self.sweeps = []  # (lo, hi) of every sweep, in order (the checker reads it)
        self.history = None  # a list: swap() keeps a copy of each step's result, halos included

    def __repr__(self) -> str:
        shape = " x ".join(map(str, self.u.shape[1:]))
        return f"Slab(planes {self.z0} .. {self.z0 + self.n - 1} of {self.nz}, each {shape})"

    @classmethod
    def of(cls, a: np.ndarray, size: int, rank: int):
        z0, _ = slab(a.shape[0], size, rank)
        return cls(scatter(a, size, rank), z0, a.shape[0])

    def _range(self, lo, hi):
        if not (isinstance(lo, (int, np.integer)) and isinstance(hi, (int, np.integer))):
            raise TypeError(f"sweep({lo!r}, {hi!r}): plane numbers are ints")
        if hi > lo and not 1 <= lo < hi <= self.n + 1:
            raise IndexError(
                f"sweep({lo}, {hi}): this rank computes its own planes 1 .. {self.n} "
                f"(sweep(1, {self.n + 1}) is all of them); planes 0 and {self.n + 1} are halos, "
                "filled by messages"
            )
        self.sweeps.append((int(lo), int(hi)))
        return hi > lo

    def sweep(self, lo: int, hi: int) -> None:
        if not self._range(lo, hi):
            return
        c = tuple(map(float, (C0, CXM, CXP, CYM, CYP, CZM, CZP)))
        u, out = self.u, self.out
        for k in range(lo, hi):
            z = self.z0 + k - 1
            out[k] = u[k]
            if 1 <= z < self.nz - 1:  # bit for bit the arithmetic of ch08.stencil (float64 inside)
                below, here, above = (u[j].astype(np.float64) for j in (k - 1, k, k + 1))
                out[k, 1:-1, 1:-1] = (
                    c[0] * here[1:-1, 1:-1]
                    + c[1] * here[1:-1, :-2]
                    + c[2] * here[1:-1, 2:]
                    + c[3] * here[:-2, 1:-1]
                    + c[4] * here[2:, 1:-1]
                    + c[5] * below[1:-1, 1:-1]
                    + c[6] * above[1:-1, 1:-1]
                ).astype(np.float32)

    def swap(self) -> None:
        if self.history is not None:
            self.history.append(self.out.copy())
        self.u, self.out = self.out, self.u

    def owned(self):
        return self.u[1 : self.n + 1].copy()


# ---------------------------------------------------------------------------- GPU slab


@cuda.jit
def slab_sweep(out, u, lo, hi, z0, nz):
    """Chapter 8's basic kernel on local planes lo .. hi-1 of a slab that starts at global plane z0."""
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    k = lo + cuda.blockIdx.z
    ny, nx = u.shape[1], u.shape[2]
    if k < hi and y < ny and x < nx:
        z = z0 + k - 1
        if 1 <= z < nz - 1 and 1 <= y < ny - 1 and 1 <= x < nx - 1:
            out[k, y, x] = (
                C0 * u[k, y, x]
                + CXM * u[k, y, x - 1]
                + CXP * u[k, y, x + 1]
                + CYM * u[k, y - 1, x]
                + CYP * u[k, y + 1, x]
                + CZM * u[k - 1, y, x]
                + CZP * u[k + 1, y, x]
            )
        else:
            out[k, y, x] = u[k, y, x]


class GpuSlab(Slab):
    """The same slab in device memory. `sweep` launches `slab_sweep` on this slab's stream and returns
    at once. The order between the sweeps and the halos' messages (on the stream `after`) is kept on
    the GPU with events, the host never waiting: the messages' stream waits for a sweep that computed
    an edge plane (1 or n), which a message sends next, and `swap` makes the sweeps' stream wait for
    the messages (the next sweep reads the halos they bring). A host wait there cost a round trip per
    step while the GPU idled, and kept the host from queueing the next step. Without `after` (one
    slab, no messages) an edge sweep waits on the host, as before."""

    BLOCK = (32, 8)
    after = None  # a stream swap() waits for (the halos' messages), set by whoever runs the slab
    host = True  # owned() copies to the host (False: the device view, for timing)

    def __init__(self, u, z0: int, nz: int, stream=None):
        self.u = cuda.to_device(u)
        self.out = cuda.to_device(np.full_like(u, np.nan))
        self.n, self.z0, self.nz = u.shape[0] - 2, z0, nz
        self.stream = stream if stream is not None else cuda.stream()
        self.sweeps = []

    @classmethod
    def of(cls, a: np.ndarray, size: int, rank: int, stream=None):
        z0, _ = slab(a.shape[0], size, rank)
        return cls(scatter(a, size, rank), z0, a.shape[0], stream)

    def sweep(self, lo: int, hi: int) -> None:
        if not self._range(lo, hi):
            return
        bx, by = self.BLOCK
        ny, nx = self.u.shape[1], self.u.shape[2]
        grid = (math.ceil(nx / bx), math.ceil(ny / by), hi - lo)
        slab_sweep[grid, (bx, by), self.stream](self.out, self.u, lo, hi, self.z0, self.nz)
        if lo == 1 or hi == self.n + 1:
            if self.after is None:
                self.stream.synchronize()
            else:
                _wait(self.after, _mark(_external(self.stream)))

    def swap(self) -> None:
        if self.after is not None:
            _wait(_external(self.stream), _mark(self.after))
        self.u, self.out = self.out, self.u

    def owned(self):
        if not self.host:
            return self.u[1 : self.n + 1]
        self.stream.synchronize()
        return self.u[1 : self.n + 1].copy_to_host()


def _external(numba_stream):
    """A Numba stream as a CuPy stream (the same CUDA stream), for CuPy's events."""
    import cupy

    return cupy.cuda.ExternalStream(int(numba_stream))


def _mark(stream):
    """An event recorded on a CuPy stream: done once the work queued there so far is."""
    import cupy

    event = cupy.cuda.Event(disable_timing=True)
    event.record(stream)
    return event


def _wait(stream, event) -> None:
    """Work queued on `stream` from now on starts after `event` (on the GPU: the host goes on)."""
    stream.wait_event(event)
