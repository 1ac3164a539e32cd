"""The driver protocol itself, and the registry as the implementation reports it."""

from __future__ import annotations

from typing import Any

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.driver import Driver
from capconf.conformance.harness import Harness, expect, expect_true

LEGACY_SIX = {"bash", "read", "write", "edit", "glob", "grep"}


@pytest.mark.case("proto.hello.fields")
@pytest.mark.req("PROTO-01")
def test_hello_names_implementation_and_features(driver: Driver) -> None:
    hello = driver.hello(refresh=True)
    assert hello["implementation"]["name"].strip()
    assert hello["spec_version"].count(".") == 2, hello["spec_version"]
    assert len(set(hello["features"])) == len(hello["features"])


@pytest.mark.case("proto.unknown-op")
@pytest.mark.req("PROTO-03")
def test_unknown_op_is_not_implemented(driver: Driver) -> None:
    error = driver.request_error("capconf.no-such-op", {}, not_implemented_expected=True)
    assert error["code"] == "not_implemented"
    assert driver.hello(refresh=True)["implementation"]["name"]  # still answering


@pytest.mark.case("proto.bad-args")
@pytest.mark.req("PROTO-03")
def test_parse_without_source_is_bad_request(impl: Harness) -> None:
    error = impl.driver.request_error("definition.parse", {"mode": "parse"})
    assert error["code"] == "bad_request"
    error = impl.driver.request_error("definition.parse", {"source": 42})
    assert error["code"] == "bad_request"
    assert impl.parse("name: x\ndescription: y\nprompt: z\n")["loaded"]  # still answering


@pytest.mark.case("proto.world.workspace-missing")
@pytest.mark.req("PROTO-02")
def test_world_with_missing_workspace_is_refused(impl: Harness) -> None:
    """PROTO-02: `workspace` must name an existing directory; a path that does not exist,
    a file, or no `workspace` at all is `world_invalid` at `["args", "workspace"]`. Bug: a
    runtime that creates the directory, or acts later in a workspace that is not there."""
    impl.write("a-file.txt", "not a directory")
    for where, args in (("a path that does not exist",
                         {"workspace": str(impl.workspace / "does-not-exist")}),
                        ("a file", {"workspace": str(impl.workspace / "a-file.txt")})):
        error = impl.setup_error(**args)
        got = (error.get("code"), error.get("path"))
        assert got == ("world_invalid", ["args", "workspace"]), (
            f"workspace: {where}: expected ('world_invalid', ['args', 'workspace']), got {got}")
    error = impl.driver.request_error("world.setup", {"frame": "F"})
    got = (error.get("code"), error.get("path"))
    assert got == ("world_invalid", ["args", "workspace"]), (
        f"no workspace: expected ('world_invalid', ['args', 'workspace']), got {got}")


@pytest.mark.case("tool.registry.case-conflict-refused")
@pytest.mark.req("TOOL-04", "PROTO-02")
def test_registry_names_equal_up_to_case_are_refused(impl: Harness) -> None:
    error = impl.setup_error(grantable=["read", "WebFetch", "webfetch"],
                             session_tools=["read", "WebFetch"])
    assert error["code"] == "world_invalid"
    assert error.get("path") == ["args", "grantable", 2]  # the second of the pair


@pytest.mark.case("tool.registry.not-grantable-reasons")
@pytest.mark.req("TOOL-01")
def test_not_grantable_tools_are_listed_with_reasons(impl: Harness) -> None:
    world = default_world()
    impl.setup(**world)
    registry = impl.registry()
    assert registry["grantable"] == world["grantable"]
    assert registry["not_grantable"] == world["not_grantable"]
    assert not registry["legacy_fallback"]
    error = impl.setup_error(grantable=["read"], not_grantable=[{"name": "Read",
                                                                 "reason": "no"}])
    assert error["code"] == "world_invalid"  # a name cannot be both


@pytest.mark.case("tool.registry.legacy-fallback-listed")
@pytest.mark.req("DEF-05")
def test_backend_without_list_reports_exactly_the_legacy_six(impl: Harness) -> None:
    result = impl.setup(grantable=None, session_tools=sorted(LEGACY_SIX))
    assert set(result["registry"]["grantable"]) == LEGACY_SIX
    assert result["registry"]["legacy_fallback"] is True


CANONICAL = ("name: m\ndescription: m\ntools: [read, WebFetch, grep, bash]\nprompt: M.\n")


@pytest.mark.case("tool.mounted.matches-grant")
@pytest.mark.req("TOOL-03")
def test_mounted_tools_are_exactly_the_granted_tools(impl: Harness) -> None:
    """Bug: a granted tool not mounted, or a tool mounted that was not granted, or a
    mounted tool without a usable schema. Names in other spellings, unknown names and the
    order are the next two cases' concern."""
    impl.setup(**default_world())
    parsed = impl.parse(CANONICAL)
    assert [r["status"] for r in parsed["tool_resolution"]] == ["granted"] * 4
    mounted = impl.mounted(CANONICAL)["tools"]
    assert sorted(t["name"] for t in mounted) == sorted(parsed["tools"]) == sorted(
        ["read", "WebFetch", "grep", "bash"])
    for tool in mounted:
        assert tool["input_schema"].get("type") == "object", tool
        assert tool["description"].strip(), tool


