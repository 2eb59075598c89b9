"""Outputs against the spec: which cells are wrong (`wrong_mask`, the one rule: integers exactly,
floats within the puzzle's tolerance) and how to say so (`render_diff`): as many digits as the
tolerance needs, the difference and the tolerance, never-written cells told apart from cells the
kernel wrote NaN or inf into (and the line that wrote them, where the trace knows), float bit
patterns held in integers shown as floats and in hex.
"""

from __future__ import annotations

import numpy as np

from .sim.trace import READ

__all__ = ["compare", "nothing_written", "render_diff", "written_mask", "wrong_mask"]


def wrong_mask(want: np.ndarray, got: np.ndarray, puzzle, tol=None) -> np.ndarray | None:
    """Boolean mask of the wrong cells, or None when the shapes differ. `tol`: per-element absolute
    tolerances (a puzzle's `tolerance` rule) in place of its rtol/atol."""
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape:
        return None
    if got.dtype.kind in "iub" or want.dtype.kind in "iub":  # integer data: exact
        return np.asarray(want != got)
    with np.errstate(all="ignore"):
        if tol is not None:  # NaN and inf fail: the comparison is False
            return ~(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= tol)
        return ~np.isclose(got, want, rtol=puzzle.rtol, atol=puzzle.atol, equal_nan=False)


def written_mask(trace, name: str) -> np.ndarray | None:
    """Which elements of global array `name` the run wrote (plain stores or atomics); None without a
    trace."""
    if trace is None:
        return None
    try:
        info = trace.array(name)
    except KeyError:
        return None
    size = int(np.prod(info.shape, dtype=np.int64))
    rows = trace.acc[(trace.acc["array"] == info.id) & (trace.acc["kind"] != READ)]
    return (np.bincount(rows["index"], minlength=size)[:size] > 0).reshape(info.shape)


def writer_line(trace, name: str, flat: int) -> str | None:
    """ "line N: `source`" of the last write to element `flat` of `name`, or None."""
    if trace is None:
        return None
    info = trace.array(name)
    rows = trace.acc[
        (trace.acc["array"] == info.id) & (trace.acc["kind"] != READ) & (trace.acc["index"] == flat)
    ]
    if not len(rows):
        return None
    site = trace.sites[int(rows["site"][-1])]
    return f"line {site.lineno}: `{site.text}`"


def compare(want, got, puzzle, *, name: str = "", trace=None, tol=None) -> str | None:
    """None if right, else what is wrong, compactly. With the run's `trace` (and the output's
    `name`), cells never written are told apart from cells written with a wrong (or NaN) value.
    `tol`: per-element tolerances, as `wrong_mask` takes them."""
    want, got = np.asarray(want), np.asarray(got)
    bad = wrong_mask(want, got, puzzle, tol)
    if bad is None:
        return f"shape {got.shape}, expected {want.shape}"
    if not bad.any():
        return None
    return render_diff(want, got, bad, puzzle=puzzle, name=name, trace=trace, tol=tol)


_AS_FLOAT = {4: (np.float32, np.uint32, 9), 8: (np.float64, np.uint64, 17)}


def _bits_text(v) -> str:
    """An integer holding a float's bit pattern, as that float and in hex."""
    a = np.ascontiguousarray(np.asarray(v).reshape(1))
    if a.dtype.itemsize not in _AS_FLOAT:
        return str(v)
    f, u, digits = _AS_FLOAT[a.dtype.itemsize]
    return f"{float(a.view(f)[0]):.{digits}g} (0x{int(a.view(u)[0]):0{2 * a.dtype.itemsize}x})"


class _Format:
    """Numbers as the message shows them: enough significant digits to tell expected from got."""

    def __init__(self, want, got, bad, puzzle):
        self.bits = (
            bool(getattr(puzzle, "bits", False)) and want.dtype.kind in "iu" and got.dtype.kind in "iu"
        )
        self.float = want.dtype.kind == "f" or got.dtype.kind == "f"
        top = 17 if np.float64 in (want.dtype.type, got.dtype.type) else 9
        self.digits = 4
        if self.float:
            for i in list(zip(*np.nonzero(bad)))[:6]:
                w, g = float(want[i]), float(got[i])
                d = 4
                while d < top and f"{w:.{d}g}" == f"{g:.{d}g}":
                    d += 1
                self.digits = max(self.digits, d)

    def __call__(self, v) -> str:
        if self.bits:
            return _bits_text(v)
        if isinstance(v, (float, np.floating)):
            return "nan" if np.isnan(v) else f"{v:.{self.digits}g}"
        return str(v)


