"""The namespace catalogue as a value: parsed and validated once, then only read.

One name has one meaning (SPEC 11a, "Names"): a qualified function name is
``namespace.function`` with exactly one dot; namespace and function names are
``[a-z][a-z0-9_]*`` without ``__``, so a dotted name can never be a flat registry name
(``read``, ``WebFetch``) or an MCP gateway name (``server__tool``). A bad catalogue is
refused with the JSON path of the first fault, never half-loaded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

import yaml

NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
MAX_NAME = 64


class Form(StrEnum):
    """How a namespace enters a context before it is loaded (NS-02..04)."""

    CORE = "core"
    """Always fully loaded: names, descriptions and schemas (NS-03)."""
    NAMESPACE = "namespace"
    """Wholly deferred: only the namespace's name and one line (NS-04, first form)."""
    SCHEMAS = "schemas"
    """Schema-deferred: function names and one-liners visible, parameters not."""


class Delivery(StrEnum):
    """How a function's result reaches the model (CALL-02, CALL-04)."""

    SYNC = "sync"
    ASYNC = "async"
    UI = "ui"


@dataclass(frozen=True)
class Function:
    name: str
    description: str
    parameters: Mapping[str, Any]
    delivery: Delivery = Delivery.SYNC


@dataclass(frozen=True)
class Namespace:
    name: str
    description: str
    form: Form
    channels: frozenset[str]
    functions: tuple[Function, ...]

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)


@dataclass(frozen=True)
class Catalog:
    namespaces: tuple[Namespace, ...]
    channels: tuple[str, ...]

    def namespace(self, name: str) -> Namespace | None:
        return next((n for n in self.namespaces if n.name == name), None)

    def visible(self, channel: str) -> tuple[Namespace, ...]:
        """NS-05: a namespace gated off for the channel is absent, not failing."""
        return tuple(n for n in self.namespaces if channel in n.channels)


class CatalogError(ValueError):
    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _name(value: Any, path: tuple[str | int, ...]) -> str:
    if (not isinstance(value, str) or not NAME.match(value) or "__" in value
            or len(value) > MAX_NAME):
        raise CatalogError(path, f"must match [a-z][a-z0-9_]* (at most {MAX_NAME}, no `__`): "
                           "a dot separates namespace and function and belongs to neither")
    return value


def _line(value: Any, path: tuple[str | int, ...]) -> str:
    if not isinstance(value, str) or not value.strip() or "\n" in value or "\r" in value:
        raise CatalogError(path, "must be a non-empty one-line string")
    return value


def _enum(kind: type[Form] | type[Delivery], value: Any, path: tuple[str | int, ...]) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise CatalogError(path, f"must be one of {[str(k) for k in kind]}") from None


def _function(raw: Any, path: tuple[str | int, ...]) -> Function:
    if not isinstance(raw, dict):
        raise CatalogError(path, "must be {name, description, parameters, delivery?}")
    params = raw.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(params, dict) or params.get("type") != "object":
        raise CatalogError((*path, "parameters"), "must be a JSON Schema of type object")
    return Function(_name(raw.get("name"), (*path, "name")),
                    _line(raw.get("description"), (*path, "description")), params,
                    _enum(Delivery, raw.get("delivery", "sync"), (*path, "delivery")))


def parse_catalog(raw: Any) -> Catalog:
    """Validate a whole catalogue: {channels, namespaces: [{name, description, form,
    channels, functions}]}. Exactly one namespace per name; at least one core one."""
    if not isinstance(raw, dict):
        raise CatalogError((), "must be {channels, namespaces}")
    channels = raw.get("channels")
    if not (isinstance(channels, list) and channels
            and all(isinstance(c, str) and NAME.match(c) for c in channels)
            and len(set(channels)) == len(channels)):
        raise CatalogError(("channels",), "must be a non-empty list of distinct channel names")
    rows = raw.get("namespaces")
    if not isinstance(rows, list) or not rows:
        raise CatalogError(("namespaces",), "must be a non-empty list")
    out: list[Namespace] = []
    for i, row in enumerate(rows):
        path: tuple[str | int, ...] = ("namespaces", i)
        if not isinstance(row, dict):
            raise CatalogError(path, "must be {name, description, form, channels, functions}")
        name = _name(row.get("name"), (*path, "name"))
        if any(n.name == name for n in out):
            raise CatalogError((*path, "name"), f"namespace {name!r} is defined twice")
        gates = row.get("channels", list(channels))
        if not isinstance(gates, list) or any(c not in channels for c in gates):
            raise CatalogError((*path, "channels"), f"must be a list drawn from {channels}")
        fns = row.get("functions")
        if not isinstance(fns, list) or not fns:
            raise CatalogError((*path, "functions"), "must be a non-empty list")
        functions = tuple(_function(f, (*path, "functions", j)) for j, f in enumerate(fns))
        if len({f.name for f in functions}) != len(functions):
            raise CatalogError((*path, "functions"), "function names must be distinct")
        out.append(Namespace(name, _line(row.get("description"), (*path, "description")),
                             _enum(Form, row.get("form", "namespace"), (*path, "form")),
                             frozenset(gates), functions))
    if not any(n.form is Form.CORE for n in out):
        raise CatalogError(("namespaces",), "at least one namespace must have form `core`")
    if not any(n.function("load_tool_namespace") for n in out if n.form is Form.CORE):
        raise CatalogError(("namespaces",), "a core namespace must provide "
                           "`load_tool_namespace`, or nothing deferred could ever be loaded")
    return Catalog(tuple(out), tuple(channels))


def split_qualified(name: str) -> tuple[str, str] | None:
    """``ns.fn`` -> (ns, fn); anything else (flat, MCP, two dots) -> None."""
    ns, dot, fn = name.partition(".")
    if not dot or not NAME.match(ns) or not NAME.match(fn):
        return None
    return ns, fn


@cache
def realistic_catalog() -> Catalog:
    """The seed-sized catalogue shipped as data (33 namespaces on the main channel)."""
    text = resources.files(__package__).joinpath("data/realistic.yaml").read_text("utf-8")
    return parse_catalog(yaml.safe_load(text))
