"""A skill package, parsed: the five discovery layers and their default provenance, the
two package forms (``skill.yaml`` or ``SKILL.md`` front matter), metadata, the body, and
every diagnostic kind of the skills dimension.

A definition's ``skills`` is an allow-list of names (SKILL-01). Each name is looked up in
five discovery layers, first layer wins (``discovery``, ``resolution``). The prompt gets
only name / description / location per visible skill (SKILL-04, ``catalog``); bodies and
references are read when use_skill asks (``use_skill``), and a reference can never leave
its skill's folder (SKILL-05, ``folder``). Parsing a package is pure over its file bytes;
discovery and use_skill are the thin disk edges.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

from capconf.simulator.core.diagnostics import DiagnosticKind, Severity
from capconf.simulator.core.names import trim_name
from capconf.simulator.core.unicode_names import file_name_problem
from capconf.simulator.skills.amendments import content_hash
from capconf.simulator.skills.flags import FlagProblem, select_sections

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


class SkillLayer(StrEnum):
    WORKSPACE = "workspace"
    ECOSYSTEM_WORKSPACE = "ecosystem-workspace"
    SYSTEM = "system"
    ECOSYSTEM_USER = "ecosystem-user"
    PLUGIN = "plugin"


class Provenance(StrEnum):
    SYSTEM = "system"
    LEARNED = "learned"
    USER = "user"


# SKILL-01: discovery order, first wins. Second column: the provenance a skill gets when
# its metadata does not say (SKILL-07): what ships with the product or a plugin is
# "system"; what sits in a workspace or the user's own ecosystem folder was put there by
# the user. "learned" is never assumed: only the skill's own metadata can claim it.
LAYER_TABLE: tuple[tuple[SkillLayer, Provenance], ...] = (
    (SkillLayer.WORKSPACE, Provenance.USER),
    (SkillLayer.ECOSYSTEM_WORKSPACE, Provenance.USER),
    (SkillLayer.SYSTEM, Provenance.SYSTEM),
    (SkillLayer.ECOSYSTEM_USER, Provenance.USER),
    (SkillLayer.PLUGIN, Provenance.SYSTEM),
)
LAYER_ORDER: tuple[SkillLayer, ...] = tuple(layer for layer, _ in LAYER_TABLE)
DEFAULT_PROVENANCE: dict[SkillLayer, Provenance] = dict(LAYER_TABLE)

SKILL_NOT_FOUND = DiagnosticKind(
    "SKILL-NOT-FOUND", "SKILL-03", W, W,
    "a declared skill is in no discovery layer; its catalog entry is absent")
SKILL_SHADOWED = DiagnosticKind(
    "SKILL-SHADOWED", "SKILL-01", INFO, INFO,
    "a declared skill exists in several layers; the first layer wins")
SKILL_DUPLICATE_DECLARATION = DiagnosticKind(
    "SKILL-DUPLICATE-DECLARATION", "SKILL-01", W, W,
    "a skill is declared twice (names compare case-insensitively); it is kept once")
SKILL_PACKAGE_INVALID = DiagnosticKind(
    "SKILL-PACKAGE-INVALID", "SKILL-05", W, W,
    "a folder in a discovery layer is not a valid skill package; it is not discovered")
SKILL_DUPLICATE_IN_LAYER = DiagnosticKind(
    "SKILL-DUPLICATE-IN-LAYER", "SKILL-01", W, W,
    "two folders of one layer define the same skill name; the first folder wins")
SKILL_AMENDMENT_HELD_BACK = DiagnosticKind(
    "SKILL-AMENDMENT-HELD-BACK", "SKILL-08", W, W,
    "a local amendment was reviewed against a different SKILL.md; it is not applied")
SKILL_PIN_NOT_GRANTED = DiagnosticKind(
    "SKILL-PIN-NOT-GRANTED", "SKILL-07", INFO, INFO,
    "a preferred pin names a skill this subagent does not declare; the pin grants nothing")
SKILL_GATED = DiagnosticKind(
    "SKILL-GATED", "SKILL-10", INFO, INFO,
    "a declared skill is closed in this VM type; it is not listed, found or loadable")
SKILL_FLAG_MARKUP = DiagnosticKind(
    "SKILL-FLAG-MARKUP", "SKILL-10", W, W,
    "a feature-flag marker in SKILL.md is unterminated, unmatched or malformed")

DIAGNOSTIC_KINDS: tuple[DiagnosticKind, ...] = (
    SKILL_NOT_FOUND,
    SKILL_SHADOWED,
    SKILL_DUPLICATE_DECLARATION,
    SKILL_PACKAGE_INVALID,
    SKILL_DUPLICATE_IN_LAYER,
    SKILL_AMENDMENT_HELD_BACK,
    SKILL_PIN_NOT_GRANTED,
    SKILL_GATED,
    SKILL_FLAG_MARKUP,
)


SKILL_YAML = "skill.yaml"
SKILL_MD = "SKILL.md"


# --------------------------------------------------------------------------- packages


class PackageForm(StrEnum):
    FOLDER = "folder"  # skill.yaml + SKILL.md (+ references/)
    SINGLE_FILE = "single-file"  # SKILL.md with YAML front matter


@dataclass(frozen=True)
class SkillPackage:
    name: str
    title: str
    description: str  # whitespace runs (newlines included) collapsed to one space
    category: str | None
    include_in_prompt: bool
    availability: tuple[tuple[str, bool], ...]
    provenance: Provenance
    provenance_declared: bool
    layer: SkillLayer
    folder: str  # folder name inside the layer
    folder_path: Path
    form: PackageForm
    content_hash: str
    # SKILL-10: feature-flag markup problems of the body (independent of the versions)
    flag_problems: tuple[FlagProblem, ...] = ()


@dataclass(frozen=True)
class FrontMatter:
    data: dict[str, Any]
    body: str  # the text after the closing `---` line
    body_line: int  # 1-based line where the body starts


class FrontMatterError(ValueError):
    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


_FENCE_RE = re.compile(r"(?:---|\.\.\.)[ \t]*\r?\Z")


def split_front_matter(text: str) -> FrontMatter | None:
    """YAML front matter: the file's first line is `---`, closed by a `---` (or `...`)
    line. None when the file has none. A leading BOM is ignored."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").rstrip(" \t") != "---":
        return None
    for i in range(1, len(lines)):
        if _FENCE_RE.match(lines[i]):
            try:
                data = yaml.safe_load("\n".join(lines[1:i]))
            except yaml.YAMLError as err:
                mark = getattr(err, "problem_mark", None)
                line = mark.line + 2 if mark is not None else None
                # the parser's problem, not its text: that names `<unicode string>`
                problem = getattr(err, "problem", None) or str(err).split("\n", 1)[0]
                raise FrontMatterError(f"front matter is not valid YAML: {problem}",
                                       line) from err
            if data is None:
                data = {}
            if not isinstance(data, dict):
                raise FrontMatterError("front matter must be a YAML mapping", 2)
            return FrontMatter(data, "\n".join(lines[i + 1:]), i + 2)
    raise FrontMatterError("front matter is not closed by a `---` line", 1)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _metadata(data: Mapping[str, Any], layer: SkillLayer, where: str
              ) -> tuple[dict[str, Any] | None, str | None]:
    """Validate the metadata mapping (skill.yaml or front matter). Returns the fields or
    the first problem (with the key at fault)."""
    name = data.get("name")
    problem = file_name_problem(trim_name(name)) if isinstance(name, str) else "is not a string"
    if problem is not None or not isinstance(name, str):
        return None, (f"{where}: `name` {problem}; it must be 1-64 letters or digits of any "
                      "script (NFC, not mixed), `.`, `_` or `-`, starting with a letter or digit")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        return None, f"{where}: `description` must be a non-empty string"
    title = data.get("title", name)
    if not isinstance(title, str):
        return None, f"{where}: `title` must be a string"
    category = data.get("category")
    if category is not None and not isinstance(category, str):
        return None, f"{where}: `category` must be a string"
    include = data.get("include_in_prompt", True)
    if not isinstance(include, bool):
        return None, f"{where}: `include_in_prompt` must be true or false"
    availability = data.get("availability", {}) or {}
    if not isinstance(availability, dict) or not all(
            isinstance(k, str) and isinstance(v, bool) for k, v in availability.items()):
        return None, f"{where}: `availability` must map names to true/false"
    provenance = data.get("provenance")
    if provenance is not None and provenance not in {p.value for p in Provenance}:
        return None, f"{where}: `provenance` must be one of system, learned, user"
    return {
        "name": trim_name(name),
        "title": _collapse(title),
        "description": _collapse(description),
        "category": category,
        "include_in_prompt": include,
        "availability": tuple(sorted(availability.items())),
        "provenance": Provenance(provenance) if provenance else DEFAULT_PROVENANCE[layer],
        "provenance_declared": provenance is not None,
    }, None


