"""Deterministic work metering of a workflow script (FLOW-01), shared by both runtimes.

The step budget alone counts the script's own steps, not the work done inside one
operation: ``'a' * 10**7``, ``9**9**9``, ``sum(range(10**13))`` are one step each. So
every operation that can do more than a constant amount of work goes through a
:class:`Meter`: the process runtime's script is rewritten to call it (:mod:`rewrite`),
the thread runtime's evaluator calls it directly. The meter

- refuses, *before* computing it, a result it can size in advance that would break a
  bound (a repeat, a power, a shift, a padding width, a ``%`` format, a builtin over a
  sized iterable);
- charges every operation the sizes it reads and makes to one work budget, and checks
  every value made against the value bound;
- wraps the callables a builtin receives (``key=emit``) and the lazy iterators it hands
  out (``zip``, ``enumerate``, ``reversed``), so work a builtin does on the script's
  behalf is metered item by item;
- makes what a script can observe the same bytes on every run and runtime: turning a
  function or an iterator into text is refused (its repr carries a memory address), and
  the host API is :class:`HostFunction` objects with a fixed repr and no attributes to set;
- encodes every host call's message with the channel's bounds (:meth:`Meter.encode`):
  only portable JSON (finite numbers, 64-bit integers, no lone surrogates, bounded depth
  and bytes) crosses, refused as the script's own located error otherwise.

Everything here is counted, never timed: the same script meets the same bound at the
same line on every machine and on both runtimes.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

from capconf.simulator.core.wire import _has_surrogate as has_surrogate
from capconf.simulator.flow import bounds as _bounds
from capconf.simulator.flow.bounds import BOUNDS, Bounds

MIN_INT, MAX_INT = -(2**63), 2**63 - 1

BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul,
    "Div": operator.truediv, "FloorDiv": operator.floordiv, "Mod": operator.mod,
    "Pow": operator.pow, "LShift": operator.lshift, "RShift": operator.rshift,
    "BitOr": operator.or_, "BitXor": operator.xor, "BitAnd": operator.and_,
    "MatMult": operator.matmul,
}
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
    "Gt": operator.gt, "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not,
    "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b,
}
CONVERSIONS: dict[int, Callable[[Any], str]] = {115: str, 114: repr, 97: ascii}

_VIEWS: Any = (type({}.keys()), type({}.values()), type({}.items()))
SIZED = (str, bytes, list, tuple, dict, *_VIEWS)
DATA = (type(None), bool, int, float, complex, str, bytes, list, tuple, dict, range, slice,
        *_VIEWS)
"""Values whose text is the same bytes on every run (no memory address in their repr)."""
_SCALARS: frozenset[type] = frozenset({type(None), bool, int, float, complex, str, bytes})
_TEXTS: frozenset[type] = frozenset({str, bytes})
_LAZY = ("enumerate", "zip", "reversed")
_TEXT = ("str", "repr", "ascii")
_CONSTANT = ("len", "bool", "abs", "round", "int", "float", "range")
"""Builtins whose cost does not grow with their arguments' sizes (``int`` of a string is
bounded by Python's own 4,300-digit limit; ``range`` is lazy)."""
_MATERIALIZE = ("list", "tuple", "dict", "sorted")
_WIDTH_METHODS = ("center", "ljust", "rjust", "zfill")
_FORMAT_NUMBER = re.compile(r"\d+")


