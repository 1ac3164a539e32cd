"""What "restricted environment" means for a workflow script (FLOW-01), as a table.

A workflow script is a small Python subset, checked before it runs and run with a
whitelisted set of builtins plus the host API (``spawn``, ``wait``, ``emit``):

- no ``import``, no function or class definitions, no ``while``, ``try``, ``with``,
  ``lambda``, ``global``, ``del`` (only the node types in :data:`ALLOWED_NODES`);
- no name and no attribute that starts with ``_`` (no ``__class__`` / ``__globals__``
  traversal), and no ``format``/``format_map`` attribute (format strings can traverse
  attributes);
- builtins are exactly :data:`SAFE_BUILTINS` (no ``open``, ``eval``, ``exec``,
  ``getattr``, ``__import__``, ``print``);
- every run within :data:`bounds.BOUNDS` (steps, work, value sizes, channel bytes), metered
  the same way on both runtimes (:mod:`meter`), so a script cannot hang or exhaust the host.

The worker process isolates the host's event loop; it is explicitly not a security
boundary (seed 003). The checks make a script's reach the host API and nothing else.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Any

from capconf.simulator.flow.bounds import BOUNDS

ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.For, ast.If, ast.Pass, ast.Break,
    ast.Continue, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Call,
    ast.keyword, ast.Name, ast.Load, ast.Store, ast.Constant, ast.List, ast.Tuple, ast.Dict,
    ast.Subscript, ast.Slice, ast.ListComp, ast.DictComp, ast.comprehension, ast.Attribute,
    ast.JoinedStr, ast.FormattedValue, ast.operator, ast.cmpop, ast.boolop, ast.unaryop,
    ast.expr_context,
)

FORBIDDEN_ATTRIBUTES = frozenset({"format", "format_map"})

SAFE_BUILTIN_NAMES: tuple[str, ...] = (
    "abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "len", "list", "max",
    "min", "range", "reversed", "round", "sorted", "str", "sum", "tuple", "zip",
)
SAFE_BUILTINS: dict[str, Any] = {name: getattr(builtins, name) for name in SAFE_BUILTIN_NAMES}

HOST_API: tuple[str, ...] = ("spawn", "wait", "emit")

STEP_BUDGET = BOUNDS.steps


@dataclass(frozen=True)
class Violation:
    line: int
    column: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "message": self.message}


def check_script(source: str) -> Violation | None:
    """The first thing the script may not do, with its location, or None."""
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        return Violation(exc.lineno or 0, exc.offset or 0, f"syntax error: {exc.msg}")
    except (RecursionError, MemoryError, ValueError) as exc:  # nesting beyond the parser
        return Violation(0, 0, f"the script cannot be parsed: {type(exc).__name__}")
    for node in ast.walk(tree):
        line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
        if not isinstance(node, ALLOWED_NODES):
            return Violation(line, col, f"{type(node).__name__} is not allowed in a workflow "
                             "script")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            return Violation(line, col, f"name {node.id!r} is not allowed (leading _)")
        if isinstance(node, ast.Attribute) and (
                node.attr.startswith("_") or node.attr in FORBIDDEN_ATTRIBUTES):
            return Violation(line, col, f"attribute {node.attr!r} is not allowed")
    return None
