"""Form edits as text splices: change one field, keep every other byte (EDIT-02, EDIT-03).

A settings form and a raw-YAML tab edit the same file. Re-serialising the document on
every form change would erase what the user wrote by hand (comments, key order, quoting,
keys this spec does not know), so a form edit is a splice: the located YAML values the
parser produces (``yamlsource``) say where the edited field's text is, only that text is
replaced, and the result is parsed again and compared with what the edit promised. Any
difference, or a shape the splice cannot handle, refuses the edit with a located reason;
the document is never rewritten as a fallback.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from capconf.simulator.core.diagnostics import Mode, Severity
from capconf.simulator.definition.document import Definition, SourceFormat, normalize_body
from capconf.simulator.definition.parse import parse_definition
from capconf.simulator.definition.yamlsource import LMap, LNode, LScalar, LSeq
from capconf.simulator.editor.form import (
    NAME_LIST_FIELDS,
    EditField,
    EditOutcome,
    FormEdit,
    Refusal,
    RefusalCode,
)
from capconf.simulator.editor.located import LocatedDoc, RefusedEdit, unsafe
from capconf.simulator.editor.text import (
    Newlines,
    Splice,
    line_end,
    line_start,
    read_newlines,
    scalar_text,
)

_DASH = re.compile(r"[ \t]*-[ \t]+")
_LEAD_BLANK = re.compile(r"(?:[ \t]*\n)*")


def _is_null(node: LNode) -> bool:
    return isinstance(node, LScalar) and node.tag.endswith(":null")


def _name_text(name: str, flow: bool) -> str:
    return scalar_text(name, flow)


def _knowledge_flow(entry: tuple[str, str]) -> str:
    return (f"{{name: {scalar_text(entry[0], True)}, "
            f"glob: {scalar_text(entry[1], True)}}}")


class _ListEdit:
    """Splices that turn one YAML list (or comma string) into a new list of entries,
    keeping the text (and comments) of every entry that stays."""

    def __init__(self, doc: LocatedDoc, knowledge: bool) -> None:
        self.doc = doc
        self.knowledge = knowledge

    def key_of(self, node: LNode) -> object:
        if self.knowledge:
            if isinstance(node, LMap):
                fields = {k.text: v for k, v in node.items}
                name, glob = fields.get("name"), fields.get("glob")
                if isinstance(name, LScalar) and isinstance(glob, LScalar) and \
                        isinstance(name.value, str) and isinstance(glob.value, str):
                    return (name.value.strip(), glob.value)
            return object()
        if isinstance(node, LScalar) and not _is_null(node):
            return node.text.strip(" \t")
        return object()

    def entry_text(self, entry: Any, flow: bool) -> str:
        if self.knowledge:
            return _knowledge_flow(entry)
        return _name_text(entry, flow)

    def flow_list(self, entries: list[Any]) -> str:
        if not entries:
            return "[]"
        return "[" + ", ".join(self.entry_text(e, True) for e in entries) + "]"

    def block_lines(self, entries: list[Any], prefix: str) -> str:
        out = []
        for entry in entries:
            out.append(prefix + self.entry_text(entry, False) + "\n")
        return "".join(out)

    # ------------------------------------------------------------------------------
    def block_seq(self, seq: LSeq, entries: list[Any]) -> list[Splice]:
        doc, text = self.doc, self.doc.text
        units: list[tuple[int, int]] = []
        for item in seq.items:
            start = line_start(text, doc.start(item))
            if not _DASH.fullmatch(text[start:doc.start(item)]):
                raise unsafe("a list entry does not start its own `- ` line", item)
            units.append((start, line_end(text, max(doc.content_end(item) - 1,
                                                    doc.start(item)))))
        first = seq.items[0]
        prefix = text[units[0][0]:doc.start(first)]
        old = [self.key_of(i) for i in seq.items]
        splices: list[Splice] = []
        matcher = difflib.SequenceMatcher(None, old, entries, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            new = self.block_entries(entries[j1:j2], prefix, seq)
            for i in range(i1, i2):
                splices.append(Splice(units[i][0], units[i][1], new if i == i1 else ""))
            if op == "insert":
                if i1 < len(units):
                    splices.append(Splice(units[i1][0], units[i1][0], new))
                else:
                    splices.append(doc.insertion(units[-1][1], new))
        return splices

    def block_entries(self, entries: list[Any], prefix: str, seq: LSeq) -> str:
        if self.knowledge and seq.items and isinstance(seq.items[0], LMap) and \
                not seq.items[0].flow:
            inner = " " * len(prefix)
            return "".join(
                f"{prefix}name: {scalar_text(e[0], False)}\n{inner}glob: "
                f"{scalar_text(e[1], False)}\n" for e in entries)
        return self.block_lines(entries, prefix)

    def flow_seq(self, seq: LSeq, entries: list[Any]) -> list[Splice]:
        doc, text = self.doc, self.doc.text
        old = [self.key_of(i) for i in seq.items]
        texts = [self.entry_text(e, True) for e in entries]
        matcher = difflib.SequenceMatcher(None, old, entries, autojunk=False)
        for op, i1, i2, j1, _ in matcher.get_opcodes():
            if op == "equal":
                for k in range(i2 - i1):
                    item = seq.items[i1 + k]
                    texts[j1 + k] = text[doc.start(item):doc.end(item)]
        return [Splice(doc.start(seq), doc.end(seq), _rebuild_flow(doc, seq, texts))]

    def comma_string(self, node: LScalar, entries: list[str]) -> list[Splice]:
        doc = self.doc
        if node.style in ("|", ">") or "\n" in doc.text[doc.start(node):doc.end(node)]:
            raise unsafe("a comma-separated list written over several lines", node)
        if not entries or any("," in e for e in entries):
            return [Splice(doc.start(node), doc.end(node), self.flow_list(entries))]
        sep = ", " if (", " in node.text or "," not in node.text) else ","
        joined = sep.join(entries)
        return [Splice(doc.start(node), doc.end(node),
                       scalar_text(joined, False, node.style))]

    # ------------------------------------------------------------------------------
    def replace_value(self, key: LScalar, value: LNode, entries: list[Any]) -> list[Splice]:
        """Splices that make ``value`` (the node under ``key``) hold ``entries``."""
        doc = self.doc
        if isinstance(value, LSeq):
            if value.flow:
                return self.flow_seq(value, entries)
            return self.block_seq(value, entries)
        if isinstance(value, LScalar) and _is_null(value):
            if not entries:
                return []
            if doc.start(value) == doc.end(value):
                if doc.block_lists():
                    _, seq_unit = doc.units()
                    prefix = " " * (doc.column(key) + seq_unit) + "- "
                    at = line_end(doc.text, doc.start(key))
                    return [doc.insertion(at, self.block_lines(entries, prefix))]
                at = doc.after_colon(key, value)
                return [Splice(at, at, " " + self.flow_list(entries))]
            return [Splice(doc.start(value), doc.end(value), self.flow_list(entries))]
        if isinstance(value, LScalar) and isinstance(value.value, str) and not self.knowledge:
            return self.comma_string(value, entries)
        if isinstance(value, LScalar):
            return [Splice(doc.start(value), doc.end(value), self.flow_list(entries))]
        raise unsafe(f"`{key.text}` holds a mapping; fix its type by hand first", value)

    def new_entry(self, key: str, entries: list[Any], indent: str) -> str:
        doc = self.doc
        if entries and (doc.block_lists() or self.knowledge):
            _, seq_unit = doc.units()
            prefix = indent + " " * seq_unit + "- "
            return f"{indent}{key}:\n" + self.block_lines(entries, prefix)
        return f"{indent}{key}: {self.flow_list(entries)}\n"


def _list_field_node(doc: LocatedDoc, field: EditField) -> tuple[LScalar, LNode] | None:
    if field is EditField.MCP_SERVERS:
        mcp = doc.entry(doc.root, "mcp")
        if mcp is None or not isinstance(mcp[1], LMap):
            return None
        return doc.entry(mcp[1], "servers")
    return doc.entry(doc.root, str(field))


def _current_entries(definition: Definition, field: EditField) -> list[Any]:
    if field is EditField.KNOWLEDGE:
        return [(k.name, k.glob) for k in definition.knowledge or ()]
    refs = {EditField.TOOLS: definition.tools, EditField.SKILLS: definition.skills,
            EditField.MCP_SERVERS: definition.mcp_servers}[field]
    return [r.name for r in refs or ()]


def _entries_without(doc: LocatedDoc, field: EditField, index: int) -> list[Any]:
    """The declared entries expected after removing entry ``index`` (the index in the
    diagnostic path, empty and mistyped entries counted)."""
    d = doc.definition
    if field is EditField.KNOWLEDGE:
        decls = d.knowledge or ()
        return [(k.name, k.glob) for k in decls if k.location.path[-1] != index]
    refs = {EditField.TOOLS: d.tools, EditField.SKILLS: d.skills,
            EditField.MCP_SERVERS: d.mcp_servers}[field] or ()
    return [r.name for r in refs if r.location.path[-1] != index]


def _remove_splices(doc: LocatedDoc, field: EditField, index: int) -> list[Splice]:
    found = _list_field_node(doc, field)
    if found is None:
        raise RefusedEdit(RefusalCode.NO_SUCH_ENTRY, f"`{field}` is not written in the document")
    value = found[1]
    text = doc.text
    if isinstance(value, LSeq):
        if not 0 <= index < len(value.items):
            raise RefusedEdit(RefusalCode.NO_SUCH_ENTRY,
                           f"`{field}` has no entry {index}", value.mark)
        item = value.items[index]
        if value.flow:
            texts = [text[doc.start(it):doc.end(it)]
                     for i, it in enumerate(value.items) if i != index]
            return [Splice(doc.start(value), doc.end(value), _rebuild_flow(doc, value, texts))]
        start = line_start(text, doc.start(item))
        if not _DASH.fullmatch(text[start:doc.start(item)]):
            raise unsafe("the entry does not start its own `- ` line", item)
        return [Splice(start, line_end(text, max(doc.content_end(item) - 1, doc.start(item))),
                       "")]
    if isinstance(value, LScalar) and isinstance(value.value, str) and not _is_null(value) \
            and field is not EditField.KNOWLEDGE:
        from capconf.simulator.core.names import split_names

        parts = [name for name, _ in split_names(value.text)]
        if not 0 <= index < len(parts):
            raise RefusedEdit(RefusalCode.NO_SUCH_ENTRY, f"`{field}` has no entry {index}",
                           value.mark)
        del parts[index]
        return _ListEdit(doc, False).comma_string(value, parts) if parts else [
            Splice(doc.start(value), doc.end(value), "[]")]
    raise RefusedEdit(RefusalCode.NO_SUCH_ENTRY, f"`{field}` has no entries", value.mark)


def _rebuild_flow(doc: LocatedDoc, seq: LSeq, texts: list[str]) -> str:
    text = doc.text
    start, end = doc.start(seq), doc.end(seq)
    outside = text[start:end]
    for item in reversed(seq.items):
        a, b = doc.start(item) - start, doc.end(item) - start
        outside = outside[:a] + " " * (b - a) + outside[b:]
    if re.search(r"(?:^|\s)#", outside):
        raise unsafe("a comment inside a flow list `[...]` would be lost", seq)
    sep, pad = ", ", ""
    if len(seq.items) >= 2:
        between = text[doc.end(seq.items[0]):doc.start(seq.items[1])]
        if "\n" not in between and between.strip() == ",":
            sep = between
    if seq.items:
        lead = text[start + 1:doc.start(seq.items[0])]
        pad = lead if lead and not lead.strip(" ") else ""
    return "[" + pad + sep.join(texts) + pad + "]" if texts else "[]"


def _set_list(doc: LocatedDoc, field: EditField, entries: list[Any] | None) -> list[Splice]:
    lst = _ListEdit(doc, field is EditField.KNOWLEDGE)
    if field is EditField.MCP_SERVERS:
        return _set_mcp(doc, lst, entries)
    found = doc.entry(doc.root, str(field))
    if entries is None:
        return [] if found is None else [doc.delete_entry(*found)]
    if found is None:
        at = doc.insert_point(str(field))
        return [doc.insertion(at, lst.new_entry(str(field), entries, doc.key_indent()))]
    return lst.replace_value(found[0], found[1], entries)


def _set_mcp(doc: LocatedDoc, lst: _ListEdit, entries: list[Any] | None) -> list[Splice]:
    mcp = doc.entry(doc.root, "mcp")
    map_unit, _ = doc.units()
    if mcp is None:
        if entries is None:
            return []
        indent = doc.key_indent()
        inner = lst.new_entry("servers", entries, indent + " " * map_unit)
        return [doc.insertion(doc.insert_point("mcp"), f"{indent}mcp:\n{inner}")]
    key, value = mcp
    if isinstance(value, LScalar) and _is_null(value):
        if entries is None:
            return [doc.delete_entry(key, value)]
        if doc.start(value) != doc.end(value):
            return [Splice(doc.start(value), doc.end(value),
                           f"{{servers: {lst.flow_list(entries)}}}")]
        inner = lst.new_entry("servers", entries, " " * (doc.column(key) + map_unit))
        return [doc.insertion(line_end(doc.text, doc.start(key)), inner)]
    if not isinstance(value, LMap):
        raise unsafe("`mcp` is not a mapping; fix its type by hand first", value)
    servers = doc.entry(value, "servers")
    if entries is None:
        if servers is None:
            return []
        if len(value.items) == 1:
            return [doc.delete_entry(key, value)]
        if value.flow:
            raise unsafe("`mcp` is a flow mapping `{...}` with other keys", value)
        return [doc.delete_entry(*servers)]
    if servers is not None:
        return lst.replace_value(servers[0], servers[1], entries)
    if value.flow or not value.items:
        raise unsafe("`mcp` is a flow mapping `{...}` without `servers`", value)
    first_key = value.items[0][0]
    inner = lst.new_entry("servers", entries, " " * doc.column(first_key))
    last_key, last_value = value.items[-1]
    return [doc.insertion(doc.entry_end(last_key, last_value), inner)]


def _set_scalar(doc: LocatedDoc, field: str, value: str | None) -> list[Splice]:
    found = doc.entry(doc.root, field)
    if value is None:
        return [] if found is None else [doc.delete_entry(*found)]
    if found is None:
        text = f"{doc.key_indent()}{field}: {scalar_text(value, False)}\n"
        return [doc.insertion(doc.insert_point(field), text)]
    key, node = found
    if isinstance(node, LScalar) and doc.start(node) == doc.end(node):
        at = doc.after_colon(key, node)
        return [Splice(at, at, " " + scalar_text(value, False))]
    style = node.style if isinstance(node, LScalar) and node.style in ("'", '"') else None
    return [Splice(doc.start(node), doc.content_end(node), scalar_text(value, False, style))]


def _literal_block(value: str, indent: int, key_column: int) -> str:
    lines = value.split("\n")
    indicator = ""
    first = next((ln for ln in lines if ln.strip()), "")
    if first[:1] in (" ", "\t"):
        indicator = str(indent - key_column)
    body = "\n".join((" " * indent + ln) if ln.strip() else "" for ln in lines)
    return f"|{indicator}\n{body}"


def _set_body(doc: LocatedDoc, value: str) -> list[Splice]:
    text = doc.text
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    if doc.markdown:
        after = line_end(text, doc.fence)
        region = text[after:]
        lead = _LEAD_BLANK.match(region)
        lead_len = lead.end() if lead else 0
        rest = region[lead_len:]
        core_end = len(text) - (len(rest) - len(rest.rstrip()))
        if not rest.strip():
            if not value:
                return []
            prefix = "" if text.endswith("\n") or not text else "\n"
            return [Splice(len(text), len(text), prefix + "\n" + value + "\n")]
        return [Splice(after + lead_len, core_end, value)]
    found = doc.entry(doc.root, "prompt")
    if not value.strip():
        if found is None:
            return []
        return [Splice(doc.start(found[1]), doc.content_end(found[1]), '""')]
    if found is None:
        key_indent = doc.key_indent()
        block = _literal_block(value, len(key_indent) + 2, len(key_indent))
        return [doc.insertion(doc.insert_point("prompt"), f"{key_indent}prompt: {block}\n")]
    key, node = found
    if not isinstance(node, LScalar):
        raise unsafe("`prompt` is not text; fix its type by hand first", node)
    indent = doc.column(key) + 2
    if node.style == "|" or node.style == ">":
        start = line_end(text, doc.start(node))
        content = text[start:doc.content_end(node)]
        line = next((ln for ln in content.split("\n") if ln.strip()), "")
        if line:
            indent = len(line) - len(line.lstrip(" "))
    if doc.start(node) == doc.end(node):
        at = doc.after_colon(key, node)
        return [Splice(at, at, " " + _literal_block(value, indent, doc.column(key)))]
    return [Splice(doc.start(node), doc.content_end(node),
                   _literal_block(value, indent, doc.column(key)))]


# ---------------------------------------------------------------------------- entry


def _expected(definition: Definition, edit: FormEdit, doc: LocatedDoc) -> dict[str, Any]:
    data = definition.to_json()
    field = edit.field
    if edit.remove is not None:
        value: Any = _entries_without(doc, field, edit.remove)
    else:
        value = edit.value
    if field in (EditField.TOOLS, EditField.SKILLS):
        data[str(field)] = None if value is None else [str(v).strip(" \t") for v in value]
    elif field is EditField.MCP_SERVERS:
        if value is None:
            mcp = doc.entry(doc.root, "mcp")
            keep = mcp is not None and isinstance(mcp[1], LMap) and len(mcp[1].items) > 1
            data["mcp"] = {"servers": []} if keep else None
        else:
            data["mcp"] = {"servers": [str(v).strip(" \t") for v in value]}
    elif field is EditField.KNOWLEDGE:
        data["knowledge"] = None if value is None else [
            {"name": n.strip(), "glob": g} for n, g in value]
    elif field is EditField.BODY:
        data["body"] = normalize_body(value.replace("\r\n", "\n").replace("\r", "\n"))
    else:
        data[str(field)] = value
    return data


def _splices(doc: LocatedDoc, edit: FormEdit) -> list[Splice]:
    field = edit.field
    if edit.remove is not None:
        return _remove_splices(doc, field, edit.remove)
    if field in NAME_LIST_FIELDS or field is EditField.KNOWLEDGE:
        entries = None if edit.value is None else list(edit.value)
        return _set_list(doc, field, entries)
    if field is EditField.BODY:
        return _set_body(doc, edit.value)
    return _set_scalar(doc, str(field), edit.value)


def _differences(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    return [k for k in want if got.get(k) != want[k]]


def apply_edit(source: str, edit: FormEdit, fmt: SourceFormat | None = None,
               filename: str | None = None) -> EditOutcome:
    """Apply one form edit to ``source`` (text as read, any line endings, BOM kept)."""
    bom = "\ufeff" if source.startswith("\ufeff") else ""
    newlines = read_newlines(source[len(bom):])
    text = newlines.normalized
    parsed = parse_definition(text, Mode.PARSE, fmt, filename)
    definition = parsed.definition
    if definition is None:
        first = next((d for d in parsed.diagnostics if d.severity is Severity.ERROR), None)
        where = first.location if first else None
        return EditOutcome(None, (), Refusal(
            RefusalCode.UNREADABLE, "the document does not load"
            + (f": {first.message}" if first else "") + " Fix it in the raw editor first.",
            where.line if where else None, where.column if where else None))
    lenient = next((d for d in parsed.diagnostics if d.code == "DEF-FRONT-MATTER-LENIENT"),
                   None)
    if lenient is not None:
        return EditOutcome(None, (), Refusal(
            RefusalCode.NOT_STRICT_YAML, "the front matter is not valid YAML, so a form edit "
            "cannot locate the field safely. Quote the offending value in the raw editor "
            "first.", lenient.location.line, lenient.location.column))
    try:
        doc = LocatedDoc(text, definition)
        want = _expected(definition, edit, doc)
        splices = _splices(doc, edit)
    except RefusedEdit as refused:
        return EditOutcome(None, (), refused.refusal)
    new_text = _apply_normalized(text, splices)
    reparsed = parse_definition(new_text, Mode.PARSE, definition.format, filename)
    got = reparsed.definition.to_json() if reparsed.definition is not None else {}
    wrong = _differences(got, want)
    if wrong:
        return EditOutcome(None, (), Refusal(
            RefusalCode.UNSAFE, f"the edit would not read back as intended (changed: "
            f"{', '.join(wrong)}); the document is left as it is. Make this change in the "
            "raw editor."))
    document, mapped = newlines.apply(splices)
    if bom:
        mapped = tuple(Splice(s.start + 1, s.end + 1, s.new) for s in mapped)
    return EditOutcome(bom + document, mapped)


def _apply_normalized(text: str, splices: list[Splice]) -> str:
    out, cursor = [], 0
    for s in sorted(splices, key=lambda s: (s.start, s.end)):
        out.append(text[cursor:s.start])
        out.append(s.new)
        cursor = s.end
    out.append(text[cursor:])
    return "".join(out)


__all__ = ["EditField", "EditOutcome", "FormEdit", "Newlines", "Refusal", "RefusalCode",
           "apply_edit"]
