"""Host-side device arrays for the simulator engine: `cuda.to_device` and friends.

There is no separate device memory here; a DeviceArray owns a private copy so
that host code behaves as it does with a GPU (changes show after copy_to_host).
"""
from __future__ import annotations

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
