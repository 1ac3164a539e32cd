"""Connectors beyond the single call: failure discipline (CONN-13), the connection-state
registry and always-on connectors (CONN-12), gates by region, VM type and channel
(CONN-09) and read-only background sync (CONN-08). Fixtures: the mail connector
(conformance/fixtures/connectors/gmail) plus the always-on, region-gated and VM-gated
connectors next to it. Behaviour, not wording: codes, what ran and what the fake
provider received, never message texts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from capconf.conformance.client import ImplementationError
from capconf.conformance.harness import Harness
from capconf.conformance.locations import package_file
from capconf.conformance.suite.test_connectors import (
    ALL_SCOPES,
    call,
    gmail_files,
    is_card,
    setup,
)

MAIL_A = {"to": "ana@example.com", "subject": "Invoice", "body": "Attached: March."}


def fixture_files(name: str) -> dict[str, str]:
    """A fixture connector's files as text (the manifest only where it has one)."""
    folder = package_file("fixtures", "connectors", name)
    return {name: (folder / name).read_text(encoding="utf-8")
            for name in ("connector.yaml", "CONNECTOR.md", "manifest.yaml")
            if (folder / name).is_file()}


SCOPES = {"gmail": ALL_SCOPES, "moneyforward_me": ["accounts.read", "transactions.read"],
          "shopify": ["read_orders", "read_products", "write_products"]}


def world(impl: Harness, *names: str, connected: bool = True, **extra: Any) -> Any:
    """Several fixture connectors at once; their OAuth accounts as ``connected`` says,
    each with every scope its methods need and a connect link."""
    driver = impl.driver
    accounts = {name: {"connected": connected, "scopes": SCOPES[name],
                       "connect_url": f"https://settings.example/connect/{name}"}
                for name in names if name in SCOPES}
    driver.request("conn.setup", {
        "connectors": [{"files": fixture_files(name)} for name in names],
        "accounts": accounts, **extra})
    driver.request("conn.task.start", {})
    return driver


