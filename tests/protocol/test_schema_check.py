"""The compiled schema predicates (conformance/schema_check.py) answer as jsonschema does.

protocol.py takes a compiled predicate's "valid" without asking jsonschema, so a predicate
more lenient than jsonschema would pass an invalid response silently, and a stricter one
would only cost time; both are held to ``Draft202012Validator.is_valid`` here:

- every schema protocol.py validates against compiles (a new keyword in a schema fails here
  first, instead of quietly sending that op through the slow path);
- differentially, over every op's result schema and the envelope: valid examples built
  from each schema (every ``oneOf`` branch and type alternative), every single-point
  mutation of them (each value replaced by each JSON kind, int<->float, a key dropped or
  added, a wrong enum string, astral and lone-surrogate text), real responses of the
  reference with their mutations, and hypothesis drawing several mutations at once;
- hand-written cases per keyword, where jsonschema's answer is easy to get wrong;
- the refusal of unsupported keywords, and protocol.py's fallback to jsonschema.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
import tempfile
from collections.abc import Callable, Iterator
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from capconf.conformance import protocol
from capconf.conformance.reference import make_dispatcher
from capconf.conformance.schema_check import Check, Unsupported, compile_schema

ENVELOPE = "capconf/response.json"


def op_refs() -> dict[str, str]:
    refs = {op: protocol.op_result_ref(op) for op in protocol.known_ops()}
    assert all(refs.values()), [op for op, ref in refs.items() if not ref]
    return {op: ref for op, ref in refs.items() if ref}


REFS = [ENVELOPE, *sorted(set(op_refs().values()))]


@cache
def compiled(ref: str) -> Check:
    return compile_schema({"$ref": ref}, protocol._registry())


def oracle(ref: str) -> Callable[[Any], bool]:
    return protocol._validator(ref).is_valid


def agree(ref: str, value: Any) -> bool:
    """The differential assertion, with the value in the failure message."""
    expected = oracle(ref)(value)
    assert compiled(ref)(value) is expected, (ref, value)
    return expected


# ------------------------------------------------------------------ every ref compiles


def test_every_validated_ref_compiles() -> None:
    assert len(REFS) > 40, REFS
    for ref in REFS:
        compile_schema({"$ref": ref}, protocol._registry())  # raises Unsupported otherwise
        assert protocol._compiled(ref) is not None, ref


# ------------------------------------------------------------------ examples from a schema

PATTERN_EXAMPLES = {"^[A-Z]+(-[A-Z0-9]+)+$": "DEF-NAME-01",
                    "^sha256:[0-9a-f]{64}$": "sha256:" + "0123456789abcdef" * 4}
"""A matching string per `pattern` the schemas use (another pattern gets "a", and a test
below fails if that leaves a schema without one valid example)."""


def _schema_at(ref: str) -> tuple[Any, Any]:
    resolved = protocol._registry().resolver().lookup(ref)
    return resolved.contents, resolved.resolver


def variants(schema: Any, resolver: Any, depth: int = 0) -> list[Any]:
    """Values meant to be valid: the first takes every first choice, each further one
    changes one choice (a `oneOf` branch, a type alternative, an optional key left out).
    Not all are valid (a `oneOf` or `if` the builder ignores); callers ask jsonschema."""
    if depth > 12 or schema is False:
        return []
    if schema is True or not schema:
        return ["anything"]
    if "$ref" in schema:
        resolved = resolver.lookup(schema["$ref"])
        return variants(resolved.contents, resolved.resolver, depth + 1)
    if "enum" in schema:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    if "oneOf" in schema:
        return [v for branch in schema["oneOf"] for v in variants(branch, resolver, depth + 1)]
    types = schema.get("type", ["object"] if "properties" in schema else ["string"])
    out: list[Any] = []
    for kind in [types] if isinstance(types, str) else types:
        out.extend(_of_type(kind, schema, resolver, depth))
    return out


def _of_type(kind: str, schema: dict[str, Any], resolver: Any, depth: int) -> list[Any]:
    least = schema.get("minimum", 0)
    if kind == "string":
        return [PATTERN_EXAMPLES.get(schema.get("pattern", ""), "a" * max(1, schema.get(
            "minLength", 0)))]
    if kind == "integer":
        return [math.ceil(least) + 1]
    if kind == "number":
        return [least + 0.5]
    if kind == "boolean":
        return [True, False]
    if kind == "null":
        return [None]
    if kind == "array":
        items = variants(schema.get("items", True), resolver, depth + 1)[:4]
        least_items = max(schema.get("minItems", 0), 1)
        return [[item] * least_items for item in items] + (
            [] if schema.get("minItems") else [[]])
    assert kind == "object", kind
    choices = {key: variants(sub, resolver, depth + 1)[:4]
               for key, sub in schema.get("properties", {}).items()}
    base = {key: values[0] for key, values in choices.items() if values}
    base.update({key: "anything" for key in schema.get("required", []) if key not in base})
    out = [base, {k: v for k, v in base.items() if k in schema.get("required", [])}]
    for key, values in choices.items():
        out.extend({**base, key: value} for value in values[1:])
    return out


@cache
def examples(ref: str) -> tuple[list[Any], list[Any]]:
    """(valid, invalid) variants of the schema at ``ref``."""
    built = variants(*_schema_at(ref))
    valid = [v for v in built if oracle(ref)(v)]
    return valid, [v for v in built if not oracle(ref)(v)]


# ------------------------------------------------------------------ mutations

REPLACEMENTS: list[Any] = [None, True, False, 0, 1, -1, 1.0, 1.5, "", "x", "😀", [], {},
                           ["x"], {"x": 1}]
"""One value of each JSON kind, and the numbers jsonschema tells apart (True/1, 1/1.0)."""


def _same(one: Any, two: Any) -> bool:
    return type(one) is type(two) and one == two


def mutants(value: Any, depth: int = 99) -> Iterator[Any]:
    """Every value one change away from ``value``, down to ``depth`` levels below it."""
    for other in REPLACEMENTS:
        if not _same(other, value):
            yield other
    if isinstance(value, bool):
        yield int(value)
    elif isinstance(value, int):
        yield from (float(value), value - 1, -value, value == 1, 2**64)
    elif isinstance(value, float):
        yield from ([int(value)] if value.is_integer() else []) + [math.nan, math.inf,
                                                                    -math.inf, value - 1]
    elif isinstance(value, str):
        yield from (value + "x", value[:-1], value.upper(), value + "\n", "\ud800" * len(value),
                    "😀" * len(value), "\ud83d\ude00" * len(value))
    elif isinstance(value, dict):
        yield {**value, "zz_extra": 1}
        for key in value:
            yield {k: v for k, v in value.items() if k != key}
            for changed in mutants(value[key], depth - 1) if depth else ():
                yield {**value, key: changed}
    elif isinstance(value, list):
        yield from (value[:-1], [*value, None], [*value, 1], value * 2)
        for index in range(min(len(value), 2) if depth else 0):
            for changed in mutants(value[index], depth - 1):
                yield [*value[:index], changed, *value[index + 1:]]


@pytest.mark.parametrize("ref", REFS)
def test_examples_and_their_single_mutations_agree(ref: str) -> None:
    valid, invalid = examples(ref)
    assert valid, f"no valid example built for {ref}: teach variants() its new keyword"
    for value in invalid:
        agree(ref, value)
    verdicts = [agree(ref, mutant) for mutant in mutants(valid[0])]
    assert False in verdicts, ref  # the mutations reach the invalid side
    assert all(agree(ref, value) for value in valid)


# ------------------------------------------------------------------ real responses


DEFINITION = """---
name: researcher
description: Finds answers in the handbook.
tools: Read, WEBFETCH, WebSearch, Bash, memory_write
knowledge:
  - {name: handbook, glob: docs/**/*.md}
