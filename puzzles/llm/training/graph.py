"""A training step's launches recorded once as a CUDA graph and replayed with one call (GPU only).

Why: a step of the course's model at its small size is about 80 launches of small kernels, and a
Numba launch costs tens of microseconds of Python on the host, more than most of these kernels run
on the GPU; the step is bound by the host, not by the GPU (`python -m tools.train --profile` shows
it). Stream capture records the launches into a graph without running them; replaying the graph
sends them all with one driver call, so the host cost of a step no longer grows with its launches.
The kernels and their arguments are the same: a graph fixes every pointer and scalar argument, so
the backend keeps its buffers (and the batch's) at fixed addresses and launches AdamW, whose step
number and learning rate change, outside the graph.

    capture_stream()          a stream of its own for Numba launches (capture needs one that is not
                              the legacy default stream); a blocking one, so that work and events on
                              the default stream (timing.time_gpu's) stay ordered with it
    capture(stream, launch)   run `launch()` under capture on `stream`; returns a Graph to .launch()

The driver calls go through `cuda.bindings` (numba-cuda's own dependency). Anything that stops a
capture raises GraphError with the driver's reason; nothing falls back silently.
"""

from numba import cuda

from puzzles.llm.training.loop import TrainingError


class GraphError(TrainingError):
    """Why a CUDA graph cannot be captured or launched here (a run stops with this one line)."""


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python before 12.6 named the module so
        except ImportError as e:
            raise GraphError("CUDA graphs need the cuda-bindings package (pip install cuda-bindings)") from e
    return driver


def _ok(result, what):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        name = getattr(err, "name", str(err))
        raise GraphError(f"{what} failed: {name}")
    return rest[0] if len(rest) == 1 else rest


def capture_stream():
    """A Numba stream over a new driver stream (kept alive by the returned object)."""
    if not cuda.is_available():
        raise GraphError("CUDA graphs need a GPU (graph=True); the simulator runs launch by launch")
    d = _driver()
    cuda.current_context()  # the primary context must be current before the driver creates a stream
    raw = _ok(d.cuStreamCreate(int(d.CUstream_flags.CU_STREAM_DEFAULT)), "cuStreamCreate")
    stream = cuda.external_stream(int(raw))
    stream._graph_raw = raw  # the driver handle lives as long as Numba's wrapper
    return stream


class Graph:
    def __init__(self, d, exec_, stream):
        self._d, self._exec, self._stream = d, exec_, stream

    def launch(self):
        _ok(self._d.cuGraphLaunch(self._exec, self._stream._graph_raw), "cuGraphLaunch")


def capture(stream, launch):
    """Record what `launch()` issues on `stream` (it must issue nothing else: no allocation, no
    copy from the host, no synchronisation) and instantiate it."""
    d = _driver()
    raw = stream._graph_raw
    mode = d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
    _ok(d.cuStreamBeginCapture(raw, mode), "cuStreamBeginCapture")
    try:
        launch()
    except BaseException:
        d.cuStreamEndCapture(raw)  # the stream leaves capture mode; the launch's error is the one to see
        raise
    graph = _ok(d.cuStreamEndCapture(raw), "cuStreamEndCapture (a launch broke the capture)")
    exec_ = _ok(d.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
    return Graph(d, exec_, stream)
