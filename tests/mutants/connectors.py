"""Mutants of the connectors area (CONN-01..05, 07, 11)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mutants.base import Mutant, _original, _patch


def _group_over_method() -> None:
    """The method-level default is ignored: only the group default counts."""
    from capconf.simulator.connectors import permissions, runtime

    real = _original(permissions, "resolve")

    def buggy(group: Any, method: Any, setting: Any = None) -> Any:
        return real(group, replace(method, default=None), setting)

    _patch(runtime, "resolve", buggy)


def _setting_widens() -> None:
    """A user setting replaces the manifest's verdict, so `allow` skips the card."""
    from capconf.simulator.connectors import permissions, runtime

    real = _original(permissions, "resolve")

    def buggy(group: Any, method: Any, setting: Any = None) -> Any:
        return permissions.Permission(setting, "setting") if setting is not None else real(
            group, method, setting)

    _patch(runtime, "resolve", buggy)


def _scope_implied_by_allow() -> None:
    """An allowed action is trusted to have its scopes."""
    from capconf.simulator.connectors import runtime

    real = _original(runtime, "missing_scopes")

    def buggy(method: Any, granted: Any) -> Any:
        return () if method.default is not None else real(method, granted)

    _patch(runtime, "missing_scopes", buggy)


def _hardcoded_card() -> None:
    """The card's phrase and buttons are written in code, not read from the manifest."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "_card")

    def buggy(self: Any, connector: Any, group: Any, policy: Any, params: Any,
              reason: str) -> Any:
        fixed = replace(policy, approval_phrase="send this email in Gmail",
                        buttons={"allow_once": "Send", "deny": "Don't send"})
        return real(self, connector, group, fixed, params, reason)

    _patch(ConnectorRuntime, "_card", buggy)


def _runs_on_deny() -> None:
    """The carded call runs whatever the user clicks (the board is told "approve")."""
    from capconf.simulator.connectors import ops

    real = _original(ops, "decide_card")
    _patch(ops, "decide_card", lambda chain, card_id, approve: real(chain, card_id, True))


def _request_count() -> None:
    """The quota counts requests: every method costs one unit."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "_run")

    def buggy(self: Any, connector: Any, group: Any, method: str, params: Any) -> Any:
        manifest = connector.manifest
        flat = replace(connector, manifest=replace(
            manifest, method_costs=dict.fromkeys(manifest.method_costs, 1)))
        return real(self, flat, group, method, params)

    _patch(ConnectorRuntime, "_run", buggy)


def _flat_price() -> None:
    """Every method is charged the price of a message read (20 units)."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "_run")

    def buggy(self: Any, connector: Any, group: Any, method: str, params: Any) -> Any:
        manifest = connector.manifest
        flat = replace(connector, manifest=replace(
            manifest, method_costs=dict.fromkeys(manifest.method_costs, 20)))
        return real(self, flat, group, method, params)

    _patch(ConnectorRuntime, "_run", buggy)


def _limit_is_a_pause() -> None:
    """A rate limit is a pause: the provider is usable again once the window turns."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "_run")

    def buggy(self: Any, *args: Any) -> Any:
        result = real(self, *args)
        self.stopped.clear()
        return result

    _patch(ConnectorRuntime, "_run", buggy)


def _no_guard() -> None:
    """The response guard is declared but never applied."""
    from capconf.simulator.connectors import runtime

    _patch(runtime, "GUARDS", {"verification_codes": lambda value: (value, 0)})


def _blind_guard() -> None:
    """The guard withholds every run of digits."""
    import json
    import re

    from capconf.simulator.connectors import guard, runtime

    def buggy(value: Any) -> Any:
        return json.loads(re.sub(r"\d{4,}", guard.WITHHELD, json.dumps(value))), 1

    _patch(runtime, "GUARDS", {"verification_codes": buggy})


def _manifest_methods_exist() -> None:
    """Every method the manifest knows is callable, documented or not."""
    from capconf.simulator.connectors import model

    real = _original(model, "parse_connector")

    def buggy(files: Any) -> Any:
        connector = real(files)
        extra = tuple(m.name for g in connector.manifest.groups for m in g.methods
                      if m.name not in connector.commands)
        return replace(connector, commands=connector.commands + extra)

    from capconf.simulator.connectors import ops

    _patch(ops, "parse_connector", buggy)