memory: private
---
Answer from the handbook; cite path:line.
"""


@cache
def real_responses() -> list[tuple[str, dict[str, Any]]]:
    """A short session with the reference: each response as the driver would see it."""
    with tempfile.TemporaryDirectory(prefix="capconf-schema-check-") as workspace:
        return _session(workspace)


def _session(workspace: str) -> list[tuple[str, dict[str, Any]]]:
    with open(f"{workspace}/guide.md", "w", encoding="utf-8") as handle:
        handle.write("# Guide\nRefunds take 30 days.\n")
    source = {"source": DEFINITION, "filename": "researcher.md"}
    requests: list[tuple[str, dict[str, Any]]] = [
        ("hello", {}), ("world.setup", {"workspace": workspace, "frame": "You are."}),
        ("registry.list", {}), ("definition.parse", {**source, "mode": "parse"}),
        ("definition.parse", {"source": "---\nname: [\n", "filename": "x.md", "mode": "parse"}),
        ("prompt.assemble", source), ("agent.spawn", source), ("tools.mounted", source),
        ("memory.locate", source),
        ("tool.call", {"agent": "agent-1", "tool": "read", "args": {"path": "guide.md"}}),
        ("tool.call", {"agent": "agent-1", "tool": "WebSearch", "args": {"query": "x"}}),
        ("delegation.tree", {}), ("cards.list", {}), ("no.such.op", {}),
    ]
    dispatcher = make_dispatcher()
    return [(op, dispatcher.handle({"id": i, "op": op, "args": args}))
            for i, (op, args) in enumerate(requests, 1)]


def jsonschema_only(op: str, response: Any) -> list[str]:
    """What protocol._validate answered before it had compiled predicates."""
    problems = protocol._errors(protocol._validator(ENVELOPE), response)
    if problems or not response.get("ok"):
        return problems
    ref = protocol.op_result_ref(op)
    return [] if ref is None else [f"result {p}" for p in protocol._errors(
        protocol._validator(ref), response["result"])]


def test_real_responses_and_their_mutations_agree() -> None:
    results = 0
    for op, response in real_responses():
        assert agree(ENVELOPE, response), response
        for mutant in mutants(response, depth=2):  # the envelope looks no deeper
            agree(ENVELOPE, mutant)
        ref = protocol.op_result_ref(op)
        if ref and response["ok"]:
            results += 1
            assert agree(ref, response["result"]), (op, response)
            for mutant in mutants(response["result"], depth=3):
                agree(ref, mutant)
    assert results >= 10


def test_validate_response_messages_are_unchanged() -> None:
    """Through protocol.validate_response, valid or not: the same messages as jsonschema
    alone gave (the predicate only ever skips jsonschema for a valid value)."""
    invalid = 0
    for op, response in real_responses():
        for value in [response, *mutants(response, depth=2)]:
            protocol._VALID.clear()
            expected = jsonschema_only(op, value)
            assert protocol.validate_response(op, value) == expected, value
            invalid += bool(expected)
    assert invalid > 100


# ------------------------------------------------------------------ hypothesis

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(
        st.characters(codec=None, categories=None), max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=6)


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with up to three changes at drawn places: a replacement (a drawn JSON
    value or one of REPLACEMENTS), a key dropped or added, an item dropped."""
    value = copy.deepcopy(value)
    for _ in range(draw(st.integers(0, 3))):
        holder, key = None, None
        node = value
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            holder = node
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict)
                                       else range(len(node))))
            node = node[key]
        replacement = draw(st.sampled_from(REPLACEMENTS) | JSON | st.sampled_from(
            [*itertools.islice(mutants(node), 40)] or [None]))
        action = draw(st.sampled_from(["replace", "drop", "add"]))
        if holder is None:
            value = replacement
        elif action == "drop":
            del holder[key]
        elif action == "add" and isinstance(holder, dict):
            holder[draw(st.sampled_from(["zz", "", "ok", "id", "result", "error"]))] = replacement
        else:
            holder[key] = replacement
    return value


