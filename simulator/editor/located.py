"""The normalised text of a definition and its located top-level mapping: where each
field's text starts and ends, in offsets of that text, so a splice replaces exactly that;
a shape it cannot locate safely is refused, never guessed."""

from __future__ import annotations

from capconf.simulator.definition.document import KNOWN_KEYS, Definition, SourceFormat
from capconf.simulator.definition.yamlsource import LMap, LNode, LScalar, LSeq, Mark, load_yaml
from capconf.simulator.editor.form import Refusal, RefusalCode
from capconf.simulator.editor.text import Splice, line_end, line_start, trim_trailing_space


class RefusedEdit(Exception):
    def __init__(self, code: RefusalCode, message: str, mark: Mark | None = None) -> None:
        super().__init__(message)
        self.refusal = Refusal(code, message, mark.line if mark else None,
                               mark.column if mark else None)


def unsafe(message: str, node: LNode | None = None) -> RefusedEdit:
    return RefusedEdit(RefusalCode.UNSAFE, message, node.mark if node is not None else None)


_EMPTY_MAP = LMap((), Mark(1, 1))


class LocatedDoc:
    """The normalised text and its located top-level mapping, offsets in that text."""

    def __init__(self, text: str, definition: Definition) -> None:
        self.text = text
        self.definition = definition
        self.markdown = definition.format is SourceFormat.MARKDOWN
        if self.markdown:
            lines = text.split("\n")
            # the parser's own rule for the closing line (document._split_front_matter)
            close = next(i for i in range(1, len(lines))
                         if lines[i].rstrip() in ("---", "..."))
            self.base = len(lines[0]) + 1
            yaml_text = "\n".join(lines[1:close])
            self.fence = self.base + (len(yaml_text) + 1 if close > 1 else 0)
            root = load_yaml(yaml_text, 1)
        else:
            self.base = 0
            self.fence = len(text)
            root = load_yaml(text, 0)
        if root is None:
            root = _EMPTY_MAP
        if not isinstance(root, LMap):
            raise unsafe("the document is not a block mapping")
        if root.flow:
            raise unsafe("the document is a flow mapping `{...}`; edit it by hand", root)
        self.root = root

    # offsets -----------------------------------------------------------------------
    def start(self, node: LNode) -> int:
        return self.base + node.start

    def end(self, node: LNode) -> int:
        return self.base + node.end

    def content_end(self, node: LNode) -> int:
        """Where a value's own text ends: block collections and block scalars carry the
        trailing blank and comment lines in PyYAML's end mark; those are not theirs."""
        if isinstance(node, LScalar):
            if node.style in ("|", ">"):
                return trim_trailing_space(self.text, self.start(node), self.end(node))
            return self.end(node)
        if node.flow or not node.items:
            return self.end(node)
        last = node.items[-1]
        return self.content_end(last[1] if isinstance(last, tuple) else last)

    def entry_end(self, key: LScalar, value: LNode) -> int:
        return line_end(self.text, max(self.content_end(value) - 1, self.start(key)))

    def column(self, node: LNode) -> int:
        return node.mark.column - 1

    # style -------------------------------------------------------------------------
    def block_lists(self) -> bool:
        """New lists follow the document: block style if it already has a block list."""
        for _, value in self.root.items:
            nodes = [value]
            if isinstance(value, LMap):
                nodes += [v for _, v in value.items]
            if any(isinstance(n, LSeq) and not n.flow and n.items for n in nodes):
                return True
        return False

    def units(self) -> tuple[int, int]:
        """(indent of a nested mapping, indent of `-` under its key), from the document."""
        mapping, seq = 2, 2
        for key, value in self.root.items:
            if isinstance(value, LMap) and not value.flow and value.items:
                mapping = max(1, self.column(value.items[0][0]) - self.column(key))
                break
        for key, value in self.root.items:
            if isinstance(value, LSeq) and not value.flow and value.items:
                item = value.items[0]
                start = line_start(self.text, self.start(item))
                dash = len(self.text[start:self.start(item)]) - len(
                    self.text[start:self.start(item)].lstrip(" "))
                seq = max(0, dash - self.column(key))
                break
        return mapping, seq

    def key_indent(self) -> str:
        if self.root.items:
            return " " * self.column(self.root.items[0][0])
        return ""

    def entry(self, mapping: LMap, name: str) -> tuple[LScalar, LNode] | None:
        return next(((k, v) for k, v in mapping.items if k.text == name), None)

    # positions ---------------------------------------------------------------------
    def insert_point(self, key: str) -> int:
        """Where a missing top-level key goes: after the nearest known key before it in
        the DEF-01 order, else before the nearest after it, else after the last key."""
        order = KNOWN_KEYS.index(key)
        present = {k.text: (k, v) for k, v in self.root.items}
        for before in reversed(KNOWN_KEYS[:order]):
            if before in present:
                return self.entry_end(*present[before])
        for after in KNOWN_KEYS[order + 1:]:
            if after in present:
                return line_start(self.text, self.start(present[after][0]))
        if self.root.items:
            k, v = self.root.items[-1]
            return self.entry_end(k, v)
        return self.fence

    def insertion(self, at: int, lines: str) -> Splice:
        if at > 0 and self.text[at - 1] != "\n":
            lines = "\n" + lines.removesuffix("\n")
        return Splice(at, at, lines)

    def delete_entry(self, key: LScalar, value: LNode) -> Splice:
        start = line_start(self.text, self.start(key))
        if self.text[start:self.start(key)].strip():
            raise unsafe(f"`{key.text}` does not start its own line", key)
        return Splice(start, self.entry_end(key, value), "")

    def after_colon(self, key: LScalar, value: LScalar) -> int:
        """An empty value's offset is just after its key's colon; check it is."""
        at = self.start(value)
        if self.text[at - 1:at] != ":":
            raise unsafe(f"cannot find the `:` after `{key.text}`", key)
        return at