def run(driver: Any, connector: str, command: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = driver.request("conn.call", {"connector": connector,
                                                          "command": command, "params": params})
    return result


def sends(driver: Any, method: str = "users.messages.send") -> list[dict[str, Any]]:
    """What the fake provider really received for ``method``."""
    return [r for r in driver.request("conn.journal", {})["requests"] if r["method"] == method]


def approve(driver: Any, result: dict[str, Any]) -> dict[str, Any]:
    """Click allow_once on the card ``result`` raised (a result without a card is
    returned as it is)."""
    if not is_card(result):
        return result
    settled: dict[str, Any] = driver.request("conn.card.settle", {
        "card_id": result["error_detail"]["card"]["id"], "choice": "allow_once"})
    return settled


# -- CONN-13 -------------------------------------------------------------------------

@pytest.mark.case("conn.failure.provider-reason-only")
@pytest.mark.req("CONN-13")
def test_a_failure_report_carries_the_providers_reason_and_nothing_else(
        impl: Harness) -> None:
    """Bug: the runtime replaces the provider's answer with a cause of its own (a rate
    limit, a temporary outage), rebuilds its reason (dropping `status` or `detail`), adds
    a retry time the provider never gave, or drops the one it did give."""
    not_found = {"code": "messageNotFound", "message": "Requested entity was not found.",
                 "status": 404, "detail": {"domain": "global", "location": ["id", 0]}}
    outcomes = {"gmail": {
        "users.messages.get": [{"error": not_found}],
        "users.labels.list": [{"error": {"code": "backendError", "message": "try later",
                                         "status": 503, "retry_after_ms": 1500}}]}}
    driver = setup(impl, outcomes=outcomes)
    missing = call(driver, "+read", id="m-404")
    assert missing["ok"] is False and missing["error_code"] == "provider_error"
    reason = missing["error_detail"]["reason"]
    kept = {key: reason.get(key) for key in not_found}
    assert kept == not_found, f"the provider's reason was rebuilt: {reason}"
    assert missing["retry_after_ms"] is None, "a retry time the provider never gave"
    busy = call(driver, "users.labels.list")
    assert busy["error_code"] == "provider_error"
    reason = busy["error_detail"]["reason"]
    kept = {key: reason.get(key) for key in ("code", "message", "status")}
    assert kept == {"code": "backendError", "message": "try later", "status": 503}, reason
    assert busy["retry_after_ms"] == 1500
    assert call(driver, "+triage")["ok"] is True, "a provider error stopped the provider"


@pytest.mark.case("conn.failure.uncertain-write-checked-before-resend")
@pytest.mark.req("CONN-13")
def test_an_uncertain_send_is_not_sent_again_before_its_outcome_is_checked(
        impl: Harness) -> None:
    """Bug: a send that timed out after it went out is retried (by the runtime at once,
    or when the agent calls again) before anyone asked the provider whether it arrived,
    so the mail goes out twice; or the status query answers a constant."""
    outcomes = {"gmail": {"users.messages.send": [{"timeout": {"applied": False}}],
                          "users.messages.reply": [{"timeout": {"applied": True}}]}}
    driver = setup(impl, outcomes=outcomes)
    first = approve(driver, call(driver, "+send", **MAIL_A))
    assert first["ok"] is False and first["error_code"] == "outcome_uncertain"
    request_id = first["error_detail"]["request_id"]
    assert len(sends(driver)) == 1, "the runtime itself re-sent the timed-out request"
    again = approve(driver, call(driver, "+send", **MAIL_A))
    assert again["ok"] is False and not is_card(again)
    assert len(sends(driver)) == 1, "re-sent before its outcome was checked"
    checked = driver.request("conn.verify", {"request_id": request_id})
    assert checked["ok"] is True and checked["content"]["applied"] is False
    resent = approve(driver, call(driver, "+send", **MAIL_A))
    assert resent["ok"] is True and len(sends(driver)) == 2

    reply = approve(driver, call(driver, "users.messages.reply", id="m1", body="ok"))
    assert reply["error_code"] == "outcome_uncertain"
    verified = driver.request("conn.verify", {"request_id": reply["error_detail"]["request_id"]})
    assert verified["content"]["applied"] is True


@pytest.mark.case("conn.failure.read-timeout-may-be-called-again")
@pytest.mark.req("CONN-13")
def test_a_read_that_times_out_may_simply_be_called_again(impl: Harness) -> None:
    """Bug: every timeout is treated as an uncertain write, so a read that timed out
    answers outcome_uncertain and is blocked until someone verifies it, although a read
    changes nothing at the provider (its group declares `effect: read`)."""
    outcomes = {"gmail": {"users.messages.get": [{"timeout": {"applied": True}}]}}
    driver = setup(impl, outcomes=outcomes)
    slow = call(driver, "+read", id="m1")
    assert (slow["ok"], slow.get("error_code")) == (False, "provider_timeout"), slow
    again = call(driver, "+read", id="m1")
    assert again["ok"] is True, f"the timed-out read could not be called again: {again}"
    assert len(sends(driver, "users.messages.get")) == 2


@pytest.mark.case("conn.failure.changed-content-new-card")
@pytest.mark.req("CONN-13", "CONN-03")
def test_content_changed_after_approval_is_shown_again_before_it_is_sent(
        impl: Harness) -> None:
    """Bug: an edit updates the pending card in place (the user approves what they never
    saw), or an approval is remembered for the method, so changed content goes out on
    the strength of an earlier click."""
    driver = setup(impl)
    first = call(driver, "+send", **MAIL_A)
    changed = call(driver, "+send", **{**MAIL_A, "body": "Attached: March and April."})
    assert is_card(first) and is_card(changed)
    card_a, card_b = first["error_detail"]["card"], changed["error_detail"]["card"]
    assert card_a["id"] != card_b["id"], "the edit reused the card already shown"
    assert "April" in json.dumps(card_b, ensure_ascii=False)
    assert sends(driver) == []
    ran = driver.request("conn.card.settle", {"card_id": card_a["id"], "choice": "allow_once"})
    if ran["ok"]:
        assert "April" not in json.dumps(sends(driver), ensure_ascii=False), \
            "the first card's approval sent the changed content"
    assert driver.request("conn.card.settle", {"card_id": card_b["id"],
                                               "choice": "allow_once"})["ok"] is True
    assert "April" in json.dumps(sends(driver)[-1], ensure_ascii=False)
    count = len(sends(driver))
    later = call(driver, "+send", **{**MAIL_A, "body": "One more thing."})
    assert is_card(later), "changed content was sent on an earlier approval"
    assert len(sends(driver)) == count


@pytest.mark.case("conn.rate-limit.provider-answer-stops-the-provider")
@pytest.mark.req("CONN-07", "CONN-13")
def test_a_providers_own_rate_limit_stops_that_provider_for_the_attempt(
        impl: Harness) -> None:
    """Bug: only the manifest's quota stops a provider, so a provider that answers 429 (or
    a rate-limit 403) is called again at once with other methods, the "endpoint switching"
    the seed forbids; or every 403 is taken for a rate limit, so a plain refusal stops
    the provider (a cause the provider never gave)."""
    outcomes = {"gmail": {
        "users.messages.modify": [{"error": {"code": "insufficientPermissions", "status": 403,
                                             "message": "Request had insufficient scopes."}}],
        "users.messages.get": [{"error": {"code": "rateLimitExceeded", "status": 429,
                                          "message": "Too many requests.",
                                          "retry_after_ms": 30_000}}],
        "users.labels.list": [{"error": {"code": "userRateLimitExceeded", "status": 403,
                                         "message": "User rate limit exceeded."}}]}}
    driver = setup(impl, outcomes=outcomes)
    plain = approve(driver, call(driver, "users.messages.modify", id="m0", add=["L"]))
    assert plain["ok"] is False and plain["error_detail"]["reason"]["code"] == \
        "insufficientPermissions", plain
    assert call(driver, "+triage")["ok"] is True, "a plain 403 stopped the provider"
    for limited in ("users.messages.get", "users.labels.list"):
        before = len(driver.request("conn.journal", {})["requests"])
        hit = call(driver, limited, id="m1")
        assert hit["ok"] is False and hit["terminal_for_attempt"] is True, hit
        for command in ("+triage", "users.labels.list", "users.drafts.create"):
            again = call(driver, command, id="m2", body="x")
            assert again["ok"] is False and again["terminal_for_attempt"] is True, command
        sent = driver.request("conn.journal", {})["requests"]
        assert len(sent) == before + 1, f"called the stopped provider again: {sent[before:]}"
        driver.request("conn.task.start", {})
        assert call(driver, "users.drafts.create", body="next attempt")["ok"] is True


@pytest.mark.case("conn.rate-limit.completed-lists-this-attempts-runs")
@pytest.mark.req("CONN-07")
def test_the_progress_report_lists_only_the_calls_that_ran_in_this_attempt(
        impl: Harness) -> None:
    """Bugs: the progress report of a provider stop (`completed`) counts refused calls
    (denied, carded, undocumented) as progress, or keeps the calls of an earlier attempt
    after conn.task.start, so the agent believes it did what it never did. The stop is
    the manifest's quota, so the call that meets it is certainly not sent (whether a call
    the provider itself answered 429 counts as run is left open)."""
    small = gmail_files(manifest_yaml=("units_per_minute_per_user: 6000",
                                       "units_per_minute_per_user: 30"))
    driver = setup(impl, files=small)
    assert call(driver, "users.messages.get", id="old")["ok"] is True   # earlier attempt
    assert call(driver, "users.labels.list")["ok"] is True
    driver.request("conn.task.start", {})
    driver.request("conn.clock.advance", {"ms": 120_000})  # and a fresh quota window
    assert call(driver, "users.messages.trash", id="m1")["ok"] is False       # deny
    assert is_card(call(driver, "+send", **MAIL_A))                          # ask
    assert call(driver, "users.settings.filters.create")["ok"] is False      # undocumented
    assert call(driver, "users.messages.get", id="m2")["ok"] is True         # ran: 20 units
    assert call(driver, "users.drafts.create", body="x")["ok"] is True       # ran: 10 units
    stop = call(driver, "+triage")                                           # 5 more: over
    assert stop["ok"] is False and stop["terminal_for_attempt"] is True, stop
    assert stop["error_code"] == "connector_rate_limited", stop
    completed = stop["error_detail"]["completed"]
    assert len(completed) == 2, f"not the 2 calls that ran in this attempt: {completed}"


# -- CONN-12 -------------------------------------------------------------------------

@pytest.mark.case("conn.registry.available-or-connected")
@pytest.mark.req("CONN-12")
def test_the_registry_records_each_login_connector_as_available_or_connected(
        impl: Harness) -> None:
    """Bug: the registry is a snapshot (a connection made later is not seen), or it lists
    a no-login connector as an account that could be connected."""
    driver = world(impl, "gmail", "meta_catalog_search", connected=False)
    registry = driver.request("conn.registry", {})
    assert {e["id"]: e["state"] for e in registry["entries"]} == {"gmail": "available"}
    assert [o["id"] for o in registry["outside"]] == ["meta_catalog_search"]
    driver.request("conn.account.set", {"connector": "gmail", "account": {
        "connected": True, "scopes": ALL_SCOPES}})
    registry = driver.request("conn.registry", {})
    assert {e["id"]: e["state"] for e in registry["entries"]} == {"gmail": "connected"}


@pytest.mark.case("conn.always-on.asks-once-per-task")
@pytest.mark.req("CONN-12")
def test_an_always_on_connector_set_to_ask_asks_once_per_task(impl: Harness) -> None:
    """Bug: the always-on connector asks at every search, its one approval leaks into the
    next task, a refusal is asked again, or it is refused as 'not connected' because its
    (non-existent) login status was checked."""
    catalog = "meta_catalog_search"
    driver = world(impl, catalog, settings={catalog: {"search": "ask"}})
    first = run(driver, catalog, "+search", q="walnut desk")
    assert is_card(first), "the first search of the task did not ask"
    assert approve(driver, first)["ok"] is True
    assert run(driver, catalog, "+search", q="oak desk")["ok"] is True
    assert run(driver, catalog, "products.get", id="p-7")["ok"] is True
    driver.request("conn.task.start", {})
    again = run(driver, catalog, "products.search", q="walnut desk")
    assert is_card(again), "the approval of the last task carried over"
    refused = driver.request("conn.card.settle", {
        "card_id": again["error_detail"]["card"]["id"], "choice": "deny"})
    assert refused["ok"] is False
    later = run(driver, catalog, "+search", q="pine desk")
    assert later["ok"] is False and not is_card(later), "asked twice in one task"
    journal = driver.request("conn.journal", {})["requests"]
    assert [r["method"] for r in journal] == ["products.search", "products.search",
                                              "products.get"]


@pytest.mark.case("conn.always-on.allow-needs-no-login")
@pytest.mark.req("CONN-12")
def test_an_always_on_connector_runs_without_any_account(impl: Harness) -> None:
    """Bug: the runtime checks a login status the connector does not have and refuses
    it as not connected, or asks although the permission is allow."""
    driver = world(impl, "meta_catalog_search")
    for _ in range(3):
        result = run(driver, "meta_catalog_search", "+search", q="lamp")
        assert result["ok"] is True, result.get("error_code")


# -- CONN-09 -------------------------------------------------------------------------

GATE_FIXTURES = ("gmail", "moneyforward_me", "shopify", "meta_catalog_search")


def ids(rows: list[dict[str, Any]]) -> set[str]:
    return {row["id"] for row in rows}


def closed(result: dict[str, Any]) -> str:
    """A closed gate's answer: refused, final for the attempt, promising nothing (no
    retry time, no link to connect or reauthorize); returns its reason code."""
    assert result["ok"] is False and not is_card(result)
    assert result["terminal_for_attempt"] is True
    assert result["retry_after_ms"] is None
    assert "https://" not in json.dumps(result["error_detail"]), "a closed gate promised a link"
    code: str = result["error_code"]
    return code


@pytest.mark.case("conn.gate.region-closed-is-absent")
@pytest.mark.req("CONN-09")
def test_a_region_closed_connector_has_no_row_no_entry_and_refuses_every_command(
        impl: Harness) -> None:
    """Bug: the restricted connector still shows in the catalog or the settings page, a
    command answers 'not connected' with a link (a promise), an undocumented command
    answers 'not supported' instead of the region, or the refusal invites a retry."""
    driver = world(impl, *GATE_FIXTURES, environment={"region": "US"})
    listed = driver.request("conn.catalog", {})
    assert "moneyforward_me" not in ids(listed["catalog"])
    assert "moneyforward_me" not in ids(listed["settings"])
    assert {"gmail", "shopify", "meta_catalog_search"} <= ids(listed["catalog"])
    registry = driver.request("conn.registry", {})
    assert "moneyforward_me" not in ids(registry["entries"]) | ids(registry["outside"])
    codes = {closed(run(driver, "moneyforward_me", command, account="a1"))
             for command in ("+balances", "accounts.list", "transactions.list",
                             "budgets.delete", "+balances")}
    assert len(codes) == 1, f"one region, several answers: {codes}"
    assert codes.isdisjoint({"not_connected", "unsupported_command", "unknown_connector"})
    assert driver.request("conn.journal", {})["requests"] == []
    driver = world(impl, *GATE_FIXTURES, environment={"region": "JP"})
    assert "moneyforward_me" in ids(driver.request("conn.catalog", {})["catalog"])
    assert run(driver, "moneyforward_me", "+balances")["ok"] is True


@pytest.mark.case("conn.gate.each-gate-its-own-reason")
@pytest.mark.req("CONN-09")
def test_region_vm_and_channel_gates_each_answer_their_own_reason(impl: Harness) -> None:
    """Bug: one generic 'unavailable' for every gate (the agent cannot tell a region from
    a VM), the confidential-VM flag is ignored, a channel that does not reveal the
    connector still lets it run, or a closed gate is mistaken for a missing login."""
    env = {"region": "US", "vm": "confidential", "channel": "side_chat"}
    gmail_in_main_only = fixture_files("gmail")
    old = "availability: { confidential_vm: true }"
    assert old in gmail_in_main_only["connector.yaml"]
    gmail_in_main_only["connector.yaml"] = gmail_in_main_only["connector.yaml"].replace(
        old, "availability: { confidential_vm: true, channels: [main] }")
    files = [gmail_in_main_only, *(fixture_files(n) for n in GATE_FIXTURES[1:])]

    def setup_in(environment: dict[str, str], connected: bool = True) -> Any:
        impl.driver.request("conn.setup", {
            "connectors": [{"files": f} for f in files], "environment": environment,
            "accounts": {name: {"connected": connected, "scopes": SCOPES[name],
                                "connect_url": f"https://settings.example/connect/{name}"}
                         for name in SCOPES}})
        impl.driver.request("conn.task.start", {})
        return impl.driver

    driver = setup_in(env)
    catalog = ids(driver.request("conn.catalog", {})["catalog"])
    assert catalog.isdisjoint({"gmail", "shopify", "moneyforward_me"}), catalog
    assert "meta_catalog_search" in catalog
    region = closed(run(driver, "moneyforward_me", "+balances"))
    vm = closed(run(driver, "shopify", "+orders"))
    channel = closed(run(driver, "gmail", "+triage"))
    assert len({region, vm, channel}) == 3, "closed gates share one reason"
    assert run(driver, "meta_catalog_search", "+search", q="x")["ok"] is True
    sent = [(r["connector"], r["method"]) for r in driver.request("conn.journal", {})["requests"]]
    assert sent == [("meta_catalog_search", "products.search")]

    driver = setup_in({"region": "US", "vm": "standard", "channel": "main"})
    catalog = ids(driver.request("conn.catalog", {})["catalog"])
    assert {"gmail", "shopify"} <= catalog
    assert run(driver, "shopify", "+orders")["ok"] is True
    assert run(driver, "gmail", "+triage")["ok"] is True
    driver = setup_in({"region": "US", "vm": "standard", "channel": "main"}, connected=False)
    usable = run(driver, "shopify", "+orders")
    assert usable["ok"] is False and usable["error_code"] not in {region, vm, channel}


@pytest.mark.case("conn.gate.checked-in-table-order")
@pytest.mark.req("CONN-09")
def test_a_connector_closed_by_several_gates_answers_the_first_in_table_order(
        impl: Harness) -> None:
    """Bug: the gates are checked in another order than region, VM type, channel, so a
    connector closed by both the VM type and the channel answers channel_unrevealed (the
    agent tells the user to switch channel, which would not help on this VM)."""
    def shut(name: str, old: str, new: str) -> dict[str, str]:
        files = fixture_files(name)
        assert old in files["connector.yaml"], (name, old)
        files["connector.yaml"] = files["connector.yaml"].replace(old, new)
        return files

    shopify = shut("shopify", "availability: { confidential_vm: false }",
                   "availability: { confidential_vm: false, channels: [main] }")
    money = shut("moneyforward_me", "availability: { confidential_vm: true, regions: [JP] }",
                 "availability: { confidential_vm: false, regions: [JP], channels: [main] }")
    driver = impl.driver
    driver.request("conn.setup", {
        "connectors": [{"files": shopify}, {"files": money}],
        "environment": {"region": "US", "vm": "confidential", "channel": "side_chat"},
        "accounts": {name: {"connected": True, "scopes": SCOPES[name]}
                     for name in ("shopify", "moneyforward_me")}})
    driver.request("conn.task.start", {})
    assert closed(run(driver, "shopify", "+orders")) == "confidential_vm_unavailable"
    assert closed(run(driver, "moneyforward_me", "+balances")) == "region_unavailable"
    assert driver.request("conn.journal", {})["requests"] == []


# -- CONN-08 -------------------------------------------------------------------------

SYNC_LINE = "read_methods: [users.messages.list, users.messages.get]"
READS = {"users.messages.list", "users.messages.get", "users.labels.list"}


def provider_saw(driver: Any) -> list[str]:
    return [r["method"] for r in driver.request("conn.journal", {})["requests"]]


@pytest.mark.case("conn.sync.read-methods-only")
@pytest.mark.req("CONN-08")
def test_sync_calls_only_the_read_methods_allow_list(impl: Harness) -> None:
    """Bug: sync runs whatever connector.yaml lists under read_methods, writes included,
    or reads more than the allow-list (every read method of the manifest)."""
    driver = setup(impl)
    synced = driver.request("conn.sync.run", {"connector": "gmail"})
    assert synced["ok"] is True
    saw = set(provider_saw(driver))
    assert saw and saw <= {"users.messages.list", "users.messages.get"}, saw

    poisoned = gmail_files(connector_yaml=(SYNC_LINE, "read_methods: [users.messages.list, "
                                           "users.messages.send, users.messages.trash, "
                                           "users.drafts.create, users.messages.modify]"))
    try:
        driver = setup(impl, files=poisoned)
    except ImplementationError as exc:
        if exc.code != "connector_invalid":
            raise
        return  # refusing a sync that lists writes, at load time, is conformant too
    driver.request("conn.sync.run", {"connector": "gmail"})
    sent = provider_saw(driver)
    assert set(sent) <= READS, f"sync sent a write: {sent}"
    assert set(sent) <= {"users.messages.list"}, f"sync read beyond its allow-list: {sent}"


@pytest.mark.case("conn.sync.no-background-authority")
@pytest.mark.req("CONN-08")
def test_sync_does_not_by_itself_authorise_background_use(impl: Harness) -> None:
    """Bug: a connector that syncs (or has just synced) is treated as allowed for
    background work, although the user never turned its Background setting on."""
    driver = setup(impl)
    assert driver.request("conn.sync.run", {"connector": "gmail"})["ok"] is True
    before = len(provider_saw(driver))
    refused = driver.request("conn.call", {"connector": "gmail", "command": "+triage",
                                           "params": {}, "background": True})
    assert refused["ok"] is False and not is_card(refused)
    assert len(provider_saw(driver)) == before, "background work reached the provider"
    assert call(driver, "+triage")["ok"] is True, "the foreground was refused too"
    driver = setup(impl, background={"gmail": True})
    allowed = driver.request("conn.call", {"connector": "gmail", "command": "+triage",
                                           "params": {}, "background": True})
    assert allowed["ok"] is True
    # the setting, not the sync, decides: a connector that declares no sync needs it too
    no_sync = gmail_files(connector_yaml=("sync:\n", "old_sync:\n"))
    driver = setup(impl, files=no_sync)
    refused = driver.request("conn.call", {"connector": "gmail", "command": "+triage",
                                           "params": {}, "background": True})
    assert refused["ok"] is False and not is_card(refused), "no sync, so background allowed"
    assert provider_saw(driver) == [], "background work reached the provider"