def parse_package(layer: SkillLayer, folder: str, folder_path: Path,
                  skill_yaml: bytes | None, skill_md: bytes | None
                  ) -> tuple[SkillPackage | None, str | None, int | None]:
    """Pure: a package from its file bytes. Returns (package, None, None) or (None,
    problem, line). skill.yaml, when present, is the metadata (folder form) and any front
    matter in SKILL.md is then ignored; otherwise SKILL.md's front matter is."""
    if skill_md is None:
        return None, f"{SKILL_MD} is missing", None
    try:
        md_text = skill_md.decode("utf-8")
    except UnicodeDecodeError as err:
        return None, f"{SKILL_MD} is not valid UTF-8 (byte {err.start})", None
    if skill_yaml is not None:
        try:
            data = yaml.safe_load(skill_yaml.decode("utf-8"))
        except (UnicodeDecodeError, yaml.YAMLError) as err:
            mark = getattr(err, "problem_mark", None)
            return None, f"{SKILL_YAML} is not valid YAML: {err}", (
                mark.line + 1 if mark is not None else None)
        if not isinstance(data, dict):
            return None, f"{SKILL_YAML} must be a YAML mapping", 1
        form, where = PackageForm.FOLDER, SKILL_YAML
    else:
        try:
            front = split_front_matter(md_text)
        except FrontMatterError as err:
            return None, f"{SKILL_MD}: {err.message}", err.line
        if front is None:
            return None, (f"no {SKILL_YAML} and {SKILL_MD} has no YAML front matter with "
                          "`name` and `description`"), 1
        data, form, where = front.data, PackageForm.SINGLE_FILE, f"{SKILL_MD} front matter"
    fields, problem = _metadata(data, layer, where)
    if fields is None:
        return None, problem, None
    body, first_line = skill_body_at(skill_md)
    problems = select_sections(body, {}, first_line).problems
    return SkillPackage(layer=layer, folder=folder, folder_path=folder_path, form=form,
                        content_hash=content_hash(skill_md), flag_problems=problems,
                        **fields), None, None


def skill_body(skill_md: bytes) -> str:
    """What use_skill returns: SKILL.md decoded (bad bytes -> U+FFFD) without its front
    matter, which is metadata already in the catalog."""
    return skill_body_at(skill_md)[0]


def skill_body_at(skill_md: bytes) -> tuple[str, int]:
    """The body and the 1-based SKILL.md line it starts on (so feature-flag problems
    point at the line the author sees, front matter counted)."""
    text = skill_md.decode("utf-8", "replace").removeprefix("\ufeff")
    try:
        front = split_front_matter(text)
    except FrontMatterError:
        return text, 1
    if front is None:
        return text, 1
    body = front.body.lstrip("\r\n")
    skipped = front.body[:len(front.body) - len(body)].count("\n")
    return body, front.body_line + skipped