def _lenient_endpoint() -> None:
    """Endpoint checked with a URL library: https, some host, port 443 or none."""
    from urllib.parse import urlsplit

    from capconf.simulator.connectors import custom

    def buggy(url: str) -> Any:
        try:
            parts = urlsplit(url.strip())
            ok = parts.scheme.lower() == "https" and bool(parts.hostname) and (
                parts.port in (None, 443))
        except ValueError:
            ok = False
        return None if ok else custom.EndpointRefusal("lenient", "refused")

    _patch(custom, "check_endpoint", buggy)


def _custom_runs_directly() -> None:
    """A custom connector's call runs without a card."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "call_custom")

    def buggy(self: Any, provider: str, tool: str, args: Any) -> Any:
        result = real(self, provider, tool, args)
        if result.error is not None and result.error.code == "approval_required":
            card = result.error.detail["card"]
            del self.cards[card["id"]]
            return self._run_custom(self.custom[provider], tool, args)
        return result

    _patch(ConnectorRuntime, "call_custom", buggy)


def _follows_redirects() -> None:
    """A custom connector follows its endpoint's redirect."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "_run_custom")

    def buggy(self: Any, connector: Any, tool: str, args: Any) -> Any:
        self.redirects.pop(connector.provider, None)
        return real(self, connector, tool, args)

    _patch(ConnectorRuntime, "_run_custom", buggy)


def _allowed_tools_ignored() -> None:
    """ALLOWED_TOOLS is not enforced."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "call_custom")

    def buggy(self: Any, provider: str, tool: str, args: Any) -> Any:
        connector = self.custom.get(provider)
        if connector is not None and tool not in connector.allowed_tools:
            self.custom[provider] = replace(connector,
                                            allowed_tools=(*connector.allowed_tools, tool))
        return real(self, provider, tool, args)

    _patch(ConnectorRuntime, "call_custom", buggy)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("conn-lenient-endpoint", "the endpoint is checked with a lenient URL parser",
           ("CONN-10",), _lenient_endpoint),
    Mutant("conn-custom-runs-directly", "a custom connector call runs without a card",
           ("CONN-10",), _custom_runs_directly),
    Mutant("conn-follows-redirects", "a custom connector follows redirects", ("CONN-10",),
           _follows_redirects),
    Mutant("conn-allowed-tools-ignored", "ALLOWED_TOOLS is not enforced", ("CONN-10",),
           _allowed_tools_ignored),
    Mutant("conn-group-over-method", "the method default is ignored", ("CONN-02",),
           _group_over_method),
    Mutant("conn-setting-widens", "a user setting of allow skips the manifest's ask",
           ("CONN-02",), _setting_widens),
    Mutant("conn-scope-implied", "an allowed method skips the scope check", ("CONN-02",),
           _scope_implied_by_allow),
    Mutant("conn-hardcoded-card", "card phrase and buttons are hard-coded", ("CONN-03",),
           _hardcoded_card),
    Mutant("conn-runs-on-deny", "the carded call runs after a deny", ("CONN-03",),
           _runs_on_deny),
    Mutant("conn-request-count", "the quota counts requests, not units", ("CONN-04",),
           _request_count),
    Mutant("conn-flat-price", "every method costs the same", ("CONN-04",), _flat_price),
    Mutant("conn-limit-is-a-pause", "a rate limit stops nothing beyond the window",
           ("CONN-07",), _limit_is_a_pause),
    Mutant("conn-no-guard", "verification codes reach the model", ("CONN-05",), _no_guard),
    Mutant("conn-blind-guard", "the guard withholds every number", ("CONN-05",), _blind_guard),
    Mutant("conn-manifest-methods-exist", "undocumented manifest methods are callable",
           ("CONN-11", "CONN-01"), _manifest_methods_exist),
)


def _cached_status() -> None:
    """The connection state is read once and cached for the session."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "set_account")

    def buggy(self: Any, connector_id: str, account: Any) -> None:
        if connector_id not in getattr(self, "_seen", set()):
            self._seen = {*getattr(self, "_seen", set()), connector_id}
            return
        real(self, connector_id, account)

    _patch(ConnectorRuntime, "set_account", buggy)