@pytest.mark.case("tool.mounted.declaration-order")
@pytest.mark.req("TOOL-03")
def test_mounted_tools_are_in_declaration_order(impl: Harness) -> None:
    """Bug: the mounted tools in the registry's own order, so the same definition gives
    the model a different tool list in another runtime."""
    impl.setup(**default_world())
    names = [t["name"] for t in impl.mounted(CANONICAL)["tools"]]
    assert names == impl.parse(CANONICAL)["tools"] == ["read", "WebFetch", "grep", "bash"]


@pytest.mark.case("tool.mounted.same-diagnostics-every-op")
@pytest.mark.req("TOOL-03")
def test_every_compiling_op_grants_and_reports_the_same(impl: Harness) -> None:
    """Bug: the grant or the diagnostics depend on the op that compiles the definition
    (a name folded by definition.parse but not by tools.mounted, an unknown name reported
    by one op only)."""
    impl.setup(**default_world())
    source = ("name: m\ndescription: m\ntools: [Read, WEBFETCH, grep, Nope, bash]\n"
              "prompt: M.\n")
    parsed = impl.parse(source)
    resolution = [(r["declared"], r["canonical"], r["status"]) for r in parsed["tool_resolution"]]
    assert resolution == [("Read", "read", "granted"), ("WEBFETCH", "WebFetch", "granted"),
                          ("grep", "grep", "granted"), ("Nope", None, "unknown"),
                          ("bash", "bash", "granted")]
    mounted = impl.mounted(source)
    assert [t["name"] for t in mounted["tools"]] == parsed["tools"] == [
        "read", "WebFetch", "grep", "bash"]
    # every op that compiles a definition reports the same parse-mode diagnostics
    assert [d["code"] for d in parsed["diagnostics"]] == ["TOOL-UNKNOWN"]
    assert impl.prompt(source)["diagnostics"] == parsed["diagnostics"]
    assert mounted["diagnostics"] == parsed["diagnostics"]
    spawned = impl.driver.request("agent.spawn", {"source": source})
    assert spawned["diagnostics"] == parsed["diagnostics"]


# --- PROTO-03: malformed lines ---------------------------------------------------------
# Sent byte for byte (`Driver.send_raw`); the client already refuses a response that is
# not valid UTF-8 JSON (NaN included), so each case also checks the output encoding.

def _still_answering(driver: Driver) -> None:
    assert driver.hello(refresh=True)["implementation"]["name"]


def _refused(response: dict[str, Any], codes: tuple[str, ...]) -> dict[str, Any]:
    assert response.get("ok") is False, (
        f"a malformed line: expected a refusal ({' or '.join(codes)}), got {response}")
    error: dict[str, Any] = response["error"]
    assert error.get("code") in codes, (
        f"error code: expected {' or '.join(codes)}, got {error.get('code')!r} ({error})")
    return error


@pytest.mark.case("proto.malformed.not-json")
@pytest.mark.req("PROTO-03")
def test_line_that_is_not_json_is_bad_json(driver: Driver) -> None:
    for line in (b"{not json", b'{"id": 1, "op": "hello"', b"hello"):
        response = driver.send_raw(line)
        _refused(response, ("bad_json",))
        assert response["id"] is None
    _still_answering(driver)


@pytest.mark.case("proto.malformed.invalid-utf8")
@pytest.mark.req("PROTO-03")
def test_invalid_utf8_is_bad_json_and_output_stays_utf8(driver: Driver) -> None:
    for line in (b'{"id": 1, "op": "hello\xff"}', b'{"id": 1, "op": "\xed\xa0\x80"}',
                 b'{"id": 1, "op": "\xc0\xaf"}'):
        response = driver.send_raw(line)
        _refused(response, ("bad_json",))
        assert response["id"] is None
    _still_answering(driver)


@pytest.mark.case("proto.malformed.nan")
@pytest.mark.req("PROTO-03")
def test_nan_and_infinity_are_not_json(driver: Driver) -> None:
    for token in (b"NaN", b"Infinity", b"-Infinity"):
        response = driver.send_raw(b'{"id": 1, "op": "hello", "args": {"x": ' + token + b"}}")
        _refused(response, ("bad_json",))
        assert response["id"] is None
    _still_answering(driver)


@pytest.mark.case("proto.malformed.id-not-integer")
@pytest.mark.req("PROTO-03")
def test_id_that_is_not_an_integer_is_refused(driver: Driver) -> None:
    # 7.0 is not sent: some JSON parsers cannot tell it from 7
    for raw_id in (b'"7"', b"7.5", b"true", b"null", b"[7]"):
        response = driver.send_raw(b'{"id": ' + raw_id + b', "op": "hello", "args": {}}')
        error = _refused(response, ("bad_request",))
        assert response["id"] is None, response
        assert error.get("path", ["id"]) == ["id"], error
    _still_answering(driver)


