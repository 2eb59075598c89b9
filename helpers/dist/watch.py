"""Buffers in flight, watched on the learner's lines (sys.settrace on the file of the checked
function): an isend's buffer written, or an irecv's buffer read or written, before its wait()
returned. A write shows as the buffer's contents changing (from the data posted, or from the
poison a pending receive holds) and is blamed on the line just run; a read of a pending receive
is a name on the line about to run whose array overlaps the buffer."""

from __future__ import annotations

import ast
import linecache
import sys

import numpy as np

from .comm import Where, poison
from .errors import BufferInUse

UNSAFE = (ast.Call, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Lambda)


def _uses(filename: str, cache: dict) -> dict:
    """{line: [(text, expression ast or None, name)]} of the names and subscripts a file's lines use."""
    if filename in cache:
        return cache[filename]
    out: dict[int, list] = {}
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        cache[filename] = out
        return out
    covered = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if not any(isinstance(n, UNSAFE) for n in ast.walk(node.slice)):
                covered.add(id(node.value))
                expr = ast.Expression(ast.Subscript(node.value, node.slice, ast.Load()))
                ast.fix_missing_locations(ast.copy_location(expr.body, node))
                out.setdefault(node.lineno, []).append((ast.unparse(node), expr, node.value.id))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in covered and isinstance(node.ctx, ast.Load):
            out.setdefault(node.lineno, []).append((node.id, None, node.id))
    cache[filename] = out
    return out


class Watch:
    def __init__(self, world, fn):
        self.world = world
        self.filename = getattr(fn, "__code__", None) and fn.__code__.co_filename
        self.last: dict = {}  # frame -> the line it last started
        self.cache: dict = {}
        self.before = None

    def __enter__(self):
        self.before = sys.gettrace()
        sys.settrace(self._call)
        return self

    def __exit__(self, *exc):
        sys.settrace(self.before)

    def _call(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename == self.filename:
            return self._line
        return None

    def _line(self, frame, event, arg):
        if event == "line":
            self.world.tick(f"line {frame.f_lineno}")
            self.changed(frame)
            self.reads(frame)
            self.last[frame] = frame.f_lineno
        elif event == "return":
            self.changed(frame)
            self.last.pop(frame, None)
        return self._line

    def _where(self, frame, lineno) -> Where:
        return Where(self.filename, lineno, linecache.getline(self.filename, lineno).strip())

    def changed(self, frame) -> None:
        """A pending buffer whose contents changed during the line just run."""
        rank = self.world.current
        for op in self.world.unwaited[rank]:
            if op.done:
                continue
            line = self.last.get(frame)
            if line is None:
                continue
            self._written(op, self._where(frame, line))

    def _written(self, op, where: Where) -> None:
        if op.kind == "send":
            if not np.array_equal(op.buf, op.payload, equal_nan=True):
                raise BufferInUse(
                    f"rank {op.rank} wrote the buffer of its isend to rank {op.peer} (posted at {op.where}) "
                    f"at {where}, before waiting for it. Until req.wait() returns the engine may still be "
                    f"reading that memory, so rank {op.peer} could receive the new values. Call req.wait() "
                    "before writing the buffer, or send from another buffer."
                )
        else:
            held = op.buf.copy()
            poison(held)
            if not np.array_equal(op.buf, held, equal_nan=True):
                raise BufferInUse(
                    f"rank {op.rank} wrote into the buffer of its irecv from rank {op.peer} (posted at "
                    f"{op.where}) at {where}, before waiting for it: the arriving message overwrites it "
                    "whenever it lands. Call req.wait() first, or receive into another buffer."
                )

    def reads(self, frame) -> None:
        """A pending receive's buffer named on the line about to run."""
        rank = self.world.current
        pending = [op for op in self.world.unwaited[rank] if op.kind == "recv" and not op.done]
        if not pending:
            return
        for text, expr, name in _uses(frame.f_code.co_filename, self.cache).get(frame.f_lineno, ()):
            if name not in frame.f_locals and name not in frame.f_globals:
                continue
            try:
                value = (
                    eval(compile(expr, "<watch>", "eval"), frame.f_globals, frame.f_locals)
                    if expr
                    else (frame.f_locals[name] if name in frame.f_locals else frame.f_globals[name])
                )
            except Exception:
                continue
            if not isinstance(value, np.ndarray):
                continue
            for op in pending:
                if np.may_share_memory(value, op.buf):
                    raise BufferInUse(
                        f"rank {rank} uses `{text}` at {self._where(frame, frame.f_lineno)} while its irecv "
                        f"from rank {op.peer} into that memory (posted at {op.where}) is not yet waited: "
                        "until req.wait() returns the buffer holds no message (here: garbage), and the "
                        "message may land in the middle of your read. Call req.wait() before this line."
                    )

    def complete(self, op, where: Where) -> None:
        """At wait(): a change made between the last watched line and the wait."""
        self._written(op, where)

    def leave(self, rank: int) -> None:
        """The rank's function returned (its frames' last lines were checked on 'return')."""
