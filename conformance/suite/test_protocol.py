"""The driver protocol itself, and the registry as the implementation reports it."""

from __future__ import annotations

import pytest

from conformance.driver import Driver
from conformance.harness import Harness

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
    assert error.get("path", [])[:2] == ["args", "grantable"]


@pytest.mark.case("tool.registry.not-grantable-reasons")
@pytest.mark.req("TOOL-01")
def test_not_grantable_tools_are_listed_with_reasons(impl: Harness) -> None:
    registry = impl.registry()
    assert registry["not_grantable"], "the registry must list deliberately absent tools"
    grantable = {n.lower() for n in registry["grantable"]}
    for row in registry["not_grantable"]:
        assert len(row["reason"].split()) >= 3, f"{row['name']}: reason too thin: {row['reason']!r}"
        assert row["name"].lower() not in grantable
    assert set(registry["grantable"]) >= LEGACY_SIX
    assert not registry["legacy_fallback"]


@pytest.mark.case("tool.registry.legacy-fallback-listed")
@pytest.mark.req("DEF-05")
def test_backend_without_list_reports_exactly_the_legacy_six(impl: Harness) -> None:
    result = impl.setup(grantable=None, session_tools=sorted(LEGACY_SIX))
    assert set(result["registry"]["grantable"]) == LEGACY_SIX
    assert result["registry"]["legacy_fallback"] is True


@pytest.mark.case("tool.mounted.matches-grant")
@pytest.mark.req("TOOL-03")
def test_mounted_tools_are_exactly_the_granted_tools(impl: Harness) -> None:
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
