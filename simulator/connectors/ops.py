"""Driver ops of the connectors area (feature group ``connectors``).

``conn.setup`` loads connectors from their files (the three documents, as text) with the
accounts, settings and canned provider answers of the test; ``conn.call`` runs one
command; ``conn.task.start`` begins a new attempt; ``conn.clock.advance`` moves the
injected clock.

A connector card is an APPR-02 card: it is raised on the session's card board (owner: the
main agent), listed by ``cards.list`` and settled by ``card.decide`` like any other card;
``conn.card.settle`` is kept as an alias of ``card.decide`` for connector cards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from capconf.simulator.approval.cards import MAIN_AGENT_ID, CardError
from capconf.simulator.approval.chain import chain_of, decide_card, hold
from capconf.simulator.approval.decision import Attendance, Tier, Verdict
from capconf.simulator.compose.session import Handler, ProtocolError, Session
from capconf.simulator.connectors.custom import EndpointRefusal, register
from capconf.simulator.connectors.gates import Environment
from capconf.simulator.connectors.model import ConnectorError, check_size, parse_connector
from capconf.simulator.connectors.outcomes import Outcome, OutcomeError, parse_outcome
from capconf.simulator.connectors.runtime import Account, ConnectorRuntime
from capconf.simulator.core.envelope import ToolResult, failure, success

KEY = "connectors"


class SessionBoard:
    """The session's APPR-02 board, seen from the connector runtime."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def raise_card(self, tool: str, args: Mapping[str, Any], reason: str,
                   run: Callable[[], ToolResult],
                   fields: Mapping[str, Any] | None = None) -> Mapping[str, Any] | ToolResult:
        chain = chain_of(self.session.state)
        try:
            held = hold(chain, MAIN_AGENT_ID, None, tool=tool, action="connector", args=args,
                        reason=reason, run=run, fields=fields)
        except CardError as exc:
            return failure(exc.code, exc.message, {}, terminal_for_attempt=True)
        assert held.error is not None
        card: Mapping[str, Any] = held.error.detail["card"]
        return card

    def tier(self) -> Tier:
        return chain_of(self.session.state).policy.tier

    def state(self, card_id: str) -> str | None:
        try:
            return str(chain_of(self.session.state).board.card(card_id).state)
        except CardError:
            return None


def _runtime(session: Session) -> ConnectorRuntime:
    found = session.state.get(KEY)
    if not isinstance(found, ConnectorRuntime):
        raise ProtocolError("no_connectors", "call conn.setup first")
    return found


