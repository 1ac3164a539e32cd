"""The second script runtime (FLOW-02): a tree-walking interpreter of the restricted subset,
run in a worker thread that talks to the host over a pair of queues.

It shares nothing with the ``python -I`` worker but the checked subset
(:mod:`restricted`) and the host-API vocabulary (``spawn``/``wait``/``emit`` messages):
no ``exec``, no tracer, no process. Every node type :data:`restricted.ALLOWED_NODES`
admits is evaluated here by hand, so the script reaches exactly the names this module
binds. The step budget counts executed statements and comprehension iterations.
"""

from __future__ import annotations

import ast
import json
import operator
import queue
from collections.abc import Callable, Iterator
from typing import Any

from capconf.simulator.flow.meter import FlowLimit, HostFunction, Meter
from capconf.simulator.flow.restricted import SAFE_BUILTINS, check_script
from capconf.simulator.flow.worker import HostRefused

UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
}


class QueueChannel:
    """The thread worker's side of the channel: the same messages as the process
    worker's JSON Lines, on two queues (one request, one answer at a time). Every
    message is encoded and decoded as JSON on the way, so a value crosses this channel
    exactly as it crosses the process pipe (tuples become lists, keys strings, and a
    value JSON cannot carry is the script's error)."""

    def __init__(self) -> None:
        self.to_host: queue.Queue[dict[str, Any]] = queue.Queue()
        self.to_worker: queue.Queue[dict[str, Any]] = queue.Queue()
        self.cancelled = False
        """Set by the host when it stopped waiting (the deadline backstop): the evaluator
        ends at its next step instead of running on unobserved."""

    def send(self, message: dict[str, Any]) -> None:
        self.send_text(json.dumps(message, sort_keys=True))

    def send_text(self, text: str) -> None:
        """One message already encoded by the meter (:meth:`Meter.encode`)."""
        self.to_host.put(json.loads(text))

    def answer(self, message: dict[str, Any]) -> None:
        self.to_worker.put(json.loads(json.dumps(message, sort_keys=True)))

    def ask_text(self, text: str) -> Any:
        self.send_text(text)
        answer = self.to_worker.get()
        if not answer["ok"]:
            raise HostRefused(answer["code"], answer["message"], answer.get("line"))
        return answer["result"]


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class ScriptError(Exception):
    """The script's own error, with the line of the node that raised it."""

    def __init__(self, error: BaseException, line: int | None) -> None:
        super().__init__(str(error))
        self.error = error
        self.line = line


