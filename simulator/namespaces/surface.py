"""What a context shows the model of its namespaces (NS-02..05), and what that costs.

The surface is a pure function of (catalogue, channel, loaded set): a core namespace is
always full; a wholly deferred one shows its name and one line; a schema-deferred one adds
function names and one-liners but no parameters; a loaded one is full. Bytes are counted
on one canonical rendering (sorted keys, no insignificant space, UTF-8), the form a runtime
would serialise into the prompt, so eager and deferred compare like for like.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from capconf.simulator.namespaces.catalog import Catalog, Form, Namespace, realistic_catalog


def is_loaded(namespace: Namespace, loaded: Iterable[str]) -> bool:
    return namespace.form is Form.CORE or namespace.name in set(loaded)


def entry(namespace: Namespace, loaded: bool) -> dict[str, Any]:
    """One namespace as the model sees it. Function names are always qualified."""
    out: dict[str, Any] = {"namespace": namespace.name, "description": namespace.description,
                           "loaded": loaded}
    if loaded:
        out["functions"] = [{"name": f"{namespace.name}.{f.name}", "description": f.description,
                             "parameters": f.parameters} for f in namespace.functions]
    elif namespace.form is Form.SCHEMAS:
        out["functions"] = [{"name": f"{namespace.name}.{f.name}", "description": f.description}
                            for f in namespace.functions]
    return out


def surface(catalog: Catalog, channel: str, loaded: Iterable[str]) -> list[dict[str, Any]]:
    names = frozenset(loaded)
    return [entry(n, is_loaded(n, names)) for n in catalog.visible(channel)]


def eager_surface(catalog: Catalog, channel: str) -> list[dict[str, Any]]:
    """Every visible namespace fully loaded: what a runtime without deferral injects."""
    return [entry(n, True) for n in catalog.visible(channel)]


def rendered_bytes(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8"))


@dataclass(frozen=True)
class CostRow:
    namespace: str
    form: str
    functions: int
    eager_bytes: int
    deferred_bytes: int


def cost_table(catalog: Catalog, channel: str) -> tuple[CostRow, ...]:
    """Per namespace: prompt bytes fully loaded vs as deferred at session start."""
    return tuple(CostRow(n.name, str(n.form), len(n.functions), rendered_bytes(entry(n, True)),
                         rendered_bytes(entry(n, is_loaded(n, ()))))
                 for n in catalog.visible(channel))


def cost_markdown(catalog: Catalog, channels: Iterable[str], per_namespace: bool = True) -> str:
    """The deferred-vs-eager catalogue (golden, benchmark): totals per channel, then rows
    for the first channel."""
    chans = list(channels)
    lines = ["| channel | namespaces | functions | eager bytes | deferred bytes | saved |",
             "|---|---|---|---|---|---|"]
    for channel in chans:
        rows = cost_table(catalog, channel)
        eager = rendered_bytes(eager_surface(catalog, channel))
        deferred = rendered_bytes(surface(catalog, channel, ()))
        lines.append(f"| {channel} | {len(rows)} | {sum(r.functions for r in rows)} | {eager:,} "
                     f"| {deferred:,} | {100 * (eager - deferred) / eager:.1f}% |")
    if not per_namespace:
        return "\n".join(lines)
    lines += ["", f"Per namespace ({chans[0]}):", "",
              "| namespace | form | functions | eager bytes | deferred bytes |",
              "|---|---|---|---|---|"]
    for r in cost_table(catalog, chans[0]):
        lines.append(f"| {r.namespace} | {r.form} | {r.functions} | {r.eager_bytes:,} "
                     f"| {r.deferred_bytes:,} |")
    return "\n".join(lines)


def _realistic_totals() -> str:
    catalog = realistic_catalog()
    return cost_markdown(catalog, catalog.channels, per_namespace=False)


SPEC_TABLES: dict[str, Callable[[], str]] = {"namespace-prompt-bytes": _realistic_totals}