class FlowLimit(Exception):
    """A bound was met: the run ends ``failed`` with ``code``, at the script's line."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class HostFunction:
    """``spawn``/``wait``/``emit`` as a script sees them, on both runtimes: a fixed
    repr, no attributes to read or set (a function object would take ``spawn.x = 5`` on
    one runtime and a bound method would refuse it on the other)."""

    __slots__ = ("_impl", "_name")
    _impl: Callable[..., Any]
    _name: str

    def __init__(self, name: str, impl: Callable[..., Any]) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_impl", impl)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._impl(*args, **kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"the host function {self._name} has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"the host function {self._name} has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"<host function {self._name}>"


class _Metered:
    """A callable a builtin received (``key=``), so each call it makes is metered."""

    __slots__ = ("_func", "_meter")

    def __init__(self, meter: Meter, func: Any) -> None:
        self._meter, self._func = meter, func

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._meter.call(self._func, *args, **kwargs)


class MeteredIterator:
    """A lazy iterator a builtin handed out: one work unit per item taken."""

    __slots__ = ("_items", "_meter", "_taken")

    def __init__(self, meter: Meter, items: Iterator[Any]) -> None:
        self._meter, self._items, self._taken = meter, items, 0

    def __iter__(self) -> MeteredIterator:
        return self

    def __next__(self) -> Any:
        self._taken += 1
        self._meter.charge(1)
        self._meter.need(self._taken, "what a builtin takes from one iterator")
        return next(self._items)


def range_length(r: range) -> int:
    """``len(range)`` without its OverflowError for huge ranges."""
    if r.step > 0:
        return max(0, (r.stop - r.start + r.step - 1) // r.step)
    return max(0, (r.start - r.stop - r.step - 1) // -r.step)


def size(value: Any) -> int:
    """What reading ``value`` once costs, in work units (never less than one)."""
    if isinstance(value, SIZED):
        return len(value) + 1
    if isinstance(value, range):
        return range_length(value) + 1
    if isinstance(value, int):
        return value.bit_length() // 64 + 1
    return 1


class Meter:
    def __init__(self, bounds: Bounds | None = None) -> None:
        self.bounds = bounds or _bounds.BOUNDS
        self.steps = 0
        self.work = 0
        self.sent = 0
        self.emits = 0

    # -- the counters ------------------------------------------------------------------

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.bounds.steps:
            raise FlowLimit("FLOW-STEP-BUDGET", f"the script ran more than "
                            f"{self.bounds.steps:,} steps")

    def charge(self, units: int) -> None:
        self.work += units
        if self.work > self.bounds.work:
            raise FlowLimit("FLOW-LIMIT", f"the script did more than {self.bounds.work:,} "
                            "units of work (items and characters read or made)")

    def _too_big(self, what: str) -> FlowLimit:
        return FlowLimit("FLOW-LIMIT", f"{what} would be larger than "
                         f"{self.bounds.value:,} items or characters")

    def need(self, items: int, what: str) -> None:
        """Refuse, before making it, a value of ``items`` items or characters."""
        if items > self.bounds.value:
            raise self._too_big(what)

    def made(self, value: Any) -> Any:
        """A value an operation made: within the value bounds, and paid for."""
        if isinstance(value, int) and value.bit_length() > self.bounds.int_bits:
            raise FlowLimit("FLOW-LIMIT", f"an integer would have more than "
                            f"{self.bounds.int_bits:,} bits")
        if isinstance(value, SIZED):
            self.need(len(value), "a value")
        self.charge(1 if isinstance(value, range) else size(value))  # a range is lazy
        return value

    # -- operators ---------------------------------------------------------------------

    def binop(self, op: str, left: Any, right: Any) -> Any:
        self._precheck_binop(op, left, right)
        self.charge(size(left) + size(right))
        return self.made(BINARY[op](left, right))

    def _precheck_binop(self, op: str, left: Any, right: Any) -> None:
        ints = _is_int(left) and _is_int(right)
        bits = self.bounds.int_bits
        if op == "Mult":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, bytes, list, tuple)) and _is_int(times):
                    self.need(len(seq) * max(times, 0), "a repeated value")
            if ints and left.bit_length() + right.bit_length() > bits + 1:
                raise FlowLimit("FLOW-LIMIT", f"an integer would have more than {bits:,} bits")
        elif op == "Pow" and ints and right > 0 and abs(left) > 1:
            if right > bits or right * (abs(left).bit_length() - 1) > bits:
                raise FlowLimit("FLOW-LIMIT", f"an integer would have more than {bits:,} bits")
        elif op == "LShift" and ints and left != 0 and right > 0:
            if left.bit_length() + right > bits:
                raise FlowLimit("FLOW-LIMIT", f"an integer would have more than {bits:,} bits")
        elif op == "Mod" and isinstance(left, (str, bytes)):
            self._precheck_percent(left, right)

    def _precheck_percent(self, template: str | bytes, args: Any) -> None:
        """``'%*d' % (10**9, 1)``, ``'%1000000000d' % 1``: widths are bounded, and the
        arguments turned into text are measured as ``str`` would measure them."""
        text = template if isinstance(template, str) else template.decode("latin-1")
        if "*" in text:
            raise FlowLimit("FLOW-LIMIT", "a % format may not take its width from an "
                            "argument (*) in a workflow script")
        for number in _FORMAT_NUMBER.findall(text):
            self.need(int(number) if len(number) < 10 else self.bounds.value + 1,
                      "a % format's width")
        self.measure_text(args)

    def compare(self, op: str, left: Any, right: Any) -> Any:
        hashed = op in ("In", "NotIn") and isinstance(right, (dict, range, *_VIEWS[::2]))
        self.charge(size(left) + (1 if hashed or isinstance(right, range) else size(right)))
        return COMPARE[op](left, right)

    def chain(self, ops: tuple[str, ...], first: Any, *rest: Callable[[], Any]) -> Any:
        """``a < b < c``: each comparator evaluated only when the chain gets to it."""
        left = first
        for op, later in zip(ops, rest, strict=True):
            right = later()
            if not self.compare(op, left, right):
                return False
            left = right
        return True

    def index(self, value: Any, key: Any) -> Any:
        return self.made(value[key]) if isinstance(key, slice) else value[key]

    # -- text --------------------------------------------------------------------------

    def measure_text(self, value: Any) -> None:
        """What turning ``value`` into text reads, charged; refused when the text would
        break the value bound or carry a memory address (a function, an iterator)."""
        stack: list[Any] = [value]
        seen = 0
        while stack:
            item = stack.pop()
            if not isinstance(item, DATA):
                raise TypeError(f"a workflow script cannot turn a "
                                f"{_kind(item)} into text")
            seen += size(item)
            if seen > self.bounds.value:
                raise self._too_big("a text")
            children: Any = ()
            if isinstance(item, dict):
                children = [*item.keys(), *item.values()]
            elif isinstance(item, (list, tuple, *_VIEWS)):
                children = list(cast("Iterable[Any]", item))
            kinds = set(map(type, children))
            if kinds <= _SCALARS:  # the common case, at C speed: no visit per item
                seen += len(children) + (sum(len(c) for c in children if type(c) in _TEXTS)
                                         if kinds & _TEXTS else 0)
                if seen > self.bounds.value:
                    raise self._too_big("a text")
            else:
                stack.extend(children)
        self.charge(seen)

    def format_value(self, value: Any, conversion: int, spec: str) -> str:
        """One ``{value!conversion:spec}`` of an f-string."""
        self.measure_text(value)
        for number in _FORMAT_NUMBER.findall(spec):
            self.need(int(number) if len(number) < 10 else self.bounds.value + 1,
                      "a format's width")
        if conversion != -1:
            value = CONVERSIONS[conversion](value)
        return str(self.made(format(value, spec)))

    # -- calls -------------------------------------------------------------------------

    def call(self, func: Any, /, *args: Any, **kwargs: Any) -> Any:
        if isinstance(func, (HostFunction, _Metered)):
            return func(*args, **kwargs)
        args = tuple(_Metered(self, a) if _is_callable(a) else a for a in args)
        kwargs = {k: _Metered(self, v) if _is_callable(v) else v for k, v in kwargs.items()}
        name = getattr(func, "__name__", "")
        receiver = getattr(func, "__self__", None)
        if receiver is not None and not isinstance(receiver, type(json)):
            return self._method(func, name, receiver, args, kwargs)
        self._precheck_builtin(name, args)
        result = func(*args, **kwargs)
        if name in _LAZY:
            return MeteredIterator(self, iter(result))
        return self.made(result)

    def _precheck_builtin(self, name: str, args: tuple[Any, ...]) -> None:
        if name in _TEXT:
            for arg in args:
                self.measure_text(arg)
        if name == "sum" and len(args) > 1 and not isinstance(args[1], (int, float)):
            raise TypeError("sum() adds numbers only in a workflow script")
        if name in _CONSTANT:
            self.charge(1)
            return
        if name in _MATERIALIZE and args:
            first = args[0]
            self.need(range_length(first) if isinstance(first, range)
                      else len(first) if isinstance(first, SIZED) else 0,
                      f"the result of {name}()")
        self.charge(sum(size(a) for a in args))

    def _method(self, func: Any, name: str, receiver: Any, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
        if isinstance(receiver, (str, bytes)):
            self._precheck_text_method(name, receiver, args)
        elif _is_int(receiver) and name == "to_bytes" and args and _is_int(args[0]):
            self.need(args[0], "the result of to_bytes()")
        self.charge(size(receiver) + sum(size(a) for a in args)
                    + sum(size(v) for v in kwargs.values()))
        result = func(*args, **kwargs)
        if isinstance(receiver, (list, dict)):
            self.need(len(receiver), "a value")
        return self.made(result)

    def _precheck_text_method(self, name: str, receiver: str | bytes,
                              args: tuple[Any, ...]) -> None:
        if name in _WIDTH_METHODS and args and _is_int(args[0]):
            self.need(args[0], f"the result of {name}()")
        elif name == "expandtabs":
            tab = args[0] if args and _is_int(args[0]) else 8
            self.need(len(receiver) * max(tab, 1), "the result of expandtabs()")
        elif name == "replace" and len(args) >= 2:
            old, new = args[0], args[1]
            if isinstance(old, (str, bytes)) and isinstance(new, (str, bytes)):
                count = receiver.count(old) if old else len(receiver) + 1  # type: ignore[arg-type]
                self.charge(len(receiver))
                self.need(len(receiver) + count * len(new), "the result of replace()")
        elif name == "translate" and args and isinstance(args[0], dict):
            longest = max((len(v) for v in args[0].values()
                           if isinstance(v, (str, bytes))), default=1)
            self.charge(len(args[0]))
            self.need(len(receiver) * longest, "the result of translate()")
        elif name == "join" and args:
            items = args[0]
            if not isinstance(items, (list, tuple, str, dict, *_VIEWS)):
                items = list(items)  # a metered iterator pays per item
            self.charge(len(items))
            self.need(sum(len(i) if isinstance(i, (str, bytes)) else 0 for i in items)
                      + len(receiver) * len(items), "the result of join()")

    # -- the channel -------------------------------------------------------------------

    def encode(self, message: dict[str, Any], what: str) -> str:
        """A host call's message as the JSON line both runtimes send, within the channel's
        bounds; a value JSON cannot carry portably is the script's own error."""
        self.step()
        problem = portable_json_problem(message, self.bounds)
        if problem is not None:
            raise ValueError(f"{what}: {problem}")
        text = json.dumps(message, sort_keys=True, allow_nan=False)
        if len(text) > self.bounds.message_bytes:
            raise FlowLimit("FLOW-LIMIT", f"{what}: the message would be larger than "
                            f"{self.bounds.message_bytes:,} bytes")
        self.sent += len(text)
        if self.sent > self.bounds.channel_bytes:
            raise FlowLimit("FLOW-LIMIT", f"the script sent more than "
                            f"{self.bounds.channel_bytes:,} bytes to the host")
        return text

    def emitted(self) -> None:
        self.emits += 1
        if self.emits > self.bounds.emits:
            raise FlowLimit("FLOW-LIMIT", f"the script emitted more than "
                            f"{self.bounds.emits:,} values")


