"""The driver protocol itself, and the registry as the implementation reports it."""

from __future__ import annotations

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
    error = impl.setup_error(workspace=str(impl.workspace / "does-not-exist"))
    assert error["code"] == "world_invalid"
    assert error.get("path") == ["args", "workspace"]


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


@pytest.mark.case("tool.mounted.matches-grant")
@pytest.mark.req("TOOL-03")
def test_mounted_tools_are_exactly_the_granted_tools(impl: Harness) -> None:
    impl.setup(**default_world())
    source = ("name: m\ndescription: m\ntools: [Read, WEBFETCH, grep, Nope, bash]\n"
              "prompt: M.\n")
    parsed = impl.parse(source)
    resolution = [(r["declared"], r["canonical"], r["status"]) for r in parsed["tool_resolution"]]
    assert resolution == [("Read", "read", "granted"), ("WEBFETCH", "WebFetch", "granted"),
                          ("grep", "grep", "granted"), ("Nope", None, "unknown"),
                          ("bash", "bash", "granted")]
    mounted = impl.mounted(source)["tools"]
    assert [t["name"] for t in mounted] == parsed["tools"] == ["read", "WebFetch", "grep", "bash"]
    for tool in mounted:
        assert tool["input_schema"].get("type") == "object", tool
        assert tool["description"].strip(), tool
    # every op that compiles a definition reports the same parse-mode diagnostics
    assert [d["code"] for d in parsed["diagnostics"]] == ["TOOL-UNKNOWN"]
    assert impl.prompt(source)["diagnostics"] == parsed["diagnostics"]
    assert impl.mounted(source)["diagnostics"] == parsed["diagnostics"]
    spawned = impl.driver.request("agent.spawn", {"source": source})
    assert spawned["diagnostics"] == parsed["diagnostics"]


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