@settings(max_examples=60)
@given(ref=st.sampled_from(REFS), data=st.data())
def test_drawn_values_agree(ref: str, data: st.DataObject) -> None:
    """Several changes at once, at drawn places, over drawn refs: the systematic tests
    above change one thing at a time. (Sixty draws in all: jsonschema, the oracle, is
    what each costs; 15 per ref cost 1.7 CPU-s and caught no bug the others missed.)"""
    valid = examples(ref)[0] + [r["result"] for op, r in real_responses()
                                if r["ok"] and protocol.op_result_ref(op) == ref]
    if ref == ENVELOPE:
        valid += [r for _, r in real_responses()]
    seed = data.draw(st.sampled_from(valid))
    agree(ref, data.draw(mutated(seed) | JSON))


# ------------------------------------------------------------------ edge cases per keyword

NESTED = {"$defs": {"tree": {"type": "object", "required": ["n"], "properties": {
    "n": {"type": "integer", "minimum": 1},
    "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}},
    "$ref": "#/$defs/tree"}
IF = {"if": {"properties": {"applied": {"const": True}}},
      "then": {"required": ["document"]}, "else": {"required": ["refusal"]}}

EDGES: list[tuple[Any, Any, bool]] = [
    # enum / const: jsonschema's `equal`: 1 == 1.0, True != 1, deep in lists and dicts
    ({"enum": [1, "a"]}, True, False), ({"enum": [1, "a"]}, 1.0, True),
    ({"enum": [1, "a"]}, "1", False), ({"enum": [True]}, 1, False),
    ({"enum": [0]}, False, False), ({"enum": [False]}, False, True),
    ({"enum": [[1, 2]]}, [1.0, 2], True), ({"enum": [[1, 2]]}, [True, 2], False),
    ({"enum": [[1, 2]]}, (1, 2), True), ({"enum": [{"a": 1}]}, {"a": 1.0}, True),
    ({"enum": [{"a": 1}]}, {"a": True}, False), ({"enum": ["a", "b"]}, ["a"], False),
    ({"enum": []}, None, False), ({"enum": [None]}, None, True), ({"enum": [None]}, 0, False),
    ({"enum": [math.nan]}, float("nan"), False),  # `equal`: NaN is only itself
    ({"enum": [math.nan]}, math.nan, True),
    ({"const": 1}, True, False), ({"const": 1}, 1.0, True), ({"const": True}, 1, False),
    ({"const": True}, True, True), ({"const": False}, 0, False), ({"const": None}, False, False),
    ({"const": None}, None, True), ({"const": "a"}, "a", True), ({"const": "a"}, ["a"], False),
    ({"const": {"k": [1]}}, {"k": [1.0]}, True), ({"const": {"k": [1]}}, {"k": [True]}, False),
    # type
    ({"type": "integer"}, 1.0, True), ({"type": "integer"}, 1.5, False),
    ({"type": "integer"}, True, False), ({"type": "integer"}, math.nan, False),
    ({"type": "integer"}, math.inf, False), ({"type": "integer"}, 10**30, True),
    ({"type": "integer"}, 1e300, True), ({"type": "integer"}, "1", False),
    ({"type": "number"}, True, False), ({"type": "number"}, math.nan, True),
    ({"type": "number"}, -math.inf, True), ({"type": "number"}, Fraction(1, 2), True),
    ({"type": "boolean"}, 0, False), ({"type": "boolean"}, False, True),
    ({"type": "null"}, None, True), ({"type": "null"}, False, False), ({"type": "null"}, 0, False),
    ({"type": "object"}, [], False), ({"type": "object"}, {}, True),
    ({"type": "array"}, (1,), False), ({"type": "array"}, {}, False), ({"type": "array"}, [], True),
    ({"type": "string"}, b"a", False), ({"type": ["string", "integer"]}, True, False),
    ({"type": ["boolean", "integer"]}, True, True), ({"type": ["null", "number"]}, 2.5, True),
    ({"type": ["integer", "number"]}, 2.5, True), ({"type": []}, None, False),
    # minimum: numbers only, and only `value < minimum` fails (NaN does not)
    ({"minimum": 1}, 0, False), ({"minimum": 1}, 1, True), ({"minimum": 1}, 0.5, False),
    ({"minimum": 1}, math.nan, True), ({"minimum": 1}, -math.inf, False),
    ({"minimum": 1}, math.inf, True), ({"minimum": 1}, True, True), ({"minimum": 1}, False, True),
    ({"minimum": 1}, "0", True), ({"minimum": 1}, None, True), ({"minimum": 0.5}, 0, False),
    ({"type": ["integer", "null"], "minimum": 1}, True, False),
    ({"type": ["integer", "null"], "minimum": 1}, None, True),
    ({"type": ["integer", "null"], "minimum": 1}, 1.0, True),
    ({"type": ["integer", "null"], "minimum": 1}, 0.0, False),
    # object keywords apply to dicts only
    ({"required": ["a"]}, {}, False), ({"required": ["a"]}, {"a": None}, True),
    ({"required": ["a"]}, [], True), ({"required": ["a"]}, "a", True),
    ({"required": ["a"]}, None, True), ({"required": ["a"]}, ["a"], True),
    ({"properties": {"a": {"type": "string"}}}, {"a": 1}, False),
    ({"properties": {"a": {"type": "string"}}}, {"b": 1}, True),
    ({"properties": {"a": {"type": "string"}}}, [1], True),
    ({"properties": {"a": False}}, {"a": 1}, False), ({"properties": {"a": False}}, {}, True),
    ({"additionalProperties": {"type": "boolean"}}, {"x": 1}, False),
    ({"additionalProperties": {"type": "boolean"}}, {"x": True}, True),
    ({"properties": {"a": {}}, "additionalProperties": {"type": "boolean"}}, {"a": 1}, True),
    ({"properties": {"a": {}}, "additionalProperties": {"type": "boolean"}},
     {"a": 1, "b": 1}, False),
    ({"additionalProperties": False}, {"x": 1}, False), ({"additionalProperties": False}, {}, True),
    ({"additionalProperties": False}, [1], True),
    # array keywords apply to lists only
    ({"items": {"type": "string"}}, [1], False), ({"items": {"type": "string"}}, ["a"], True),
    ({"items": {"type": "string"}}, {"0": 1}, True), ({"items": {"type": "string"}}, "ab", True),
    ({"items": False}, [], True), ({"items": False}, [1], False),
    ({"minItems": 1}, [], False), ({"minItems": 1}, "", True), ({"minItems": 1}, [None], True),
    # string keywords count code points, and apply to str only
    ({"minLength": 1}, "", False), ({"minLength": 1}, "😀", True),
    ({"minLength": 1}, "\ud800", True), ({"minLength": 1}, [], True), ({"minLength": 1}, 0, True),
    ({"minLength": 2}, "😀", False), ({"minLength": 2}, "\ud83d\ude00", True),
    ({"maxLength": 1}, "😀", True), ({"maxLength": 1}, "\ud83d\ude00", False),
    ({"maxLength": 2}, "abc", False), ({"maxLength": 0}, "", True), ({"maxLength": 0}, 5, True),
    ({"pattern": "^[A-Z]+(-[A-Z0-9]+)+$"}, "DEF-01", True),
    ({"pattern": "^[A-Z]+(-[A-Z0-9]+)+$"}, "DEF-01\n", True),  # re.search: `$` before \n
    ({"pattern": "^[A-Z]+(-[A-Z0-9]+)+$"}, "xDEF-01", False),
    ({"pattern": "^[A-Z]+(-[A-Z0-9]+)+$"}, "DEF", False),
    ({"pattern": "^[A-Z]+(-[A-Z0-9]+)+$"}, 5, True),
    ({"pattern": "b"}, "abc", True),  # search, not match
    # oneOf: exactly one
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 5, False),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, -1, True),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, "x", True),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 0.5, True),
    ({"oneOf": [{"type": "string"}, {"type": "null"}]}, 1, False),
    ({"oneOf": [{}, {}]}, 1, False), ({"oneOf": [{}, False]}, 1, True), ({"oneOf": []}, 1, False),
    ({"oneOf": [True, True, False]}, 1, False),
    # if/then/else: both branches, and an `if` that passes a non-object
    (IF, {"applied": True, "document": 1}, True), (IF, {"applied": True, "refusal": 1}, False),
    (IF, {"applied": False, "refusal": 1}, True), (IF, {"applied": False, "document": 1}, False),
    (IF, {"applied": 1, "refusal": 1}, True), (IF, {}, False), (IF, 5, True),
    ({"if": {"type": "string"}, "else": {"minimum": 3}}, 1, False),
    ({"if": {"type": "string"}, "else": {"minimum": 3}}, "x", True),
    ({"if": {"type": "string"}, "then": {"minLength": 2}}, "x", False),
    ({"if": {"type": "string"}}, 1, True), ({"then": False}, 1, True), ({"else": False}, 1, True),
    # $ref next to siblings (both apply), recursion, boolean schemas
    ({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2}, "a", False),
    ({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2}, "ab", True),
    ({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2}, 12, False),
    (NESTED, {"n": 1, "kids": [{"n": 2, "kids": [{"n": 3}]}]}, True),
    (NESTED, {"n": 1, "kids": [{"n": 2, "kids": [{"n": 0}]}]}, False),
    (NESTED, {"n": 1, "kids": [{"n": 2, "kids": [{}]}]}, False),
    (True, None, True), (False, None, False), ({}, {"any": [1]}, True),
    ({"title": "t", "description": "d", "$comment": "c", "examples": [1], "type": "null"},
     None, True),
]


