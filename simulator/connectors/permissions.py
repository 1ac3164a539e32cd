"""Action permissions of a connector method (CONN-02), resolved by a table of rules.

The manifest's method-level ``default`` overrides its action group's ``default``; a user
setting for the group (the settings page's allow / ask / deny) can only narrow what the
manifest resolves, never widen it, because the manifest is the runtime's policy and no
document or setting in the model's reach may loosen it. OAuth scopes are a second,
independent check (``missing_scopes``): a permission never implies a scope and a scope
never implies a permission.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from capconf.simulator.approval.decision import Verdict
from capconf.simulator.connectors.model import ActionGroup, MethodPolicy

STRICTNESS: tuple[Verdict, ...] = (Verdict.ALLOW, Verdict.ASK, Verdict.DENY)

RULES: tuple[tuple[str, str], ...] = (
    ("method", "the method declares `default` in the manifest: it wins over its group"),
    ("group", "otherwise the action group's `default` applies"),
    ("setting", "a user setting for the group, when stricter, narrows the result "
     "(deny > ask > allow); it never widens it"),
    ("scopes", "independently, every scope in the method's `requires_scopes` must be granted "
     "to the account; a missing scope refuses the call whatever the permission"),
)


@dataclass(frozen=True)
class Permission:
    verdict: Verdict
    rule: str


def stricter(a: Verdict, b: Verdict) -> Verdict:
    return max(a, b, key=STRICTNESS.index)


def resolve(group: ActionGroup, method: MethodPolicy,
            setting: Verdict | None = None) -> Permission:
    verdict, rule = ((method.default, "method") if method.default is not None
                     else (group.default, "group"))
    if setting is not None and stricter(verdict, setting) is not verdict:
        return Permission(setting, "setting")
    return Permission(verdict, rule)


def missing_scopes(method: MethodPolicy, granted: frozenset[str]) -> tuple[str, ...]:
    return tuple(s for s in method.requires_scopes if s not in granted)


def rules_markdown() -> str:
    lines = ["| step | rule |", "|---|---|"]
    lines += [f"| `{name}` | {text} |" for name, text in RULES]
    return "\n".join(lines)


def resolution_table_markdown() -> str:
    """Every combination of method default, group default and user setting."""
    group_defaults = STRICTNESS
    method_defaults: tuple[Verdict | None, ...] = (None, *STRICTNESS)
    settings: tuple[Verdict | None, ...] = (None, *STRICTNESS)
    lines = ["| method default | group default | user setting | permission | decided by |",
             "|---|---|---|---|---|"]
    for m in method_defaults:
        for g in group_defaults:
            for s in settings:
                p = resolve(ActionGroup("g", g, None, ()), MethodPolicy("m", "g", m, ()), s)
                lines.append(f"| {m or '-'} | {g} | {s or '-'} | {p.verdict} | {p.rule} |")
    return "\n".join(lines)


SPEC_TABLES: Mapping[str, Callable[[], str]] = {
    "connector-permission-rules": rules_markdown,
    "connector-permission-table": resolution_table_markdown,
}
