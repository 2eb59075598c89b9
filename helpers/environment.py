"""What this machine offers the course, and one plain sentence when something is missing.

Every notebook's setup cell calls `prepare()` before anything imports numba's CUDA target:

- Colab's GPU runtime already has numba, numba-cuda (with NVVM), numpy and matplotlib: nothing
  is installed.
- Colab's CPU-only runtime has numba and numpy but no numba-cuda: `prepare()` installs numba-cuda
  and the two NVIDIA compiler wheels (the smallest set with which `compile_ptx` works for sm_75:
  about 140 MB for CUDA 12, 350 MB for CUDA 13, chosen by `runtime_cuda()`), then switches numba's
  CUDA target to it in the running kernel, so no restart is needed. Where that cannot be done,
  kernels run on the simulator and it says what is missing.
- Anywhere else it installs nothing and says what is missing.

`explain(exc)` turns the errors of a wrong environment (setup not run, numba-cuda or NVVM missing,
a driver older than the PTX, no GPU) into an `EnvironmentProblem` whose message names the fix.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import subprocess
import sys
import warnings

DISTRIBUTION = "massively-parallel"  # the course's distribution name: the marker of a real install

# Colab GPU runtime's own versions of what the compile check needs (.ci/colab-constraints.txt).
# nvidia-cuda-nvcc-cu12 holds NVVM; numba-cuda 0.22 also asks NVRTC which architectures exist.
COMPILE_WHEELS = (
    "numba-cuda==0.22.2",
    "cuda-bindings==12.9.7",
    "cuda-core==0.3.2",
    "cuda-pathfinder==1.6.0",
    "nvidia-cuda-nvcc-cu12==12.8.93",
    "nvidia-cuda-nvrtc-cu12==12.8.93",
)
# A CUDA 13 runtime (torch cu130, cupy-cuda13x: the likely next Colab) gets the CUDA 13.0 compiler,
# which driver 580 (CUDA 13.0) loads; numba-cuda 0.30.4 is the first with a cu13 extra and takes
# numba 0.61. The wheels lost their -cu12 suffix; nvidia-nvvm holds NVVM.
COMPILE_WHEELS_CU13 = (
    "numba-cuda==0.30.4",
    "cuda-bindings==13.0.3",
    "cuda-core==1.2.2",
    "cuda-pathfinder==1.9.1",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-nvrtc==13.0.88",
)
COMPILE_SETS = {12: COMPILE_WHEELS, 13: COMPILE_WHEELS_CU13}
NVVM_WHEEL = {12: "nvidia-cuda-nvcc-cu12", 13: "nvidia-nvvm"}  # the wheel that holds NVVM
# numba-cuda takes over `numba.cuda` through .pth files run at interpreter start; installed into
# a running kernel, these modules do the same thing if imported before `numba.cuda` is.
REDIRECTORS = ("_cuda_bindings_redirector", "_numba_cuda_redirector")
HOST_ARRAY_WARNING = r"Host array used in CUDA kernel will incur copy overhead"

SETUP_FIRST = (
    "Run the notebook's first code cell (the setup cell) first, then this cell again: it "
    "makes the course importable and chooses where kernels run (the GPU, or the simulator "
    "when there is none)."
)
NUMBA_CUDA_MISSING = (
    "numba-cuda is not installed, so kernels run on the simulator only and no check "
    "compiles them with real Numba. Fix: on Colab run the setup cell on a fresh runtime "
    "(Runtime > Disconnect and delete runtime); elsewhere `pip install -r "
    "requirements-runtime.txt` from the course, then restart the kernel."
)
NVVM_MISSING = (
    "numba-cuda cannot find NVVM/NVRTC (the CUDA compiler libraries), so kernels cannot be "
    "compiled for a GPU. Fix: `pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvrtc-cu12` "
    '(or `pip install "numba-cuda[cu12]"`), then restart the kernel.'
)
PTX_TOO_NEW = (
    "The GPU driver is older than the CUDA compiler that produced this kernel's PTX "
    "(CUDA_ERROR_UNSUPPORTED_PTX_VERSION){driver}. Fix: update the NVIDIA driver, or install "
    'the NVVM that matches it, e.g. `pip install "{wheel}=={cuda}.*"`, and '
    "restart the kernel. On Colab: Runtime > Disconnect and delete runtime gives a fresh one."
)
NO_GPU = (
    "The engine 'gpu' was asked for, but numba-cuda finds no CUDA GPU here. Fix: on Colab, Runtime > "
    "Change runtime type > T4 GPU, then run the setup cell again; elsewhere run on the simulator "
    "with helpers.use('sim') (or MP_ENGINE=sim)."
)
NEEDS_RESTART = (
    "numba's own CUDA target was imported before the setup cell could add numba-cuda, so the "
    "compile check is off and kernels run on the simulator. Fix: Runtime > Restart session, "
    "then run the setup cell first."
)

_setup_ran = False


class EnvironmentProblem(RuntimeError):
    """The machine, not the kernel, is wrong; the message names the fix."""


def on_colab() -> bool:
    if "COLAB_RELEASE_TAG" in os.environ:
        return True
    try:
        return importlib.util.find_spec("google.colab") is not None
    except ImportError:
        return False


def has_numba_cuda() -> bool:
    return importlib.util.find_spec("numba_cuda") is not None


def _in_notebook() -> bool:
    """A Jupyter or Colab kernel (its shell has a `kernel`), not a plain IPython shell or a test."""
    ip = sys.modules.get("IPython")
    shell = ip is not None and getattr(ip, "get_ipython", lambda: None)()
    return bool(shell) and getattr(shell, "kernel", None) is not None


def require_setup() -> None:
    """Raise EnvironmentProblem(SETUP_FIRST) in a notebook whose setup cell has not run."""
    if not _setup_ran and _in_notebook():
        raise EnvironmentProblem(SETUP_FIRST)


def _driver_major() -> int | None:
    """The CUDA major of the installed driver (libcuda's own answer, without importing numba.cuda)."""
    import ctypes

    try:
        version = ctypes.c_int()
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
            return version.value // 1000
    except (OSError, AttributeError):
        pass
    return None


def _wheels_major(dists=None) -> int | None:
    """The CUDA major the runtime's wheels were built for: torch's +cuNNN, cupy-cudaNNx, cuda-bindings."""
    from importlib.metadata import PackageNotFoundError, version

    def get(name):
        try:
            return dists[name] if dists is not None else version(name)
        except (KeyError, PackageNotFoundError):
            return None

    torch = get("torch") or ""
    if "+cu" in torch:
        return int(torch.split("+cu")[1]) // 10
    for major in (13, 12):
        if get(f"cupy-cuda{major}x"):
            return major
    bindings = get("cuda-bindings")
    return int(bindings.split(".")[0]) if bindings else None


def runtime_cuda(driver=_driver_major, wheels=_wheels_major) -> int:
    """The CUDA major of this runtime: its driver's where there is one, else its CUDA wheels'; 12 when
    nothing says (today's Colab). Picks the compile check's wheels, which must match it."""
    major = driver() or wheels() or 12
    return major if major in COMPILE_SETS else max((k for k in COMPILE_SETS if k <= major), default=12)


def install_compiler(run=subprocess.run, cuda: int | None = None) -> str | None:
    """Install the compile check's wheels (COMPILE_SETS[cuda], default `runtime_cuda()`) into the
    running interpreter; None on success, else why not."""
    if "numba.cuda" in sys.modules:
        return NEEDS_RESTART
    wheels = COMPILE_SETS[cuda or runtime_cuda()]
    done = run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *wheels],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        last = (done.stderr or "").strip().splitlines()[-1:] or ["(no message)"]
        return (
            f"Installing numba-cuda's compiler failed ({last[0]}), so kernels run on the simulator "
            "and no check compiles them. Check the runtime's network, then run the setup cell again."
        )
    importlib.invalidate_caches()
    for name in REDIRECTORS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    return None if has_numba_cuda() else NUMBA_CUDA_MISSING


