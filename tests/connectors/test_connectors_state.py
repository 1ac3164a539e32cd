"""Unit tests of the connector runtime's failure discipline (CONN-13), registry and
always-on connectors (CONN-12), gates (CONN-09) and sync (CONN-08)."""

from __future__ import annotations

from pathlib import Path

import pytest

from capconf.simulator.connectors.model import ConnectorError, parse_connector
from capconf.simulator.connectors.outcomes import (
    OutcomeError,
    ProviderError,
    Timeout,
    parse_outcome,
)
from capconf.simulator.connectors.runtime import Account, ConnectorRuntime, call_key

FIXTURES = Path(__file__).resolve().parent.parent.parent / "conformance/fixtures/connectors"
SCOPES = frozenset({"gmail.readonly", "gmail.send", "gmail.compose", "gmail.modify"})


def _files(name: str) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((FIXTURES / name).iterdir())}


def _runtime() -> ConnectorRuntime:
    gmail = parse_connector(_files("gmail"))
    return ConnectorRuntime({"gmail": gmail}, {"gmail": Account(True, SCOPES)})


def test_the_read_group_is_declared_read_and_everything_else_is_write() -> None:
    gmail = parse_connector(_files("gmail"))
    assert gmail.manifest is not None
    assert {g.name: g.effect for g in gmail.manifest.groups} == {"read": "read",
                                                                  "write": "write"}
    files = _files("gmail")
    files["manifest.yaml"] = files["manifest.yaml"].replace("effect: read ", "effect: idle ")
    with pytest.raises(ConnectorError) as info:
        parse_connector(files)
    assert info.value.path == ("actions", "read", "effect")


@pytest.mark.parametrize(("raw", "expected"), [
    ({"error": {"code": "x", "message": "m"}}, ProviderError("x", "m")),
    ({"error": {"code": "x", "retry_after_ms": 5}}, ProviderError("x", "", {}, 5)),
    ({"timeout": {"applied": True}}, Timeout(True)),
])
def test_outcomes_parse(raw: object, expected: object) -> None:
    assert parse_outcome(raw, ()) == expected


@pytest.mark.parametrize(("raw", "path"), [
    ({"error": {"message": "no code"}}, ("error",)),
    ({"error": {"code": "x", "retry_after_ms": -1}}, ("error", "retry_after_ms")),
    ({"timeout": {}}, ("timeout", "applied")),
    ({"error": {"code": "x"}, "timeout": {"applied": True}}, ()),
    ("timeout", ()),
])
def test_bad_outcomes_are_refused_with_a_path(raw: object, path: tuple[str, ...]) -> None:
    with pytest.raises(OutcomeError) as info:
        parse_outcome(raw, ())
    assert info.value.path == path


def test_call_identity_ignores_key_order_only() -> None:
    assert call_key({"a": 1, "b": [1, 2]}) == call_key({"b": [1, 2], "a": 1})
    assert call_key({"a": 1}) != call_key({"a": "1"})


def test_an_uncertain_send_blocks_only_the_same_call_until_verified() -> None:
    runtime = _runtime()
    runtime.outcomes[("gmail", "users.messages.send")] = [Timeout(applied=True)]
    card = runtime.call("gmail", "+send", {"to": "a", "body": "x"})
    assert card.error is not None and card.error.code == "approval_required"
    first = runtime.settle(card.error.detail["card"]["id"], "allow_once")
    assert first is not None and first.error is not None
    assert first.error.code == "outcome_uncertain"
    request_id = first.error.detail["request_id"]
    same = runtime.call("gmail", "+send", {"body": "x", "to": "a"})
    assert same.error is not None and same.error.code == "outcome_unverified"
    other = runtime.call("gmail", "+send", {"to": "b", "body": "x"})
    assert other.error is not None and other.error.code == "approval_required"
    checked = runtime.verify(request_id)
    assert checked.ok and checked.content["applied"] is True
    again = runtime.call("gmail", "+send", {"to": "a", "body": "x"})
    assert again.error is not None and again.error.code == "approval_required"
    unknown = runtime.verify("conn-req-99")
    assert unknown.error is not None and unknown.error.code == "unknown_request"