@pytest.mark.parametrize(("schema", "value", "expected"), EDGES)
def test_edge_cases(schema: Any, value: Any, expected: bool) -> None:
    assert Draft202012Validator(schema).is_valid(value) is expected
    assert compile_schema(schema)(value) is expected


def test_deep_recursion_agrees() -> None:
    node: dict[str, Any] = {"n": 1}
    for depth in range(40):
        node = {"n": depth + 2, "kids": [node, {"n": 1}]}
    assert compile_schema(NESTED)(node) is Draft202012Validator(NESTED).is_valid(node) is True
    node["kids"][0]["kids"][0]["kids"][1]["n"] = True
    assert compile_schema(NESTED)(node) is Draft202012Validator(NESTED).is_valid(node) is False


def test_the_if_then_else_of_editor_edit_both_branches() -> None:
    ref = op_refs()["editor.edit"]
    valid = examples(ref)[0]
    applied = [v for v in valid if v["applied"] is True]
    assert applied
    refused = {**applied[0], "applied": False, "document": None,
               "refusal": {"code": "unsafe_splice", "message": "m", "line": 1, "column": None}}
    assert agree(ref, refused) is True
    assert agree(ref, {**refused, "document": "text"}) is False
    assert agree(ref, {**applied[0], "refusal": refused["refusal"]}) is False


