"""Host-side device arrays for the simulator engine: `cuda.to_device` and friends.

There is no separate device memory here; a DeviceArray owns a private copy so
that host code behaves as it does with a GPU (changes show after copy_to_host).
Streams and events exist so that GPU host code runs unchanged; everything is
synchronous (`stream=` arguments are accepted and change nothing).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .poison import poison


class DeviceArray:
    def __init__(self, data: np.ndarray):
        self._data = data

    def __sim_array__(self):
        return self._data

    shape = property(lambda s: s._data.shape)
    dtype = property(lambda s: s._data.dtype)
    size = property(lambda s: s._data.size)
    ndim = property(lambda s: s._data.ndim)
    nbytes = property(lambda s: s._data.nbytes)

    def __len__(self):
        return len(self._data)

    def copy_to_host(self, ary=None, stream=0):
        if ary is None:
            return self._data.copy()
        ary[...] = self._data
        return ary

    def copy_to_device(self, ary, stream=0):
        self._data[...] = np.asarray(getattr(ary, "_data", ary))

    def view(self, dtype):
        """The same bytes seen as another dtype, sharing the data (as numba's DeviceNDArray.view)."""
        return DeviceArray(self._data.view(dtype))

    def reshape(self, *shape, order="C"):
        """A view with another shape, sharing the data (as numba's DeviceNDArray.reshape)."""
        return DeviceArray(self._data.reshape(*shape, order=order))

    def __getitem__(self, idx):
        return DeviceArray(self._data[idx]) if isinstance(self._data[idx], np.ndarray) else self._data[idx]

    def __repr__(self):
        return f"<simulated device array {self.dtype}{list(self.shape)}>"


def to_device(ary, stream=0, copy=True, to=None):
    if to is not None:
        to.copy_to_device(ary)
        return to
    return DeviceArray(np.array(ary, copy=True, order="C"))


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    # CUDA leaves new device memory uninitialised; the poison makes reading it visible
    return DeviceArray(poison(shape, dtype))


def device_array_like(ary, stream=0):
    return device_array(ary.shape, ary.dtype)


class Stream:
    """`cuda.stream()` on the simulator: work given to it runs at once, in order, so it is always
    complete (a real stream runs asynchronously; code correct there is correct here)."""

    def synchronize(self) -> None:
        pass

    def auto_synchronize(self):
        import contextlib

        return contextlib.nullcontext(self)

    def __repr__(self) -> str:
        return "<simulated stream (synchronous)>"


class Event:
    """`cuda.event()`: records the host clock when recorded (work before it is already done here)."""

    def __init__(self, timing: bool = True) -> None:
        self.timing = timing
        self._t: float | None = None

    def record(self, stream: Any = 0) -> None:
        self._t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def wait(self, stream: Any = 0) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "Event") -> float:
        return event_elapsed_time(self, end)


def stream() -> Stream:
    return Stream()


def default_stream() -> Stream:
    return Stream()


def event(timing: bool = True) -> Event:
    return Event(timing)


def event_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events, as `cuda.event_elapsed_time`."""
    if start._t is None or end._t is None:
        raise RuntimeError("cuda.event_elapsed_time needs two events that were recorded (event.record())")
    return (end._t - start._t) * 1000.0


def pinned_array(shape: Any, dtype: Any = np.float64, strides: Any = None, order: str = "C") -> np.ndarray:
    """Page-locked host memory on a GPU; an ordinary NumPy array here (contents uninitialised)."""
    return np.empty(shape, dtype, order=order)


def pinned_array_like(ary: np.ndarray) -> np.ndarray:
    return np.empty_like(ary)


# what the simulator engine puts in place of numba-cuda's host functions (helpers.engine patches these)
HOST_API = {
    "to_device": to_device,
    "device_array": device_array,
    "device_array_like": device_array_like,
    "stream": stream,
    "default_stream": default_stream,
    "event": event,
    "event_elapsed_time": event_elapsed_time,
    "pinned_array": pinned_array,
    "pinned_array_like": pinned_array_like,
}
