"""SPEC.md's outline: its headings and their anchors, the Contents and the reading paths.

SPEC.md is one long document; a reader enters it through the Contents (every section and
requirement, linked) and through a reading path (the parts a runtime that declares some
feature groups must read, with their word counts). Both are generated from the document
itself, so they cannot drift from it: ``python -m capconf.simulator.spec_tables --write
SPEC.md`` rewrites them with the code tables, and tests/project/test_spec_outline.py checks
them.

Every heading carries an explicit anchor on the line before it, ``<a id="TOOL-02"></a>``:
a requirement's anchor is its ID, a numbered section's ``sec-4`` (``sec-1.1``), any other
heading's a slug of its title. An explicit anchor works the same on GitHub (which prefixes
ids but resolves ``#TOOL-02``) and in ``capconf spec --html``; a heading's own slug would
change with its title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ANCHOR = re.compile(r'^<a id="([A-Za-z0-9._-]+)"></a>$')
HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$")
REQUIREMENT = re.compile(r"^([A-Z]+-\d{2}) — (.+)$")
NUMBERED = re.compile(r"^(\d+[a-z]?(?:\.\d+)?)\.? ")
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Heading:
    level: int
    title: str
    anchor: str | None  # the explicit anchor on the line before, if any
    line: int  # 0-based index of the heading line
    words: int  # words of its own text, up to the next heading of any level

    @property
    def requirement(self) -> str | None:
        m = REQUIREMENT.match(self.title)
        return m.group(1) if m else None

    @property
    def number(self) -> str | None:
        m = NUMBERED.match(self.title)
        return m.group(1) if m and self.level <= 3 else None


def count_words(text: str) -> int:
    """Words as ``wc -w`` counts them: runs of non-whitespace."""
    return len(text.split())


def headings(text: str) -> list[Heading]:
    """Every heading outside a fenced code block (a prompt example's ``## Skills`` is
    code, not a section), with the words that follow it up to the next heading."""
    lines = text.split("\n")
    found: list[tuple[int, int, str, str | None]] = []
    fenced = False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            before = ANCHOR.match(lines[i - 1]) if i else None
            found.append((i, len(m.group(1)), m.group(2), before.group(1) if before else None))
    out: list[Heading] = []
    for k, (i, level, title, anchor) in enumerate(found):
        end = found[k + 1][0] if k + 1 < len(found) else len(lines)
        body = "\n".join(ln for ln in lines[i + 1:end] if not ANCHOR.match(ln)
                         and not ln.startswith("<!-- "))
        out.append(Heading(level, title, anchor, i, count_words(body)))
    return out


def slug(title: str) -> str:
    """A heading's anchor: a requirement's ID, ``sec-N`` for a numbered section, else the
    title in lower case with every run of other characters one hyphen."""
    m = REQUIREMENT.match(title)
    if m:
        return m.group(1)
    m = NUMBERED.match(title)
    if m:
        return "sec-" + m.group(1)
    return re.sub(r"[^a-z0-9]+", "-", title.lower().replace("`", "")).strip("-")


@dataclass(frozen=True)
class Part:
    """A unit of reading: a ``##`` section's own introduction, or a ``###`` heading with
    everything below it up to the next ``###`` or ``##``."""
    anchor: str
    title: str
    section: str  # the anchor of its ``##`` section
    words: int


def parts(text: str) -> list[Part]:
    out: list[Part] = []
    section = ""
    current: list[Heading] = []

    def flush() -> None:
        if current:
            h = current[0]
            out.append(Part(h.anchor or "", h.title, section, sum(c.words for c in current)))
            current.clear()

    for h in headings(text):
        if h.level == 1:
            continue
        if h.level <= 3:
            flush()
            if h.level == 2:
                section = h.anchor or ""
        current.append(h)
    flush()
    return out


# -- reading paths ----------------------------------------------------------------------
# What a runtime declaring a feature group must read, as anchors: a section anchor means
# all of that section, ``-anchor`` leaves a part out. Every runtime reads the core path.
CORE = ("sec-1", "-sec-1.1", "-sec-1.2", "sec-2")
PATHS: dict[str, tuple[str, ...]] = {
    "def": ("sec-3", "-editor", "-EDIT-01",
            "-EDIT-02", "-EDIT-03", "-EDIT-04",
            "-editor-non-goals",
            "sec-12"),
    "tool": ("sec-4", "sec-13"),
    "prompt": ("sec-5",),
    "editor": ("editor", "EDIT-01", "EDIT-02",
               "EDIT-03", "EDIT-04",
               "editor-non-goals"),
    "skills": ("sec-1.1", "sec-6"),
    "knowledge": ("sec-1.1", "sec-7", "skill-tools"),
    "mcp": ("sec-8",),
    "approval": ("sec-1.1", "sec-9"),
    "memory": ("sec-1.1", "sec-10"),
    "delegation": ("sec-10a",),
    "flow": ("sec-10b",),
    "namespaces": ("sec-11", "sec-11a"),
    "call": ("sec-11", "sec-11a"),
    "connectors": ("sec-11", "sec-11b"),
    "executors": ("sec-11", "sec-11c"),
}
# groups another group needs (a flow case runs delegation children, SPEC section 2)
NEEDS: dict[str, tuple[str, ...]] = {"flow": ("delegation",)}
# the paths the Reading paths table shows, beyond one row per group
COMBINED: tuple[tuple[str, ...], ...] = (("def", "tool", "prompt"),)


