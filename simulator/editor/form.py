"""What a form edit is and what it answers (EDIT-02, EDIT-03): the fields a settings form
can change, the edit itself, and the outcome: the new text, or a located refusal with
its code."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from capconf.simulator.editor.text import Splice


class EditField(StrEnum):
    NAME = "name"
    DESCRIPTION = "description"
    TOOLS = "tools"
    SKILLS = "skills"
    MCP_SERVERS = "mcp.servers"
    KNOWLEDGE = "knowledge"
    MEMORY = "memory"
    BODY = "body"


NAME_LIST_FIELDS = (EditField.TOOLS, EditField.SKILLS, EditField.MCP_SERVERS)


# Fields whose key may be removed (value null): absence means "not declared".
UNSETTABLE = (*NAME_LIST_FIELDS, EditField.KNOWLEDGE, EditField.MEMORY)


# Fields with entries that `remove` (by the entry's index in its path) can take out.
REMOVABLE = (*NAME_LIST_FIELDS, EditField.KNOWLEDGE)


MEMORY_MODES = ("none", "private", "shared")


class RefusalCode(StrEnum):
    UNREADABLE = "document_unreadable"  # the document does not load at all
    NOT_STRICT_YAML = "not_strict_yaml"  # front matter recovered leniently (DEF-02)
    NO_SUCH_ENTRY = "no_such_entry"  # `remove` names an index the field does not have
    UNSAFE = "unsafe_splice"  # the text cannot be changed without touching other text


# (code, when) -- the SPEC table of refusals.
REFUSAL_TABLE: tuple[tuple[str, str], ...] = (
    (RefusalCode.UNREADABLE, "the document does not load (`loaded: false` in a parse)"),
    (RefusalCode.NOT_STRICT_YAML,
     "the front matter is not valid YAML and was read leniently (DEF-02)"),
    (RefusalCode.NO_SUCH_ENTRY, "`remove` names an entry index the field does not have"),
    (RefusalCode.UNSAFE, "the field's text cannot be replaced without changing other text, "
     "or the result would not read back as the edit promised"),
)


@dataclass(frozen=True)
class FormEdit:
    """Set one field (``value``; null removes an optional key) or remove the entry at
    index ``remove`` of a list field."""

    field: EditField
    value: Any = None
    remove: int | None = None


@dataclass(frozen=True)
class Refusal:
    code: RefusalCode
    message: str
    line: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"code": str(self.code), "message": self.message, "line": self.line,
                "column": self.column}


@dataclass(frozen=True)
class EditOutcome:
    document: str | None
    splices: tuple[Splice, ...]  # in offsets of the original text
    refusal: Refusal | None = None