def test_a_timed_out_read_is_not_uncertain() -> None:
    runtime = _runtime()
    runtime.outcomes[("gmail", "users.messages.get")] = [Timeout(applied=False)]
    result = runtime.call("gmail", "+read", {"id": "m1"})
    assert result.error is not None and result.error.code == "provider_timeout"
    assert runtime.uncertain == {}
    assert runtime.call("gmail", "+read", {"id": "m1"}).ok


def test_a_provider_error_is_passed_on_unchanged() -> None:
    runtime = _runtime()
    runtime.outcomes[("gmail", "users.labels.list")] = [
        ProviderError("quotaExceeded", "daily limit", {"domain": "usageLimits"}, None)]
    result = runtime.call("gmail", "users.labels.list", {})
    assert result.error is not None and result.error.code == "provider_error"
    assert result.error.detail["reason"] == {"code": "quotaExceeded", "message": "daily limit",
                                             "detail": {"domain": "usageLimits"}}
    assert result.error.retry_after_ms is None and result.error.terminal_for_attempt is None
    assert runtime.stopped == set()


def _with_catalog() -> ConnectorRuntime:
    runtime = _runtime()
    catalog = parse_connector(_files("meta_catalog_search"))
    runtime.connectors[catalog.id] = catalog
    return runtime


def test_connection_kinds_parse_and_refuse_unknown_values() -> None:
    assert parse_connector(_files("gmail")).connection == "oauth"
    catalog = parse_connector(_files("meta_catalog_search"))
    assert catalog.connection == "always_on"
    assert catalog.manifest is not None and catalog.manifest.provider == "meta"
    files = _files("meta_catalog_search")
    files["connector.yaml"] = files["connector.yaml"].replace("connection: always_on",
                                                              "connection: sometimes")
    with pytest.raises(ConnectorError) as info:
        parse_connector(files)
    assert info.value.path == ("connection",)


def test_the_registry_is_read_live_and_keeps_other_channels_outside() -> None:
    runtime = _with_catalog()
    assert runtime.registry() == {"entries": [{"id": "gmail", "state": "connected"}],
                                  "outside": [{"id": "meta_catalog_search",
                                               "channel": "always_on"}]}
    runtime.set_account("gmail", Account(False, frozenset()))
    assert runtime.registry()["entries"] == [{"id": "gmail", "state": "available"}]


def test_an_always_on_answer_holds_for_the_task_only() -> None:
    from capconf.simulator.approval.decision import Verdict

    runtime = _with_catalog()
    runtime.settings[("meta_catalog_search", "search")] = Verdict.ASK
    card = runtime.call("meta_catalog_search", "+search", {"q": "x"})
    assert card.error is not None and card.error.code == "approval_required"
    settled = runtime.settle(card.error.detail["card"]["id"], "allow_once")
    assert settled is not None and settled.ok
    assert runtime.call("meta_catalog_search", "products.get", {"id": "1"}).ok
    runtime.start_task()
    card = runtime.call("meta_catalog_search", "+search", {"q": "x"})
    assert card.error is not None and card.error.code == "approval_required"
    runtime.settle(card.error.detail["card"]["id"], "deny")
    refused = runtime.call("meta_catalog_search", "+search", {"q": "y"})
    assert refused.error is not None and refused.error.code == "approval_denied"
    # gmail's ask is not an always-on ask: every send still asks
    first = runtime.call("gmail", "+send", {"to": "a"})
    assert first.error is not None and first.error.code == "approval_required"


def test_gates_close_in_table_order_and_region_alone_unprovisions() -> None:
    from capconf.simulator.connectors.gates import Environment, closed_gate, provisioned

    mf = parse_connector(_files("moneyforward_me"))
    shopify = parse_connector(_files("shopify"))
    nowhere = Environment("US", "confidential", "side_chat")
    gate = closed_gate(mf, nowhere)
    assert gate is not None and gate.name == "region" and not provisioned(mf, nowhere)
    gate = closed_gate(shopify, nowhere)
    assert gate is not None and gate.name == "confidential_vm" and provisioned(shopify, nowhere)
    assert closed_gate(mf, Environment("JP")) is None
    assert closed_gate(mf, Environment()) is None, "an environment value not given is open"
    assert closed_gate(shopify, Environment(vm="standard")) is None