# ------------------------------------------------------------------ refusals and fallback


@pytest.mark.parametrize(("schema", "keyword", "where"), [
    ({"uniqueItems": True}, "uniqueItems", "#"),
    ({"type": "array", "items": {"properties": {"a/b": {"format": "date"}}}}, "format",
     "#/items/properties/a~1b"),
    ({"oneOf": [{}, {"not": {}}]}, "not", "#/oneOf/1"),
    ({"if": {"patternProperties": {"x": {}}}}, "patternProperties", "#/if"),
    ({"properties": {"a": {"$id": "elsewhere.json"}}}, "$id", "#/properties/a"),
    ({"properties": {"a": {"$schema": "http://json-schema.org/draft-07/schema#"}}}, "$schema",
     "#/properties/a"),
    ({"type": "integr"}, "integr", "#/type"),
    ({"$ref": "nowhere.json"}, "nowhere.json", "#/$ref"),
    ({"pattern": "("}, "pattern", "#/pattern"),
])
def test_unsupported_is_refused_where_it_is(schema: Any, keyword: str, where: str) -> None:
    with pytest.raises(Unsupported, match=re.escape(keyword)) as info:
        compile_schema(schema)
    assert f"{where}:" in str(info.value) or str(info.value).endswith(f"at {where}"), info.value


