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

from .comm import Where
from .errors import BufferInUse

UNSAFE = (ast.Call, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Lambda)


def _uses(filename: str, cache: dict) -> dict:
    """{line: [(text, index expression or None, name)]} of the names and subscripts `name[index]` a
    file's lines use; the index expression, `__mp_key[index]`, evaluates to the index itself."""
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
                key = ast.Subscript(ast.Name("__mp_key", ast.Load()), node.slice, ast.Load())
                expr = ast.fix_missing_locations(ast.Expression(ast.copy_location(key, node)))
                code = compile(expr, "<watch>", "eval")
                out.setdefault(node.lineno, []).append((ast.unparse(node), code, node.value.id))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in covered and isinstance(node.ctx, ast.Load):
            out.setdefault(node.lineno, []).append((node.id, None, node.id))
    cache[filename] = out
    return out


class _Key:
    def __getitem__(self, key):
        return key


def _key(code, frame):
    """The index a line's `name[index]` uses, evaluated in its frame (None if it cannot be)."""
    try:
        return eval(code, frame.f_globals, {**frame.f_locals, "__mp_key": _Key()})
    except Exception:
        return None


def _touches(base: np.ndarray, key, buf: np.ndarray) -> bool:
    """Whether base[key] reaches any byte of buf (a view of the same memory)."""
    if key is None:
        return False
    marker = np.zeros(base.shape, bool)
    try:
        marker[key] = True
    except Exception:
        return False
    picked = np.nonzero(marker)
    offsets = sum(i.astype(np.int64) * st for i, st in zip(picked, base.strides)) if picked else np.zeros(1)
    start = base.__array_interface__["data"][0]
    lo = buf.__array_interface__["data"][0]
    addr = start + np.asarray(offsets)
    return bool(np.any((addr >= lo) & (addr < lo + buf.nbytes)))


class Watch:
    def __init__(self, world, fn):
        self.world = world
        self.filename = getattr(fn, "__code__", None) and fn.__code__.co_filename
        self.last: dict = {}  # frame -> the line it last started
        self.cache: dict = {}
        self.before = None

    def __enter__(self):
        self.before = sys.gettrace()
        sys.settrace(self.call)
        return self

    def __exit__(self, *exc):
        sys.settrace(self.before)

    def call(self, frame, event, arg):
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
            if not np.array_equal(op.buf, op.payload, equal_nan=True):  # a receive's payload: the poison
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
            local = frame.f_locals
            base = local[name] if name in local else frame.f_globals.get(name)
            if not isinstance(base, np.ndarray):
                continue
            for op in pending:
                if not np.may_share_memory(base, op.buf):
                    continue
                if expr is not None and not _touches(base, _key(expr, frame), op.buf):
                    continue
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
