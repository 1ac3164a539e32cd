"""Parse a subagent definition (YAML document or Markdown with YAML front matter) into a
``document.Definition`` and located diagnostics.

One parser serves the form editor and the hand-written ("raw") path alike (DEF-04). It
never raises on bad input: every problem becomes a located diagnostic whose severity the
mode decides (DEF-02, DEF-03), and everything declared is kept, even names that resolve
to nothing, so the caller can show them and the save path can write them back (DEF-06).
Only a document that cannot be read at all (bad encoding, YAML syntax, aliases, size)
yields no definition.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from capconf.simulator.core.diagnostics import (
    Diagnostic,
    DiagnosticKind,
    Location,
    Mode,
    PathItem,
    Severity,
    diagnose,
)
from capconf.simulator.core.names import ascii_fold, split_names
from capconf.simulator.core.unicode_names import name_problem, name_reason, unicode_reason
from capconf.simulator.definition.declarations import KnowledgeDeclaration, MemoryMode, NameRef
from capconf.simulator.definition.document import (
    FOREIGN_KEYS,
    KNOWN_KEYS,
    Definition,
    SourceFormat,
    near_miss,
    normalize_body,
)
from capconf.simulator.definition.yamlsource import (
    LMap,
    LNode,
    LScalar,
    LSeq,
    SourceError,
    check_entry_budget,
    check_text_size,
    decode_source,
    load_lenient_front_matter,
    load_yaml_counted,
    location,
    normalize_newlines,
    plain,
)

W, E, INFO = Severity.WARNING, Severity.ERROR, Severity.INFO


def _fatal(code: str, summary: str) -> DiagnosticKind:
    return DiagnosticKind(code, "DEF-03", E, E, summary)


DEF_TOO_LARGE = _fatal("DEF-TOO-LARGE", "the source is over 1,048,576 bytes")


DEF_ENCODING = _fatal("DEF-ENCODING", "the source is not valid UTF-8")


DEF_YAML_SYNTAX = _fatal("DEF-YAML-SYNTAX", "the YAML cannot be parsed")


DEF_YAML_ALIAS = _fatal("DEF-YAML-ALIAS", "YAML aliases are refused (alias bombs)")


DEF_YAML_TOO_DEEP = _fatal("DEF-YAML-TOO-DEEP", "nesting deeper than 32 levels")


DEF_YAML_TOO_COMPLEX = _fatal("DEF-YAML-TOO-COMPLEX", "more than 20,000 YAML nodes")


DEF_YAML_COMPLEX_KEY = _fatal("DEF-YAML-COMPLEX-KEY", "a mapping key that is not a scalar")


DEF_NOT_A_MAPPING = _fatal("DEF-NOT-A-MAPPING", "the document (or front matter) is not a mapping")


DEF_NO_FRONT_MATTER = _fatal("DEF-NO-FRONT-MATTER",
                             "a Markdown definition without a closed `---` front matter block")


DEF_FRONT_MATTER_LENIENT = DiagnosticKind(
    "DEF-FRONT-MATTER-LENIENT", "DEF-02", W, E,
    "front matter is not valid YAML; recovered as flat `key: text` lines")


DEF_MISSING_KEY = DiagnosticKind(
    "DEF-MISSING-KEY", "DEF-01", W, E, "a required key (name, description) is missing")


DEF_BAD_NAME = DiagnosticKind(
    "DEF-BAD-NAME", "DEF-01", W, E,
    "the name is not 1-64 letters, digits, `-` and `_` (any script; NFC; no control, bidi "
    "or invisible characters; no mixed scripts)")


DEF_TYPE = DiagnosticKind(
    "DEF-TYPE", "DEF-03", W, E, "a value has the wrong type; it is not used")


DEF_DUPLICATE_KEY = DiagnosticKind(
    "DEF-DUPLICATE-KEY", "DEF-03", W, E, "a mapping key appears twice; the first is kept")


DEF_UNKNOWN_KEY = DiagnosticKind(
    "DEF-UNKNOWN-KEY", "DEF-06", W, W, "a key this spec does not define; kept verbatim")


DEF_MISSPELLED_KEY = DiagnosticKind(
    "DEF-MISSPELLED-KEY", "DEF-04", W, E,
    "an unknown key close to a capability key; it grants nothing as written")


DEF_FOREIGN_KEY = DiagnosticKind(
    "DEF-FOREIGN-KEY", "DEF-06", INFO, INFO,
    "a key other runtimes define (model, color); kept verbatim, not interpreted")


DEF_EMPTY_ENTRY = DiagnosticKind(
    "DEF-EMPTY-ENTRY", "DEF-06", W, W, "an empty entry in a name list")


DEF_BODY_CONFLICT = DiagnosticKind(
    "DEF-BODY-CONFLICT", "DEF-01", W, E,
    "a Markdown definition also sets `prompt:`; the Markdown body is used")


DEF_EMPTY_BODY = DiagnosticKind(
    "DEF-EMPTY-BODY", "DEF-01", W, W, "the definition has no system-prompt body")


DEF_BAD_MEMORY_MODE = DiagnosticKind(
    "DEF-BAD-MEMORY-MODE", "MEM-01", W, E,
    "memory is not one of none, private, shared; treated as none")


DEF_BAD_KNOWLEDGE = DiagnosticKind(
    "DEF-BAD-KNOWLEDGE", "KB-01", W, E,
    "a knowledge entry is not a mapping with string `name` and `glob`")


DIAGNOSTIC_KINDS = (
    DEF_TOO_LARGE, DEF_ENCODING, DEF_YAML_SYNTAX, DEF_YAML_ALIAS, DEF_YAML_TOO_DEEP,
    DEF_YAML_TOO_COMPLEX, DEF_YAML_COMPLEX_KEY, DEF_NOT_A_MAPPING, DEF_NO_FRONT_MATTER,
    DEF_FRONT_MATTER_LENIENT, DEF_MISSING_KEY, DEF_BAD_NAME, DEF_TYPE, DEF_DUPLICATE_KEY,
    DEF_UNKNOWN_KEY, DEF_MISSPELLED_KEY, DEF_FOREIGN_KEY, DEF_EMPTY_ENTRY, DEF_BODY_CONFLICT,
    DEF_EMPTY_BODY, DEF_BAD_MEMORY_MODE,
    DEF_BAD_KNOWLEDGE,
)


_SOURCE_ERRORS: dict[str, DiagnosticKind] = {
    "TOO-LARGE": DEF_TOO_LARGE,
    "ENCODING": DEF_ENCODING,
    "YAML-SYNTAX": DEF_YAML_SYNTAX,
    "YAML-CHARACTER": DEF_YAML_SYNTAX,  # not recovered leniently: the character stays bad
    "YAML-ALIAS": DEF_YAML_ALIAS,
    "YAML-TOO-DEEP": DEF_YAML_TOO_DEEP,
    "YAML-TOO-COMPLEX": DEF_YAML_TOO_COMPLEX,
    "YAML-COMPLEX-KEY": DEF_YAML_COMPLEX_KEY,
}


@dataclass(frozen=True)
class ParseOutcome:
    definition: Definition | None
    diagnostics: tuple[Diagnostic, ...]


def detect_format(text: str, filename: str | None) -> SourceFormat:
    """By extension when there is one; otherwise Markdown iff the text opens with a
    `---` line and a later `---` line closes the front matter."""
    if filename:
        lower = filename.lower()
        if lower.endswith((".md", ".markdown")):
            return SourceFormat.MARKDOWN
        if lower.endswith((".yaml", ".yml")):
            return SourceFormat.YAML
    lines = text.split("\n")
    if lines and lines[0].rstrip() == "---" and any(ln.rstrip() == "---" for ln in lines[1:]):
        return SourceFormat.MARKDOWN
    return SourceFormat.YAML


class _Builder:
    """Accumulates diagnostics while reading one document's mapping."""

    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.diagnostics: list[Diagnostic] = []

    def add(self, kind: DiagnosticKind, message: str, loc: Location | None = None) -> None:
        self.diagnostics.append(diagnose(kind, self.mode, message, loc))

    # --- scalars -----------------------------------------------------------------
    def string(self, key: str, node: LNode) -> str | None:
        if isinstance(node, LScalar) and node.tag.endswith(":null"):
            return None
        if isinstance(node, LScalar) and isinstance(node.value, str):
            return node.value
        if isinstance(node, LScalar) and node.tag.endswith((":int", ":float", ":bool")):
            # YAML 1.1 implicit typing: `name: 2024` or `name: yes` is text to a person.
            return node.text
        self.add(DEF_TYPE, f"`{key}` must be a string, not a {_kind(node)}. "
                 f"Write `{key}: some text`.", location((key,), node))
        return None

    # --- name lists ----------------------------------------------------------------
    def name_list(self, path: tuple[PathItem, ...], node: LNode) -> tuple[NameRef, ...] | None:
        """A YAML list of names, or one comma-separated string (the form most runtimes
        accept for `tools`)."""
        label = ".".join(str(p) for p in path)
        if isinstance(node, LScalar) and node.tag.endswith(":null"):
            return ()
        refs: list[NameRef] = []
        if isinstance(node, LScalar):
            # Names are text: `tools: 5` or `tools: yes` is the name `5` or `yes` (as YAML
            # 1.2 reads `yes`), never a type error that depends on the YAML version.
            for index, (name, line, col) in enumerate(_comma_entries(node)):
                loc = Location((*path, index), line, col)
                if not name:
                    self.add(DEF_EMPTY_ENTRY, f"entry {index} of `{label}` is empty. "
                             "Remove the extra comma.", loc)
                    continue
                refs.append(NameRef(name, loc))
            return tuple(refs)
        if isinstance(node, LMap):
            self.add(DEF_TYPE, f"`{label}` must be a list of names, not a mapping. "
                     f"Write `{label}: [a, b]`.", location(path, node))
            return None
        for index, item in enumerate(node.items):
            loc = location((*path, index), item)
            if isinstance(item, LScalar):
                # A null entry (`-` alone, `~`, `null`) is an empty entry, like `Read,,Write`.
                name = "" if item.tag.endswith(":null") else item.text.strip(" \t")
                if not name:
                    self.add(DEF_EMPTY_ENTRY, f"entry {index} of `{label}` is empty. "
                             "Remove it.", loc)
                    continue
                refs.append(NameRef(name, loc))
            else:
                self.add(DEF_TYPE, f"entry {index} of `{label}` must be a name, not a "
                         f"{_kind(item)}; it is not used. Write the name as plain text.", loc)
        return tuple(refs)

    # --- capability values -------------------------------------------------------------
    def mcp(self, node: LNode) -> tuple[NameRef, ...] | None:
        if isinstance(node, LScalar) and node.tag.endswith(":null"):
            return ()
        if not isinstance(node, LMap):
            self.add(DEF_TYPE, "`mcp` must be a mapping with a `servers` list. "
                     "Write `mcp: {servers: [name]}`.", location(("mcp",), node))
            return None
        servers: tuple[NameRef, ...] | None = ()
        for key, value in node.items:
            if key.text == "servers":
                servers = self.name_list(("mcp", "servers"), value)
            else:
                self.add(DEF_UNKNOWN_KEY, f"`mcp.{key.text}` is not defined; only "
                         "`mcp.servers` is. It is kept verbatim and has no effect.",
                         location(("mcp", key.text), key))
        self._duplicates(("mcp",), node)
        return servers

    def knowledge(self, node: LNode) -> tuple[KnowledgeDeclaration, ...] | None:
        if isinstance(node, LScalar) and node.tag.endswith(":null"):
            return ()
        if not isinstance(node, LSeq):
            self.add(DEF_TYPE, "`knowledge` must be a list of {name, glob} entries.",
                     location(("knowledge",), node))
            return None
        out: list[KnowledgeDeclaration] = []
        for index, item in enumerate(node.items):
            path: tuple[PathItem, ...] = ("knowledge", index)
            fields: dict[str, LScalar] = {}
            if isinstance(item, LMap):
                for key, value in item.items:
                    if key.text in ("name", "glob") and isinstance(value, LScalar) and \
                            not value.tag.endswith(":null") and value.text.strip():
                        fields[key.text] = value  # names are text: `name: 2024` is "2024"
                    elif key.text not in ("name", "glob"):
                        self.add(DEF_UNKNOWN_KEY, f"`knowledge[{index}].{key.text}` is not "
                                 "defined (a source has `name` and `glob`); ignored.",
                                 location((*path, key.text), key))
            if isinstance(item, LMap):
                self._duplicates(path, item)
            if set(fields) != {"name", "glob"}:
                missing = sorted({"name", "glob"} - set(fields))
                self.add(DEF_BAD_KNOWLEDGE, f"knowledge entry {index} needs a string "
                         f"{' and '.join(f'`{m}`' for m in missing)}; it is not used. Write "
                         "`- {name: handbook, glob: ./docs/**/*.md}`.", location(path, item))
                continue
            name = fields["name"].text.strip()
            out.append(KnowledgeDeclaration(name, fields["glob"].text,
                                            location(path, item)))
        return tuple(out)

    def memory(self, node: LNode) -> MemoryMode | None:
        if isinstance(node, LScalar) and node.tag.endswith(":null"):
            return None
        text = node.text.strip().lower() if isinstance(node, LScalar) else None
        modes = {m.value: m for m in MemoryMode}
        if text in modes:
            return modes[text]
        shown = node.text if isinstance(node, LScalar) else _kind(node)
        self.add(DEF_BAD_MEMORY_MODE, f"memory `{shown}` is not a mode; it is treated as "
                 "`none`. Write `memory: none`, `memory: private` (recommended) or "
                 "`memory: shared`.", location(("memory",), node))
        return None

    def _duplicates(self, path: tuple[PathItem, ...], node: LMap) -> None:
        for key in node.duplicates:
            self.add(DEF_DUPLICATE_KEY, f"`{'.'.join(map(str, (*path, key.text)))}` appears "
                     "more than once; the first value is used. Remove the repeat.",
                     location((*path, key.text), key))