def _replay_on_reconnect() -> None:
    """Calls that failed for reauthorization are re-sent when the account comes back."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real_call = _original(ConnectorRuntime, "call")
    real_set = _original(ConnectorRuntime, "set_account")

    def call(self: Any, connector_id: str, command: str, params: Any,
             background: bool = False) -> Any:
        result = real_call(self, connector_id, command, params, background)
        if result.error is not None and result.error.code == "reauthorization_required":
            self.__dict__.setdefault("_failed", []).append(
                (connector_id, command, params, background))
        return result

    def set_account(self: Any, connector_id: str, account: Any) -> None:
        real_set(self, connector_id, account)
        for failed in self.__dict__.pop("_failed", []):
            real_call(self, *failed)

    _patch(ConnectorRuntime, "call", call)
    _patch(ConnectorRuntime, "set_account", set_account)


def _reauth_is_temporary() -> None:
    """reauthorization_required is answered as a temporary failure with a retry time."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime
    from capconf.simulator.core.envelope import ToolResult

    real = _original(ConnectorRuntime, "call")

    def buggy(self: Any, connector_id: str, *args: Any, **kwargs: Any) -> Any:
        result = real(self, connector_id, *args, **kwargs)
        if result.error is not None and result.error.code == "reauthorization_required":
            return ToolResult(False, None, replace(result.error, terminal_for_attempt=False,
                                                   retry_after_ms=30_000))
        return result

    _patch(ConnectorRuntime, "call", buggy)


def _rebuilt_urls() -> None:
    """URLs are re-encoded by a URL library before they are passed on."""
    from urllib.parse import quote, unquote

    from capconf.simulator.connectors import ops

    real = _original(ops, "_account")

    def buggy(raw: Any, where: Any) -> Any:
        account = real(raw, where)
        fix = {k: quote(unquote(v), safe=":/?&=") for k, v in vars(account).items()
               if k.endswith("_url") and isinstance(v, str)}
        return replace(account, **fix)

    _patch(ops, "_account", buggy)


MUTANTS = (*MUTANTS,
           Mutant("conn-cached-status", "connection state cached across tasks", ("CONN-06",),
                  _cached_status),
           Mutant("conn-replay-on-reconnect", "a failed write is re-sent on reconnect",
                  ("CONN-06",), _replay_on_reconnect),
           Mutant("conn-reauth-temporary", "reauthorization_required is retried later",
                  ("CONN-06",), _reauth_is_temporary),
           Mutant("conn-rebuilt-urls", "lifecycle URLs are re-encoded", ("CONN-06",),
                  _rebuilt_urls))


def _swap_for_any_host() -> None:
    """The surrogate is swapped for whatever host the request goes to."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "_run_custom")

    def buggy(self: Any, connector: Any, tool: str, args: Any) -> Any:
        for surrogate, (secret, hosts) in list(self.credentials.items()):
            self.credentials[surrogate] = (secret, hosts | {connector.host})
        return real(self, connector, tool, args)

    _patch(ConnectorRuntime, "_run_custom", buggy)


def _secret_in_result() -> None:
    """The result echoes the request as sent, real credential included."""
    from capconf.simulator.connectors import runtime

    real = _original(runtime.ConnectorRuntime, "_run_custom")

    def buggy(self: Any, connector: Any, tool: str, args: Any) -> Any:
        secrets = {s: v[0] for s, v in self.credentials.items()}
        return real(self, connector, tool, runtime._swap(args, secrets))

    _patch(runtime.ConnectorRuntime, "_run_custom", buggy)


MUTANTS = (*MUTANTS,
           Mutant("conn-swap-any-host", "the surrogate is swapped for any host",
                  ("CONN-14",), _swap_for_any_host),
           Mutant("conn-secret-in-result", "the real credential is echoed to the model",
                  ("CONN-14",), _secret_in_result))


# -- CONN-13: failure discipline --------------------------------------------------------

def _invented_cause() -> None:
    """A provider failure is reported as a temporary outage with a retry time of the
    runtime's own, whatever the provider said."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime
    from capconf.simulator.core.envelope import failure

    real = _original(ConnectorRuntime, "_provider_failure")

    def buggy(self: Any, connector: Any, group: Any, method: str, params: Any,
              outcome: Any) -> Any:
        result = real(self, connector, group, method, params, outcome)
        if result.error is not None and result.error.code == "provider_error":
            return failure("provider_error", "the service is temporarily unavailable",
                           {"connector": connector.id, "method": method,
                            "reason": {"code": "temporarily_unavailable",
                                       "message": "try again later"}},
                           retry_after_ms=30_000)
        return result

    _patch(ConnectorRuntime, "_provider_failure", buggy)