def portable_json_problem(value: Any, bounds: Bounds = BOUNDS) -> str | None:
    """Why ``value`` cannot cross the channel as portable JSON, or None. Iterative and
    bounded by the message size, so a cyclic or enormous value costs no more than the
    bound it breaks."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    budget = bounds.message_bytes
    while stack:
        item, depth = stack.pop()
        budget -= size(item)
        if budget < 0:
            return f"the message would be larger than {bounds.message_bytes:,} bytes"
        if isinstance(item, str):
            if not _utf8(item):
                return "a string with a lone surrogate cannot cross the channel"
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not MIN_INT <= item <= MAX_INT:
                return "an integer outside the signed 64-bit range cannot cross the channel"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "NaN and infinities are not JSON"
        elif isinstance(item, (list, tuple, dict)):
            if depth >= bounds.depth:
                return f"a value nested deeper than {bounds.depth} levels cannot cross"
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, (str, int, float, bool)) and key is not None:
                        return f"a {_kind(key)} cannot be a key of a value that crosses"
                    if isinstance(key, str) and not _utf8(key):
                        return "a key with a lone surrogate cannot cross the channel"
                    if isinstance(key, float) and not math.isfinite(key):
                        return "NaN and infinities are not JSON"
                    if isinstance(key, int) and not MIN_INT <= key <= MAX_INT:
                        return "an integer outside the signed 64-bit range cannot cross"
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
        else:
            return f"a {_kind(item)} is not a JSON value"
    return None


def _utf8(text: str) -> bool:
    return text.isascii() or not has_surrogate(text)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_callable(value: Any) -> bool:
    return callable(value) and not isinstance(value, (HostFunction, _Metered))


def _kind(value: Any) -> str:
    if isinstance(value, (HostFunction, _Metered)) or callable(value):
        return "function"
    if isinstance(value, MeteredIterator):
        return "iterator"
    return type(value).__name__
