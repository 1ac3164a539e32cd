"""One connector call, in a fixed order of checks, each refusal a CALL-03 envelope.

1. the command must be documented in CONNECTOR.md (a shortcut runs its method); anything
   else does not exist and nothing stands in for it (CONN-11);
2. a provider domain stopped by a rate limit stays stopped for the rest of the attempt,
   for every connector of that provider (CONN-07);
3. the account must be connected (its ``connect_url`` is passed on verbatim);
4. the permission (CONN-02): deny refuses; 5. the scopes, independently;
6. ask raises a card filled from the manifest (CONN-03) and runs nothing until the user
   picks ``allow_once``;
7. the quota in units on the injected clock (CONN-04): over the limit stops the provider
   for the attempt, with ``retry_after_ms`` and the progress made so far;
8. the fake provider answers; a guarded read passes through its response guard (CONN-05).

Failure discipline (CONN-13) sits around step 8: a provider failure is passed on with
the provider's own reason and nothing added (a provider that says it is rate-limiting, a
429 or a rate-limit 403, is stopped for the attempt like the quota, CONN-07); a write
that timed out after it was sent is *uncertain*, and the same call is not sent again
until its real outcome was checked (``verify``), whoever asks for it (the agent calling
again, or a second card).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from capconf.simulator.approval.cards import summarize_args
from capconf.simulator.approval.decision import (
    ApprovalPolicy,
    Attendance,
    Tier,
    Verdict,
    decide_connector,
)
from capconf.simulator.connectors.custom import CustomConnector
from capconf.simulator.connectors.gates import Environment, closed_gate, provisioned
from capconf.simulator.connectors.guard import GUARDS
from capconf.simulator.connectors.model import ActionGroup, Connector, MethodPolicy
from capconf.simulator.connectors.outcomes import Outcome, ProviderError, Timeout
from capconf.simulator.connectors.permissions import missing_scopes, resolve
from capconf.simulator.core.envelope import ToolResult, failure, success

WINDOW_MS = 60_000


@dataclass(frozen=True)
class Account:
    connected: bool
    scopes: frozenset[str]
    connect_url: str | None = None
    scope_add_url: str | None = None
    reauthorization_required: bool = False
    """The provider has permanently refused the stored grant: not a temporary failure."""
    action_url: str | None = None
    disconnect_url: str | None = None


@dataclass(frozen=True)
class PendingCall:
    card_id: str
    connector: str
    method: str
    params: Mapping[str, Any]


class CardBoard(Protocol):
    """Where connector cards live: the parent session's board of APPR-02 cards, so a
    connector card is the same card (origin, state, settled once, TaskStop, pull)."""

    def raise_card(self, tool: str, args: Mapping[str, Any], reason: str,
                   run: Callable[[], ToolResult],
                   fields: Mapping[str, Any] | None = None) -> Mapping[str, Any] | ToolResult:
        """The raised card's JSON, or the board's refusal; ``run`` is the held call."""

    def state(self, card_id: str) -> str | None: ...

    def tier(self) -> Tier:
        """The session's approval tier (APPR-01): an input of the one decision, which a
        connector's resolved permission overrides (CONN-02: no tier widens it)."""


@dataclass
class UncertainCall:
    """A write that timed out after it was sent: what it was, and what really happened
    (known to the fake provider only, told by ``verify``)."""
    connector: str
    method: str
    key: str
    applied: bool
    checked: bool = False