def prepare(install: bool | None = None, run=subprocess.run) -> list:
    """Called by the setup cell before numba's CUDA target is imported. Returns the notes printed.

    `install`: add the compile check's wheels when numba-cuda is missing (default: only on Colab).
    """
    global _setup_ran
    _setup_ran = True
    # The harness and the puzzle-size launches pass NumPy arrays on purpose: the copy is the point.
    warnings.filterwarnings("ignore", message=HOST_ARRAY_WARNING)
    notes = []
    if not has_numba_cuda():
        if install is None:
            install = on_colab()
        why = install_compiler(run) if install else NUMBA_CUDA_MISSING
        if why:
            notes.append(why)
    for n in notes:
        print(n)
    return notes


def versions() -> str:
    """'numba X, numba-cuda Y' (or 'numba-cuda missing'), never raising."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for dist in ("numba", "numba-cuda", "numpy"):
        try:
            out.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            out.append(f"{dist} missing")
    return ", ".join(out)


def _driver_cuda() -> tuple | None:
    try:
        from numba.cuda.cudadrv.driver import driver

        return tuple(driver.get_version())
    except Exception:
        return None


def explain(exc: BaseException) -> str | None:
    """The plain message for an environment error, or None when `exc` is not one."""
    text = f"{type(exc).__name__}: {exc}"
    name = getattr(exc, "name", None)
    if isinstance(exc, ImportError) and name in ("numba_cuda", "numba.cuda"):
        return NUMBA_CUDA_MISSING
    if getattr(exc, "code", None) == 222 or "UNSUPPORTED_PTX_VERSION" in text:
        drv = _driver_cuda()
        driver = f"; this driver supports CUDA {drv[0]}.{drv[1]}" if drv else ""
        cuda = f"{drv[0]}.{drv[1]}" if drv else "12.X"
        wheel = NVVM_WHEEL.get(drv[0] if drv else 12, NVVM_WHEEL[13])
        return PTX_TOO_NEW.format(driver=driver, cuda=cuda, wheel=wheel)
    if any(
        s in text
        for s in (
            "libNVVM cannot be found",
            "NvvmSupportError",
            "libnvvm",
            "libnvrtc",
            "NVRTC",
            'Failure finding "libnvvm',
        )
    ):
        return NVVM_MISSING
    if (
        type(exc).__name__ == "CudaSupportError"
        or "no CUDA-capable device" in text
        or "Error at driver init" in text
    ):
        return NO_GPU if _setup_ran or not _in_notebook() else SETUP_FIRST
    return None


def reraise(exc: BaseException) -> None:
    """Raise EnvironmentProblem from `exc` when explain() knows it, else `exc` itself."""
    msg = explain(exc)
    if msg:
        raise EnvironmentProblem(msg) from exc
    raise exc


@contextlib.contextmanager
def quiet_host_arrays():
    """Silence numba-cuda's host-array copy warning where the course passes host arrays on purpose."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=HOST_ARRAY_WARNING)
        yield
