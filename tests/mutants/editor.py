"""Mutants of the settings editor's back-end (EDIT): each a plausible real bug of an
editor back-end, each naming the requirements whose cases must catch it."""

from __future__ import annotations

from typing import Any

from capconf.simulator.core import nearest
from capconf.simulator.editor import candidates, ops, splice
from mutants.base import Mutant, _original, _patch


def _edit_reserializes() -> None:
    """The form edit writes the whole document again (comments, order, quoting lost)."""
    from capconf.simulator.compose.agent import compile_agent
    from capconf.simulator.core.diagnostics import Mode
    from capconf.simulator.definition.serialize import serialize_definition

    real = _original(ops, "op_edit")

    def buggy(session: Any, args: Any) -> Any:
        result = dict(real(session, args))
        if result.get("applied") and "document_b64" not in result:
            view = compile_agent(result["document"], session.require_world(), Mode.PARSE,
                                 None, args.get("filename"))
            if view.definition is not None:
                result["document"] = serialize_definition(view.definition, view.grant)
        return result

    _patch(ops, "op_edit", buggy)
    ops.OPS["editor.edit"] = buggy


def _refusal_rewrites() -> None:
    """When a splice is impossible, the document is re-serialised instead of refused."""
    real = _original(splice, "apply_edit")

    def buggy(source: str, edit: Any, fmt: Any = None, filename: Any = None) -> Any:
        outcome = real(source, edit, fmt, filename)
        if outcome.refusal is not None:
            return splice.EditOutcome(source, ())
        return outcome

    _patch(splice, "apply_edit", buggy)
    _patch(ops, "apply_edit", buggy)


def _last_layer_wins() -> None:
    """Skill candidates: the last layer of a name wins (the shadowing turned around)."""
    real = _original(candidates, "discover_skills")

    def buggy(world: Any, *args: Any) -> Any:
        found = real(world, *args)
        return type(found)(tuple(reversed(found.packages)), found.diagnostics)

    _patch(candidates, "discover_skills", buggy)


def _no_legacy_candidates() -> None:
    """A back-end without a grantable list offers no tool candidates at all."""
    real = _original(candidates, "tool_candidates")

    def buggy(world: Any) -> Any:
        out = dict(real(world))
        if out["source"] == "legacy_fallback":
            out["candidates"] = []
        return out

    _patch(candidates, "tool_candidates", buggy)


def _nearest_case_sensitive() -> None:
    """Suggestions compare names case-sensitively (`GRPE` is far from `grep`)."""
    _patch(nearest, "ascii_fold", lambda name: name)


def _unknown_unlocated() -> None:
    """Unknown-name chips carry no position."""
    import capconf.simulator.editor.unknown as unknown

    real = _original(unknown, "unknown_names")

    def buggy(view: Any, world: Any) -> Any:
        return [{**u, "line": None, "column": None} for u in real(view, world)]

    _patch(unknown, "unknown_names", buggy)
    _patch(ops, "unknown_names", buggy)


def _diagnostics_of_source() -> None:
    """The edit answers the source's diagnostics, not those of the document it returns."""
    from capconf.simulator.compose.session import read_source

    real = _original(ops, "_diagnostics")

    def buggy(session: Any, source: Any, args: Any) -> Any:
        return real(session, read_source(args), args)

    _patch(ops, "_diagnostics", buggy)


def _only_enabled_servers() -> None:
    """MCP candidates leave out servers that are disabled or not configured."""
    real = _original(candidates, "mcp_candidates")

    def buggy(world: Any) -> Any:
        out = real(world)
        return {"candidates": [c for c in out["candidates"] if c["state"] == "ready"]}

    _patch(candidates, "mcp_candidates", buggy)


def _lists_become_flow() -> None:
    """Every edited list is written as a flow list `[a, b]`, whatever its style was."""
    def buggy(self: Any, key: Any, value: Any, entries: Any) -> Any:
        doc = self.doc
        return [splice.Splice(doc.start(value), doc.content_end(value),
                              self.flow_list(entries))]

    _patch(splice._ListEdit, "replace_value", buggy)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("editor-lists-become-flow", "an edited list is rewritten as a flow list",
           ("EDIT-02",), _lists_become_flow),
    Mutant("editor-diagnostics-of-source", "an edit reports the source's diagnostics",
           ("EDIT-02",), _diagnostics_of_source),
    Mutant("editor-only-enabled-servers", "MCP candidates omit disabled and unconfigured "
           "servers", ("EDIT-01",), _only_enabled_servers),
    Mutant("editor-edit-reserializes", "a form edit re-serialises the whole document",
           ("EDIT-02",), _edit_reserializes),
    Mutant("editor-refusal-rewrites", "an edit that cannot be spliced rewrites the "
           "document", ("EDIT-03",), _refusal_rewrites),
    Mutant("editor-last-layer-wins", "skill candidates take the last layer of a name",
           ("EDIT-01",), _last_layer_wins),
    Mutant("editor-no-legacy-candidates", "no tool candidates without a grantable list",
           ("EDIT-01",), _no_legacy_candidates),
    Mutant("editor-nearest-case-sensitive", "suggestions compare case-sensitively",
           ("EDIT-04",), _nearest_case_sensitive),
    Mutant("editor-unknown-unlocated", "unknown-name chips have no location",
           ("EDIT-04",), _unknown_unlocated),
)