def _retries_timed_out_send() -> None:
    """A send that timed out is sent once more at once, "to be sure"."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "_run")

    def buggy(self: Any, connector: Any, group: Any, method: str, params: Any) -> Any:
        result = real(self, connector, group, method, params)
        if result.error is not None and result.error.code == "outcome_uncertain":
            self.uncertain.pop(result.error.detail["request_id"])
            return real(self, connector, group, method, params)
        return result

    _patch(ConnectorRuntime, "_run", buggy)


def _resends_unverified() -> None:
    """The agent's second call of a timed-out send goes out: nothing remembers that the
    first one's outcome is unknown."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    _patch(ConnectorRuntime, "_unverified", lambda self, connector_id, method, params: None)


def _verify_constant() -> None:
    """The status query answers "not applied" whatever happened at the provider."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "verify")

    def buggy(self: Any, request_id: str) -> Any:
        result = real(self, request_id)
        if result.ok:
            result.content["applied"] = False
        return result

    _patch(ConnectorRuntime, "verify", buggy)


def _edit_in_place() -> None:
    """An amended call updates the pending card of the same method instead of raising a
    new one, so the user's click approves content they never saw."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "_card")

    def buggy(self: Any, connector: Any, group: Any, policy: Any, params: Any,
              reason: str) -> Any:
        result = real(self, connector, group, policy, params, reason)
        card = result.error.detail["card"]
        for card_id, pending in list(self.cards.items()):
            if (card_id != card["id"] and pending.connector == connector.id
                    and pending.method == policy.name):
                del self.cards[card["id"]]
                self.cards[card_id] = replace(pending, params=dict(params))
                card["id"] = card_id
                break
        return result

    _patch(ConnectorRuntime, "_card", buggy)


def _approval_per_method() -> None:
    """An allow_once is remembered for the method: later calls of it, whatever their
    content, run without a card."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real_settle = _original(ConnectorRuntime, "settle")
    real_card = _original(ConnectorRuntime, "_card")

    def settle(self: Any, card_id: str, choice: str) -> Any:
        pending = self.cards.get(card_id)
        if pending is not None and choice == "allow_once":
            self.__dict__.setdefault("_approved", set()).add((pending.connector,
                                                              pending.method))
        return real_settle(self, card_id, choice)

    def card(self: Any, connector: Any, group: Any, policy: Any, params: Any,
             reason: str) -> Any:
        if (connector.id, policy.name) in self.__dict__.get("_approved", set()):
            return self._run(connector, group, policy.name, params)
        return real_card(self, connector, group, policy, params, reason)

    _patch(ConnectorRuntime, "settle", settle)
    _patch(ConnectorRuntime, "_card", card)


MUTANTS = (*MUTANTS,
           Mutant("conn-invented-cause", "a provider failure is reported as a temporary "
                  "outage with a retry time", ("CONN-13",), _invented_cause),
           Mutant("conn-retries-timed-out-send", "a timed-out send is sent again at once",
                  ("CONN-13",), _retries_timed_out_send),
           Mutant("conn-resends-unverified", "a timed-out send is re-sent before its "
                  "outcome is checked", ("CONN-13",), _resends_unverified),
           Mutant("conn-verify-constant", "the status query answers a constant",
                  ("CONN-13",), _verify_constant),
           Mutant("conn-edit-in-place", "an amended call updates the pending card",
                  ("CONN-13",), _edit_in_place),
           Mutant("conn-approval-per-method", "an approval is remembered for the method",
                  ("CONN-13",), _approval_per_method))


# -- CONN-12: registry and always-on connectors ---------------------------------------

def _asks_every_call() -> None:
    """The always-on connector's Ask is asked at every call, not once per task."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "call")

    def buggy(self: Any, connector_id: str, *args: Any, **kwargs: Any) -> Any:
        self.task_answers.pop(connector_id, None)
        return real(self, connector_id, *args, **kwargs)

    _patch(ConnectorRuntime, "call", buggy)


