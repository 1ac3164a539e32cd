"""Driver ops of the settings editor (feature group ``editor``): the three selectors'
candidates, one form edit spliced into a document, and the unknown-name chips."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from capconf.simulator.compose.agent import compile_agent
from capconf.simulator.compose.session import (
    Handler,
    ProtocolError,
    Session,
    read_filename,
    read_format,
    read_source,
)
from capconf.simulator.core.diagnostics import Mode
from capconf.simulator.editor.candidates import candidates
from capconf.simulator.editor.form import (
    MEMORY_MODES,
    REMOVABLE,
    UNSETTABLE,
    EditField,
    FormEdit,
    Refusal,
    RefusalCode,
)
from capconf.simulator.editor.splice import apply_edit
from capconf.simulator.editor.unknown import unknown_names


def op_candidates(session: Session, args: Mapping[str, Any]) -> Any:
    return candidates(session.require_world())


def _bad(message: str, *path: str | int) -> ProtocolError:
    return ProtocolError("bad_request", message, ("args", "edit", *path))


def _names(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad("must be a list of names", "value")
    for i, v in enumerate(value):
        if not v.strip(" \t") or "\n" in v or "\r" in v:
            raise _bad("a name must be non-empty text on one line", "value", i)
    return list(value)


def read_edit(args: Mapping[str, Any]) -> FormEdit:
    """Validate the `edit` argument: {field, value} or {field, remove: index}."""
    edit = args.get("edit")
    if not isinstance(edit, dict):
        raise ProtocolError("bad_request", "`edit` must be {field, value} or "
                            "{field, remove}", ("args", "edit"))
    try:
        field = EditField(str(edit.get("field")))
    except ValueError:
        raise _bad(f"`field` must be one of {', '.join(f.value for f in EditField)}",
                   "field") from None
    extra = sorted(set(edit) - {"field", "value", "remove"})
    if extra or ("value" in edit) == ("remove" in edit):
        raise _bad("give exactly one of `value` and `remove`")
    if "remove" in edit:
        index = edit["remove"]
        if field not in REMOVABLE:
            raise _bad(f"`{field}` has no entries to remove", "remove")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise _bad("`remove` must be an entry index (integer >= 0)", "remove")
        return FormEdit(field, remove=index)
    value = edit["value"]
    if value is None:
        if field not in UNSETTABLE:
            raise _bad(f"`{field}` cannot be removed", "value")
        return FormEdit(field, None)
    if field is EditField.KNOWLEDGE:
        if not isinstance(value, list):
            raise _bad("must be a list of {name, glob}", "value")
        rows = []
        for i, row in enumerate(value):
            if not (isinstance(row, dict) and set(row) == {"name", "glob"}
                    and all(isinstance(row[k], str) and row[k].strip() for k in row)):
                raise _bad("must be {name, glob} with non-empty strings", "value", i)
            rows.append((row["name"], row["glob"]))
        return FormEdit(field, rows)
    if field in (EditField.TOOLS, EditField.SKILLS, EditField.MCP_SERVERS):
        return FormEdit(field, _names(value))
    if not isinstance(value, str):
        raise _bad("must be a string", "value")
    if field is EditField.MEMORY and value not in MEMORY_MODES:
        raise _bad(f"must be one of {', '.join(MEMORY_MODES)}", "value")
    return FormEdit(field, value)


def _diagnostics(session: Session, source: str | bytes, args: Mapping[str, Any]) -> Any:
    view = compile_agent(source, session.require_world(), Mode.PARSE, read_format(args),
                         read_filename(args))
    return [d.to_json() for d in view.diagnostics]


def op_edit(session: Session, args: Mapping[str, Any]) -> Any:
    """Apply one form edit; the answer carries the parse diagnostics of the document it
    returns (or of the source, when the edit is refused)."""
    session.require_world()
    source = read_source(args)
    edit = read_edit(args)
    as_bytes = isinstance(source, bytes)
    text: str | None
    if isinstance(source, bytes):
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    else:
        text = source
    if text is None:
        refusal = Refusal(RefusalCode.UNREADABLE, "the document is not UTF-8; fix its "
                          "encoding first.")
        return {"applied": False, "document": None, "refusal": refusal.to_json(),
                "diagnostics": _diagnostics(session, source, args)}
    outcome = apply_edit(text, edit, read_format(args), read_filename(args))
    if outcome.document is None:
        assert outcome.refusal is not None
        return {"applied": False, "document": None, "refusal": outcome.refusal.to_json(),
                "diagnostics": _diagnostics(session, source, args)}
    result: dict[str, Any] = {
        "applied": True, "document": outcome.document, "refusal": None,
        "diagnostics": _diagnostics(session, outcome.document.encode("utf-8")
                                    if as_bytes else outcome.document, args)}
    if as_bytes:
        result["document_b64"] = base64.b64encode(outcome.document.encode("utf-8")).decode()
    return result


def op_unknown_names(session: Session, args: Mapping[str, Any]) -> Any:
    world = session.require_world()
    view = compile_agent(read_source(args), world, Mode.PARSE, read_format(args),
                         read_filename(args))
    if view.definition is None:
        raise ProtocolError("definition_invalid", "the definition could not be loaded: "
                            + "; ".join(d.message for d in view.diagnostics))
    return {"unknown": unknown_names(view, world),
            "diagnostics": [d.to_json() for d in view.diagnostics]}


OPS: dict[str, Handler] = {
    "editor.candidates": op_candidates,
    "editor.edit": op_edit,
    "editor.unknown_names": op_unknown_names,
}
