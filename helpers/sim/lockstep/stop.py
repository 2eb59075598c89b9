"""How lockstep tells the dispatcher (helpers/sim/dispatch.py) why it stopped: a typed `Stop`."""

from __future__ import annotations

from .. import errors as E

UNSUPPORTED, RUNAWAY, DIAGNOSTIC = "unsupported", "runaway", "diagnostic"


class Stop(Exception):
    """Lockstep cannot finish this launch. `kind`: UNSUPPORTED (a construct or a pattern it does not
    run), RUNAWAY (one of its loop or time limits), DIAGNOSTIC (a problem whose report the reference
    engine gives; `cls` is the helpers.sim.errors class it would raise); `text`: the reason in words.
    `str(stop)` is the reason `Launch.fallback` shows."""

    def __init__(self, kind: str, text: str, cls: type[E.SimulatorError] | None = None) -> None:
        super().__init__(kind, text, cls)
        self.kind, self.text, self.cls = kind, text, cls

    @classmethod
    def unsupported(cls, text: str) -> "Stop":
        return cls(UNSUPPORTED, text)

    @classmethod
    def runaway(cls, text: str) -> "Stop":
        return cls(RUNAWAY, text, E.Runaway)

    @classmethod
    def diagnostic(cls, error: type[E.SimulatorError], text: str) -> "Stop":
        return cls(DIAGNOSTIC, text, error)

    def __str__(self) -> str:
        if self.kind == DIAGNOSTIC:
            return f"{self.kind}: {self.text} ({self.cls.__name__})"
        return f"{self.kind}: {self.text}"