def test_unsupported_behind_a_ref_names_the_resource() -> None:
    other = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "t/other.json",
             "$defs": {"y": {"type": "object", "minProperties": 1}}}
    registry = Registry().with_resources([("t/other.json", Resource.from_contents(other))])
    with pytest.raises(Unsupported, match=re.escape("'minProperties' at t/other.json#/$defs/y")):
        compile_schema({"$ref": "t/other.json#/$defs/y"}, registry)
    # an unsupported keyword nobody reaches is no reason to refuse
    other["$defs"]["z"] = {"type": "string"}
    assert compile_schema({"$ref": "t/other.json#/$defs/z"}, registry)("s") is True


@pytest.fixture
def fresh_caches() -> Iterator[None]:
    protocol._compiled.cache_clear()
    protocol._VALID.clear()
    yield
    protocol._compiled.cache_clear()
    protocol._VALID.clear()


def test_protocol_falls_back_to_jsonschema_for_an_unsupported_schema(
        fresh_caches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(schema: Any, registry: Any = None) -> Check:
        raise Unsupported("unsupported keyword 'uniqueItems' at #")

    monkeypatch.setattr(protocol, "compile_schema", refuse)
    for op, response in real_responses():
        assert protocol.validate_response(op, response) == [], (op, response)
    assert protocol._compiled(ENVELOPE) is None
    wrong = {**real_responses()[0][1], "ok": "yes"}
    assert protocol.validate_response("hello", wrong) == jsonschema_only("hello", wrong) != []
    bad_result = {"id": 1, "ok": True, "result": {"spec_version": 1}}
    assert protocol.validate_response("hello", bad_result) == jsonschema_only(
        "hello", bad_result) != []
