"""An adapter's findings (``findings.toml``) and the baseline notes that point at them.

Why a module of its own: the same grammar is read by ``make_report.py`` (which groups the
failing cases by finding) and by ``tests/project/test_adapter_contract.py`` (which refuses
an adapter whose baseline cites a finding that does not exist, or whose finding lacks its
reproduction or evidence). One reader, so the report and the check cannot disagree.

A baseline entry's note (the text after ``#``; ADAPTER-CONTRACT / adapters/README.md)::

    kind a [fifo-read-freezes]: read_file on a FIFO never answers ...
    kind gap [taskstop-needs-one-session]: the child to stop no longer exists ...

A finding (``[findings.<id>]`` in findings.toml) has the fields of ``Finding``; kind a
needs ``repro`` and, when ``issue = "new"``, a draft; kind b needs ``evidence``.

Kind ``gap`` is not a finding about the runtime but an *adapter gap*: the case fails
because the adapter cannot yet translate or observe a mechanism the runtime has, so
capconf did not judge the runtime there. Its table says which rule went unjudged, what
the adapter lacks (``missing``) and what would close it (``plan``), and nothing a runtime
finding says (no expected/actual, severity, issue, repro or evidence: a gap claims no
runtime behaviour). The reports list gaps apart from the findings and never count them
as the runtime's.
Pure functions; the only I/O is ``load`` reading one file.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

FINDING_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NOTE = re.compile(r"^\s*kind\s+(?P<kind>gap|a|b)\s+\[(?P<id>[^\]]*)\]\s*:\s*(?P<text>.*)$",
                  re.DOTALL)
ISSUE_URL = re.compile(r"^https://[^\s<>\"'`]+/(?:issues|pull)/\d+$")
GAP = "gap"
RUNTIME_KINDS = {"a": "runtime bug", "b": "the runtime's different design"}
KINDS = {**RUNTIME_KINDS, GAP: "adapter gap: the runtime was not judged"}
SEVERITIES = ("high", "medium", "low")
REQUIRED = ("kind", "title", "rule", "expected", "actual", "severity", "issue")
OPTIONAL = ("draft_title", "draft_body", "repro", "evidence")
GAP_REQUIRED = ("kind", "title", "rule", "missing", "plan")
# a note of kind a|b that opens so is an adapter gap said the old way (adapters/README §5)
GAP_PREFIX = re.compile(r"^\s*\(?\s*adapter gap\b", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    """One distinct finding: many baseline entries may cite it, or none (unreached).
    Kind ``gap`` (an adapter gap) fills ``title``, ``rule``, ``missing`` and ``plan``
    only; kinds a and b leave ``missing`` and ``plan`` empty."""

    id: str
    kind: str
    title: str
    rule: str
    expected: str = ""
    actual: str = ""
    severity: str = ""
    issue: str = ""  # a URL, or "new"
    draft_title: str = ""
    draft_body: str = ""
    repro: str = ""
    evidence: str = ""
    missing: str = ""  # gap: what the adapter lacks
    plan: str = ""  # gap: what would close it

    @property
    def filed(self) -> bool:
        return self.issue != "new"

    @property
    def is_gap(self) -> bool:
        """An adapter gap: a claim about the adapter, never about the runtime."""
        return self.kind == GAP


@dataclass(frozen=True)
class Note:
    """A baseline note parsed: ``kind`` a|b|gap, the cited finding ``id`` and free
    ``text``."""

    kind: str
    id: str
    text: str


class FindingsError(Exception):
    """findings.toml cannot be read at all (the message names the file)."""


def parse_note(note: str) -> Note | None:
    """The note of a cause-pinned entry, or None when it is not `kind a|b|gap [id]:
    text`."""
    match = NOTE.match(note)
    if not match or not FINDING_ID.match(match["id"]):
        return None
    return Note(match["kind"], match["id"], match["text"].strip())


def load(path: Path) -> dict[str, dict[str, object]]:
    """The raw ``[findings.*]`` tables (schema checked by ``problems``, built by ``build``)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise FindingsError(f"{path}: cannot read ({exc})") from None
    table = data.get("findings", {})
    if not isinstance(table, dict) or set(data) - {"findings"}:
        raise FindingsError(f"{path}: expected only [findings.<id>] tables")
    return {str(k): v if isinstance(v, dict) else {} for k, v in table.items()}


