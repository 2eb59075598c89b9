"""Lockstep's static check: the statements and expressions the AST rewrite (transform.py) runs.
Anything else stops lockstep before the kernel starts (`Stop.unsupported`, naming the construct
and its line), and "auto" runs the launch on the greenlet engine."""

from __future__ import annotations

import ast

from .stop import Stop

_ALLOWED_STMT = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.If,
    ast.For,
    ast.While,
    ast.Break,
    ast.Continue,
    ast.Return,
    ast.Expr,
    ast.Pass,
)
_ALLOWED_EXPR = (
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Attribute,
    ast.Subscript,
    ast.Name,
    ast.Constant,
    ast.Tuple,
    ast.Slice,
    ast.keyword,
    ast.NamedExpr,
)


def check(fdef: ast.FunctionDef, name: str) -> None:
    for node in ast.walk(fdef):
        if node is fdef or isinstance(
            node, (ast.arguments, ast.arg, ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
        ):
            continue
        if isinstance(node, ast.stmt) and not isinstance(node, _ALLOWED_STMT):
            raise Stop.unsupported(f"`{type(node).__name__}` statement at line {node.lineno} of {name}")
        if isinstance(node, ast.expr) and not isinstance(node, _ALLOWED_EXPR):
            raise Stop.unsupported(f"`{type(node).__name__}` expression at line {node.lineno} of {name}")
        if isinstance(node, (ast.For, ast.While)) and node.orelse:
            raise Stop.unsupported(f"a loop with `else` at line {node.lineno} of {name}")
        if isinstance(node, ast.For):
            it = node.iter
            is_range = (
                isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name)
                and it.func.id == "range"
                and not it.keywords
            )
            if not isinstance(node.target, ast.Name) or not (
                is_range or isinstance(it, (ast.Tuple, ast.Name))
            ):
                raise Stop.unsupported(
                    f"a `for` loop other than `for x in range(...)` at line {node.lineno} of {name}"
                )
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 and not all(
                isinstance(t, (ast.Name, ast.Subscript)) for t in node.targets
            ):
                raise Stop.unsupported(f"chained assignment at line {node.lineno} of {name}")
            tg = node.targets[0]
            if isinstance(tg, ast.Tuple) and not all(
                isinstance(e, (ast.Name, ast.Subscript)) for e in tg.elts
            ):
                raise Stop.unsupported(f"unpacking into elements at line {node.lineno} of {name}")
            if isinstance(tg, ast.Attribute):
                raise Stop.unsupported(f"assignment to an attribute at line {node.lineno} of {name}")
        if isinstance(node, ast.AugAssign) and not isinstance(node.target, (ast.Name, ast.Subscript)):
            raise Stop.unsupported(f"augmented assignment at line {node.lineno} of {name}")
        if isinstance(node, ast.AnnAssign) and (node.value is None or not isinstance(node.target, ast.Name)):
            raise Stop.unsupported(f"annotated assignment at line {node.lineno} of {name}")
        if isinstance(node, ast.Call):
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords
            ):
                raise Stop.unsupported(f"*args or **kwargs in a call at line {node.lineno} of {name}")
            if isinstance(node.func, ast.Name) and node.func.id == "print":
                raise Stop.unsupported(f"print at line {node.lineno} of {name}")
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            raise Stop.unsupported(f"a slice at line {node.lineno} of {name}")
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            if any(isinstance(e, ast.Slice) for e in node.slice.elts):
                raise Stop.unsupported(f"a slice at line {node.lineno} of {name}")
        if (
            isinstance(node, ast.Name)
            and node.id.startswith("_")
            and node.id[:2] in ("_C", "_R", "_U", "_t", "_w", "_F")
        ):
            raise Stop.unsupported(f"a name starting with {node.id[:2]} at line {node.lineno} of {name}")