def _kind(node: LNode) -> str:
    if isinstance(node, LMap):
        return "mapping"
    if isinstance(node, LSeq):
        return "list"
    if node.tag.endswith(":null"):
        return "null"
    return type(node.value).__name__ if not isinstance(node.value, str) else "string"


def _comma_entries(node: LScalar) -> list[tuple[str, int, int]]:
    """(name, line, column) of each entry of a comma-separated string (SPEC DEF-03).

    Entries are trimmed of spaces, tabs and line breaks, so a folded or literal block
    (`tools: >` with one name per line) gives `read`, not `read\n`. Each name is located
    where it is written: it is searched for in the scalar's source text after the
    previous entry, so quotes, block indentation and line breaks are accounted for. A
    name that cannot be found as written (it was spelled with escapes) is located at
    the scalar itself; an empty entry where its text would start.
    """
    raw = node.raw
    out: list[tuple[str, int, int]] = []
    # where the text starts: after an opening quote, or on the line after `|` / `>`
    cursor = (1 if node.style in ("'", '"') else raw.find("\n") + 1 if node.style in ("|", ">")
              else 0)
    for index, (piece, _) in enumerate(split_names(node.text)):
        name = piece.strip(" \t\n")
        if index and raw:
            comma = raw.find(",", cursor)
            cursor = comma + 1 if comma >= 0 else len(raw)
        if not raw:
            found = -1
        elif name:
            found = raw.find(name, cursor)
        else:
            found = len(raw) - len(raw[cursor:].lstrip(" \t\n"))
        if found < 0:
            out.append((name, node.mark.line, node.mark.column))
            continue
        cursor = found + len(name)
        before = raw[:found]
        breaks = before.count("\n")
        column = (node.mark.column + found if not breaks
                  else found - before.rfind("\n"))
        out.append((name, node.mark.line + breaks, column))
    return out


