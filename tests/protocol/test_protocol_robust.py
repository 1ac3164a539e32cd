"""PROTO-03: every hostile line gets a structured answer and the driver answers the next.

Each case sends raw bytes to the real `capconf driver` process (the stdio edge is where
UTF-8 and JSON are decoded) and, where the request is a JSON value, also hands it to the
dispatcher in process. Every output line must be valid UTF-8 JSON with no NaN.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.reference import make_dispatcher
from capconf.simulator.core import wire


def _strict_json(line: bytes) -> dict[str, Any]:
    def no_constants(name: str) -> Any:
        raise AssertionError(f"{name} in a response line")

    value = json.loads(line.decode("utf-8"), parse_constant=no_constants)
    assert isinstance(value, dict)
    return value


def drive(lines: list[bytes], timeout: float = 60) -> list[dict[str, Any]]:
    """Send the lines, then a `hello`; the driver must answer every line and the hello."""
    payload = b"".join(line + b"\n" for line in lines) + b'{"id": 999, "op": "hello"}\n'
    proc = subprocess.run([sys.executable, "-m", "capconf.conformance.cli", "driver"],
                          input=payload, capture_output=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    out = [_strict_json(line) for line in proc.stdout.splitlines()]
    assert len(out) == len(lines) + 1, out
    assert out[-1]["id"] == 999 and out[-1]["ok"], out[-1]
    return out[:-1]


HOSTILE_LINES: list[tuple[str, bytes, str]] = [
    # name, line, expected code
    ("invalid-utf8", b'{"id": 1, "op": "hello\xff\xfe"}', "bad_json"),
    ("overlong-utf8", b'{"id": 1, "op": "\xc0\xafhello"}', "bad_json"),
    ("encoded-surrogate", b'{"id": 1, "op": "\xed\xa0\x80"}', "bad_json"),
    ("not-json", b"{id: 1}", "bad_json"),
    ("nan-value", b'{"id": 1, "op": "hello", "args": {"x": NaN}}', "bad_json"),
    ("infinity-id", b'{"id": Infinity, "op": "hello"}', "bad_json"),
    ("minus-infinity", b'{"id": 1, "op": "hello", "args": {"x": -Infinity}}', "bad_json"),
    ("float-overflow", b'{"id": 1, "op": "hello", "args": {"x": 1e999}}', "bad_request"),
    ("deep-array", b"[" * 100_000 + b"]" * 100_000, "bad_request"),
    ("deep-unclosed", b'{"id": 1, "args": ' + b"[" * 50_000, "bad_request"),
    ("5000-digits", b'{"id": 1, "op": "hello", "args": {"n": ' + b"9" * 5000 + b"}}",
     "bad_request", None),
    ("5000-digit-id", b'{"id": ' + b"7" * 5000 + b', "op": "hello"}', "bad_request"),
    ("not-an-object", b"[1, 2]", "bad_request"),
    ("bom", b'\xef\xbb\xbf{"id": 1, "op": "hello"}', "bad_json"),
]


@pytest.fixture(scope="module")
def hostile_answers() -> list[dict[str, Any]]:
    """One driver process for every hostile line and id case; `drive` checks that each
    line got exactly one answer and that a final `hello` is still answered."""
    lines = [h[1] for h in HOSTILE_LINES] + [b'{"id": ' + c + b', "op": "hello"}'
                                             for c in ID_CASES]
    return drive(lines)


@pytest.mark.parametrize(("index", "name", "code"),
                         [(i, h[0], h[2]) for i, h in enumerate(HOSTILE_LINES)],
                         ids=[h[0] for h in HOSTILE_LINES])
def test_hostile_line_is_refused_and_driver_keeps_answering(
        hostile_answers: list[dict[str, Any]], index: int, name: str, code: str) -> None:
    response = hostile_answers[index]
    assert response["ok"] is False
    assert response["error"]["code"] == code, response
    assert response["id"] is None  # the line could not be trusted for an id
    assert response["error"]["message"]


ID_CASES = [b'"7"', b"7.0", b"7e0", b"true", b"null", b"[7]", b"{}", b"9223372036854775808"]


@pytest.mark.parametrize("index", range(len(ID_CASES)), ids=[c.decode() for c in ID_CASES])
def test_non_integer_id_is_refused_with_null_id(hostile_answers: list[dict[str, Any]],
                                                index: int) -> None:
    response = hostile_answers[len(HOSTILE_LINES) + index]
    assert response["ok"] is False and response["id"] is None
    assert response["error"]["code"] == "bad_request"
    if ID_CASES[index] != b"9223372036854775808":  # out of range is refused while parsing
        assert response["error"]["path"] == ["id"]


def test_nesting_beyond_64_levels_is_refused_with_its_path() -> None:
    """Parsed (it is within the parser's reach) but deeper than the 64 levels a request
    may use: refused at the first value below level 64, with the id echoed."""
    line = b'{"id": 4, "op": "hello", "args": ' + b'{"a": ' * 70 + b"1" + b"}" * 70 + b"}"
    ok = b'{"id": 5, "op": "hello", "args": ' + b'{"a": ' * 62 + b"1" + b"}" * 62 + b"}"
    refused, accepted = drive([line, ok])
    assert refused["id"] == 4 and refused["error"]["code"] == "bad_request"
    assert refused["error"]["path"] == ["args"] + ["a"] * 63
    assert accepted["id"] == 5 and accepted["ok"]


def test_missing_id_is_refused() -> None:
    [response] = drive([b'{"op": "hello"}'])
    assert response["error"]["code"] == "bad_request" and response["error"]["path"] == ["id"]


def test_largest_integer_id_is_echoed() -> None:
    [response] = drive([b'{"id": 9223372036854775807, "op": "hello"}',
                        b'{"id": -9223372036854775808, "op": "hello"}'])[:1]
    assert response["ok"] and response["id"] == 2**63 - 1


SURROGATE_REQUESTS: list[tuple[bytes, list[str | int]]] = [
    (b'{"id": 5, "op": "\\ud800"}', ["op"]),
    (b'{"id": 5, "op": "no.such\\udfff"}', ["op"]),
    (b'{"id": 5, "op": "definition.parse", "args": {"source": "name: \\ud83d"}}',
     ["args", "source"]),
    (b'{"id": 5, "op": "tool.call", "args": {"agent": "a", "tool": "read", '
     b'"args": {"path": "\\udc80"}}}', ["args", "args", "path"]),
    (b'{"id": 5, "op": "hello", "args": {"\\ud800key": 1}}', ["args"]),  # the key's object
]


def test_lone_surrogate_is_refused_with_its_path() -> None:
    responses = drive([line for line, _ in SURROGATE_REQUESTS])
    for (line, path), response in zip(SURROGATE_REQUESTS, responses, strict=True):
        assert response["id"] == 5 and response["error"]["code"] == "bad_request", line
        assert response["error"]["path"] == path, line


def test_surrogate_key_path_is_itself_valid_utf8() -> None:
    [response] = drive([b'{"id": 5, "op": "hello", "args": {"\\ud800": 1}}'])
    assert response["error"]["code"] == "bad_request"
    json.dumps(response, ensure_ascii=False).encode("utf-8")  # no lone surrogate in it


def test_surrogate_escape_pair_is_a_normal_character(tmp_path: Path) -> None:
    setup = json.dumps({"id": 1, "op": "world.setup", "args": {"workspace": str(tmp_path)}})
    [_, response] = drive([setup.encode(), b'{"id": 2, "op": "definition.parse", "args": '
                           b'{"source": "name: a\\ud83d\\ude00\\ndescription: d\\n"}}'])
    assert response["ok"], response


def test_nan_and_infinity_in_extra_become_yaml_strings(tmp_path: Path) -> None:
    """Decision (SPEC PROTO-03): a non-finite YAML float is reported as `.inf`, `-.inf`
    or `.nan`; JSON has no such numbers."""
    setup = json.dumps({"id": 1, "op": "world.setup", "args": {"workspace": str(tmp_path)}})
    source = "name: a\ndescription: d\nx: .inf\ny: [-.INF, .NaN]\nz: {w: .inf}\n"
    parse = json.dumps({"id": 2, "op": "definition.parse", "args": {"source": source}})
    [_, response] = drive([setup.encode(), parse.encode()])
    assert response["result"]["definition"]["extra"] == {
        "x": ".inf", "y": ["-.inf", ".nan"], "z": {"w": ".inf"}}


def test_in_process_dispatcher_holds_values_to_the_same_rules(tmp_path: Path) -> None:
    d = make_dispatcher()
    assert d.handle({"id": 1, "op": "world.setup", "args": {"workspace": str(tmp_path)}})["ok"]
    cases: list[tuple[Any, Any, str]] = [
        ({"id": 2, "op": "hello", "args": {"x": float("nan")}}, 2, "bad_request"),
        ({"id": 2, "op": "hello", "args": {"x": float("inf")}}, 2, "bad_request"),
        ({"id": 2, "op": "hello", "args": {"x": 10**30}}, 2, "bad_request"),
        ({"id": True, "op": "hello"}, None, "bad_request"),
        ({"id": 2.0, "op": "hello"}, None, "bad_request"),
        ({"id": 2, "op": "hello", "args": {1: "non-string key"}}, 2, "bad_request"),
        ({"id": 2, "op": "read\ud800"}, 2, "bad_request"),
        ([1], None, "bad_request"),
    ]
    nested: Any = 1
    for _ in range(100_000):
        nested = [nested]
    cases.append(({"id": 3, "op": "hello", "args": {"n": nested}}, 3, "bad_request"))
    for request, rid, code in cases:
        response = d.handle(request)
        assert response["id"] == rid and response["error"]["code"] == code, response
    assert d.handle({"id": 4, "op": "hello"})["ok"]


def test_a_non_portable_result_is_an_internal_error_not_a_broken_line() -> None:
    """The response check is the last line of defence: an op that returns NaN or a lone
    surrogate costs one response, never the connection, and never an invalid line."""
    d = make_dispatcher()
    d.ops["capconf.bad"] = lambda session, args: {"x": float("nan"), "y": "\udcff"}
    response = d.handle({"id": 8, "op": "capconf.bad"})
    assert response["id"] == 8 and response["error"]["code"] == "internal"
    line = wire.encode_response(response)
    assert _strict_json(line.rstrip(b"\n")) == response
    # and the encoder itself never raises
    fallback = _strict_json(wire.encode_response({"id": 9, "x": float("nan")}).rstrip(b"\n"))
    assert fallback["error"]["code"] == "internal" and fallback["id"] == 9


@pytest.mark.parametrize("char", ["\x07", "\x00", "\ufffe", "\x1b", "\x7f", "\ud800"])
def test_control_character_in_definition_yaml_is_located(tmp_path: Path, char: str) -> None:
    from capconf.simulator.definition.parse import parse_definition

    outcome = parse_definition(f"name: a\ndescription: b{char}c\nprompt: p\n")
    [diag] = outcome.diagnostics
    assert outcome.definition is None
    assert (diag.code, diag.location.line, diag.location.column) == (
        "DEF-YAML-SYNTAX", 2, 15), diag
    md = parse_definition(f"---\nname: a\ndescription: x{char}\n---\nbody\x07 ok\n",
                          fmt=None, filename="a.md")
    [diag] = md.diagnostics
    assert (diag.code, diag.location.line, diag.location.column) == (
        "DEF-YAML-SYNTAX", 3, 15), diag


def test_control_character_over_the_wire_is_a_diagnostic_not_internal(tmp_path: Path) -> None:
    setup = json.dumps({"id": 1, "op": "world.setup", "args": {"workspace": str(tmp_path)}})
    lines = [setup.encode()]
    for char in ("\x07", "\x00", "\ufffe"):
        source = f"name: a{char}\ndescription: d\n"
        lines.append(json.dumps({"id": 2, "op": "definition.parse",
                                 "args": {"source": source}}).encode())
    for response in drive(lines)[1:]:
        assert response["ok"], response
        assert [d["code"] for d in response["result"]["diagnostics"]] == ["DEF-YAML-SYNTAX"]
        assert (response["result"]["diagnostics"][0]["line"],
                response["result"]["diagnostics"][0]["column"]) == (1, 8)


def test_read_with_lone_surrogate_path_is_structured(tmp_path: Path) -> None:
    lines = [json.dumps({"id": 1, "op": "world.setup",
                         "args": {"workspace": str(tmp_path)}}).encode(),
             json.dumps({"id": 2, "op": "agent.spawn", "args": {
                 "source": "name: a\ndescription: d\ntools: read\n"}}).encode(),
             b'{"id": 3, "op": "tool.call", "args": {"agent": "agent-1", "tool": "read", '
             b'"args": {"path": "a\\ud800.txt"}}}']
    responses = drive(lines)
    assert responses[2]["error"]["code"] == "bad_request"
    assert responses[2]["error"]["path"] == ["args", "args", "path"]


def test_oversized_line_is_refused_without_keeping_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from capconf.simulator.protocol import stdio

    monkeypatch.setattr(stdio, "MAX_LINE_BYTES", 1000)
    out = io.BytesIO()
    stdio.serve(io.BytesIO(b'{"id": 1, "x": "' + b"a" * 5000 + b'"}\n{"id": 2, "op": "hello"}\n'),
                out)
    first, second = (_strict_json(x) for x in out.getvalue().splitlines())
    assert first["error"]["code"] == "bad_request" and first["id"] is None
    assert second["id"] == 2 and second["ok"]
