"""The process runtime's script, rewritten so every operation goes through the meter
(FLOW-01, :mod:`meter`). The thread runtime's evaluator calls the meter itself; CPython's
``exec`` cannot, so the checked tree is rewritten before it is compiled: operators,
comparisons, calls, slices, f-string fields and comprehensions become calls of the
meter's functions, bound under names a script cannot write (a leading ``_`` is refused
by :func:`restricted.check_script`, which runs on the original text first).

Only the checked subset reaches here, and its meaning is kept: a chained comparison
evaluates each comparator only when the chain gets to it (each is a lambda), an
augmented assignment evaluates its target's object and key once (temporaries).
"""

from __future__ import annotations

import ast
import itertools
from typing import Any

from capconf.simulator.flow.meter import Meter

PREFIX = "__flow_"


def bindings(meter: Meter) -> dict[str, Any]:
    """The names the rewritten script calls."""
    return {f"{PREFIX}binop": meter.binop, f"{PREFIX}compare": meter.compare,
            f"{PREFIX}chain": meter.chain, f"{PREFIX}call": meter.call,
            f"{PREFIX}index": meter.index, f"{PREFIX}format": meter.format_value,
            f"{PREFIX}made": meter.made, f"{PREFIX}step": meter.step}


def _name(suffix: str, ctx: ast.expr_context | None = None) -> ast.Name:
    return ast.Name(id=PREFIX + suffix, ctx=ctx or ast.Load())


def _helper(suffix: str, *args: ast.expr, keywords: list[ast.keyword] | None = None
            ) -> ast.Call:
    return ast.Call(func=_name(suffix), args=list(args), keywords=keywords or [])


class _Rewriter(ast.NodeTransformer):
    def __init__(self) -> None:
        self.temps = itertools.count(1)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        return ast.copy_location(_helper("binop", ast.Constant(type(node.op).__name__),
                                         node.left, node.right), node)

    def visit_Compare(self, node: ast.Compare) -> Any:
        self.generic_visit(node)
        ops = [type(op).__name__ for op in node.ops]
        if len(ops) == 1:
            call = _helper("compare", ast.Constant(ops[0]), node.left, node.comparators[0])
        else:
            later = [ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                   kw_defaults=[], defaults=[]), body=c)
                     for c in node.comparators]
            call = _helper("chain", ast.Tuple([ast.Constant(o) for o in ops], ast.Load()),
                           node.left, *later)
        return ast.copy_location(call, node)

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        return ast.copy_location(_helper("call", node.func, *node.args,
                                         keywords=node.keywords), node)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(_helper("index", node.value, node.slice), node)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        self.generic_visit(node)
        spec: ast.expr = node.format_spec or ast.Constant("")
        call = _helper("format", node.value, ast.Constant(node.conversion), spec)
        return ast.copy_location(ast.FormattedValue(value=call, conversion=-1,
                                                    format_spec=None), node)

    def visit_ListComp(self, node: ast.ListComp) -> Any:
        self.generic_visit(node)
        return ast.copy_location(_helper("made", node), node)

    def visit_DictComp(self, node: ast.DictComp) -> Any:
        self.generic_visit(node)
        return ast.copy_location(_helper("made", node), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        value = self.visit(node.value)
        op = ast.Constant(type(node.op).__name__)
        target = node.target
        if isinstance(target, ast.Name):
            return ast.copy_location(ast.Assign(
                targets=[ast.Name(target.id, ast.Store())],
                value=_helper("binop", op, ast.Name(target.id, ast.Load()), value)), node)
        holder = f"t{next(self.temps)}"
        first = ast.Assign(targets=[_name(holder, ast.Store())],
                           value=self.visit(target.value))
        if isinstance(target, ast.Subscript):
            key = f"t{next(self.temps)}"
            second = ast.Assign(targets=[_name(key, ast.Store())],
                                value=self.visit(target.slice))
            current: ast.expr = ast.Subscript(_name(holder), _name(key), ast.Load())
            store: ast.expr = ast.Subscript(_name(holder), _name(key), ast.Store())
            steps = [first, second]
        else:
            assert isinstance(target, ast.Attribute)
            current = ast.Attribute(_name(holder), target.attr, ast.Load())
            store = ast.Attribute(_name(holder), target.attr, ast.Store())
            steps = [first]
        update = ast.Assign(targets=[store], value=_helper("binop", op, current, value))
        return [ast.copy_location(s, node) for s in (*steps, update)]


def rewrite(tree: ast.Module) -> ast.Module:
    """The checked module, every operation metered."""
    out = _Rewriter().visit(tree)
    assert isinstance(out, ast.Module)
    return ast.fix_missing_locations(out)
