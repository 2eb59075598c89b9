"""Diagnostics the simulator raises. One class per kind of mistake.

Every message names the block, thread, source line, array and index it is
about, says what went wrong, and what a real GPU would have done instead.
"""


class SimulatorError(Exception):
    """Base class: something the kernel did that a real GPU would not forgive."""

    def __init__(self, message, *, block=None, thread=None, line=None, source=None, array=None, index=None):
        super().__init__(message)
        self.block = block  # (x, y, z) block index, or None
        self.thread = thread  # (x, y, z) thread index, or None
        self.line = line  # source line number in the kernel's file
        self.source = source  # that line's text
        self.array = array  # array name
        self.index = index  # index tuple as the kernel wrote it


class OutOfBounds(SimulatorError):
    """An index past either end of an array, negative ones included."""


class UninitializedRead(SimulatorError):
    """A read of shared/local memory, or of an output, that no thread wrote."""


class DataRace(SimulatorError):
    """Two threads touched one element between barriers, at least one writing."""


class BarrierDivergence(SimulatorError):
    """syncthreads reached by some threads of a block but not all, or at different lines."""


class WarpDivergence(SimulatorError):
    """A warp-level operation (shfl/vote/syncwarp) that the lanes of its mask did not all reach."""


class Deadlock(SimulatorError):
    """Threads wait for something that can never happen."""


class Runaway(SimulatorError):
    """The kernel ran past the step or time limit: most likely an endless loop."""


class LaunchError(SimulatorError):
    """A launch that CUDA or Numba would refuse: too many threads, too much shared memory..."""


class ReadOnlyWrite(SimulatorError):
    """A write to an input or a constant array."""


class KernelException(SimulatorError):
    """A Python exception raised inside the kernel, reported at the learner's line."""


class Unsupported(SimulatorError):
    """A CUDA feature the simulator does not implement (or Numba does not allow)."""