@pytest.mark.case("proto.malformed.deep-nesting")
@pytest.mark.req("PROTO-03")
def test_64_levels_are_accepted_and_deeper_nesting_is_answered(driver: Driver) -> None:
    """PROTO-03: an implementation MUST accept 64 levels of nesting (the request object is
    level 1); above that it is free to accept or refuse (`bad_json` / `bad_request`), but
    it answers and keeps answering (g3). Bug: a recursive parser that dies on deep input,
    or a limit below 64."""
    levels = 62  # the request (1) and `args` (2), then 62 arrays: level 64
    at_limit = (b'{"id": 1, "op": "hello", "args": {"x": ' + b"[" * levels + b"]" * levels
                + b"}}")
    response = driver.send_raw(at_limit)
    assert response.get("ok") is True and response.get("id") == 1, (
        f"64 levels of nesting: expected the result of `hello` (id 1), got {response}")
    deep = b'{"id": 1, "op": "hello", "args": {"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    response = driver.send_raw(deep)
    if not response.get("ok"):
        _refused(response, ("bad_json", "bad_request"))
    else:
        assert response.get("id") == 1, (
            f"100,000 levels accepted: expected the result of `hello` with id 1, got {response}")
    _refused(driver.send_raw(b"[" * 100_000), ("bad_json", "bad_request"))  # never closed
    _still_answering(driver)


@pytest.mark.case("proto.malformed.huge-number")
@pytest.mark.req("PROTO-03")
def test_five_thousand_digit_number_does_not_stop_the_driver(driver: Driver) -> None:
    """Valid JSON; an implementation may refuse it (`bad_request`) or treat it as any
    other unused argument, but must answer and keep answering."""
    line = b'{"id": 1, "op": "hello", "args": {"n": ' + b"9" * 5000 + b"}}"
    response = driver.send_raw(line)
    if not response["ok"]:
        _refused(response, ("bad_request", "bad_json"))
    else:
        assert response["id"] == 1
    _still_answering(driver)


@pytest.mark.case("proto.malformed.lone-surrogate")
@pytest.mark.req("PROTO-03")
def test_lone_surrogate_escape_never_breaks_the_output(impl: Harness) -> None:
    """`\\ud800` is a JSON escape for a code point that has no UTF-8 form. The answer may
    be a refusal (`bad_request`, `bad_json`) or a result, but the line written back must
    be valid UTF-8 (the client checks) and the next request must be answered."""
    line = (b'{"id": 3, "op": "definition.parse", "args": {"source": "name: a\\ud800\\n'
            b'description: d\\n", "mode": "parse"}}')
    response = impl.driver.send_raw(line)
    if not response["ok"]:
        _refused(response, ("bad_request", "bad_json"))
    assert response["id"] in (3, None)
    assert impl.parse("name: x\ndescription: y\n")["loaded"]


@pytest.mark.case("proto.world.bad-arguments")
@pytest.mark.req("PROTO-02")
def test_world_setup_refuses_unknown_keys_and_wrong_types(impl: Harness) -> None:
    """A setting the implementation silently ignores means the suite tests another world
    than it set up: every bad argument is refused with its path."""
    cases: list[tuple[dict[str, Any], list[str | int]]] = [
        ({"grantable_tools": ["read"]}, ["args", "grantable_tools"]),
        ({"not_grantable": 7}, ["args", "not_grantable"]),
        ({"grantable": ["read", 3]}, ["args", "grantable", 1]),
        ({"frame": ["not", "text"]}, ["args", "frame"]),
        ({"session_tools": "read"}, ["args", "session_tools"]),
    ]
    for overrides, path in cases:
        error = impl.setup_error(**overrides)
        assert error["code"] == "world_invalid", (overrides, error)
        assert error.get("path") == path, (overrides, error)
    assert impl.setup()["registry"]["grantable"]  # a good world still sets up


@pytest.mark.case("proto.world.agent-ids-restart")
@pytest.mark.req("PROTO-02", "CALL-03")
def test_world_setup_restarts_the_agent_id_sequence(impl: Harness) -> None:
    """Bug: agent ids come from a process-wide counter, so the same world and the same
    spawns give other ids after `world.setup` (runs are not reproducible)."""
    source = "name: a\ndescription: d\ntools: [read]\nprompt: Work.\n"
    runs = []
    for _ in range(2):
        impl.setup(**default_world())
        runs.append([impl.driver.request("agent.spawn", {"source": source})["agent"]
                     for _ in range(2)])
    expect_true(all(isinstance(a, str) and a for a in runs[0]) and len(set(runs[0])) == 2,
                "PROTO-02: agent ids are distinct non-empty strings", runs[0])
    expect(runs[1], runs[0], "PROTO-02: after world.setup the same spawns yield the same "
           "ids (the id sequence restarts)")
