"""The machine: what a GPU is in the learner's own numbers, and when it pays.

A device query, memory bandwidth measured, host<->device transfers (pageable and pinned), streams
and the overlap of copies with kernels drawn as a timeline of events, kernel launch overhead, and
the same three computations (a vector op, a reduction, a small matmul) timed on the CPU (NumPy,
Numba `@njit(parallel=True)`) and on the GPU across sizes. The notebook's exercise, the vector op
as a grid-stride kernel, is `m01_saxpy`; its reference is the kernel timed here.

Everything that needs a GPU is behind `helpers.timing.skip_reason()`; the CPU side always runs, and
the stream timeline runs on the simulator too (synchronously, so without overlap).

One file per study: kernels.py (the GPU kernels), host.py (the CPU side and the wall clock),
sizes.py, device.py (query, bandwidth, transfers, launch overhead), streams.py (the timeline),
crossover.py (CPU against GPU across sizes). Every name is re-exported: `measure.<name>`.
"""

from .crossover import (  # noqa: F401  (the notebook and tests use measure.<name>)
    OPS,
    cpu_timings,
    crossover,
    gpu_timings,
    plot_sizes,
)
from .device import (  # noqa: F401  (the notebook and tests use measure.<name>)
    T4,
    device_query,
    launch_overhead,
    measured_bandwidth,
    print_table,
    print_transfers,
    transfer_table,
)
from .host import (  # noqa: F401  (the notebook and tests use measure.<name>)
    cpu_copy_bandwidth,
    cpu_info,
    matmul_cpu,
    saxpy_cpu,
    sum_cpu,
    wall,
)
from .kernels import (  # noqa: F401  (the notebook and tests use measure.<name>)
    FULL_MASK,
    TILE,
    busy_kernel,
    empty_kernel,
    matmul_kernel,
    sum_kernel,
    zero_kernel,
)
from .sizes import (  # noqa: F401  (the notebook and tests use measure.<name>)
    matmul_sizes,
    size_caps,
    vector_sizes,
)
from .streams import (  # noqa: F401  (the notebook and tests use measure.<name>)
    overlap_timeline,
    plot_timeline,
)