def _task_answer_survives() -> None:
    """The once-per-task answer is kept for the session: a new task does not ask."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "start_task")

    def buggy(self: Any) -> None:
        kept = dict(self.task_answers)
        real(self)
        self.task_answers.update(kept)

    _patch(ConnectorRuntime, "start_task", buggy)


def _always_on_status_checked() -> None:
    """Every connector is treated as an OAuth one: the always-on catalog is 'not
    connected'."""
    from capconf.simulator.connectors import ops

    real = _original(ops, "parse_connector")
    _patch(ops, "parse_connector", lambda files: replace(real(files), connection="oauth"))


def _registry_snapshot() -> None:
    """The registry is taken once, at setup, and never read again."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "registry")

    def buggy(self: Any) -> Any:
        if "_registry" not in self.__dict__:
            self.__dict__["_registry"] = real(self)
        return self.__dict__["_registry"]

    _patch(ConnectorRuntime, "registry", buggy)


MUTANTS = (*MUTANTS,
           Mutant("conn-asks-every-call", "the always-on connector asks at every call",
                  ("CONN-12",), _asks_every_call),
           Mutant("conn-task-answer-survives", "the once-per-task approval carries over to "
                  "the next task", ("CONN-12",), _task_answer_survives),
           Mutant("conn-always-on-status-checked", "an always-on connector needs a login",
                  ("CONN-12",), _always_on_status_checked),
           Mutant("conn-registry-snapshot", "the registry is a snapshot from setup",
                  ("CONN-12",), _registry_snapshot))


# -- CONN-09: gates -------------------------------------------------------------------

def _region_listed() -> None:
    """The catalog and the settings page ignore the region gate."""
    from capconf.simulator.connectors import runtime
    from capconf.simulator.connectors.gates import GATES

    real = _original(runtime, "closed_gate")

    def buggy(connector: Any, env: Any) -> Any:
        gate = real(connector, env)
        return None if gate is GATES[0] else gate

    real_catalog = _original(runtime.ConnectorRuntime, "catalog")

    def catalog(self: Any) -> Any:
        _patch(runtime, "closed_gate", buggy)
        try:
            return real_catalog(self)
        finally:
            _patch(runtime, "closed_gate", real)

    _patch(runtime.ConnectorRuntime, "catalog", catalog)


def _region_not_connected() -> None:
    """A region-closed connector is treated as merely not connected (with its link)."""
    from capconf.simulator.connectors.gates import GATES

    object.__setattr__(GATES[0], "is_open", lambda connector, env: True)


def _vm_ignored() -> None:
    """availability.confidential_vm is read and never checked."""
    from capconf.simulator.connectors.gates import GATES

    object.__setattr__(GATES[1], "is_open", lambda connector, env: True)


def _channel_ignored() -> None:
    """availability.channels is read and never checked."""
    from capconf.simulator.connectors.gates import GATES

    object.__setattr__(GATES[2], "is_open", lambda connector, env: True)


def _one_gate_reason() -> None:
    """Every closed gate answers the same generic code."""
    from capconf.simulator.connectors.gates import GATES

    for gate in GATES:
        object.__setattr__(gate, "code", "connector_unavailable")


def _gate_retry_later() -> None:
    """A closed gate is answered as a temporary condition: retry in a minute."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime
    from capconf.simulator.core.envelope import ToolResult

    real = _original(ConnectorRuntime, "_gated")

    def buggy(self: Any, connector: Any) -> Any:
        result = real(self, connector)
        if result is None:
            return None
        return ToolResult(False, None, replace(result.error, terminal_for_attempt=False,
                                               retry_after_ms=60_000))

    _patch(ConnectorRuntime, "_gated", buggy)


