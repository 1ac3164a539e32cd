"""Unit tests of the namespace catalogue, the surface and the call contract."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from capconf.simulator.call.contract import CallState
from capconf.simulator.namespaces.catalog import (
    CatalogError,
    Form,
    parse_catalog,
    realistic_catalog,
    split_qualified,
)
from capconf.simulator.namespaces.context import NamespaceState
from capconf.simulator.namespaces.surface import eager_surface, rendered_bytes, surface

GOOD: dict[str, Any] = {
    "channels": ["main", "side"],
    "namespaces": [
        {"name": "tool_search", "description": "Load.", "form": "core", "functions": [
            {"name": "load_tool_namespace", "description": "Load.",
             "parameters": {"type": "object", "properties": {"namespaces": {"type": "array"}},
                            "required": ["namespaces"]}}]},
        {"name": "cal", "description": "Calendar.", "channels": ["main"], "functions": [
            {"name": "list", "description": "List.", "delivery": "async"}]},
    ],
}


def _bad(mutate: Any) -> CatalogError:
    raw = copy.deepcopy(GOOD)
    mutate(raw)
    with pytest.raises(CatalogError) as info:
        parse_catalog(raw)
    return info.value


@pytest.mark.parametrize(("mutate", "path"), [
    (lambda r: r["namespaces"][1].update(name="a.b"), ("namespaces", 1, "name")),
    (lambda r: r["namespaces"][1].update(name="gh__x"), ("namespaces", 1, "name")),
    (lambda r: r["namespaces"][1].update(name="Cal"), ("namespaces", 1, "name")),
    (lambda r: r["namespaces"][1]["functions"][0].update(name="x.y"),
     ("namespaces", 1, "functions", 0, "name")),
    (lambda r: r["namespaces"][1].update(description="two\nlines"),
     ("namespaces", 1, "description")),
    (lambda r: r["namespaces"][1].update(form="lazy"), ("namespaces", 1, "form")),
    (lambda r: r["namespaces"][1].update(channels=["web"]), ("namespaces", 1, "channels")),
    (lambda r: r["namespaces"][1]["functions"][0].update(delivery="later"),
     ("namespaces", 1, "functions", 0, "delivery")),
    (lambda r: r["namespaces"].append(copy.deepcopy(r["namespaces"][1])),
     ("namespaces", 2, "name")),
    (lambda r: r["namespaces"][0].update(form="namespace"), ("namespaces",)),
    (lambda r: r.update(channels=[]), ("channels",)),
])
def test_a_bad_catalogue_is_refused_with_its_location(mutate: Any, path: tuple[Any, ...]) -> None:
    assert _bad(mutate).path == path


def test_qualified_names_have_exactly_one_dot_and_no_mcp_separator() -> None:
    assert split_qualified("cron.create") == ("cron", "create")
    for name in ("create", "cron.create.x", "Cron.create", "gh__issue", ".x", "x."):
        assert split_qualified(name) is None, name


def test_the_realistic_catalogue_has_the_seeds_shape() -> None:
    catalog = realistic_catalog()
    assert len(catalog.visible("main")) == 33 and len(catalog.visible("side")) == 22
    assert sum(len(n.functions) for n in catalog.namespaces) >= 150
    assert {n.name for n in catalog.namespaces if n.form is Form.CORE} == {"muse", "tool_search"}
    assert {"subagent", "credentials", "wallet", "todo"} <= {
        n.name for n in catalog.namespaces} - {n.name for n in catalog.visible("side")}


def test_deferral_saves_most_of_the_eager_prompt() -> None:
    catalog = realistic_catalog()
    for channel in catalog.channels:
        eager = rendered_bytes(eager_surface(catalog, channel))
        assert rendered_bytes(surface(catalog, channel, ())) < eager / 3


def test_load_is_atomic_idempotent_and_core_is_a_no_op() -> None:
    catalog = parse_catalog(GOOD)
    ctx = NamespaceState(catalog).open("main")
    assert ctx.load(catalog, {"namespaces": ["cal", "nope"]}).ok is False
    assert ctx.loaded == set()
    first = ctx.load(catalog, {"namespaces": ["cal", "tool_search", "cal"]})
    assert first.ok and first.content["loaded"] == ["cal"]
    assert first.content["already_loaded"] == ["tool_search"]
    again = ctx.load(catalog, {"namespaces": ["cal"]})
    assert again.ok and again.content["loaded"] == [] and ctx.loaded == {"cal"}
    side = NamespaceState(catalog).open("side")
    assert side.load(catalog, {"namespaces": ["cal"]}).error is not None


def test_ids_are_deterministic_across_runs() -> None:
    def run() -> list[Any]:
        catalog = parse_catalog(GOOD)
        state = NamespaceState(catalog)
        ctx = state.open("main")
        calls = CallState(state)
        out = []
        for function, args in (("tool_search.load_tool_namespace", {"namespaces": ["cal"]}),
                               ("cal.list", {})):
            stamp = calls.stamp_for(ctx, None)
            out.append((stamp.to_json(), calls.invoke(ctx, stamp, function, args).to_json()))
        return out

    assert run() == run()