def problems(raw: dict[str, dict[str, object]], adapter: Path) -> list[str]:
    """Every way the tables break the contract's schema (empty: they keep it)."""
    out: list[str] = []
    for fid, row in raw.items():
        where = f"findings.{fid}"
        if not FINDING_ID.match(fid):
            out.append(f"{where}: id is not lowercase-hyphenated")
        if row.get("kind") == GAP:
            out += _gap_problems(where, row)
            continue
        for key in REQUIRED:
            if not isinstance(row.get(key), str) or not str(row.get(key)).strip():
                out.append(f"{where}: `{key}` missing or empty")
        for key in set(row) - set(REQUIRED) - set(OPTIONAL):
            out.append(f"{where}: unknown key `{key}`")
        for key in OPTIONAL:
            if key in row and not isinstance(row[key], str):
                out.append(f"{where}: `{key}` is not a string")
        kind, issue = row.get("kind"), row.get("issue")
        if kind not in KINDS:
            out.append(f"{where}: kind is not \"a\", \"b\" or \"gap\"")
        if row.get("severity") not in SEVERITIES:
            out.append(f"{where}: severity is not one of {', '.join(SEVERITIES)}")
        if isinstance(issue, str) and issue != "new" and not ISSUE_URL.match(issue):
            out.append(f"{where}: issue is neither \"new\" nor an https issue/PR URL")
        if kind == "a":
            repro = row.get("repro")
            if not isinstance(repro, str) or not repro.strip():
                out.append(f"{where}: kind a without `repro`")
            elif not _inside(adapter, repro) or not (adapter / repro).is_file():
                out.append(f"{where}: repro `{repro}` is not a file under the adapter")
            if issue == "new" and not (str(row.get("draft_title", "")).strip()
                                       and str(row.get("draft_body", "")).strip()):
                out.append(f"{where}: issue = \"new\" without draft_title and draft_body")
        if kind == "b" and not str(row.get("evidence", "")).strip():
            out.append(f"{where}: kind b without `evidence`")
    return out


def _gap_problems(where: str, row: dict[str, object]) -> list[str]:
    """A gap table: exactly title, rule, missing and plan, each non-empty text; a field
    of a runtime finding is refused (a gap claims no runtime behaviour)."""
    out = [f"{where}: kind gap without `{key}`" for key in GAP_REQUIRED
           if not isinstance(row.get(key), str) or not str(row.get(key)).strip()]
    for key in sorted(set(row) - set(GAP_REQUIRED)):
        if key in REQUIRED or key in OPTIONAL:
            out.append(f"{where}: `{key}` is not a field of an adapter gap (a gap claims "
                       "nothing about the runtime: no expected/actual, severity, issue, "
                       "repro or evidence)")
        else:
            out.append(f"{where}: unknown key `{key}`")
    return out


def build(raw: dict[str, dict[str, object]]) -> dict[str, Finding]:
    """Findings (and gaps) from tables that passed ``problems`` (missing text reads as
    empty)."""
    fields = REQUIRED + OPTIONAL + ("missing", "plan")
    return {fid: Finding(id=fid, **{k: str(row.get(k, "")) for k in fields})
            for fid, row in sorted(raw.items())}


def locate(path: Path) -> dict[str, int]:
    """Finding id -> the line of its ``[findings.<id>]`` header in ``path`` (for
    messages that say where a table is); ids written otherwise are left out."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    header = re.compile(r"^\s*\[\s*findings\s*\.\s*\"?([A-Za-z0-9_-]+)\"?\s*\]")
    out: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = header.match(line)
        if match:
            out.setdefault(match.group(1), number)
    return out


def read(adapter: Path) -> dict[str, Finding]:
    """An adapter folder's findings; an absent findings.toml is none."""
    path = adapter / "findings.toml"
    return build(load(path)) if path.is_file() else {}


def _inside(root: Path, rel: str) -> bool:
    target = (root / rel).resolve()
    return target.is_relative_to(root.resolve())