def test_a_gated_runtime_lists_and_refuses_by_gate() -> None:
    from capconf.simulator.connectors.gates import Environment

    runtime = _with_catalog()
    for name in ("moneyforward_me", "shopify"):
        connector = parse_connector(_files(name))
        runtime.connectors[connector.id] = connector
    runtime.environment = Environment("US", "confidential")
    listing = runtime.catalog()
    assert [c["id"] for c in listing["catalog"]] == ["gmail", "meta_catalog_search"]
    assert listing["settings"][-1] == {"id": "shopify", "title": "Shopify",
                                       "gate": "confidential_vm"}
    assert "moneyforward_me" not in [r["id"] for r in listing["settings"]]
    refused = runtime.call("moneyforward_me", "nothing.documented", {})
    assert refused.error is not None and refused.error.code == "region_unavailable"
    assert refused.error.terminal_for_attempt is True and refused.error.retry_after_ms is None
    assert runtime.journal == []


def test_availability_must_be_well_typed() -> None:
    files = _files("shopify")
    files["connector.yaml"] = files["connector.yaml"].replace("confidential_vm: false",
                                                              "confidential_vm: 'no'")
    with pytest.raises(ConnectorError) as info:
        parse_connector(files)
    assert info.value.path == ("availability", "confidential_vm")
    files = _files("moneyforward_me")
    files["connector.yaml"] = files["connector.yaml"].replace("regions: [JP]", "regions: JP")
    with pytest.raises(ConnectorError) as info:
        parse_connector(files)
    assert info.value.path == ("availability", "regions")


def test_sync_sends_only_listed_reads_and_grants_no_background_use() -> None:
    from dataclasses import replace

    runtime = _runtime()
    gmail = runtime.connectors["gmail"]
    runtime.connectors["gmail"] = replace(gmail, read_methods=(
        "users.messages.list", "users.messages.send", "users.nope"))
    synced = runtime.sync("gmail")
    assert synced.ok and synced.content == {
        "connector": "gmail", "ran": ["users.messages.list"],
        "refused": [{"method": "users.messages.send", "reason": "not_a_read"},
                    {"method": "users.nope", "reason": "not_a_read"}]}
    assert [(r["method"], r["origin"]) for r in runtime.journal] == [
        ("users.messages.list", "sync")]
    refused = runtime.call("gmail", "+triage", {}, background=True)
    assert refused.error is not None and refused.error.code == "background_use_not_allowed"
    runtime.background = frozenset({"gmail"})
    assert runtime.call("gmail", "+triage", {}, background=True).ok
    runtime.set_account("gmail", Account(False, frozenset()))
    offline = runtime.sync("gmail")
    assert offline.error is not None and offline.error.code == "not_connected"


def test_a_connector_without_a_manifest_asks_every_call_and_never_crashes() -> None:
    places = parse_connector({
        "connector.yaml": "id: places\ntitle: Places\ndescription: Find places.\n"
                          "domain: maps\nconnection: always_on\n",
        "CONNECTOR.md": "# Places\n\n## Commands\n\n- `places.search`\n"})
    runtime = ConnectorRuntime({"places": places}, {})
    for q in ("cafe", "cafe"):
        card = runtime.call("places", "places.search", {"q": q})
        assert card.error is not None and card.error.code == "approval_required"
    settled = runtime.settle(card.error.detail["card"]["id"], "allow_once")
    assert settled is not None and settled.ok and len(runtime.journal) == 1
    assert runtime.call("places", "places.search", {"q": "bar"}).ok  # asked once this task
    runtime.start_task()
    again = runtime.call("places", "places.search", {"q": "bar"})
    assert again.error is not None and again.error.code == "approval_required"
    missing = runtime.call("places", "places.nearby", {})
    assert missing.error is not None and missing.error.code == "unsupported_command"
    assert runtime.registry()["outside"] == [{"id": "places", "channel": "always_on"}]
