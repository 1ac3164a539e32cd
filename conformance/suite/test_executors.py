"""Executors (BIN-01..03) in a host the suite describes (`exec.setup`): which binaries
are on the host, which channel's cell is shown them, which accounts are connected, and
which principals each worker's socket admits. Behaviour: which wall refuses, and that
each missing state has its own reason; never message texts.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from capconf.conformance.harness import Harness

ENVELOPE = {"ok", "error_code", "error_message", "error_detail", "terminal_for_attempt",
            "retry_after_ms"}
GET_SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
LIST_SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": []}


def host(broker_admitted: bool = True, cell_admitted: bool = False) -> dict[str, Any]:
    broker = ["broker"] if broker_admitted else []
    cell = ["cell"] if cell_admitted else []
    return {
        "broker": "broker",
        "executors": [
            {"name": "gws_cli", "provisioned": True, "channels": ["main", "side"],
             "worker": "gws-worker", "connector": "gmail",
             "methods": {"users.messages.list": LIST_SCHEMA, "users.messages.get": GET_SCHEMA},
             "shortcuts": {"+triage": "users.messages.list"}},
            {"name": "shopify", "provisioned": True, "channels": ["main"],
             "worker": "shopify-worker", "connector": "shopify",
             "methods": {"products.list": LIST_SCHEMA}},
            {"name": "tessie", "provisioned": False, "channels": ["main", "side"],
             "worker": "tessie-worker", "connector": None,
             "methods": {"vehicle.state": LIST_SCHEMA}},
            {"name": "places", "provisioned": True, "channels": ["main", "side"],
             "worker": "places-worker", "connector": None,
             "methods": {"search": LIST_SCHEMA}},
        ],
        "workers": [{"name": w, "acl": ["nobody", *broker, *cell]}
                    for w in ("gws-worker", "shopify-worker", "tessie-worker", "places-worker")],
        "connected": {"gmail": True, "shopify": False},
    }


def run(driver: Any, channel: str, executor: str, *argv: str) -> dict[str, Any]:
    result: dict[str, Any] = driver.request("exec.run", {"channel": channel,
                                                         "executor": executor,
                                                         "argv": list(argv)})
    assert set(result) >= ENVELOPE or result.get("ok") is True, result
    return result


def dial(driver: Any, principal: str, worker: str) -> dict[str, Any]:
    result: dict[str, Any] = driver.request("exec.dial", {"principal": principal,
                                                          "worker": worker,
                                                          "method": "products.list"})
    return result


@pytest.mark.case("bin.states.three-reasons")
@pytest.mark.req("BIN-01")
def test_provisioned_revealed_usable_are_three_states_with_three_reasons(
        impl: Harness) -> None:
    """Bug: every missing state answers the same 'unavailable', so the model cannot tell
    'connect your account' from 'not on this channel' from 'not installed'."""
    driver = impl.driver
    driver.request("exec.setup", host())
    missing = run(driver, "side", "tessie", "vehicle.state")           # not on the host
    hidden = run(driver, "side", "shopify", "products.list")           # not on this channel
    unusable = run(driver, "main", "shopify", "products.list")         # account not connected
    codes = [r.get("error_code") for r in (missing, hidden, unusable)]
    assert all(r["ok"] is False for r in (missing, hidden, unusable))
    assert len(set(codes)) == 3, codes
    assert codes == ["not_provisioned", "not_revealed", "not_usable"]
    assert all(r["terminal_for_attempt"] is True for r in (missing, hidden, unusable))
    assert run(driver, "side", "places", "search")["ok"] is True
    assert run(driver, "main", "gws_cli", "users.messages.list")["ok"] is True
    # the order: an unrevealed executor is "not revealed" even when also unusable
    assert run(driver, "side", "shopify", "--help")["error_code"] == "not_revealed"


@pytest.mark.case("bin.cli.one-contract")
@pytest.mark.req("BIN-02")
def test_every_executor_speaks_one_cli_contract(impl: Harness) -> None:
    """Bug: an executor prints free text, a shortcut is not the method it stands for,
    schema introspection is missing, or a bad argument crashes instead of an envelope."""
    driver = impl.driver
    driver.request("exec.setup", host())
    helped = run(driver, "main", "gws_cli", "--help")
    assert helped["ok"] is True
    listed = json.dumps(helped["content"])
    for command in ("+triage", "users.messages.list", "users.messages.get", "schema"):
        assert command in listed, command
    schema = run(driver, "main", "gws_cli", "schema", "users.messages.get")
    assert schema["ok"] is True and GET_SCHEMA in schema["content"].values()
    short = run(driver, "main", "gws_cli", "+triage", "--params", '{"q": "is:unread"}')
    long = run(driver, "main", "gws_cli", "users.messages.list", "--params",
               '{"q": "is:unread"}')
    assert short == long and short["ok"] is True
    # an unknown command and a bad argument are different fixes: each has its own code
    for argv, code in ((["users.messages.delete"], "unknown_command"),
                       (["+nope"], "unknown_command"),
                       (["schema", "users.nope"], "unknown_command"),
                       (["users.messages.get", "--params", "{not json"], "invalid_arguments"),
                       (["users.messages.get", "--params", "{}"], "invalid_arguments"),
                       (["users.messages.get", "--params", "[1]"], "invalid_arguments")):
        bad = run(driver, "main", "gws_cli", *argv)
        assert bad["ok"] is False and set(bad) >= ENVELOPE, argv
        assert isinstance(bad["error_detail"], dict), argv
        assert bad["error_code"] == code, (argv, bad["error_code"], code)
    places = run(driver, "main", "places", "--help")
    assert places["ok"] is True and "search" in json.dumps(places["content"])


@pytest.mark.case("bin.walls.either-refuses")
@pytest.mark.req("BIN-03")
def test_a_direct_dial_meets_the_workers_own_access_control(impl: Harness) -> None:
    """Bug: the worker trusts channel gating alone, so a cell process that dials the
    socket of an unrevealed executor gets through; or the gating trusts the worker."""
    driver = impl.driver
    driver.request("exec.setup", host())
    for worker in ("shopify-worker", "gws-worker"):    # unrevealed and revealed alike
        refused = dial(driver, "cell", worker)
        assert refused["ok"] is False and refused["terminal_for_attempt"] is True, worker
    assert dial(driver, "nobody", "shopify-worker")["ok"] is True   # the ACL decides
    # wall 2 alone: a misconfigured ACL admits the cell, the channel still hides shopify
    driver.request("exec.setup", host(cell_admitted=True))
    hidden = run(driver, "side", "shopify", "products.list")
    assert (hidden["ok"], hidden.get("error_code")) == (False, "not_revealed"), hidden
    # wall 1 alone: revealed and connected, but the worker does not admit the broker
    driver.request("exec.setup", host(broker_admitted=False))
    walled = run(driver, "main", "gws_cli", "users.messages.list")
    assert walled["ok"] is False
    assert walled["error_code"] not in ("not_provisioned", "not_revealed", "not_usable")


@pytest.mark.case("bin.walls.acl-names-exact-principals")
@pytest.mark.req("BIN-03")
def test_the_workers_acl_admits_exactly_the_principals_it_names(impl: Harness) -> None:
    """Bug: the socket ACL compares names by prefix, so `cell-evil` gets in where `cell`
    is admitted (and a broker named `broker2` where `broker` is), on the direct and the
    normal path."""
    driver = impl.driver
    driver.request("exec.setup", host(cell_admitted=True))
    assert dial(driver, "cell", "shopify-worker")["ok"] is True
    for principal in ("cell-evil", "nobody2", "broker.attacker"):
        refused = dial(driver, principal, "shopify-worker")
        assert refused["ok"] is False, f"the ACL admitted {principal!r}"
        assert refused["error_code"] == "worker_access_denied", (principal, refused)
    driver.request("exec.setup", {**host(), "broker": "broker2"})  # ACL names `broker`
    walled = run(driver, "main", "gws_cli", "users.messages.list")
    assert (walled["ok"], walled.get("error_code")) == (False, "worker_access_denied"), walled
