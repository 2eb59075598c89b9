"""PMPP chapter 3, multidimensional grids and data: colour to grayscale, image blur, naive matmul.

Every kernel here maps a 2-D grid of 2-D blocks onto a 2-D output: x runs along columns (the fast,
contiguous index of a C-order array), y along rows. One op ladder per file:
- grayscale.py: ch03_grayscale (worked), one pixel per thread.
- blur.py: ch03_blur (exercise), a box blur cut off at the edges.
- matmul.py: ch03_matmul (exercise), one output per thread.
- common.py: the chapter tag, the launch arithmetic, the image shapes, the notebook's test picture.
- bench.py: the benchmark and its GOAL.
"""

from .bench import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    GOAL,
    _peer_gray,
    benchmark,
)
from .blur import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    BLUR,
    blur_kernel,
    cases_blur,
    spec_blur,
)
from .common import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    CHAPTER,
    test_image,
)
from .grayscale import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_grayscale,
    grayscale_kernel,
    spec_grayscale,
)
from .matmul import (  # noqa: F401  (re-exported: notebooks and tests use chNN.<name>)
    cases_matmul,
    matmul_kernel,
    spec_matmul,
)

__all__ = ["BLUR"]  # what a star import gives: the constants
