"""How n elements split over ranks: even contiguous parts, the first n % size one longer."""

from __future__ import annotations


def split(n: int, size: int, *, what: str = "elements", least: int = 1) -> list[tuple[int, int]]:
    """[(lo, hi)] per rank. Every part holds at least `least` elements (a stencil needs as many as
    its halo): a ValueError names the sizes and what to change otherwise."""
    if size < 1:
        raise ValueError(f"a run needs at least 1 rank, got {size}")
    if n < size * least:
        raise ValueError(
            f"{n} {what} cannot be split over {size} ranks with at least {least} each: use at most "
            f"{max(1, n // least)} ranks, or at least {size * least} {what}"
        )
    base, extra = divmod(n, size)
    bounds, lo = [], 0
    for r in range(size):
        hi = lo + base + (1 if r < extra else 0)
        bounds.append((lo, hi))
        lo = hi
    return bounds
