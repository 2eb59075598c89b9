# Over 400 lines: the rewriter is one class, one method per construct of the kernel's AST.
"""The kernel's AST rewritten to run every statement over the active lanes.

Control flow becomes calls on the mask keeper `_C` (control.py): `if` pushes a mask, loops narrow it
trip by trip, `break`/`continue`/`return` take lanes out. Array subscripts become `_R.ld`/`_R.st`
with a site number (one per access instruction, as the greenlet engine's sites), atomics and array
declarations calls on `_R`, other calls `_R.call` (device functions, builtins, casts). Assignments
merge under the mask (`_C.set`). Arithmetic is left alone: lane values (values.V) overload it.

static.py's `check` refuses first what lockstep does not run (a Stop naming the construct and line);
the launch then goes to the greenlet engine.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass, field

from ..semantics import ATOMICS
from .static import check
from .stop import Stop

_ATOMICS = (*ATOMICS, "compare_and_swap")  # cuda.atomic.<name> calls the rewrite routes to _R.atomic


@dataclass
class Site:
    filename: str
    lineno: int
    text: str


@dataclass
class Compiled:
    code: types.CodeType
    name: str
    sites: list = field(default_factory=list)


_SITES: list[Site] = []  # every access site of every transformed function, by global number
_CACHE: dict = {}


def site_info(i: int) -> Site:
    return _SITES[i]


def compile_fn(fn: types.FunctionType) -> Compiled:
    """The lockstep version of `fn` (cached per code object)."""
    hit = _CACHE.get(fn.__code__)
    if hit is not None:
        if isinstance(hit, Stop):
            raise hit
        return hit
    try:
        c = _compile(fn)
    except Stop as s:
        _CACHE[fn.__code__] = s
        raise
    _CACHE[fn.__code__] = c
    return c


def _compile(fn: types.FunctionType) -> Compiled:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        raise Stop.unsupported(f"the source of {fn.__name__} is not available") from None
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise Stop.unsupported(f"{fn.__name__} is not a plain function")
    first = fn.__code__.co_firstlineno
    # decorators shift the def line: line numbers relative to the source block
    ast.increment_lineno(tree, first - 1 - (fdef.lineno - 1) + (fdef.lineno - 1))
    a = fdef.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
        raise Stop.unsupported(f"{fn.__name__} has *args, **kwargs, keyword-only or default arguments")
    filename = fn.__code__.co_filename
    check(fdef, fn.__name__)
    t = _Rewriter(filename)
    body = t.function_body(fdef)
    params = {x.arg for x in a.args}
    assigned = sorted(t.assigned - params)
    pre: list = []
    if assigned:
        pre.append(
            ast.Assign(
                targets=[ast.Name(n, ast.Store()) for n in assigned],
                value=ast.Name("_U", ast.Load()),
            )
        )
    new = ast.FunctionDef(
        name=fdef.name,
        args=fdef.args,
        body=pre + body,
        decorator_list=[],
        returns=None,
        type_comment=None,
    )
    mod = ast.Module(body=[new], type_ignores=[])
    _fill_locations(mod, fdef.lineno)
    code = compile(mod, filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return Compiled(fcode, fdef.name, t.sites)


def _fill_locations(tree: ast.AST, line: int) -> None:
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            if not hasattr(node, "lineno") or node.lineno is None:
                node.lineno = line
            if not hasattr(node, "end_lineno") or node.end_lineno is None:
                node.end_lineno = node.lineno
            if not hasattr(node, "col_offset") or node.col_offset is None:
                node.col_offset = 0
            if not hasattr(node, "end_col_offset") or node.end_col_offset is None:
                node.end_col_offset = 0
            line = node.lineno
    ast.fix_missing_locations(tree)


def _name(n: str, ctx=None) -> ast.Name:
    return ast.Name(n, ctx or ast.Load())


def _call(obj: str, meth: str, args: list, keywords=None) -> ast.Call:
    return ast.Call(func=ast.Attribute(_name(obj), meth, ast.Load()), args=args, keywords=keywords or [])


def _lambda(body: ast.expr) -> ast.Lambda:
    return ast.Lambda(
        args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
        ),
        body=body,
    )


def _is_cuda_attr(f: ast.expr, *names: str) -> bool:
    """`X.<names...>` with X a Name (cuda, numba.cuda...)."""
    parts = []
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    parts.reverse()
    return isinstance(f, ast.Name) and tuple(parts[-len(names) :]) == names and len(parts) >= len(names)


class _Rewriter:
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.sites: list = []
        self.assigned: set = set()
        self.loops: list = []
        self.ntmp = 0

    def tmp(self, base: str) -> str:
        self.ntmp += 1
        name = f"{base}{self.ntmp}"
        self.assigned.add(name)
        return name

    def site(self, node: ast.AST) -> ast.Constant:
        line = node.lineno
        text = linecache.getline(self.filename, line).strip()
        _SITES.append(Site(self.filename, line, text))
        self.sites.append(len(_SITES) - 1)
        return ast.Constant(len(_SITES) - 1)

    # --- statements
    def function_body(self, fdef: ast.FunctionDef) -> list:
        out = [ast.Assign(targets=[_name("_F", ast.Store())], value=_call("_C", "enter", []))]
        out += self.block(fdef.body)
        out.append(ast.Return(_call("_C", "leave", [_name("_F")])))
        return out

    def block(self, stmts: list) -> list:
        out: list = []
        for s in stmts:
            r = self.stmt(s)
            for x in r:
                for node in ast.walk(x):  # new nodes take the statement's line (tracebacks, frames)
                    if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
                        ast.copy_location(node, s)
            out += r
        return out or [ast.Pass()]

    def stmt(self, s: ast.stmt) -> list:
        E = self.expr
        if isinstance(s, ast.AnnAssign):
            s = ast.copy_location(ast.Assign(targets=[s.target], value=s.value), s)
        if isinstance(s, ast.Assign) and len(s.targets) > 1:  # a = b = value: value once, targets in order
            t = self.tmp("_t")
            out = [ast.Assign(targets=[_name(t, ast.Store())], value=E(s.value))]
            for tg in s.targets:
                if isinstance(tg, ast.Name):
                    out.append(self.assign(tg.id, _name(t), tg.id))
                else:
                    out.append(
                        ast.Expr(_call("_R", "st", [_name(t), E(tg.value), self.site(tg), self.index(tg)]))
                    )
            return out
        if isinstance(s, ast.Assign):
            tg = s.targets[0]
            if isinstance(tg, ast.Name):
                return [self.assign(tg.id, E(s.value), tg.id)]
            if isinstance(tg, ast.Tuple):
                tmps = [self.tmp("_t") for _ in tg.elts]
                out = [
                    ast.Assign(
                        targets=[ast.Tuple([_name(t, ast.Store()) for t in tmps], ast.Store())],
                        value=E(s.value),
                    )
                ]
                for el, t in zip(tg.elts, tmps):
                    if isinstance(el, ast.Name):
                        out.append(self.assign(el.id, _name(t), el.id))
                    else:
                        out.append(
                            ast.Expr(
                                _call("_R", "st", [_name(t), E(el.value), self.site(el), self.index(el)])
                            )
                        )
                return out
            if isinstance(tg, ast.Subscript):
                # Python evaluates the value first, then the array, then the index
                return [ast.Expr(_call("_R", "st", [E(s.value), E(tg.value), self.site(tg), self.index(tg)]))]
            raise Stop.unsupported(f"assignment target at line {s.lineno}")
        if isinstance(s, ast.AugAssign):
            tg = s.target
            if isinstance(tg, ast.Name):
                val = ast.BinOp(_name(tg.id), s.op, E(s.value))
                return [self.assign(tg.id, val, tg.id)]
            a, i = self.tmp("_t"), self.tmp("_t")
            sr = self.site(tg)
            sw = self.site(tg)
            load = _call("_R", "ld", [_name(a), sr, _name(i)])
            return [
                ast.Assign(targets=[_name(a, ast.Store())], value=E(tg.value)),
                ast.Assign(targets=[_name(i, ast.Store())], value=self.index(tg)),
                ast.Expr(_call("_R", "st", [ast.BinOp(load, s.op, E(s.value)), _name(a), sw, _name(i)])),
            ]
        if isinstance(s, ast.If):
            tok = self.tmp("_t")
            out = [
                ast.Assign(targets=[_name(tok, ast.Store())], value=_call("_C", "if_", [E(s.test)])),
                ast.If(ast.Attribute(_name("_C"), "live", ast.Load()), self.block(s.body), []),
            ]
            if s.orelse:
                out.append(ast.If(_call("_C", "else_", [_name(tok)]), self.block(s.orelse), []))
            out.append(ast.Expr(_call("_C", "endif", [_name(tok)])))
            return out
        if isinstance(s, ast.While):
            lp = self.tmp("_w")
            self.loops.append(lp)
            body = self.block(s.body) + [ast.Expr(_call("_C", "next", [_name(lp)]))]
            self.loops.pop()
            return [
                ast.Assign(targets=[_name(lp, ast.Store())], value=_call("_C", "loop", [])),
                # CPython compiles a while test twice (before the loop, and at the bottom of the body):
                # the first trip and the later ones read through different access sites
                ast.While(
                    _call(
                        "_C",
                        "cond",
                        [
                            _name(lp),
                            ast.IfExp(
                                ast.Compare(
                                    ast.Attribute(_name(lp), "trips", ast.Load()),
                                    [ast.Eq()],
                                    [ast.Constant(0)],
                                ),
                                E(s.test),
                                E(s.test),
                            ),
                        ],
                    ),
                    body,
                    [],
                ),
                ast.Expr(_call("_C", "endloop", [_name(lp)])),
            ]
        if isinstance(s, ast.For):
            lp = self.tmp("_w")
            self.loops.append(lp)
            self.assigned.add(s.target.id)
            body = self.block(s.body) + [ast.Expr(_call("_C", "next", [_name(lp)]))]
            self.loops.pop()
            if isinstance(s.iter, ast.Call):
                it = _call("_C", "range", [_name(lp)] + [E(x) for x in s.iter.args])
            else:  # a tuple of numbers: the same trips in every lane
                it = _call("_C", "each", [_name(lp), E(s.iter)])
            # the loop variable is assigned under the mask, as lanes that did not run the loop keep theirs
            v = self.tmp("_t")
            body = [self.assign(s.target.id, _name(v), s.target.id)] + body
            return [
                ast.Assign(targets=[_name(lp, ast.Store())], value=_call("_C", "loop", [])),
                ast.For(_name(v, ast.Store()), it, body, []),
                ast.Expr(_call("_C", "endloop", [_name(lp)])),
            ]
        if isinstance(s, ast.Break):
            return [ast.Expr(_call("_C", "brk", [_name(self.loops[-1])]))]
        if isinstance(s, ast.Continue):
            return [ast.Expr(_call("_C", "cont", [_name(self.loops[-1])]))]
        if isinstance(s, ast.Return):
            val = E(s.value) if s.value is not None else ast.Constant(None)
            return [
                ast.Expr(_call("_C", "ret", [_name("_F"), val])),
                ast.If(
                    _call("_C", "done", [_name("_F")]),
                    [ast.Return(_call("_C", "leave", [_name("_F")]))],
                    [],
                ),
            ]
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant):
                return []  # a docstring
            return [ast.Expr(self.expr(s.value, discard=True))]
        if isinstance(s, ast.Pass):
            return [ast.Pass()]
        raise Stop.unsupported(f"`{type(s).__name__}` at line {s.lineno}")

    def assign(self, name: str, value: ast.expr, what: str) -> ast.Assign:
        self.assigned.add(name)
        return ast.Assign(
            targets=[_name(name, ast.Store())],
            value=_call("_C", "set", [_name(name), value, ast.Constant(f"`{what}`")]),
        )

    def index(self, sub: ast.Subscript) -> ast.expr:
        sl = sub.slice
        if isinstance(sl, ast.Tuple):
            return ast.Tuple([self.expr(e) for e in sl.elts], ast.Load())
        return ast.Tuple([self.expr(sl)], ast.Load())

    # --- expressions
    def expr(self, e: ast.expr, discard: bool = False) -> ast.expr:
        E = self.expr
        if isinstance(e, (ast.Name, ast.Constant)):
            return e
        if isinstance(e, ast.NamedExpr):
            raise Stop.unsupported(f"`:=` at line {e.lineno}")
        if isinstance(e, ast.Attribute):
            return ast.Attribute(E(e.value), e.attr, ast.Load())
        if isinstance(e, ast.Tuple):
            return ast.Tuple([E(x) for x in e.elts], ast.Load())
        if isinstance(e, ast.BinOp):
            return ast.BinOp(E(e.left), e.op, E(e.right))
        if isinstance(e, ast.UnaryOp):
            if isinstance(e.op, ast.Not):
                return _call("_C", "not_", [E(e.operand)])
            return ast.UnaryOp(e.op, E(e.operand))
        if isinstance(e, ast.BoolOp):
            meth = "and_" if isinstance(e.op, ast.And) else "or_"
            vals = [E(v) for v in e.values]
            acc = vals[-1]
            for v in reversed(vals[:-1]):
                acc = _call("_C", meth, [v, _lambda(acc)])
            return acc
        if isinstance(e, ast.IfExp):
            return _call("_C", "ifexp", [E(e.test), _lambda(E(e.body)), _lambda(E(e.orelse))])
        if isinstance(e, ast.Compare):
            if len(e.ops) == 1:
                return ast.Compare(E(e.left), e.ops, [E(e.comparators[0])])
            # a < b < c: b evaluated once, c only where a < b
            left = E(e.left)
            parts = []
            for op, c in zip(e.ops, e.comparators):
                t = self.tmp("_t")
                parts.append((op, t, E(c)))
            first_op, t0, c0 = parts[0]
            acc = None
            for k in range(len(parts) - 1, 0, -1):
                op, t, c = parts[k]
                _, tprev, _ = parts[k - 1]
                cmp = ast.Compare(
                    _name(tprev),
                    [op],
                    [ast.NamedExpr(_name(t, ast.Store()), c)] if k < len(parts) - 1 else [c],
                )
                acc = cmp if acc is None else _call("_C", "and_", [cmp, _lambda(acc)])
            head = ast.Compare(left, [first_op], [ast.NamedExpr(_name(t0, ast.Store()), c0)])
            return _call("_C", "and_", [head, _lambda(acc)])
        if isinstance(e, ast.Subscript):
            return _call("_R", "ld", [E(e.value), self.site(e), self.index(e)])
        if isinstance(e, ast.Call):
            f = e.func
            args = [E(a) for a in e.args]
            kws = [ast.keyword(k.arg, E(k.value)) for k in e.keywords]
            if (
                isinstance(f, ast.Attribute)
                and f.attr in _ATOMICS
                and (
                    _is_cuda_attr(f.value, "atomic")
                    or (isinstance(f.value, ast.Name) and f.value.id == "atomic")
                )
            ):
                return _call(
                    "_R",
                    "atomic",
                    [ast.Constant(f.attr), self.site(e), ast.Constant(not discard)] + args,
                    kws,
                )
            for space, meth in (("shared", "array"), ("local", "array"), ("const", "array_like")):
                if (
                    isinstance(f, ast.Attribute)
                    and f.attr == meth
                    and (
                        _is_cuda_attr(f.value, space)
                        or (isinstance(f.value, ast.Name) and f.value.id == space)
                    )
                ):
                    return _call(
                        "_R",
                        "declare",
                        [ast.Constant(space), ast.Constant(e.lineno), self.site(e)] + args,
                        kws,
                    )
            if isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Name, ast.Attribute)):
                return ast.Call(E(f), args, kws)  # cuda.*, math.*, numba.float32... (shims)
            return _call("_R", "call", [E(f)] + args, kws)
        raise Stop.unsupported(f"`{type(e).__name__}` at line {e.lineno}")
