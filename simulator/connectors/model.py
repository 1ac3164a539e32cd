"""A connector as three files (CONN-01): connector.yaml (who it is), CONNECTOR.md (the
only commands that exist) and manifest.yaml (the policy the runtime enforces and the model
cannot edit). Parsed once into values; a bad file is refused with the file and the path
of the fault.

CONNECTOR.md is prose for the model, so the commands are read from one fixed place: the
bullet lines of its ``## Commands`` section, ``- `name` `` or ``- `+short` -> `method` ``.
Everything else in the document is ignored by the runtime: documents narrow (a method not
listed does not exist, CONN-11), they never widen (a sentence claiming "no approval
needed" changes nothing, CONN-10).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from capconf.simulator.approval.decision import Verdict
from capconf.simulator.definition.yamlsource import (
    SourceError,
    check_text_size,
    safe_load_checked,
)

_COMMAND = re.compile(r"^- `(?P<name>[^`\s]+)`(?:\s*->\s*`(?P<target>[^`\s]+)`)?")
METHOD = re.compile(r"[a-z][A-Za-z0-9_]*(\.[a-z][A-Za-z0-9_]*)*\Z")


class ConnectorError(ValueError):
    def __init__(self, file: str, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.file = file
        self.path = path
        self.message = message


@dataclass(frozen=True)
class MethodPolicy:
    name: str
    group: str
    default: Verdict | None
    requires_scopes: tuple[str, ...]
    approval_policy: str | None = None
    approval_phrase: str | None = None
    buttons: Mapping[str, str] = field(default_factory=dict)


EFFECTS = ("read", "write")
"""An action group's ``effect``: ``read`` methods change nothing at the provider (safe to
retry, eligible for sync); anything else, and an undeclared effect, is ``write``."""


RESPONSE_GUARDS = ("verification_codes",)
"""The response guards a group may name (CONN-05); the runtime has one filter for each."""


@dataclass(frozen=True)
class ActionGroup:
    name: str
    default: Verdict
    response_guard: str | None
    methods: tuple[MethodPolicy, ...]
    effect: str = "write"


@dataclass(frozen=True)
class Manifest:
    provider: str
    allowed_domains: tuple[str, ...]
    units_per_minute: int
    method_costs: Mapping[str, int]
    groups: tuple[ActionGroup, ...]

    def method(self, name: str) -> tuple[ActionGroup, MethodPolicy] | None:
        for group in self.groups:
            for method in group.methods:
                if method.name == name:
                    return group, method
        return None


CONNECTIONS = ("oauth", "always_on", "device")
"""How a connector reaches its account (connector.yaml ``connection``, default
``oauth``): only ``oauth`` connectors are in the connection-state registry and have
their status checked; ``always_on`` (no login, no status check) and ``device`` (the
device's own channel) are outside it (CONN-12)."""


@dataclass(frozen=True)
class Connector:
    id: str
    title: str
    description: str
    aliases: tuple[str, ...]
    domain: str
    include_in_prompt: bool
    confidential_vm: bool
    read_methods: tuple[str, ...]
    commands: tuple[str, ...]
    """Documented raw methods, in document order."""
    shortcuts: Mapping[str, str]
    """``+name`` -> the documented method it runs."""
    manifest: Manifest | None
    connection: str = "oauth"
    regions: tuple[str, ...] = ()
    """``availability.regions``: where the connector is offered (empty: everywhere)."""
    channels: tuple[str, ...] = ()
    """``availability.channels``: the channels that reveal it (empty: every channel)."""


MAX_COMMANDS = 2_000
"""Documented commands in one CONNECTOR.md: a connector's command surface is a short list
(the largest seed connector has a few dozen); more is refused, not scanned."""


def check_size(text: str, file: str) -> None:
    """Every connector file has a definition's size limit (1 MiB)."""
    try:
        check_text_size(text, file)
    except SourceError as exc:
        raise ConnectorError(file, (), exc.message) from None


def _yaml(text: str, file: str) -> dict[str, Any]:
    """A connector's YAML with a definition's limits (size, 32 levels, 20,000 nodes, no
    aliases), checked on the event stream before PyYAML builds (and recurses into) a
    node graph: a manifest nested 20,000 levels is a located refusal."""
    check_size(text, file)
    try:
        data = safe_load_checked(text)
    except SourceError as exc:
        where = f" (line {exc.line}, column {exc.column})" if exc.line else ""
        raise ConnectorError(file, (), f"{exc.message}{where}") from None
    except yaml.YAMLError as exc:
        raise ConnectorError(file, (), f"not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConnectorError(file, (), "must be a mapping")
    return data


def _str(data: Mapping[str, Any], key: str, file: str, path: tuple[str | int, ...] = ()) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ConnectorError(file, (*path, key), "must be a non-empty string")
    return value


def _mapping(data: Mapping[str, Any], key: str, file: str,
             path: tuple[str | int, ...] = ()) -> Mapping[str, Any]:
    """An optional sub-mapping (absent or null: empty); anything else is refused with its
    path, never read as if it were one (SPEC CONN-01, the files' keys)."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConnectorError(file, (*path, key), "must be a mapping")
    return value


def _optional_str(data: Mapping[str, Any], key: str, file: str,
                  path: tuple[str | int, ...]) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ConnectorError(file, (*path, key), "must be a string")
    return value


def _flag(data: Mapping[str, Any], key: str, default: bool, file: str,
          path: tuple[str | int, ...] = ()) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise ConnectorError(file, (*path, key), "must be true or false")
    return value


def _verdict(value: Any, file: str, path: tuple[str | int, ...]) -> Verdict:
    try:
        return Verdict(value)
    except ValueError:
        raise ConnectorError(file, path, "must be allow, ask or deny") from None


def _strings(value: Any, file: str, path: tuple[str | int, ...]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConnectorError(file, path, "must be a list of strings")
    return tuple(value)


def parse_commands(text: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """Linear in the document: commands are kept in a dict (ordered, O(1) membership)."""
    check_size(text, "CONNECTOR.md")
    commands: dict[str, None] = {}
    shortcuts: dict[str, str] = {}
    in_section = False
    for line in text.splitlines():
        if line.startswith("## "):
            in_section = line[3:].strip().lower() == "commands"
            continue
        match = _COMMAND.match(line) if in_section else None
        if match is None:
            continue
        name, target = match.group("name"), match.group("target")
        if name.startswith("+"):
            if target is None:
                raise ConnectorError("CONNECTOR.md", ("Commands", name),
                                     "a shortcut must name the method it runs: `+x` -> `m`")
            shortcuts[name] = target
        elif METHOD.match(name) and name not in commands:
            commands[name] = None
        if len(commands) + len(shortcuts) > MAX_COMMANDS:
            raise ConnectorError("CONNECTOR.md", ("Commands",), f"documents more than "
                                 f"{MAX_COMMANDS:,} commands and shortcuts")
    for short, target in shortcuts.items():
        if target not in commands:
            raise ConnectorError("CONNECTOR.md", ("Commands", short),
                                 f"shortcut runs {target!r}, which is not a documented command")
    return tuple(commands), shortcuts


def parse_manifest(text: str) -> Manifest:
    file = "manifest.yaml"
    data = _yaml(text, file)
    oauth = _mapping(data, "oauth", file)
    quota = _mapping(data, "request_quota", file)
    limit = quota.get("units_per_minute_per_user")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ConnectorError(file, ("request_quota", "units_per_minute_per_user"),
                             "must be a positive integer")
    costs = quota.get("method_costs") or {}
    if not isinstance(costs, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in costs.values()):
        raise ConnectorError(file, ("request_quota", "method_costs"),
                             "must map method names to non-negative integers")
    actions = data.get("actions")
    if not isinstance(actions, dict) or not actions:
        raise ConnectorError(file, ("actions",), "must map action groups to policies")
    groups = []
    for gname, raw in actions.items():
        gpath: tuple[str | int, ...] = ("actions", str(gname))
        if not isinstance(raw, dict):
            raise ConnectorError(file, gpath, "must be {default, methods, response_guard?}")
        methods = []
        for mname, mraw in _mapping(raw, "methods", file, gpath).items():
            mpath = (*gpath, "methods", str(mname))
            if not isinstance(mraw, dict):
                raise ConnectorError(file, mpath, "must be a mapping")
            if str(mname) not in costs:
                raise ConnectorError(file, mpath, "has no unit cost in request_quota.method_costs")
            buttons = mraw.get("buttons") or {}
            if not isinstance(buttons, dict) or not all(isinstance(v, str)
                                                        for v in buttons.values()):
                raise ConnectorError(file, (*mpath, "buttons"), "must map labels to strings")
            methods.append(MethodPolicy(
                str(mname), str(gname),
                None if "default" not in mraw else _verdict(mraw["default"], file,
                                                            (*mpath, "default")),
                _strings(mraw.get("requires_scopes"), file, (*mpath, "requires_scopes")),
                _optional_str(mraw, "approval_policy", file, mpath),
                _optional_str(mraw, "approval_phrase", file, mpath), dict(buttons)))
        effect = raw.get("effect", "write")
        if effect not in EFFECTS:
            raise ConnectorError(file, (*gpath, "effect"), "must be read or write")
        if raw.get("response_guard") not in (None, *RESPONSE_GUARDS):
            raise ConnectorError(file, (*gpath, "response_guard"),
                                 f"must be one of {', '.join(RESPONSE_GUARDS)}")
        groups.append(ActionGroup(str(gname), _verdict(raw.get("default"), file,
                                                       (*gpath, "default")),
                                  raw.get("response_guard"), tuple(methods), effect))
    provider = (_str(oauth, "provider", file, ("oauth",)) if oauth or "provider" not in data
                else _str(data, "provider", file))
    return Manifest(provider,
                    _strings(oauth.get("allowed_domains"), file, ("oauth", "allowed_domains")),
                    limit, dict(costs), tuple(groups))


def parse_connector(files: Mapping[str, str]) -> Connector:
    """``files``: file name -> text. connector.yaml and CONNECTOR.md are required;
    manifest.yaml is absent only for connectors without a permission surface."""
    for required in ("connector.yaml", "CONNECTOR.md"):
        if not isinstance(files.get(required), str):
            raise ConnectorError(required, (), "is missing")
    file = "connector.yaml"
    data = _yaml(files["connector.yaml"], file)
    availability = _mapping(data, "availability", file)
    vm = _flag(availability, "confidential_vm", True, file, ("availability",))
    sync = _mapping(data, "sync", file)
    commands, shortcuts = parse_commands(files["CONNECTOR.md"])
    connection = data.get("connection", "oauth")
    if connection not in CONNECTIONS:
        raise ConnectorError(file, ("connection",), "must be oauth, always_on or device")
    manifest_text = files.get("manifest.yaml")
    manifest = None if manifest_text is None else parse_manifest(manifest_text)
    if manifest is not None:
        known = {m.name for g in manifest.groups for m in g.methods}
        for method in commands:
            if method not in known:
                raise ConnectorError("manifest.yaml", ("actions",),
                                     f"documented command {method!r} has no action policy")
    return Connector(
        id=_str(data, "id", file), title=_str(data, "title", file),
        description=_str(data, "description", file),
        aliases=_strings(data.get("aliases"), file, ("aliases",)),
        domain=_str(data, "domain", file),
        include_in_prompt=_flag(data, "include_in_prompt", False, file),
        confidential_vm=vm,
        read_methods=_strings(sync.get("read_methods"), file, ("sync", "read_methods")),
        commands=commands, shortcuts=shortcuts, manifest=manifest, connection=connection,
        regions=_strings(availability.get("regions"), file, ("availability", "regions")),
        channels=_strings(availability.get("channels"), file, ("availability", "channels")))
