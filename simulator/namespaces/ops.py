"""Driver ops of the namespaces area (feature group ``namespaces``): ``ns.setup`` gives
the session a catalogue, ``ns.open`` opens a model context on a channel, ``ns.surface``
shows what that context injects. Loading is a call (``tool_search.load_tool_namespace``
through ``call.invoke``), because for the model it is one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.compose.session import Handler, ProtocolError, Session
from capconf.simulator.namespaces.catalog import CatalogError, parse_catalog
from capconf.simulator.namespaces.context import NamespaceContext, NamespaceState
from capconf.simulator.namespaces.surface import rendered_bytes, surface

KEY = "namespaces"


def state(session: Session) -> NamespaceState:
    found = session.state.get(KEY)
    if not isinstance(found, NamespaceState):
        raise ProtocolError("no_catalog", "call ns.setup with a namespace catalogue first")
    return found


def context(session: Session, args: Mapping[str, Any]) -> NamespaceContext:
    ctx_id = args.get("context")
    contexts = state(session).contexts
    if not isinstance(ctx_id, str) or ctx_id not in contexts:
        raise ProtocolError("no_such_context", f"no context {ctx_id!r}; open one with ns.open",
                            ("args", "context"))
    return contexts[ctx_id]


def surface_json(session: Session, ctx: NamespaceContext) -> dict[str, Any]:
    shown = surface(state(session).catalog, ctx.channel, ctx.loaded)
    return {"context": ctx.context_id, "channel": ctx.channel, "surface": shown,
            "bytes": rendered_bytes(shown)}


def op_ns_setup(session: Session, args: Mapping[str, Any]) -> Any:
    try:
        catalog = parse_catalog(args.get("catalog"))
    except CatalogError as exc:
        raise ProtocolError("catalog_invalid", exc.message, ("args", "catalog", *exc.path)) \
            from None
    session.state[KEY] = NamespaceState(catalog)
    session.state.pop("call", None)
    return {"namespaces": len(catalog.namespaces),
            "functions": sum(len(n.functions) for n in catalog.namespaces),
            "channels": list(catalog.channels)}


def op_ns_open(session: Session, args: Mapping[str, Any]) -> Any:
    st = state(session)
    channel = args.get("channel")
    if channel not in st.catalog.channels:
        raise ProtocolError("bad_request", f"`channel` must be one of {list(st.catalog.channels)}",
                            ("args", "channel"))
    return surface_json(session, st.open(str(channel)))


def op_ns_surface(session: Session, args: Mapping[str, Any]) -> Any:
    return surface_json(session, context(session, args))


OPS: dict[str, Handler] = {"ns.setup": op_ns_setup, "ns.open": op_ns_open,
                           "ns.surface": op_ns_surface}
