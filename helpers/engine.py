"""Deprecated name of `helpers.device` (GPU or simulator), kept because tests and notebooks written
before the rename import it: `helpers.engine` is the very same module object."""

import sys

from . import device

sys.modules[__name__] = device