class Interpreter:
    def __init__(self, channel: QueueChannel, meter: Meter | None = None) -> None:
        self.channel = channel
        self.meter = meter or Meter()
        self.spawned = 0
        self.globals: dict[str, Any] = {}
        self.line = 0
        self.host: dict[str, Any] = {"spawn": HostFunction("spawn", self._spawn),
                                     "wait": HostFunction("wait", self._wait),
                                     "emit": HostFunction("emit", self._emit)}

    # -- the host API ----------------------------------------------------------------

    def _spawn(self, agent_type: str, prompt: str, implementer: str = "fresh") -> str:
        self.spawned += 1
        handle = f"h{self.spawned}"
        self.channel.send_text(self.meter.encode(
            {"call": "spawn", "handle": handle, "agent_type": agent_type, "prompt": prompt,
             "implementer": implementer, "line": self.line}, "spawn"))
        return handle

    def _wait(self, handles: list[str]) -> list[Any]:
        result: list[Any] = self.channel.ask_text(self.meter.encode(
            {"call": "wait", "handles": list(handles)}, "wait"))
        return result

    def _emit(self, value: Any) -> None:
        self.meter.emitted()
        self.channel.ask_text(self.meter.encode({"call": "emit", "value": value}, "emit"))

    # -- statements ------------------------------------------------------------------

    def _tick(self) -> None:
        if getattr(self.channel, "cancelled", False):
            raise FlowLimit("FLOW-LIMIT", "the host stopped waiting for the script")
        self.meter.step()

    def run_body(self, body: list[ast.stmt], scope: list[dict[str, Any]]) -> None:
        for statement in body:
            self.statement(statement, scope)

    def statement(self, node: ast.stmt, scope: list[dict[str, Any]]) -> None:
        self._tick()
        self.line = node.lineno
        try:
            self._statement(node, scope)
        except (ScriptError, HostRefused, _Break, _Continue):
            raise
        except FlowLimit as exc:
            raise ScriptError(exc, node.lineno) from None
        except Exception as exc:
            raise ScriptError(exc, node.lineno) from None

    def _statement(self, node: ast.stmt, scope: list[dict[str, Any]]) -> None:
        if isinstance(node, ast.Expr):
            self.expr(node.value, scope)
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value, scope)
            for target in node.targets:
                self.assign(target, value, scope)
        elif isinstance(node, ast.AugAssign):
            self._augassign(node, scope)
        elif isinstance(node, ast.For):
            self._for(node, scope)
        elif isinstance(node, ast.If):
            self.run_body(node.body if self.expr(node.test, scope) else node.orelse, scope)
        elif isinstance(node, ast.Break):
            raise _Break
        elif isinstance(node, ast.Continue):
            raise _Continue
        elif not isinstance(node, ast.Pass):  # check_script admits nothing else
            raise SyntaxError(f"{type(node).__name__} is not allowed")

    def _for(self, node: ast.For, scope: list[dict[str, Any]]) -> None:
        for item in self.expr(node.iter, scope):
            self._tick()
            self.assign(node.target, item, scope)
            try:
                self.run_body(node.body, scope)
            except _Break:
                return
            except _Continue:
                continue
        self.run_body(node.orelse, scope)

    def _augassign(self, node: ast.AugAssign, scope: list[dict[str, Any]]) -> None:
        name = type(node.op).__name__
        target = node.target

        def op(left: Any, right: Any) -> Any:
            return self.meter.binop(name, left, right)

        if isinstance(target, ast.Name):
            current = self._lookup(target.id, scope)
            self._set(target.id, op(current, self.expr(node.value, scope)), scope)
        elif isinstance(target, ast.Subscript):
            holder, key = self.expr(target.value, scope), self.expr(target.slice, scope)
            current = self.meter.index(holder, key)
            holder[key] = op(current, self.expr(node.value, scope))
        else:
            assert isinstance(target, ast.Attribute)
            holder = self.expr(target.value, scope)
            current = getattr(holder, target.attr)
            setattr(holder, target.attr, op(current, self.expr(node.value, scope)))

    def assign(self, target: ast.expr, value: Any, scope: list[dict[str, Any]]) -> None:
        if isinstance(target, ast.Name):
            self._set(target.id, value, scope)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = list(value)
            if len(items) != len(target.elts):
                raise ValueError(f"expected {len(target.elts)} values to unpack, "
                                 f"got {len(items)}")
            for element, item in zip(target.elts, items, strict=True):
                self.assign(element, item, scope)
        elif isinstance(target, ast.Subscript):
            self.expr(target.value, scope)[self.expr(target.slice, scope)] = value
        else:
            assert isinstance(target, ast.Attribute)
            setattr(self.expr(target.value, scope), target.attr, value)

    # -- names -----------------------------------------------------------------------

    def _set(self, name: str, value: Any, scope: list[dict[str, Any]]) -> None:
        (scope[-1] if scope else self.globals)[name] = value

    def _lookup(self, name: str, scope: list[dict[str, Any]]) -> Any:
        for frame in reversed(scope):
            if name in frame:
                return frame[name]
        for table in (self.globals, self.host, SAFE_BUILTINS):
            if name in table:
                return table[name]
        raise NameError(f"name {name!r} is not defined")

    # -- expressions -----------------------------------------------------------------

    def expr(self, node: ast.expr, scope: list[dict[str, Any]]) -> Any:
        try:
            return self._expr(node, scope)
        except (ScriptError, HostRefused, _Break, _Continue):
            raise
        except Exception as exc:  # FlowLimit included: located at the expression
            raise ScriptError(exc, getattr(node, "lineno", self.line)) from None

    def _expr(self, node: ast.expr, scope: list[dict[str, Any]]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._lookup(node.id, scope)
        if isinstance(node, ast.BinOp):
            left = self.expr(node.left, scope)
            return self.meter.binop(type(node.op).__name__, left, self.expr(node.right, scope))
        if isinstance(node, ast.UnaryOp):
            return UNARY[type(node.op)](self.expr(node.operand, scope))
        if isinstance(node, ast.BoolOp):
            value: Any = None
            for operand in node.values:
                value = self.expr(operand, scope)
                if bool(value) is isinstance(node.op, ast.Or):
                    return value
            return value
        if isinstance(node, ast.Compare):
            left = self.expr(node.left, scope)
            for op, comparator in zip(node.ops, node.comparators, strict=True):
                right = self.expr(comparator, scope)
                if not self.meter.compare(type(op).__name__, left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.expr(node.body if self.expr(node.test, scope) else node.orelse,
                             scope)
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        if isinstance(node, ast.List):
            return [self.expr(e, scope) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.expr(e, scope) for e in node.elts)
        if isinstance(node, ast.Dict):
            out: dict[Any, Any] = {}
            for key, item in zip(node.keys, node.values, strict=True):
                if key is None:
                    out.update(self.expr(item, scope))
                else:
                    out[self.expr(key, scope)] = self.expr(item, scope)
            return out
        if isinstance(node, ast.Subscript):
            value = self.expr(node.value, scope)
            return self.meter.index(value, self.expr(node.slice, scope))
        if isinstance(node, ast.Slice):
            return slice(*(None if part is None else self.expr(part, scope)
                           for part in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Attribute):
            return getattr(self.expr(node.value, scope), node.attr)
        if isinstance(node, ast.JoinedStr):
            return "".join(self._formatted(part, scope) for part in node.values)
        if isinstance(node, ast.ListComp):
            return self.meter.made([self.expr(node.elt, inner)
                                    for inner in self._comprehension(node.generators, scope)])
        if isinstance(node, ast.DictComp):
            return self.meter.made({self.expr(node.key, inner): self.expr(node.value, inner)
                                    for inner in self._comprehension(node.generators, scope)})
        raise SyntaxError(f"{type(node).__name__} is not allowed")

    def _formatted(self, part: ast.expr, scope: list[dict[str, Any]]) -> str:
        if isinstance(part, ast.Constant):
            return str(part.value)
        assert isinstance(part, ast.FormattedValue)
        value = self.expr(part.value, scope)
        spec = "" if part.format_spec is None else str(self.expr(part.format_spec, scope))
        return self.meter.format_value(value, part.conversion, spec)

    def _call(self, node: ast.Call, scope: list[dict[str, Any]]) -> Any:
        func = self.expr(node.func, scope)
        args = [self.expr(a, scope) for a in node.args]
        kwargs: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                kwargs.update(self.expr(keyword.value, scope))
            else:
                kwargs[keyword.arg] = self.expr(keyword.value, scope)
        self.line = node.lineno
        return self.meter.call(func, *args, **kwargs)

    def _comprehension(self, generators: list[ast.comprehension],
                       scope: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
        """Each binding of the generators' targets, in a scope of its own (as Python
        gives a comprehension), filtered by the ``if`` clauses."""
        inner = [*scope, {}]

        def walk(index: int) -> Iterator[list[dict[str, Any]]]:
            if index == len(generators):
                yield inner
                return
            generator = generators[index]
            for item in self.expr(generator.iter, inner if index else scope):
                self._tick()
                self.assign(generator.target, item, inner)
                if all(self.expr(test, inner) for test in generator.ifs):
                    yield from walk(index + 1)
        return walk(0)


def run(channel: QueueChannel, script: str, meter: Meter | None = None) -> dict[str, Any]:
    """The whole script, ending in the same ``end`` message the process worker sends."""
    violation = check_script(script)
    if violation is not None:
        return {"end": "failed", "code": "FLOW-RESTRICTED", **violation.to_json()}
    interpreter = Interpreter(channel, meter)
    try:
        interpreter.run_body(ast.parse(script).body, [])
    except HostRefused as exc:
        return {"end": "failed", "code": exc.code, "message": exc.message,
                "line": exc.line if exc.line is not None else interpreter.line}
    except FlowLimit as exc:
        return {"end": "failed", "code": exc.code, "message": exc.message,
                "line": interpreter.line}
    except ScriptError as exc:
        if isinstance(exc.error, FlowLimit):
            return {"end": "failed", "code": exc.error.code, "message": exc.error.message,
                    "line": exc.line}
        if isinstance(exc.error, MemoryError):
            return {"end": "failed", "code": "FLOW-LIMIT", "line": exc.line,
                    "message": "the script ran out of memory"}
        return {"end": "failed", "code": "FLOW-SCRIPT-ERROR",
                "message": f"{type(exc.error).__name__}: {exc.error}", "line": exc.line}
    except (RecursionError, _Break, _Continue) as exc:
        return {"end": "failed", "code": "FLOW-SCRIPT-ERROR",
                "message": f"{type(exc).__name__}", "line": interpreter.line}
    return {"end": "completed"}
