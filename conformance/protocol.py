"""JSON Schemas of the driver protocol, and validation of what an implementation sends.

Every response is checked against the envelope schema and, for known ops, the result
schema; a violation names the JSON path that is wrong, so a broken adapter learns exactly
what it sent (as Bowtie's validation mode does). Dimension areas add their op schemas as
further ``$defs`` in files under ``protocol/``.

jsonschema writes the messages; whether there are any is first asked of the schema
compiled to a plain predicate (``schema_check``), which answers the same yes/no many
times faster: a valid response, nearly every one, never reaches jsonschema.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache, lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from capconf.conformance.locations import package_file
from capconf.conformance.schema_check import Check, Unsupported, compile_schema

_FILES = ("response.json", "defs.json", "ops.json")


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    folder = package_file() / "protocol"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            out[entry.name] = json.loads(entry.read_text(encoding="utf-8"))
    return out


@cache
def _registry() -> Registry:
    resources_ = [(s["$id"], Resource.from_contents(s)) for s in _schemas().values()]
    return Registry().with_resources(resources_)


@cache
def _validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": ref}, registry=_registry())


@lru_cache(maxsize=1024)
def op_result_ref(op: str) -> str | None:
    for name, schema in _schemas().items():
        if name == "response.json":
            continue
        if op in schema.get("$defs", {}) and name != "defs.json":
            return f"{schema['$id']}#/$defs/{op}"
    return None


def known_ops() -> list[str]:
    ops: set[str] = set()
    for name, schema in _schemas().items():
        if name not in ("response.json", "defs.json"):
            ops.update(k for k in schema.get("$defs", {}) if "." in k or k == "hello")
    return sorted(ops)


@cache
def _compiled(ref: str) -> Check | None:
    """``_validator(ref).is_valid`` as a compiled predicate, or None when the schema uses
    something ``schema_check`` does not compile: then jsonschema alone judges it (slower,
    as correct; tests/protocol/test_schema_check.py fails for a shipped schema)."""
    try:
        return compile_schema({"$ref": ref}, _registry())
    except Unsupported:
        return None


def prepare() -> None:
    """Compile every schema a run validates against, now: a process that forks many runs
    (the project's own test servers) does it once instead of once in every child."""
    for ref in ("capconf/response.json", *filter(None, map(op_result_ref, known_ops()))):
        _compiled(ref)
        _validator(ref)


def _problems(ref: str, value: Any) -> list[str]:
    """jsonschema's messages for ``value`` against ``ref``; none, without asking it, when
    the compiled predicate says valid. Only that answer is trusted: a no from the predicate
    is answered by jsonschema, so its messages are the same as ever."""
    check = _compiled(ref)
    if check is not None and check(value):
        return []
    return _errors(_validator(ref), value)


def _errors(validator: Draft202012Validator, value: Any) -> list[str]:
    out = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        out.append(f"at {where}: {error.message}")
    return out


_VALID: set[tuple[str, bytes]] = set()
_VALID_MAX = 4096


def validate_response(op: str, response: Any) -> list[str]:
    """Problems with a response to ``op`` (empty when it is valid).

    A run sends the same answers again and again (a property case's examples, every
    case's ``world.setup``), differing only in their integer id: each distinct response
    is validated once and a pass remembered. The key is the response's exact JSON with
    an integer id written as 0 (any integer is as valid as another); a response that is
    not plain JSON, or is invalid (its messages quote it), is validated every time."""
    try:
        rest = {**response, "id": 0} if type(response.get("id")) is int else response
        # the digest, not the text: 4,096 remembered 16 MiB answers were 64 GiB (#38)
        key = (op, hashlib.blake2b(json.dumps(rest, sort_keys=True, allow_nan=True)
                                   .encode("utf-8", "surrogatepass"), digest_size=20).digest())
    except (AttributeError, TypeError, ValueError):
        return _validate(op, response)
    if key in _VALID:
        return []
    problems = _validate(op, response)
    if not problems:
        if len(_VALID) >= _VALID_MAX:
            _VALID.clear()
        _VALID.add(key)
    return problems


def _validate(op: str, response: Any) -> list[str]:
    problems = _problems("capconf/response.json", response)
    if problems or not response.get("ok"):
        return problems
    ref = op_result_ref(op)
    if ref is None:
        return []
    return [f"result {p}" for p in _problems(ref, response["result"])]