def reading_path(text: str, groups: tuple[str, ...]) -> list[Part]:
    """The parts, in document order, that a runtime declaring ``groups`` must read."""
    all_parts = parts(text)
    wanted = {name for name in CORE if not name.startswith("-")}
    dropped = {name[1:] for name in CORE if name.startswith("-")}
    todo = list(groups)
    seen: set[str] = set()
    while todo:
        group = todo.pop(0)
        if group in seen:
            continue
        seen.add(group)
        todo += NEEDS.get(group, ())
        for name in PATHS[group]:
            (dropped if name.startswith("-") else wanted).add(name.lstrip("-"))
    known = {p.anchor for p in all_parts} | {p.section for p in all_parts}
    unknown = (wanted | dropped) - known
    if unknown:
        raise KeyError(f"reading paths name anchors SPEC.md does not have: {sorted(unknown)}")
    # a part named by a group is read even when another group's path leaves it out
    return [p for p in all_parts
            if p.anchor in wanted or (p.section in wanted and p.anchor not in dropped)]


def _path_cell(path: list[Part]) -> str:
    """Sections read whole by their number; parts of a section by their anchor."""
    by_section: dict[str, list[Part]] = {}
    for p in path:
        by_section.setdefault(p.section, []).append(p)
    cells = []
    for section, chosen in by_section.items():
        label = section.removeprefix("sec-")
        whole = [p for p in _PARTS_CACHE if p.section == section]
        if len(chosen) == len(whole):
            cells.append(f"[{label}](#{section})")
        else:
            names = ", ".join(f"[{_short(p)}](#{p.anchor})" for p in chosen)
            cells.append(f"{label} ({names})")
    return " · ".join(cells)


def _short(part: Part) -> str:
    requirement = REQUIREMENT.match(part.title)
    if requirement:
        return requirement.group(1)
    if part.anchor == part.section:
        return "intro"
    m = NUMBERED.match(part.title)
    return m.group(1) if m else part.title.split(" (")[0].split(": ")[-1].replace("`", "")


_PARTS_CACHE: list[Part] = []


def reading_paths_table(text: str) -> str:
    _PARTS_CACHE[:] = parts(text)
    # the Contents and this table are not counted: they change with what they count
    total = sum(p.words for p in _PARTS_CACHE if p.section not in FRONT)
    rows = ["| a runtime that declares | reads | words |", "|---|---|---|"]
    core = reading_path(text, ())
    rows.append(f"| any group (`core`) | {_path_cell(core)} | {sum(p.words for p in core):,} |")
    for combo in (*COMBINED, *((g,) for g in PATHS)):
        path = reading_path(text, combo)
        names = " + ".join(f"`{g}`" for g in (*combo, *(n for g in combo
                                                         for n in NEEDS.get(g, ()))))
        rows.append(f"| {names} | {_path_cell(path)} | {sum(p.words for p in path):,} |")
    rows.append(f"| everything | sections 1-14 | {total:,} |")
    return "\n".join(rows)


# -- Contents -----------------------------------------------------------------------------


def contents(text: str) -> str:
    """One line per ``##`` section, its ``###`` parts and requirements linked after it."""
    lines: list[str] = []
    subs: list[str] = []

    def flush() -> None:
        if subs:
            lines[-1] += ": " + " · ".join(subs)
            subs.clear()

    for h in headings(text):
        if h.level == 2 and h.anchor in FRONT:
            continue
        if h.level == 2:
            flush()
            lines.append(f"- [{h.title}](#{h.anchor})")
        elif h.level in (3, 4) and lines:
            subs.append(f"[{_plain(h.title.replace(' — ', ' ', 1))}](#{h.anchor})")
    flush()
    return "\n".join(lines)


def _plain(label: str) -> str:
    """A link label without nested links or brackets that would end it early."""
    return label.replace("[", "(").replace("]", ")")


FRONT = ("contents", "reading-paths")
REGIONS = {"spec-contents": contents, "spec-reading-paths": reading_paths_table}
_REGION = re.compile(r"(<!-- BEGIN GENERATED: (?P<name>spec-[\w-]+) -->\n)(?P<body>.*?)"
                     r"(<!-- END GENERATED: (?P=name) -->)", re.S)


def regenerate_outline(text: str) -> str:
    """Rewrite the Contents and the reading paths from the document's own headings."""
    def replace(match: re.Match[str]) -> str:
        return match.group(1) + REGIONS[match.group("name")](text).rstrip("\n") + "\n" + \
            match.group(4)

    return _REGION.sub(replace, text)