def render_diff(want, got, bad, *, puzzle=None, name: str = "", trace=None, tol=None) -> str:
    fmt = _Format(want, got, bad, puzzle)
    written = written_mask(trace, name) if name else None
    if written is not None and written.shape != bad.shape:
        written = None
    nonfinite = ~np.isfinite(got) if got.dtype.kind == "f" else np.zeros_like(bad)
    if written is not None:
        never = ~written
        wrote_bad = nonfinite & written
    else:  # no trace (the GPU stage): a NaN may be the poison or written
        never = np.isnan(got) if got.dtype.kind == "f" else np.zeros_like(bad)
        wrote_bad = np.zeros_like(bad)
    counts = []
    if (never & bad).any():
        counts.append(
            f"{int((never & bad).sum())} never written: still the "
            + ("starting value" if written is not None and got.dtype.kind in "iu" else "poison value")
            + ("" if written is not None else " (or NaN written by the kernel)")
        )
    if (wrote_bad & bad).any():
        counts.append(f"{int((wrote_bad & bad).sum())} written as NaN or inf by the kernel")
    lines = [
        f"{int(bad.sum())} of {bad.size} elements wrong" + (f" ({'; '.join(counts)})" if counts else "") + ";"
    ]
    lines[0] += " first ones:"
    tol_text = puzzle is not None and fmt.float and not fmt.bits
    for idx in list(zip(*np.nonzero(bad)))[:6]:
        i = tuple(int(x) for x in idx)
        line = f"  [{', '.join(map(str, i))}]: expected {fmt(want[i])}, got {fmt(got[i])}"
        w, g = want[i], got[i]
        if never[i]:
            line += " (never written)"
        elif wrote_bad[i]:
            src = writer_line(trace, name, int(np.ravel_multi_index(i, bad.shape)))
            line += f" (the kernel wrote {fmt(g)}" + (f" at {src})" if src else ")")
        elif tol_text and np.isfinite(float(w)) and np.isfinite(float(g)):
            here = float(tol[i]) if tol is not None else puzzle.atol + puzzle.rtol * abs(float(w))
            line += f" (off by {abs(float(g) - float(w)):.2g}; the tolerance here is {here:.2g})"
        lines.append(line)
    if want.ndim == 1 and want.size <= 32 and not fmt.bits:
        w = max(max(len(fmt(x)) for x in want), max(len(fmt(x)) for x in got), 3)
        lines.append("  expected " + " ".join(fmt(x).rjust(w) for x in want))
        lines.append("  got      " + " ".join(fmt(x).rjust(w) for x in got))
        lines.append("           " + " ".join(("X" if b else ".").rjust(w) for b in bad))
    elif want.ndim == 2 and want.shape[0] <= 16 and want.shape[1] <= 32:
        lines.append("  wrong cells (X), rows top to bottom:")
        for r in range(want.shape[0]):
            lines.append("    " + "".join("X" if b else "." for b in bad[r]))
    return "\n".join(lines)


def nothing_written(outputs, trace, kernel_name: str) -> str | None:
    """None when the run stored to one of `outputs`; else what the threads did instead, and the
    likely cause (a guard no thread passes)."""
    out_ids = [trace.array(n).id for n in outputs]
    stores = trace.acc["kind"] != READ
    if (np.isin(trace.acc["array"], out_ids) & stores).any():
        return None
    stored = {trace.arrays[a] for a in np.unique(trace.acc["array"][stores])}
    others = sorted(a.name for a in stored if a.space == "global")
    reads = int((trace.acc["kind"] == READ).sum())
    outs = ", ".join(f"`{n}`" for n in outputs)
    did = (
        f"They wrote only {', '.join(f'`{o}`' for o in others)}."
        if others
        else f"They ran (they made {reads} reads) but stored nothing to global memory."
        if reads
        else "They made no global memory access at all."
    )
    return (
        f"`{kernel_name}` wrote nothing to {outs}: none of its {trace.nblocks * trace.nthreads} "
        f"threads reached a store to {'it' if len(outputs) == 1 else 'them'}. {did} Look at the "
        "condition in front of the store: a guard such as `if i < n:` that no thread passes (an index "
        "that left out the block's offset, a comparison the wrong way round, the wrong size), or a "
        "`return` every thread takes first."
    )
