"""A model context's namespace state: its channel and the namespaces loaded into it.

Loading is the only way the set grows and nothing shrinks it, so schemas persist for the
life of the context and loading twice is a no-op (NS-02). A load is atomic: if any name
is not visible on the context's channel, nothing is loaded and the answer lists what is
(a gated-off namespace is reported exactly like one that does not exist, NS-05).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.namespaces.catalog import Catalog, Form

LOAD_FUNCTION = "load_tool_namespace"


@dataclass
class NamespaceContext:
    context_id: str
    channel: str
    loaded: set[str] = field(default_factory=set)

    def load(self, catalog: Catalog, args: Mapping[str, Any]) -> ToolResult:
        names = args.get("namespaces")
        if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
            return failure("invalid_arguments", "`namespaces` must be a non-empty list of "
                           "namespace names", {"argument": "namespaces"},
                           terminal_for_attempt=True)
        visible = {n.name: n for n in catalog.visible(self.channel)}
        unknown = sorted({n for n in names if n not in visible})
        if unknown:
            return failure("unknown_namespace", f"no namespace {', '.join(unknown)} in this "
                           "session; nothing was loaded",
                           {"unknown": unknown, "available": sorted(visible)},
                           terminal_for_attempt=True)
        newly = [n for n in dict.fromkeys(names)
                 if n not in self.loaded and visible[n].form is not Form.CORE]
        already = [n for n in dict.fromkeys(names) if n not in newly]
        self.loaded.update(newly)
        return success({"loaded": newly, "already_loaded": already,
                        "functions": [f"{n}.{f.name}" for n in newly
                                      for f in visible[n].functions]})


@dataclass
class NamespaceState:
    """Per driver session (``session.state['namespaces']``), reset by ``ns.setup``."""

    catalog: Catalog
    contexts: dict[str, NamespaceContext] = field(default_factory=dict)

    def open(self, channel: str) -> NamespaceContext:
        context = NamespaceContext(f"ctx-{len(self.contexts) + 1}", channel)
        self.contexts[context.context_id] = context
        return context