def call_key(params: Mapping[str, Any]) -> str:
    """The identity of a call's content: equal arguments, equal key (key order aside)."""
    return json.dumps(params, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class ConnectorRuntime:
    connectors: dict[str, Connector]
    accounts: dict[str, Account]
    settings: dict[tuple[str, str], Verdict] = field(default_factory=dict)
    responses: dict[tuple[str, str], Any] = field(default_factory=dict)
    attendance: Attendance = Attendance.ATTENDED
    now_ms: int = 0
    windows: dict[str, tuple[int, int]] = field(default_factory=dict)
    stopped: set[str] = field(default_factory=set)
    completed: list[dict[str, str]] = field(default_factory=list)
    journal: list[dict[str, Any]] = field(default_factory=list)
    """Every request the fake providers received, in order (what really went out)."""
    cards: dict[str, PendingCall] = field(default_factory=dict)
    custom: dict[str, CustomConnector] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    credentials: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)
    """surrogate -> (real secret, registered hosts); the secret never leaves this map
    except inside a request the user approved to a registered host (CONN-14)."""
    """provider -> where its fake server answers a redirect to (never followed)."""
    outcomes: dict[tuple[str, str], list[Outcome]] = field(default_factory=dict)
    """(connector, method) -> what the fake provider does with the next requests."""
    uncertain: dict[str, UncertainCall] = field(default_factory=dict)
    task_answers: dict[str, bool] = field(default_factory=dict)
    """always-on connector -> the user's answer to its one ask of this task (CONN-12)."""
    task_cards: dict[str, str] = field(default_factory=dict)
    """always-on connector -> the card of its one ask of this task."""
    board: CardBoard | None = None
    """The session's card board (APPR-02); without one (unit tests, goldens) the runtime
    numbers its own cards."""
    environment: Environment = field(default_factory=Environment)
    """Region, VM type and channel of the task (CONN-09)."""
    background: frozenset[str] = frozenset()
    """Connectors the user allowed for background work (the settings page's Background
    toggle); declaring or running a sync does not put a connector here (CONN-08)."""
    _cards: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _requests: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def set_account(self, connector_id: str, account: Account) -> None:
        """The provider or the user changed the connection (outside any task). Nothing is
        re-sent: a call that failed stays failed until the agent calls again (CONN-06)."""
        self.accounts[connector_id] = account

    def disconnect_link(self, connector_id: str) -> ToolResult:
        account = self.accounts.get(connector_id)
        if connector_id not in self.connectors or account is None:
            return failure("unknown_connector", f"there is no connector {connector_id!r}",
                           {"connector": connector_id}, terminal_for_attempt=True)
        return success({"connector": connector_id, "disconnect_url": account.disconnect_url})

    def start_task(self) -> None:
        """A new attempt: stops and progress belong to the attempt that hit them."""
        self.stopped.clear()
        self.completed.clear()
        self.task_answers.clear()
        self.task_cards.clear()

    def registry(self) -> dict[str, list[dict[str, str]]]:
        """The connection-state registry, read live: every OAuth connector is available or
        connected; the others reach their accounts through their own channel (CONN-12)."""
        here = [c for c in self.connectors.values() if provisioned(c, self.environment)]
        entries = [{"id": c.id, "state": "connected" if self.accounts.get(
                        c.id, Account(False, frozenset())).connected else "available"}
                   for c in here if c.connection == "oauth"]
        outside = [{"id": c.id, "channel": c.connection}
                   for c in here if c.connection != "oauth"]
        return {"entries": entries, "outside": outside}

    def catalog(self) -> dict[str, list[dict[str, str]]]:
        """What the model can find (every gate open) and the settings page's rows (every
        provisioned connector; a connector a gate hides says which, CONN-09)."""
        found, rows = [], []
        for c in self.connectors.values():
            gate = closed_gate(c, self.environment)
            if gate is None:
                found.append({"id": c.id, "title": c.title, "description": c.description})
            if gate is None or gate.closes != "provisioned":
                rows.append({"id": c.id, "title": c.title}
                            | ({"gate": gate.name} if gate is not None else {}))
        return {"catalog": found, "settings": rows}

    def _gated(self, connector: Connector) -> ToolResult | None:
        gate = closed_gate(connector, self.environment)
        if gate is None:
            return None
        return failure(gate.code, f"{connector.title} is not available here ({gate.name})",
                       {"connector": connector.id, "gate": gate.name},
                       terminal_for_attempt=True)

    # -- background sync (CONN-08) -------------------------------------------------------

    def sync(self, connector_id: str) -> ToolResult:
        """One background sync pass: each method of ``sync.read_methods`` that the
        manifest declares a read, in order. A listed method that is not a read is refused
        and never sent: sync never writes, whatever connector.yaml lists."""
        connector = self.connectors.get(connector_id)
        if connector is None:
            return failure("unknown_connector", f"there is no connector {connector_id!r}",
                           {"connector": connector_id}, terminal_for_attempt=True)
        gated = self._gated(connector)
        if gated is not None:
            return gated
        account = self.accounts.get(connector_id, Account(False, frozenset()))
        if connector.connection == "oauth" and not account.connected:
            return failure("not_connected", f"{connector.title} is not connected",
                           {"connector": connector_id, "connect_url": account.connect_url},
                           terminal_for_attempt=True)
        ran: list[str] = []
        refused: list[dict[str, str]] = []
        for method in connector.read_methods:
            found = connector.manifest.method(method) if connector.manifest else None
            if found is None or found[0].effect != "read":
                refused.append({"method": method, "reason": "not_a_read"})
                continue
            self.journal.append({"connector": connector.id, "method": method, "params": {},
                                 "origin": "sync"})
            ran.append(method)
        return success({"connector": connector.id, "ran": ran, "refused": refused})

    def call(self, connector_id: str, command: str, params: Mapping[str, Any],
             background: bool = False) -> ToolResult:
        """``background``: the call comes from background work (a scheduled task, a
        proactive message), which needs the user's Background setting (CONN-08)."""
        connector = self.connectors.get(connector_id)
        if connector is None:
            return failure("unknown_connector", f"there is no connector {connector_id!r}",
                           {"connector": connector_id, "connectors": sorted(self.connectors)},
                           terminal_for_attempt=True)
        gated = self._gated(connector)
        if gated is not None:
            return gated
        if background and connector_id not in self.background:
            return failure("background_use_not_allowed", f"{connector.title} is not allowed "
                           "for background work", {"connector": connector_id},
                           terminal_for_attempt=True)
        method = connector.shortcuts.get(command, command)
        if method not in connector.commands:
            return failure("unsupported_command", f"{connector.title} does not support "
                           f"{command!r}", {"connector": connector_id, "command": command,
                                            "documented": [*connector.shortcuts,
                                                           *connector.commands]},
                           terminal_for_attempt=True)
        manifest = connector.manifest
        if manifest is None:
            return self._unmanaged(connector, method, params)
        if manifest.provider in self.stopped:
            return self._stopped(manifest.provider, None)
        account = self.accounts.get(connector_id, Account(False, frozenset()))
        if connector.connection != "oauth":
            account = Account(True, frozenset())  # no login and no status check (CONN-12)
        if not account.connected:
            return failure("not_connected", f"{connector.title} is not connected",
                           {"connector": connector_id, "connect_url": account.connect_url},
                           terminal_for_attempt=True)
        if account.reauthorization_required:
            return failure("reauthorization_required", f"{connector.title} must be "
                           "reauthorized by the user; retrying will not help",
                           {"connector": connector_id, "action_url": account.action_url},
                           terminal_for_attempt=True)
        found = manifest.method(method)
        assert found is not None  # parse_connector checked every documented command
        group, policy = found
        permission = resolve(group, policy, self.settings.get((connector_id, group.name)))
        tier = Tier.CONFIRM_BEFORE_CHANGE if self.board is None else self.board.tier()
        decision = decide_connector(permission.verdict, ApprovalPolicy(tier, self.attendance))
        if decision.verdict is Verdict.DENY:
            return failure("permission_denied", f"{method} is not permitted: {decision.reason}",
                           {"connector": connector_id, "method": method, "group": group.name,
                            "permission": str(permission.verdict), "decided_by": permission.rule},
                           terminal_for_attempt=True)
        missing = missing_scopes(policy, account.scopes)
        if missing:
            return failure("missing_scope", f"the account has not granted {', '.join(missing)}",
                           {"connector": connector_id, "method": method,
                            "missing_scopes": list(missing),
                            "scope_add_url": account.scope_add_url},
                           terminal_for_attempt=False)
        blocked = self._unverified(connector_id, method, params)
        if blocked is not None:
            return blocked
        if decision.verdict is Verdict.ASK and connector.connection == "always_on":
            answer = self._task_answer(connector_id)
            if answer is True:
                return self._run(connector, group, method, params)
            if answer is False:
                return failure("approval_denied", f"the user declined {connector.title} "
                               "for this task", {"connector": connector_id},
                               terminal_for_attempt=True)
        if decision.verdict is Verdict.ASK:
            return self._card(connector, group, policy, params, decision.reason)
        return self._run(connector, group, method, params)

    def _unmanaged(self, connector: Connector, method: str,
                   params: Mapping[str, Any]) -> ToolResult:
        """A connector with only two files (no manifest, like the seed's places): no
        policy says a method is harmless, so, as for custom connectors, every call asks;
        there is no quota and no guard to apply."""
        account = self.accounts.get(connector.id, Account(False, frozenset()))
        if connector.connection == "oauth" and not account.connected:
            return failure("not_connected", f"{connector.title} is not connected",
                           {"connector": connector.id, "connect_url": account.connect_url},
                           terminal_for_attempt=True)
        answer = (self._task_answer(connector.id) if connector.connection == "always_on"
                  else None)
        if answer is not None:  # the always-on connector's one ask of this task (CONN-12)
            return (self._run_unmanaged(connector, method, params) if answer else
                    failure("approval_denied", f"the user declined {connector.title} for "
                            "this task", {"connector": connector.id},
                            terminal_for_attempt=True))
        decision = decide_connector(Verdict.ASK, ApprovalPolicy(Tier.CONFIRM_BEFORE_CHANGE,
                                                                self.attendance))
        if decision.verdict is Verdict.DENY:
            return failure("permission_denied", decision.reason,
                           {"connector": connector.id, "method": method},
                           terminal_for_attempt=True)
        policy = MethodPolicy(method, "", None, ())
        return self._card(connector, ActionGroup("", Verdict.ASK, None, ()), policy, params,
                          decision.reason)

    def _run_unmanaged(self, connector: Connector, method: str,
                       params: Mapping[str, Any]) -> ToolResult:
        self.journal.append({"connector": connector.id, "method": method,
                             "params": dict(params)})
        answer = self.responses.get((connector.id, method),
                                    {"method": method, "params": dict(params)})
        self.completed.append({"connector": connector.id, "method": method})
        return success({"connector": connector.id, "method": method, "units": 0,
                        "result": answer})

    # -- failure discipline (CONN-13) ---------------------------------------------------

    def _unverified(self, connector_id: str, method: str,
                    params: Mapping[str, Any]) -> ToolResult | None:
        """The same write again while an earlier send of it has an unknown outcome."""
        key = call_key(params)
        for request_id, sent in self.uncertain.items():
            if (not sent.checked and sent.connector == connector_id and sent.method == method
                    and sent.key == key):
                return failure("outcome_unverified", f"an earlier {method} with these "
                               "arguments timed out after it was sent; check its outcome "
                               "before sending it again",
                               {"connector": connector_id, "method": method,
                                "request_id": request_id}, terminal_for_attempt=False)
        return None

    def verify(self, request_id: str) -> ToolResult:
        """The provider's status query for a request that timed out: its real outcome."""
        sent = self.uncertain.get(request_id)
        if sent is None:
            return failure("unknown_request", f"no uncertain request {request_id!r}",
                           {"request_id": request_id}, terminal_for_attempt=True)
        sent.checked = True
        return success({"request_id": request_id, "connector": sent.connector,
                        "method": sent.method, "applied": sent.applied})

    def _provider_failure(self, connector: Connector, group: ActionGroup, method: str,
                          params: Mapping[str, Any], outcome: Outcome) -> ToolResult:
        where = {"connector": connector.id, "method": method}
        if isinstance(outcome, ProviderError):
            reason: dict[str, Any] = {"code": outcome.code, "message": outcome.message}
            if outcome.status is not None:
                reason["status"] = outcome.status
            if outcome.detail:
                reason["detail"] = dict(outcome.detail)
            if outcome.rate_limited:  # the provider's own rate limit stops it (CONN-07)
                assert connector.manifest is not None
                provider = connector.manifest.provider
                return self._stopped(provider, outcome.retry_after_ms,
                                     f"{connector.title} answered {outcome.code}: "
                                     f"{outcome.message}; stop using {provider} for this task",
                                     where=where, reason=reason)
            return failure("provider_error", f"{connector.title} answered {outcome.code}: "
                           f"{outcome.message}", {**where, "reason": reason},
                           retry_after_ms=outcome.retry_after_ms)
        assert isinstance(outcome, Timeout)
        if group.effect == "read":
            return failure("provider_timeout", f"{connector.title} did not answer {method}",
                           where)
        request_id = f"conn-req-{next(self._requests)}"
        self.uncertain[request_id] = UncertainCall(connector.id, method, call_key(params),
                                                   outcome.applied)
        return failure("outcome_uncertain", f"{method} timed out after it was sent; whether "
                       "it took effect is unknown", {**where, "request_id": request_id},
                       terminal_for_attempt=False)

    # -- cards --------------------------------------------------------------------------

    def _card(self, connector: Connector, group: ActionGroup, policy: MethodPolicy,
              params: Mapping[str, Any], reason: str) -> ToolResult:
        """The APPR-02 card's fields, plus the manifest's optional ones (SPEC, CONN-03)."""
        extra: dict[str, Any] = {}
        if policy.approval_policy is not None:
            extra["approval_policy"] = policy.approval_policy
        if policy.approval_phrase is not None:
            extra["phrase"] = policy.approval_phrase
        if policy.buttons:
            extra["buttons"] = dict(policy.buttons)
        return self._hold(connector.id, policy.name, params, reason, extra,
                          f"{connector.title} {policy.name} waits for the user's approval")

    def _hold(self, connector_id: str, method: str, params: Mapping[str, Any], reason: str,
              extra: Mapping[str, Any], message: str) -> ToolResult:
        """Raise the card (on the session's board when there is one, APPR-02) and keep
        the call, exactly as shown, until the card is settled."""
        card: dict[str, Any] = {"id": "", "tool": f"{connector_id}.{method}",
                                "action": "connector", "summary": summarize_args(dict(params)),
                                "reason": reason, "state": "pending"}
        if self.board is None:
            card["id"] = f"conn-card-{next(self._cards)}"
        else:
            shown: dict[str, str] = {}

            def run() -> ToolResult:
                result = self.settle(shown["id"], "allow_once")
                return result if result is not None else failure(
                    "approval_denied", "the call is no longer pending", {"card_id": shown["id"]},
                    terminal_for_attempt=True)

            fields = {"connector": connector_id, "method": method, "args": dict(params),
                      **extra}
            raised = self.board.raise_card(card["tool"], dict(params), reason, run, fields)
            if isinstance(raised, ToolResult):
                return raised
            card = dict(raised)
            shown["id"] = card["id"]
        card.update({"connector": connector_id, "method": method, "args": dict(params),
                     **extra})
        self.cards[card["id"]] = PendingCall(card["id"], connector_id, method, dict(params))
        owner = self.connectors.get(connector_id)
        if owner is not None and owner.connection == "always_on":
            self.task_cards[connector_id] = card["id"]
        return failure("approval_required", message, {"card": card}, terminal_for_attempt=False)

    def declined(self, card_id: str) -> None:
        """The board settled a connector card as denied: the call is dropped, and an
        always-on connector's one ask of the task is answered."""
        pending = self.cards.pop(card_id, None)
        if pending is not None and self.task_cards.get(pending.connector) == card_id:
            self.task_answers[pending.connector] = False

    def _task_answer(self, connector_id: str) -> bool | None:
        """The answer to an always-on connector's one ask of this task. An approval is
        recorded when its call runs; a denial may come from the board alone."""
        answer = self.task_answers.get(connector_id)
        card_id = self.task_cards.get(connector_id)
        if (answer is None and card_id is not None and self.board is not None
                and self.board.state(card_id) == "denied"):
            self.declined(card_id)
            return False
        return answer

    def settle(self, card_id: str, choice: str) -> ToolResult | None:
        """The user's click. Only ``allow_once`` runs the call, exactly as approved."""
        pending = self.cards.pop(card_id, None)
        if pending is None:
            return None
        owner = self.connectors.get(pending.connector)
        if owner is not None and owner.connection == "always_on":
            self.task_answers[owner.id] = choice == "allow_once"  # its one ask of the task
        if choice != "allow_once":
            return failure("approval_denied", "the user declined", {"card_id": card_id},
                           terminal_for_attempt=True)
        if pending.connector in self.custom:
            return self._run_custom(self.custom[pending.connector], pending.method,
                                    pending.params)
        connector = self.connectors[pending.connector]
        if connector.manifest is None:
            return self._run_unmanaged(connector, pending.method, pending.params)
        found = connector.manifest.method(pending.method)
        assert found is not None
        return self._run(connector, found[0], pending.method, pending.params)

    # -- quota, provider, guard ---------------------------------------------------------

    def _stopped(self, provider: str, retry_after_ms: int | None, message: str | None = None,
                 *, where: Mapping[str, str] | None = None,
                 reason: Mapping[str, Any] | None = None) -> ToolResult:
        """``provider`` is stopped for the attempt (CONN-07), by the quota or by the
        provider's own rate-limit answer (``reason``, at ``where``)."""
        self.stopped.add(provider)
        detail: dict[str, Any] = {**(where or {}), "provider": provider}
        if reason is not None:
            detail["reason"] = dict(reason)
        detail["completed"] = list(self.completed)
        return failure("connector_rate_limited", message or f"the {provider} service limit "
                       "was reached; stop using it for this task", detail,
                       terminal_for_attempt=True, retry_after_ms=retry_after_ms)

    def units_left(self, connector: Connector) -> int:
        assert connector.manifest is not None
        window = self.now_ms // WINDOW_MS
        start, used = self.windows.get(connector.id, (window, 0))
        return connector.manifest.units_per_minute - (used if start == window else 0)

    def _run(self, connector: Connector, group: ActionGroup, method: str,
             params: Mapping[str, Any]) -> ToolResult:
        manifest = connector.manifest
        assert manifest is not None
        blocked = self._unverified(connector.id, method, params)
        if blocked is not None:
            return blocked
        cost = manifest.method_costs[method]
        window = self.now_ms // WINDOW_MS
        start, used = self.windows.get(connector.id, (window, 0))
        used = used if start == window else 0
        if used + cost > manifest.units_per_minute:
            return self._stopped(manifest.provider, (window + 1) * WINDOW_MS - self.now_ms)
        self.windows[connector.id] = (window, used + cost)
        self.journal.append({"connector": connector.id, "method": method,
                             "params": dict(params)})
        scripted = self.outcomes.get((connector.id, method))
        if scripted:
            return self._provider_failure(connector, group, method, params, scripted.pop(0))
        answer = self.responses.get((connector.id, method),
                                    {"method": method, "params": dict(params)})
        withheld = 0
        if group.response_guard is not None:
            answer, withheld = GUARDS[group.response_guard](answer)
        self.completed.append({"connector": connector.id, "method": method})
        content: dict[str, Any] = {"connector": connector.id, "method": method,
                                   "units": cost, "result": answer}
        if withheld:
            content["withheld"] = withheld
        return success(content)

    # -- custom connectors (CONN-10) ----------------------------------------------------

    def call_custom(self, provider: str, tool: str, args: Mapping[str, Any]) -> ToolResult:
        """No manifest, so nothing says a tool is harmless: every call asks."""
        connector = self.custom.get(provider)
        if connector is None:
            return failure("unknown_connector", f"there is no custom connector {provider!r}",
                           {"connector": provider}, terminal_for_attempt=True)
        if tool not in connector.allowed_tools:
            return failure("tool_not_allowed", f"{tool!r} is not in ALLOWED_TOOLS",
                           {"connector": provider, "tool": tool,
                            "allowed_tools": list(connector.allowed_tools)},
                           terminal_for_attempt=True)
        decision = decide_connector(Verdict.ASK, ApprovalPolicy(Tier.CONFIRM_BEFORE_CHANGE,
                                                                self.attendance))
        if decision.verdict is Verdict.DENY:
            return failure("permission_denied", decision.reason, {"connector": provider},
                           terminal_for_attempt=True)
        return self._hold(provider, tool, args, decision.reason, {},
                          f"{provider} {tool} waits for the user's approval")

    def _run_custom(self, connector: CustomConnector, tool: str,
                    args: Mapping[str, Any]) -> ToolResult:
        target = self.redirects.get(connector.provider)
        if target is not None:
            return failure("redirect_refused", "the endpoint answered a redirect; custom "
                           "connectors never follow redirects",
                           {"connector": connector.provider, "location": target},
                           terminal_for_attempt=True)
        used = sorted(sur for sur in self.credentials if sur in json.dumps(args))
        foreign = [sur for sur in used if connector.host not in self.credentials[sur][1]]
        if foreign:
            return failure("credential_host_mismatch", "a credential surrogate was sent to "
                           "a host it is not registered for; nothing was sent",
                           {"connector": connector.provider, "host": connector.host},
                           terminal_for_attempt=True)
        self.journal.append({"connector": connector.provider, "method": tool,
                             "params": _swap(args, {sur: self.credentials[sur][0]
                                                    for sur in used})})
        return success({"connector": connector.provider, "tool": tool,
                        "endpoint": connector.endpoint, "result": {"args": dict(args)}})

    def register_credential(self, secret: str, hosts: frozenset[str]) -> str:
        surrogate = f"hsurr:{len(self.credentials) + 1:08d}"
        self.credentials[surrogate] = (secret, hosts)
        return surrogate


def _swap(value: Any, secrets: Mapping[str, str]) -> Any:
    """The request as it goes out: surrogates replaced by their secrets, in strings only."""
    if isinstance(value, str):
        for surrogate, secret in secrets.items():
            value = value.replace(surrogate, secret)
        return value
    if isinstance(value, list):
        return [_swap(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: _swap(v, secrets) for k, v in value.items()}
    return value