MUTANTS = (*MUTANTS,
           Mutant("conn-region-listed", "a region-closed connector is still listed",
                  ("CONN-09",), _region_listed),
           Mutant("conn-region-not-connected", "a region-closed connector is offered a "
                  "connect link", ("CONN-09",), _region_not_connected),
           Mutant("conn-vm-ignored", "the confidential-VM gate is not checked", ("CONN-09",),
                  _vm_ignored),
           Mutant("conn-channel-ignored", "the channel gate is not checked", ("CONN-09",),
                  _channel_ignored),
           Mutant("conn-one-gate-reason", "every closed gate gives the same reason",
                  ("CONN-09",), _one_gate_reason),
           Mutant("conn-gate-retry-later", "a closed gate invites a retry", ("CONN-09",),
                  _gate_retry_later))


# -- CONN-08: read-only sync ----------------------------------------------------------

def _sync_runs_listed_writes() -> None:
    """Sync trusts connector.yaml: every method under read_methods runs, writes too."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "sync")

    def buggy(self: Any, connector_id: str) -> Any:
        connector = self.connectors.get(connector_id)
        if connector is None or connector.manifest is None:
            return real(self, connector_id)
        groups = tuple(replace(g, effect="read") for g in connector.manifest.groups)
        self.connectors[connector_id] = replace(
            connector, manifest=replace(connector.manifest, groups=groups))
        try:
            return real(self, connector_id)
        finally:
            self.connectors[connector_id] = connector

    _patch(ConnectorRuntime, "sync", buggy)


def _sync_reads_everything() -> None:
    """Sync reads every read method of the manifest, not only the allow-list."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "sync")

    def buggy(self: Any, connector_id: str) -> Any:
        connector = self.connectors.get(connector_id)
        if connector is None or connector.manifest is None:
            return real(self, connector_id)
        reads = tuple(m.name for g in connector.manifest.groups if g.effect == "read"
                      for m in g.methods)
        self.connectors[connector_id] = replace(connector, read_methods=reads)
        try:
            return real(self, connector_id)
        finally:
            self.connectors[connector_id] = connector

    _patch(ConnectorRuntime, "sync", buggy)


def _sync_authorises_background() -> None:
    """A connector that syncs is taken as allowed for background work."""
    from capconf.simulator.connectors.runtime import ConnectorRuntime

    real = _original(ConnectorRuntime, "sync")

    def buggy(self: Any, connector_id: str) -> Any:
        result = real(self, connector_id)
        if result.ok:
            self.background = self.background | {connector_id}
        return result

    _patch(ConnectorRuntime, "sync", buggy)


MUTANTS = (*MUTANTS,
           Mutant("conn-sync-runs-listed-writes", "sync runs writes listed in read_methods",
                  ("CONN-08",), _sync_runs_listed_writes),
           Mutant("conn-sync-reads-everything", "sync reads beyond the read_methods "
                  "allow-list", ("CONN-08",), _sync_reads_everything),
           Mutant("conn-sync-authorises-background", "sync authorises background use",
                  ("CONN-08",), _sync_authorises_background))


# -- APPR-02 / CONN-03: one card kind ---------------------------------------------------

def _side_channel_cards() -> None:
    """Connector cards are a second kind: kept on the connector's own list, invisible to
    the parent's board and to `card.decide`, settled only through `conn.card.settle`."""
    from capconf.simulator.connectors import ops
    from capconf.simulator.core.envelope import failure

    held: dict[str, Any] = {}
    real_decide = _original(ops, "decide_card")

    def raise_card(self: Any, tool: str, args: Any, reason: str, run: Any) -> Any:
        card_id = f"conn-side-{len(held) + 1}"
        held[card_id] = run
        return {"id": card_id, "tool": tool, "action": "connector", "summary": "",
                "reason": reason, "state": "pending"}

    def decide_card(chain: Any, card_id: str, approve: bool) -> Any:
        if card_id not in held:
            return real_decide(chain, card_id, approve)
        run = held.pop(card_id)
        return None, run() if approve else failure("approval_denied", "declined", {})

    _patch(ops.SessionBoard, "raise_card", raise_card)
    _patch(ops.SessionBoard, "state", lambda self, card_id: None)
    _patch(ops, "decide_card", decide_card)


MUTANTS = (*MUTANTS,
           Mutant("conn-side-channel-cards", "connector cards are a second kind, off the "
                  "parent's board", ("CONN-03",), _side_channel_cards))