def _mapping(args: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = args.get(key, {})
    if not isinstance(value, dict):
        raise ProtocolError("bad_request", f"`{key}` must be an object", ("args", key))
    return value


def _account(raw: Any, where: tuple[str | int, ...]) -> Account:
    if not isinstance(raw, dict):
        raise ProtocolError("bad_request", "an account is {connected, scopes, ...urls}", where)
    urls = {k: raw.get(k) for k in ("connect_url", "scope_add_url", "action_url",
                                     "disconnect_url")}
    for key, value in urls.items():
        if value is not None and not isinstance(value, str):
            raise ProtocolError("bad_request", f"`{key}` must be a string", (*where, key))
    return Account(bool(raw.get("connected")), frozenset(raw.get("scopes", [])),
                   urls["connect_url"], urls["scope_add_url"],
                   bool(raw.get("reauthorization_required", False)), urls["action_url"],
                   urls["disconnect_url"])


def op_conn_setup(session: Session, args: Mapping[str, Any]) -> Any:
    rows = args.get("connectors")
    if not isinstance(rows, list):
        raise ProtocolError("bad_request", "`connectors` must be a non-empty list of "
                            "{files: {name: text}}", ("args", "connectors"))
    connectors = {}
    for i, row in enumerate(rows):
        files = row.get("files") if isinstance(row, dict) else None
        if not isinstance(files, dict):
            raise ProtocolError("bad_request", "each connector is {files: {name: text}}",
                                ("args", "connectors", i))
        try:
            connector = parse_connector(files)
        except ConnectorError as exc:
            raise ProtocolError("connector_invalid", f"{exc.file}: {exc.message}",
                                ("args", "connectors", i, "files", exc.file, *exc.path)) from None
        connectors[connector.id] = connector
    accounts = {cid: _account(raw, ("args", "accounts", cid))
                for cid, raw in _mapping(args, "accounts").items()}
    settings = {}
    for cid, groups in _mapping(args, "settings").items():
        for group, value in (groups or {}).items():
            try:
                settings[(cid, group)] = Verdict(value)
            except ValueError:
                raise ProtocolError("bad_request", "a setting is allow, ask or deny",
                                    ("args", "settings", cid, group)) from None
    responses = {(cid, method): value for cid, methods in _mapping(args, "responses").items()
                 for method, value in (methods or {}).items()}
    try:
        attendance = Attendance(args.get("attendance", "attended"))
    except ValueError:
        raise ProtocolError("bad_request", "`attendance` is attended or unattended",
                            ("args", "attendance")) from None
    runtime = ConnectorRuntime(connectors, accounts, settings, responses, attendance)
    runtime.board = SessionBoard(session)
    runtime.outcomes = _outcomes(_mapping(args, "outcomes"))
    runtime.environment = _environment(_mapping(args, "environment"))
    background = _mapping(args, "background")
    if not all(isinstance(v, bool) for v in background.values()):
        raise ProtocolError("bad_request", "`background` is {connector: true|false}",
                            ("args", "background"))
    runtime.background = frozenset(cid for cid, on in background.items() if on)
    session.state[KEY] = runtime
    return {"connectors": [{"id": c.id, "commands": list(c.commands),
                            "shortcuts": dict(c.shortcuts)} for c in connectors.values()]}


def _outcomes(raw: Mapping[str, Any]) -> dict[tuple[str, str], list[Outcome]]:
    found: dict[tuple[str, str], list[Outcome]] = {}
    for cid, methods in raw.items():
        if not isinstance(methods, dict):
            raise ProtocolError("bad_request", "outcomes are {connector: {method: [outcome]}}",
                                ("args", "outcomes", cid))
        for method, rows in methods.items():
            where: tuple[str | int, ...] = ("args", "outcomes", cid, method)
            if not isinstance(rows, list):
                raise ProtocolError("bad_request", "a method's outcomes are a list", where)
            try:
                found[(cid, method)] = [parse_outcome(row, (*where, i))
                                        for i, row in enumerate(rows)]
            except OutcomeError as exc:
                raise ProtocolError("bad_request", exc.message, exc.path) from None
    return found


def _environment(raw: Mapping[str, Any]) -> Environment:
    for key in ("region", "channel"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ProtocolError("bad_request", f"`{key}` must be a string",
                                ("args", "environment", key))
    vm = raw.get("vm", "standard")
    if vm not in ("standard", "confidential"):
        raise ProtocolError("bad_request", "`vm` is standard or confidential",
                            ("args", "environment", "vm"))
    return Environment(raw.get("region"), vm, raw.get("channel"))


def op_conn_catalog(session: Session, args: Mapping[str, Any]) -> Any:
    return _runtime(session).catalog()


def op_conn_verify(session: Session, args: Mapping[str, Any]) -> Any:
    """The provider's status query for a request whose outcome is uncertain (CONN-13)."""
    return _runtime(session).verify(str(args.get("request_id"))).to_json()


def op_conn_call(session: Session, args: Mapping[str, Any]) -> Any:
    params = args.get("params", {})
    if not isinstance(params, dict):
        raise ProtocolError("bad_request", "`params` must be an object", ("args", "params"))
    background = args.get("background", False)
    if not isinstance(background, bool):
        raise ProtocolError("bad_request", "`background` must be true or false",
                            ("args", "background"))
    return _runtime(session).call(str(args.get("connector")), str(args.get("command")),
                                  params, background).to_json()


def op_conn_sync_run(session: Session, args: Mapping[str, Any]) -> Any:
    return _runtime(session).sync(str(args.get("connector"))).to_json()


def op_conn_card_settle(session: Session, args: Mapping[str, Any]) -> Any:
    """Alias of ``card.decide`` for a connector card: ``allow_once`` approves, ``deny``
    denies, on the same board and with the same settled-once rule."""
    choice = args.get("choice")
    if choice not in ("allow_once", "deny"):
        raise ProtocolError("bad_request", "`choice` is allow_once or deny", ("args", "choice"))
    runtime = _runtime(session)
    card_id = str(args.get("card_id"))
    if card_id not in runtime.cards:
        raise ProtocolError("no_such_card", "no pending connector card with that id",
                            ("args", "card_id"))
    try:
        _, result = decide_card(chain_of(session.state), card_id, choice == "allow_once")
    except CardError as exc:
        raise ProtocolError(exc.code, exc.message, ("args", "card_id")) from None
    if choice != "allow_once":
        runtime.declined(card_id)
    return result.to_json()


def op_conn_task_start(session: Session, args: Mapping[str, Any]) -> Any:
    _runtime(session).start_task()
    return {}


def op_conn_clock_advance(session: Session, args: Mapping[str, Any]) -> Any:
    ms = args.get("ms")
    if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
        raise ProtocolError("bad_request", "`ms` must be a non-negative integer", ("args", "ms"))
    runtime = _runtime(session)
    runtime.now_ms += ms
    return {"now_ms": runtime.now_ms}


def op_conn_custom_register(session: Session, args: Mapping[str, Any]) -> Any:
    """A custom connector from the user's scaffold. ``files`` (the user's own
    connector.yaml / CONNECTOR.md) are accepted and ignored for policy: there is no
    manifest, so nothing in them can declare a permission (CONN-10)."""
    runtime = _runtime(session)
    files = args.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(t, str) for t in files.values()):
        raise ProtocolError("bad_request", "`files` maps file names to text", ("args", "files"))
    for name, text in files.items():
        try:
            check_size(text, name)  # ignored for policy, but held to the files' limits
        except ConnectorError as exc:
            raise ProtocolError("connector_invalid", f"{name}: {exc.message}",
                                ("args", "files", name)) from None
    made = register(args.get("provider"), args.get("endpoint"), args.get("allowed_tools"))
    if isinstance(made, EndpointRefusal):
        return failure("endpoint_refused", made.message, {"rule": made.rule},
                       terminal_for_attempt=True).to_json()
    credential = args.get("credential")
    if credential is not None and not (
            isinstance(credential, dict) and isinstance(credential.get("secret"), str)
            and isinstance(credential.get("hosts"), list)
            and all(isinstance(h, str) for h in credential["hosts"])):
        raise ProtocolError("bad_request", "`credential` is {secret, hosts: [host]}",
                            ("args", "credential"))
    runtime.custom[made.provider] = made
    redirect = args.get("server_redirects_to")
    if isinstance(redirect, str):
        runtime.redirects[made.provider] = redirect
    content: dict[str, Any] = {"provider": made.provider, "host": made.host}
    if credential is not None:
        content["surrogate"] = runtime.register_credential(credential["secret"],
                                                           frozenset(credential["hosts"]))
    return success(content).to_json()


def op_conn_custom_call(session: Session, args: Mapping[str, Any]) -> Any:
    call_args = args.get("args", {})
    if not isinstance(call_args, dict):
        raise ProtocolError("bad_request", "`args` must be an object", ("args", "args"))
    return _runtime(session).call_custom(str(args.get("provider")), str(args.get("tool")),
                                         call_args).to_json()


def op_conn_account_set(session: Session, args: Mapping[str, Any]) -> Any:
    runtime = _runtime(session)
    cid = str(args.get("connector"))
    if cid not in runtime.connectors:
        raise ProtocolError("bad_request", f"no connector {cid!r}", ("args", "connector"))
    runtime.set_account(cid, _account(args.get("account"), ("args", "account")))
    return {}


def op_conn_disconnect(session: Session, args: Mapping[str, Any]) -> Any:
    return _runtime(session).disconnect_link(str(args.get("connector"))).to_json()


def op_conn_registry(session: Session, args: Mapping[str, Any]) -> Any:
    return _runtime(session).registry()


def op_conn_journal(session: Session, args: Mapping[str, Any]) -> Any:
    return {"requests": list(_runtime(session).journal)}


OPS: dict[str, Handler] = {
    "conn.account.set": op_conn_account_set,
    "conn.disconnect": op_conn_disconnect,
    "conn.journal": op_conn_journal,
    "conn.verify": op_conn_verify,
    "conn.registry": op_conn_registry,
    "conn.catalog": op_conn_catalog,
    "conn.sync.run": op_conn_sync_run,
    "conn.custom.register": op_conn_custom_register,
    "conn.custom.call": op_conn_custom_call,
    "conn.setup": op_conn_setup,
    "conn.call": op_conn_call,
    "conn.card.settle": op_conn_card_settle,
    "conn.task.start": op_conn_task_start,
    "conn.clock.advance": op_conn_clock_advance,
}
