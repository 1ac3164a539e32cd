"""JSON Schemas compiled to plain Python predicates: a fast yes/no for valid responses.

Validating every driver response with ``jsonschema`` costs a noticeable share of a run,
almost all of it on responses that are valid. :func:`compile_schema` turns a schema into
``check(value) -> bool`` that answers exactly what ``Draft202012Validator(schema,
registry=registry).is_valid(value)`` answers, with a few closures per schema node instead
of jsonschema's generators of errors. ``protocol.py`` asks jsonschema only when the
predicate says no, so every message a run prints is still jsonschema's.

Only the keywords the protocol schemas (``protocol/*.json``) use are compiled; any other
keyword reachable from the compiled schema raises :class:`Unsupported` naming it and
where it is, at compile time. A caller falls back to jsonschema for that schema: correct,
only slower (tests/protocol/test_schema_check.py fails when a shipped schema does so).
Unknown keywords are refused rather than ignored (jsonschema ignores them) because a
keyword this module does not know may be one jsonschema applies.

``$ref`` is resolved by the same ``referencing`` resolver jsonschema uses, so relative
refs resolve against the same base URIs, quirks included: the registry of protocol.py
crawls each file under its relative ``$id`` joined to itself as well (``capconf/x.json``
also answers as ``capconf/capconf/x.json``), which is what ``capconf/defs.json#/...``
written inside ``capconf/editor.json`` resolves to.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin

from jsonschema._utils import equal
from referencing import Registry
from referencing.jsonschema import DRAFT202012

if TYPE_CHECKING:
    from referencing._core import Resolver  # not exported by `referencing` itself

Check = Callable[[Any], bool]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description", "$comment",
                         "examples"})
"""Keywords that never decide validity (``$defs`` is reached only through ``$ref``)."""

KEYWORDS = ANNOTATIONS | {
    "type", "required", "properties", "additionalProperties", "items", "minItems",
    "$ref", "enum", "const", "oneOf", "if", "then", "else",
    "minLength", "maxLength", "pattern", "minimum"}
"""Every keyword :func:`compile_schema` accepts."""


class Unsupported(Exception):
    """The schema uses something this compiler does not implement (a keyword, a ``$ref``
    it cannot resolve, a malformed keyword value): validate with jsonschema instead."""


def compile_schema(schema: Any, registry: Registry[Any] | None = None) -> Check:
    """The predicate ``Draft202012Validator(schema, registry=registry).is_valid``.

    Raises :class:`Unsupported` if any subschema reachable from ``schema`` uses a keyword
    outside :data:`KEYWORDS` (or a ``$ref`` that does not resolve)."""
    registry = Registry() if registry is None else registry
    # as jsonschema does: the root schema is a resource of its own, its `$id` a base URI
    resolver = registry.resolver_with_root(DRAFT202012.create_resource(schema))
    return _Compiler().node(schema, resolver, "#", id_applied=True)


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _is_integer(value: Any) -> bool:
    # jsonschema's 2020-12 type checker: bool is not an integer, 1.0 is
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


_CLASSES: dict[str, type] = {"string": str, "object": dict, "array": list,
                             "boolean": bool, "null": type(None)}
"""The types an isinstance() decides (bool is not an int here: "integer" is not listed)."""


def _pointer(where: str, *keys: str | int) -> str:
    escaped = (str(k).replace("~", "~0").replace("/", "~1") for k in keys)
    return "/".join((where, *escaped))


def _all(checks: list[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)

    def every(value: Any) -> bool:
        for check in checks:  # noqa: SIM110 (a loop: all() would build a generator per call)
            if not check(value):
                return False
        return True
    return every


class _Compiler:
    """One compilation: ``$ref`` targets memoized by (base URI, schema object), so a
    target reached twice compiles once and a recursive ``$ref`` ends in a forwarder.

    The memo lives as long as one :func:`compile_schema` call: a compilation that raised
    leaves forwarders that were never filled, and they must not be seen again."""

    def __init__(self) -> None:
        self._refs: dict[tuple[str, int], tuple[Any, Check]] = {}

    def node(self, schema: Any, resolver: Resolver[Any], where: str, *,
             id_applied: bool = False) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise Unsupported(f"{where}: a schema is an object or a boolean, "
                              f"not {type(schema).__name__}")
        unknown = sorted(set(schema) - KEYWORDS)
        if unknown:
            raise Unsupported(f"unsupported keyword {unknown[0]!r} at {where}")
        if "$id" in schema and not id_applied:
            # `id_applied`: the resolver already went through this `$id` (the root, a $ref
            # target). Elsewhere jsonschema moves the base URI at an `$id` differently
            # for `if` and for oneOf's later branches: not worth mirroring, none is used
            raise Unsupported(f"unsupported keyword '$id' in a subschema at {where}")
        if schema.get("$schema", DIALECT) != DIALECT:
            # a subschema's `$schema` makes jsonschema switch to that draft's validator
            raise Unsupported(f"unsupported '$schema' {schema['$schema']!r} at {where}")

        checks: list[Check] = []
        if "type" in schema:
            checks.append(_type(schema["type"], where))
        if "$ref" in schema:  # in 2020-12 its siblings apply as well
            checks.append(self.ref(schema["$ref"], resolver, _pointer(where, "$ref")))
        if "enum" in schema:
            checks.append(_enum(schema["enum"], where))
        if "const" in schema:
            checks.append(_const(schema["const"]))
        if {"required", "properties", "additionalProperties"} & schema.keys():
            checks.append(self.object(schema, resolver, where))
        if "items" in schema or "minItems" in schema:
            checks.append(self.array(schema, resolver, where))
        if {"minLength", "maxLength", "pattern"} & schema.keys():
            checks.append(_string(schema, where))
        if "minimum" in schema:
            checks.append(_minimum(schema["minimum"], where))
        if "oneOf" in schema:
            checks.append(self.one_of(schema["oneOf"], resolver, _pointer(where, "oneOf")))
        if "if" in schema:  # (`then` and `else` without an `if` do nothing)
            checks.append(self.if_then_else(schema, resolver, where))
        return _all(checks)

    def ref(self, ref: Any, resolver: Resolver[Any], where: str) -> Check:
        if not isinstance(ref, str):
            raise Unsupported(f"{where}: $ref is not a string")
        try:
            resolved = resolver.lookup(ref)
        except Exception as exc:  # Unresolvable, or a pointer that is not one: let
            # jsonschema meet it when (and if) validation reaches this $ref
            raise Unsupported(f"{where}: cannot resolve $ref {ref!r} ({exc!r})") from None
        target = resolved.contents
        key = (resolved.resolver._base_uri, id(target))
        if key in self._refs:
            return self._refs[key][1]
        cell: list[Check] = []

        def forward(value: Any) -> bool:  # only while the target compiles (a cycle)
            return cell[0](value)
        # the memo keeps `target` alive, so its id() cannot be reused by another object
        self._refs[key] = (target, forward)
        absolute = urljoin(resolver._base_uri, ref) if not ref.startswith("#") else (
            resolver._base_uri + ref)
        uri, fragment = urldefrag(absolute)
        # like jsonschema, the resolved resolver is used as is: lookup applied any `$id`
        check = self.node(target, resolved.resolver, f"{uri}#{fragment}", id_applied=True)
        cell.append(check)
        self._refs[key] = (target, check)
        return check

    def object(self, schema: dict[str, Any], resolver: Resolver[Any], where: str) -> Check:
        """``required``, ``properties`` and ``additionalProperties`` in one pass; they
        apply to dicts only (anything else passes them)."""
        required = schema.get("required", [])
        properties = schema.get("properties", {})
        if not (isinstance(required, list) and all(isinstance(k, str) for k in required)):
            raise Unsupported(f"{where}/required: not a list of strings")
        if not isinstance(properties, dict):
            raise Unsupported(f"{where}/properties: not an object")
        named = {key: self.node(sub, resolver, _pointer(where, "properties", key))
                 for key, sub in properties.items()}
        checked = [(key, check) for key, check in named.items() if check is not _always]
        needed = frozenset(required)
        missing = object()

        if "additionalProperties" not in schema or schema["additionalProperties"] is True:
            def open_object(value: Any) -> bool:
                if not isinstance(value, dict):
                    return True
                if not needed <= value.keys():
                    return False
                for key, check in checked:
                    item = value.get(key, missing)
                    if item is not missing and not check(item):
                        return False
                return True
            return open_object

        # every key not in `properties` is checked against additionalProperties
        extra = self.node(schema["additionalProperties"], resolver,
                          _pointer(where, "additionalProperties"))

        def with_additional(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            if not needed <= value.keys():
                return False
            for key, item in value.items():
                check = named.get(key, extra)
                if check is not _always and not check(item):
                    return False
            return True
        return with_additional

    def array(self, schema: dict[str, Any], resolver: Resolver[Any], where: str) -> Check:
        items = self.node(schema.get("items", True), resolver, _pointer(where, "items"))
        least = _count(schema.get("minItems", 0), f"{where}/minItems")

        def array(value: Any) -> bool:
            if not isinstance(value, list):
                return True
            if len(value) < least:
                return False
            if items is not _always:
                for item in value:
                    if not items(item):
                        return False
            return True
        return array

    def one_of(self, branches: Any, resolver: Resolver[Any], where: str) -> Check:
        if not isinstance(branches, list):
            raise Unsupported(f"{where}: not a list")
        checks = [self.node(sub, resolver, _pointer(where, i)) for i, sub in enumerate(branches)]

        def exactly_one(value: Any) -> bool:
            found = False
            for check in checks:
                if check(value):
                    if found:
                        return False
                    found = True
            return found
        return exactly_one

    def if_then_else(self, schema: dict[str, Any], resolver: Resolver[Any],
                     where: str) -> Check:
        condition = self.node(schema["if"], resolver, _pointer(where, "if"))
        then = self.node(schema.get("then", True), resolver, _pointer(where, "then"))
        else_ = self.node(schema.get("else", True), resolver, _pointer(where, "else"))
        return lambda value: then(value) if condition(value) else else_(value)


def _type(types: Any, where: str) -> Check:
    names = [types] if isinstance(types, str) else types
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise Unsupported(f"{where}/type: not a string or a list of strings")
    unknown = [n for n in names if n not in _CLASSES and n not in ("integer", "number")]
    if unknown:
        raise Unsupported(f"{where}/type: unknown type {unknown[0]!r}")
    classes = tuple(_CLASSES[n] for n in names if n in _CLASSES)
    # "number" takes every integer "integer" takes
    number = _is_number if "number" in names else _is_integer if "integer" in names else None
    if number is None:
        return lambda value: isinstance(value, classes)
    if not classes:
        return number
    return lambda value: isinstance(value, classes) or number(value)


def _enum(values: Any, where: str) -> Check:
    if not isinstance(values, list):
        raise Unsupported(f"{where}/enum: not a list")
    if all(type(v) is str for v in values):
        # jsonschema's `equal` compares a string with `==`, which only a str can pass
        strings = frozenset(values)
        return lambda value: isinstance(value, str) and value in strings
    return lambda value: any(equal(each, value) for each in values)


def _const(const: Any) -> Check:
    if const is True or const is False or const is None:
        # `equal` tells True from 1 and False from 0: only the object itself is equal
        return lambda value: value is const
    if type(const) is str:
        return lambda value: bool(value == const)
    return lambda value: equal(value, const)


def _count(value: Any, where: str) -> int:
    if type(value) is not int or value < 0:
        raise Unsupported(f"{where}: not a non-negative integer")
    return value


def _string(schema: dict[str, Any], where: str) -> Check:
    least = _count(schema.get("minLength", 0), f"{where}/minLength")
    most = schema.get("maxLength")
    most = None if most is None else _count(most, f"{where}/maxLength")
    pattern = schema.get("pattern")
    try:
        # jsonschema calls re.search(pattern, value): the same compiled pattern
        search = None if pattern is None else re.compile(pattern).search
    except (re.error, TypeError) as exc:
        raise Unsupported(f"{where}/pattern: {exc}") from None

    def string(value: Any) -> bool:
        if not isinstance(value, str):
            return True
        # len() counts code points, as JSON Schema does (an astral character is one)
        if len(value) < least or (most is not None and len(value) > most):
            return False
        return search is None or search(value) is not None
    return string


def _minimum(least: Any, where: str) -> Check:
    if not _is_number(least) or isinstance(least, complex):
        raise Unsupported(f"{where}/minimum: not a number")
    # `not value < least`, as jsonschema fails only `value < least`: NaN passes
    return lambda value: not _is_number(value) or not value < least