def _split_front_matter(text: str) -> tuple[str, str, int] | None:
    """(front matter, body, line number of the first front-matter line) or None."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1:]), 2
    return None


def parse_definition(
    source: str | bytes,
    mode: Mode = Mode.PARSE,
    fmt: SourceFormat | None = None,
    filename: str | None = None,
) -> ParseOutcome:
    builder = _Builder(mode)

    def fatal(kind: DiagnosticKind, message: str, line: int | None = None,
              column: int | None = None) -> ParseOutcome:
        builder.add(kind, message, Location((), line, column))
        return ParseOutcome(None, tuple(builder.diagnostics))

    try:
        if isinstance(source, bytes):
            text = decode_source(source)
        else:
            check_text_size(source)
            text = normalize_newlines(source.removeprefix("\ufeff"))
    except SourceError as exc:
        return fatal(_SOURCE_ERRORS[exc.kind], exc.message, exc.line, exc.column)

    fmt = fmt or detect_format(text, filename)
    body_text: str | None = None
    line_offset = 0
    yaml_text = text
    if fmt is SourceFormat.MARKDOWN:
        split = _split_front_matter(text)
        if split is None:
            return fatal(DEF_NO_FRONT_MATTER, "a Markdown definition must open with a `---` "
                         "line, then YAML keys, then a closing `---` line, then the body.", 1, 1)
        yaml_text, body_text, first = split
        line_offset = first - 1

    try:
        root, nodes = load_yaml_counted(yaml_text, line_offset)
        if isinstance(root, LMap):
            check_entry_budget(nodes, _comma_strings(root))
    except SourceError as exc:
        recovered = None
        if fmt is SourceFormat.MARKDOWN and exc.kind == "YAML-SYNTAX":
            recovered = load_lenient_front_matter(yaml_text, line_offset)
        if recovered is None:
            return fatal(_SOURCE_ERRORS[exc.kind], exc.message, exc.line, exc.column)
        builder.add(DEF_FRONT_MATTER_LENIENT,
                    f"the front matter is not valid YAML: {exc.problem}. It was read line by "
                    "line as `key: text` instead; quote the value (e.g. `description: "
                    "\"...\"`) to make it valid YAML.",
                    Location((), exc.line, exc.column))
        root = recovered

    if root is None:
        root = LMap((), _zero_mark(line_offset))
    if not isinstance(root, LMap):
        where = "front matter" if body_text is not None else "document"
        return fatal(DEF_NOT_A_MAPPING, f"the {where} "
                     f"must be a mapping of keys (name, description, tools, ...), not a "
                     f"{_kind(root)}.", root.mark.line, root.mark.column)
    return ParseOutcome(_read_mapping(builder, root, fmt, body_text), tuple(builder.diagnostics))


def _comma_strings(root: LMap) -> list[LScalar]:
    """The string values that ``name_list`` splits on commas (`tools`, `skills`,
    `mcp.servers`), in document order."""
    found: list[LScalar] = []
    for key, value in root.items:
        if key.text == "mcp" and isinstance(value, LMap):
            found += [v for k, v in value.items if k.text == "servers" and isinstance(v, LScalar)
                      and isinstance(v.value, str)]
        elif key.text in ("tools", "skills") and isinstance(value, LScalar) and isinstance(
                value.value, str):
            found.append(value)
    return found


def _zero_mark(line_offset: int) -> Any:
    from capconf.simulator.definition.yamlsource import Mark

    return Mark(1 + line_offset, 1)


def _read_mapping(builder: _Builder, root: LMap, fmt: SourceFormat,
                  body_text: str | None) -> Definition:
    values: dict[str, LNode] = {}
    keys: dict[str, LScalar] = {}
    extra: list[tuple[str, Any]] = []
    for key, value in root.items:
        key_text = key.text
        loc = location((key_text,), key)
        if key_text in KNOWN_KEYS:
            values[key_text] = value
            keys[key_text] = key
        elif key_text in FOREIGN_KEYS:
            extra.append((key_text, plain(value)))
            builder.add(DEF_FOREIGN_KEY, f"`{key_text}` is defined by other runtimes, not by "
                        "this spec; it is kept verbatim and not interpreted.", loc)
        else:
            extra.append((key_text, plain(value)))
            close = near_miss(key_text)
            if close:
                target = "mcp.servers" if "server" in close[0] else close[0]
                builder.add(DEF_MISSPELLED_KEY, f"`{key_text}` is not a key of this spec, so it "
                            f"grants nothing. Did you mean `{target}`? Rename it.", loc)
            else:
                builder.add(DEF_UNKNOWN_KEY, f"`{key_text}` is not a key of this spec; it is "
                            "kept verbatim and has no effect. Remove it if it is a mistake.", loc)
    builder._duplicates((), root)

    name = builder.string("name", values["name"]) if "name" in values else None
    description = (builder.string("description", values["description"])
                   if "description" in values else None)
    for key_name, value_text in (("name", name), ("description", description)):
        node = values.get(key_name)
        is_null = isinstance(node, LScalar) and node.tag.endswith(":null")
        mistyped = node is not None and value_text is None and not is_null
        if not mistyped and (value_text is None or not value_text.strip()):
            where = "front matter" if body_text is not None else "document"
            builder.add(DEF_MISSING_KEY, f"`{key_name}` is missing or empty. Add "
                        f"`{key_name}: ...` to the {where}.",
                        location((key_name,), keys.get(key_name) or root))
    problem = name_problem(name) if name is not None and name.strip() else None
    if name is not None and problem is not None:
        builder.add(DEF_BAD_NAME, f"name {name!r}: {problem}. A name is 1-64 letters, digits "
                    "(any script, NFC, one script or Latin with CJK), `-` and `_`, starting "
                    f"with a letter or digit. Rename it, e.g. `{_suggest_name(name)}`.",
                    location(("name",), values["name"]))

    if body_text is not None:
        body = normalize_body(body_text)
        if "prompt" in values:
            builder.add(DEF_BODY_CONFLICT, "a Markdown definition takes its system prompt from "
                        "the body after the front matter; the `prompt` key is ignored. Move its "
                        "text into the body and remove the key.",
                        location(("prompt",), keys["prompt"]))
            extra.append(("prompt", plain(values["prompt"])))
    else:
        raw = builder.string("prompt", values["prompt"]) if "prompt" in values else None
        body = normalize_body(raw or "")
    if not body:
        builder.add(DEF_EMPTY_BODY, "the definition has no system-prompt body, so the subagent "
                    "gets only the frame. Write its instructions in "
                    f"{'the body' if body_text is not None else '`prompt: |`'}.",
                    location(("prompt",) if body_text is None else (), keys.get("prompt") or root))

    tools = builder.name_list(("tools",), values["tools"]) if "tools" in values else None
    skills = builder.name_list(("skills",), values["skills"]) if "skills" in values else None
    mcp = builder.mcp(values["mcp"]) if "mcp" in values else None
    knowledge = builder.knowledge(values["knowledge"]) if "knowledge" in values else None
    memory = builder.memory(values["memory"]) if "memory" in values else None
    memory_location = location(("memory",), values["memory"]) if "memory" in values else None
    return Definition(fmt, name, description, body, tools, skills, mcp, knowledge, memory,
                      tuple(extra), memory_location)


def _suggest_name(name: str) -> str:
    """A valid name close to ``name``: compatibility forms folded (NFKC), invisible and
    control characters dropped, every other non-name character a `-`."""
    out: list[str] = []
    for char in unicodedata.normalize("NFKC", name):
        if unicode_reason(char, "-_") in ("control", "bidi", "invisible"):
            continue
        keep = unicode_reason(char, "-_") in (None, "leading", "mixed_script")
        out.append(ascii_fold(char) if keep else "-")
    slug = re.sub(r"-{2,}", "-", "".join(out)).strip("-_")[:64].strip("-_")
    if slug and name_reason(slug) is None:
        return slug
    ascii_slug = re.sub(r"[^a-z0-9]+", "-", ascii_fold(name)).strip("-")[:64].strip("-")
    return ascii_slug or "my-agent"
