"""Colours and figure plumbing, in one place.

Palette: Okabe & Ito (2008), safe for the common colour-vision deficiencies.
Vermillion is kept for "wrong" (over budget, out of bounds, the faulting
thread), so threads never use it, nor its near twin orange, nor the grey of
"several writers". More than 6 threads get viridis (also colour-blind safe),
spread so that neighbouring threads, along x and along y, get distant shades.
"""

from __future__ import annotations

import io
import math
import textwrap

import matplotlib
import numpy as np
from matplotlib.figure import Figure

BAD = "#D55E00"  # vermillion: errors, over budget
GOOD = "#0072B2"  # blue: within budget, ideal
IDEAL = "#009E73"  # bluish green: the ideal / the best possible
MUTED = "#999999"  # grey: context, wasted
EMPTY = "#F2F2F2"  # cells nobody touched
READ_TINT = "#E8F1FA"  # cells read in this block
INK = "#222222"

THREAD_PALETTE = ("#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
MAX_DISCRETE = len(THREAD_PALETTE)
FADED = "#DDDDDD"  # threads other than the one picked with thread=(x, y)

FONT = {"title": 11, "panel": 9, "label": 8, "cell": 6.5, "note": 8}


def thread_colors(n: int, width: int | None = None) -> list:
    """Colours for threads 0..n-1 of blocks `width` threads wide (default: 1-D): discrete up to 6,
    then viridis at frac(0.618 x + 0.382 y), so a thread's left, right, upper and lower neighbours
    all get shades at least 0.236 of the map away (a 1-D run of 8 is 8 clearly different shades)."""
    if n <= MAX_DISCRETE:
        return list(THREAD_PALETTE[:n])
    cmap = matplotlib.colormaps["viridis"]
    width = width or n
    return [cmap(0.95 * ((0.618034 * (i % width) + 0.381966 * (i // width)) % 1.0)) for i in range(n)]


def text(ax, *args, **kw):
    """ax.text left out of constrained layout: labels inside the axes need no room around it,
    and measuring hundreds of them is most of the drawing time."""
    return ax.text(*args, in_layout=False, **kw)


def bars(ax, x, height, colors, *, width: float = 0.8, **kw):
    """A bar chart as one collection of rectangles (ax.bar adds one patch per bar and updates the
    data limits each time, most of a view's drawing time with hundreds of bars): bars of `height`
    centred on `x`, `width` wide, from 0. The caller sets the axis limits."""
    from matplotlib.collections import PolyCollection

    x = np.asarray(x, float)
    height = np.asarray(height, float)
    lo, hi = x - width / 2, x + width / 2
    zero = np.zeros_like(x)
    corners = ((lo, zero), (lo, height), (hi, height), (hi, zero))
    verts = np.stack([np.stack(c, axis=-1) for c in corners], axis=1)
    return ax.add_collection(
        PolyCollection(verts, facecolors=colors, edgecolors="none", linewidths=0, **kw), autolim=False
    )


def tint(color, amount: float = 0.35):
    """`color` mixed with white: the lighter shade marks a cell a thread read."""
    r, g, b = matplotlib.colors.to_rgb(color)
    return (1 - amount * (1 - r), 1 - amount * (1 - g), 1 - amount * (1 - b))


def ink_on(color) -> str:
    """Black or white text, whichever reads better on `color`."""
    r, g, b = matplotlib.colors.to_rgb(color)
    return "white" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.45 else INK


class VizFigure(Figure):
    """A matplotlib Figure that shows itself as a PNG in Jupyter and Colab when it is a cell's
    value, with or without pyplot or `%matplotlib inline` (IPython looks for `_repr_png_`)."""

    def _repr_png_(self):
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()


def new_figure(width: float, height: float) -> Figure:
    """A figure not registered with pyplot: no global state, no double display in Jupyter,
    shown inline when returned from a cell, saved with `fig.savefig("x.png" or "x.svg")`."""
    fig = VizFigure(
        figsize=(min(max(width, 4.0), 18.0), min(max(height, 2.0), 40.0)), dpi=100, layout="constrained"
    )
    fig.patch.set_facecolor("white")
    return fig


def message_figure(title: str, text: str, color: str = INK) -> Figure:
    """A small figure that only says something (nothing to draw, or a diagnostic with no trace)."""
    fig = new_figure(7, 1.8)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        fontsize=FONT["panel"] + 1,
        color=color,
        wrap=True,
        transform=ax.transAxes,
    )
    fig.suptitle(title, fontsize=FONT["title"])
    return fig


def fmt_value(v) -> str:
    """A cell value short enough for a cell."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "?"
    if math.isnan(f):
        return "nan"
    if f.is_integer() and abs(f) < 1e5:
        return str(int(f))
    if abs(f) < 10:
        return f"{f:.2f}"
    if abs(f) < 1000:
        return f"{f:.1f}" if abs(f) < 100 else f"{f:.0f}"
    return f"{f:.0e}"


def footnote(fig, *paragraphs, color=INK):
    """Explanatory text under the figure, wrapped to its width."""
    width = max(40, int(fig.get_figwidth() * 15))  # characters of 8 pt text per line
    fig.supxlabel(
        "\n".join(textwrap.fill(p, width) for p in paragraphs if p), fontsize=FONT["note"], color=color
    )


def title(fig, text: str, color=INK, margin: float = 0.0):
    """The figure title, wrapped to the figure's width less `margin` inches each side (a legend)."""
    width = max(40, int((fig.get_figwidth() - 2 * margin) * 12))  # characters of 11 pt text per line
    lines = [textwrap.fill(line, width) for line in str(text).split("\n")]
    fig.suptitle("\n".join(lines), fontsize=FONT["title"], color=color)


def pct(x: float) -> str:
    """A fraction as a percentage, one decimal only where it matters: 12.5%, 91%, 100%."""
    v = 100 * float(x)
    return f"{v:.0f}%" if abs(v - round(v)) < 0.05 or v >= 99.5 else f"{v:.1f}%"


def short(text: str, n: int = 70) -> str:
    """`text` on one line, at most n characters: cut after the last whole sentence that fits when
    there is one past half of n, else at a word boundary, never mid-word."""
    text = " ".join(str(text).split())
    if len(text) <= n:
        return text
    head = text[: n - 1]
    end = max(head.rfind(". "), head.rfind(".) "))
    if end > n // 2:
        return head[: end + 1] + " …"
    return (head.rsplit(" ", 1)[0] if " " in head else head) + "…"
