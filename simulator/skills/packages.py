"""The skills dimension: packages on disk, layered discovery, the catalog, use_skill.

A definition's ``skills`` is an allow-list of names (SKILL-01). Each name is looked up in
five discovery layers, first layer wins; the winner and the layers it hides are reported.
The prompt gets only name / description / location per visible skill (SKILL-04); bodies
and references are read when use_skill asks, and a reference can never leave its skill's
folder (SKILL-05). Parsing a package is pure over its file bytes; discovery and use_skill
are the thin disk edges.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

from capconf.simulator.core.diagnostics import (
    Diagnostic,
    DiagnosticKind,
    Location,
    Mode,
    Severity,
    WorldSetupError,
    diagnose,
)
from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.core.unicode_names import name_problem
from capconf.simulator.definition.declarations import NameRef
from capconf.simulator.files import FileAccessError, Kind, Reason, Root, read_fd
from capconf.simulator.skills import flags, preferences
from capconf.simulator.skills.amendments import (
    Amendment,
    AmendmentOutcome,
    AmendmentStatus,
    apply_outcome,
    content_hash,
    evaluate,
)
from capconf.simulator.skills.flags import (
    FEATURE_RE,
    VERSION_RE,
    FlagProblem,
    FlagSelection,
    select_sections,
)
from capconf.simulator.skills.gating import GateReason, VmType, gate_reason, gate_table
from capconf.simulator.skills.preferences import (
    Preference,
    PreferenceKind,
    PreferenceState,
)
from capconf.simulator.skills.search import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    SKILL_SEARCH_SCHEMA,
    SKILL_SEARCH_TOOL,
    SearchDoc,
    rank,
    tokenize,
)
from capconf.simulator.tools.catalog import ToolSpec

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

# Tool error codes (ToolResult.error_code), with the requirement each serves.
TOOL_ERROR_CODES: tuple[tuple[str, str, str], ...] = (
    ("SKILL-BAD-ARGUMENTS", "SKILL-04", "arguments do not match the input schema"),
    ("SKILL-NOT-GRANTED", "SKILL-01", "the skill is not in this subagent's resolved skills"),
    ("SKILL-REFERENCE-ESCAPE", "SKILL-05", "the reference path leaves the skill folder"),
    ("SKILL-REFERENCE-NOT-FOUND", "SKILL-05", "no regular file at that reference path"),
    ("SKILL-BODY-UNAVAILABLE", "SKILL-04", "SKILL.md cannot be read any more"),
    ("SKILL-UNAVAILABLE", "SKILL-10", "the skill is granted but closed in this VM type"),
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
    problem = name_problem(name.strip(), "._-") if isinstance(name, str) else "is not a string"
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
        "name": name.strip(),
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


# --------------------------------------------------------------------------- the world


@dataclass(frozen=True)
class SkillWorld:
    layers: tuple[tuple[SkillLayer, Path], ...] = ()
    preferred: tuple[str, ...] = ()
    amendments: tuple[Amendment, ...] = ()
    # SKILL-09: per-task-type preferences and the offers already made (the session's
    # state lives in the world value; the preference ops replace it)
    preference_state: PreferenceState = field(default_factory=PreferenceState)
    # SKILL-10: the session's VM type, and the active version of each flagged feature
    vm_type: VmType = VmType.STANDARD
    feature_versions: tuple[tuple[str, str], ...] = ()


def parse_skill_world(args: object, workspace: Path) -> SkillWorld:
    """`world.setup` args.skills: {"layers": {layer: dir}, "preferred": [name],
    "amendments": [{"skill", "reviewed_hash", "text"}], "preferences": [{"task_type",
    "kind", "name"}], "offers_asked": [task type], "vm_type": "standard"|"confidential",
    "feature_versions": {feature: "vN"}}. Relative dirs are relative to the workspace;
    every named dir must exist."""
    if args is None:
        return SkillWorld()
    if not isinstance(args, dict):
        raise WorldSetupError(("skills",), "must be an object")
    unknown = sorted(set(args) - set(WORLD_KEYS))
    if unknown:
        raise WorldSetupError(("skills", unknown[0]),
                              f"unknown key; allowed: {', '.join(WORLD_KEYS)}")
    layers_arg = args.get("layers", {})
    if not isinstance(layers_arg, dict):
        raise WorldSetupError(("skills", "layers"), "must map layer names to directories")
    layers: list[tuple[SkillLayer, Path]] = []
    for key, directory in layers_arg.items():
        if key not in {layer.value for layer in SkillLayer}:
            raise WorldSetupError(("skills", "layers", key),
                                  f"unknown layer; layers are {', '.join(LAYER_ORDER)}")
        if not isinstance(directory, str) or not directory:
            raise WorldSetupError(("skills", "layers", key), "must be a directory path")
        path = Path(directory)
        path = path if path.is_absolute() else workspace / path
        if not path.is_dir():
            raise WorldSetupError(("skills", "layers", key), f"not a directory: {directory}")
        layers.append((SkillLayer(key), path))
    layers.sort(key=lambda lp: LAYER_ORDER.index(lp[0]))
    preferred = args.get("preferred", [])
    if not isinstance(preferred, list) or not all(isinstance(p, str) for p in preferred):
        raise WorldSetupError(("skills", "preferred"), "must be a list of skill names")
    amendments_arg = args.get("amendments", [])
    if not isinstance(amendments_arg, list):
        raise WorldSetupError(("skills", "amendments"), "must be a list")
    amendments = []
    for i, row in enumerate(amendments_arg):
        if not isinstance(row, dict):
            raise WorldSetupError(("skills", "amendments", i), "must be an object")
        for key in ("skill", "reviewed_hash", "text"):
            if not isinstance(row.get(key), str):
                raise WorldSetupError(("skills", "amendments", i, key), "must be a string")
        extra = sorted(set(row) - {"skill", "reviewed_hash", "text"})
        if extra:
            raise WorldSetupError(("skills", "amendments", i, extra[0]), "unknown key")
        amendments.append(Amendment(row["skill"], row["reviewed_hash"], row["text"]))
    vm_arg = args.get("vm_type", VmType.STANDARD.value)
    if not isinstance(vm_arg, str) or vm_arg not in {v.value for v in VmType}:
        raise WorldSetupError(("skills", "vm_type"),
                              f"must be one of {', '.join(v.value for v in VmType)}")
    return SkillWorld(tuple(layers), tuple(preferred), tuple(amendments),
                      _preference_state(args), VmType(vm_arg), _feature_versions(args))


WORLD_KEYS = ("layers", "preferred", "amendments", "preferences", "offers_asked", "vm_type",
              "feature_versions")


def _nonempty(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _preference_state(args: Mapping[str, Any]) -> PreferenceState:
    rows = args.get("preferences", [])
    if not isinstance(rows, list):
        raise WorldSetupError(("skills", "preferences"), "must be a list")
    state = PreferenceState()
    for i, row in enumerate(rows):
        where: tuple[str | int, ...] = ("skills", "preferences", i)
        if not isinstance(row, dict):
            raise WorldSetupError(where, "must be {task_type, kind, name}")
        extra = sorted(set(row) - {"task_type", "kind", "name"})
        if extra:
            raise WorldSetupError((*where, extra[0]), "unknown key")
        for key in ("task_type", "name"):
            if not _nonempty(row.get(key)):
                raise WorldSetupError((*where, key), "must be a non-empty string")
        if row.get("kind") not in {k.value for k in PreferenceKind}:
            raise WorldSetupError((*where, "kind"), "must be skill or connector")
        if state.for_task(row["task_type"]) is not None:
            raise WorldSetupError((*where, "task_type"), "a second preference for this task "
                                  "type (task types compare ASCII case-insensitively)")
        state = state.with_preference(
            Preference(row["task_type"].strip(), PreferenceKind(row["kind"]),
                       row["name"].strip()))
    asked = args.get("offers_asked", [])
    if not isinstance(asked, list):
        raise WorldSetupError(("skills", "offers_asked"), "must be a list of task types")
    for i, task_type in enumerate(asked):
        if not _nonempty(task_type):
            raise WorldSetupError(("skills", "offers_asked", i), "must be a non-empty string")
    return replace(state, offers_asked=tuple(t.strip() for t in asked))


def _feature_versions(args: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    versions = args.get("feature_versions", {})
    if not isinstance(versions, dict):
        raise WorldSetupError(("skills", "feature_versions"),
                              "must map feature names to versions (`v1`, `v2`, ...)")
    for feature, version in versions.items():
        if not FEATURE_RE.match(feature):
            raise WorldSetupError(("skills", "feature_versions", feature),
                                  "not a feature name (ASCII letters, digits, `.`, `_`, `-`)")
        if not isinstance(version, str) or not VERSION_RE.match(version):
            raise WorldSetupError(("skills", "feature_versions", feature),
                                  "must be a version `v` + digits, e.g. v2")
    return tuple(sorted(versions.items()))


@dataclass(frozen=True)
class SkillDiscovery:
    """Every valid package per layer (layer order, folder-name byte order)."""

    packages: tuple[SkillPackage, ...]
    diagnostics: tuple[Diagnostic, ...]

    def by_layer(self, name: str) -> tuple[SkillPackage, ...]:
        key = ascii_fold(name)
        return tuple(p for p in self.packages if ascii_fold(p.name) == key)


def _read_optional(folder: Path, name: str) -> bytes | None:
    got = _read_in_folder(folder, name, None)
    return got[0] if isinstance(got, tuple) else None


def _package_folders(directory: Path) -> list[str]:
    """The non-hidden subfolders of a layer directory (the harness names the layer, so a
    package folder that is a link to a folder counts, as a user would expect), listed
    through the file layer's descriptor of the layer directory, in byte order."""
    try:
        with Root.open(directory) as root:
            names = []
            for entry in root.dir.entries():
                if entry.name.startswith("."):
                    continue
                if entry.kind is Kind.SYMLINK:
                    with suppress(OSError):
                        if stat.S_ISDIR(os.stat(entry.name, dir_fd=root.dir.fd).st_mode):
                            names.append(entry.name)
                elif entry.kind is Kind.DIRECTORY:
                    names.append(entry.name)
            return names
    except (FileAccessError, OSError):
        return []


def discover_skills(world: SkillWorld, mode: Mode = Mode.PARSE) -> SkillDiscovery:
    """The disk edge of discovery: each immediate, non-hidden subfolder of each layer dir
    holding skill.yaml or SKILL.md is a candidate. Invalid candidates and same-name folders
    within one layer are reported, never silently merged."""
    packages: list[SkillPackage] = []
    diags: list[Diagnostic] = []
    for layer, directory in world.layers:
        names = _package_folders(directory)
        seen: dict[str, str] = {}
        for folder in names:
            folder_path = directory / folder
            skill_yaml = _read_optional(folder_path, SKILL_YAML)
            skill_md = _read_optional(folder_path, SKILL_MD)
            if skill_yaml is None and skill_md is None:
                continue
            package, problem, line = parse_package(layer, folder, folder_path, skill_yaml,
                                                   skill_md)
            where = Location((str(layer), folder), line, 1 if line else None)
            if package is None:
                diags.append(diagnose(
                    SKILL_PACKAGE_INVALID, mode,
                    f"skill folder `{folder}` in layer {layer}: {problem}. Fix the package "
                    "metadata; until then the skill is not discovered.", where))
                continue
            key = ascii_fold(package.name)
            if key in seen:
                diags.append(diagnose(
                    SKILL_DUPLICATE_IN_LAYER, mode,
                    f"layer {layer}: folders `{seen[key]}` and `{folder}` both define skill "
                    f"`{package.name}`; `{seen[key]}` wins. Rename or remove one.", where))
                continue
            seen[key] = folder
            packages.append(package)
    return SkillDiscovery(tuple(packages), tuple(diags))


# --------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class ResolvedSkill:
    package: SkillPackage
    shadowed: tuple[SkillLayer, ...]  # layers holding the same name, hidden by the winner
    pinned: bool  # SKILL-07 pin (no task type)
    amendment: AmendmentOutcome | None
    location: str
    preferred_for: tuple[str, ...] = ()  # SKILL-09: task types it is the first choice for
    unavailable: GateReason | None = None  # SKILL-10: closed in this VM type

    @property
    def preferred(self) -> bool:
        return self.pinned or bool(self.preferred_for)

    @property
    def listed(self) -> bool:
        """In the prompt catalog: include_in_prompt, or pinned as preferred (a pinned
        entry is always shown; the pin grants nothing beyond visibility), unless a gate
        closes it in this VM type (a gate beats a preference)."""
        if self.unavailable is not None:
            return False
        return self.package.include_in_prompt or self.preferred

    def to_json(self) -> dict[str, Any]:
        p = self.package
        return {
            "name": p.name,
            "description": p.description,
            "location": self.location,
            "title": p.title,
            "category": p.category,
            "layer": str(p.layer),
            "shadowed": [str(layer) for layer in self.shadowed],
            "include_in_prompt": p.include_in_prompt,
            "listed": self.listed,
            "availability": dict(p.availability),
            "provenance": str(p.provenance),
            "provenance_declared": p.provenance_declared,
            "preferred": self.preferred,
            "preferred_for": list(self.preferred_for),
            "available": self.unavailable is None,
            "unavailable_reason": None if self.unavailable is None else str(self.unavailable),
            "form": str(p.form),
            "content_hash": p.content_hash,
            "amendment": None if self.amendment is None else self.amendment.to_json(),
        }


@dataclass(frozen=True)
class SkillResolution:
    skills: tuple[ResolvedSkill, ...]  # declaration order
    diagnostics: tuple[Diagnostic, ...]
    amendments: tuple[Amendment, ...] = ()
    feature_versions: tuple[tuple[str, str], ...] = ()  # SKILL-10, as at compile
    preferences: PreferenceState = field(default_factory=PreferenceState)  # SKILL-09
    vm_type: VmType = VmType.STANDARD

    def find(self, name: str) -> ResolvedSkill | None:
        key = ascii_fold(name.strip())
        for skill in self.skills:
            if ascii_fold(skill.package.name) == key:
                return skill
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "skills": [s.to_json() for s in self.skills],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def skill_location(package: SkillPackage, workspace: Path | None) -> str:
    """Workspace-relative POSIX path of SKILL.md when it lies in the workspace; else
    `<layer>:<folder>/SKILL.md`, which never exposes a host path and stays byte-stable
    across harness temp directories."""
    if workspace is not None:
        real = os.path.realpath(package.folder_path / SKILL_MD)
        root = os.path.realpath(workspace)
        if real.startswith(root.rstrip(os.sep) + os.sep):
            return Path(os.path.relpath(real, root)).as_posix()
    return f"{package.layer}:{package.folder}/{SKILL_MD}"


def resolve_skills(declared: Sequence[NameRef] | None, discovery: SkillDiscovery,
                   world: SkillWorld, mode: Mode, workspace: Path | None = None
                   ) -> SkillResolution | None:
    """Declare -> resolve (pure over the discovery). None when `skills` is not declared
    (absent, null or empty list): no catalog section and no tools (SKILL-02)."""
    if not declared:
        return None
    diags: list[Diagnostic] = list(discovery.diagnostics)
    resolved: list[ResolvedSkill] = []
    seen: set[str] = set()
    pinned = {ascii_fold(p.strip()) for p in world.preferred}
    searched = ", ".join(str(layer) for layer, _ in world.layers) or "none configured"
    for ref in declared:
        key = ascii_fold(ref.name.strip())
        if key in seen:
            diags.append(diagnose(
                SKILL_DUPLICATE_DECLARATION, mode,
                f"skill `{ref.name}` is declared more than once; it is kept once. Remove "
                "the repeat.", ref.location))
            continue
        seen.add(key)
        candidates = discovery.by_layer(ref.name.strip())
        if not candidates:
            diags.append(diagnose(
                SKILL_NOT_FOUND, mode,
                f"skill `{ref.name}` is in no discovery layer (searched: {searched}), so "
                "it is not in the catalog and use_skill refuses it. Install it or remove "
                "it from `skills`.", ref.location))
            continue
        winner = candidates[0]
        hidden = tuple(p.layer for p in candidates[1:])
        if hidden:
            diags.append(diagnose(
                SKILL_SHADOWED, mode,
                f"skill `{winner.name}` comes from layer {winner.layer}; it hides the same "
                f"name in {', '.join(hidden)}.", ref.location))
        outcome = None
        for amendment in world.amendments:
            if ascii_fold(amendment.skill.strip()) == key:
                outcome = evaluate(amendment, winner.content_hash)
                if outcome.status is AmendmentStatus.HELD_BACK:
                    diags.append(diagnose(
                        SKILL_AMENDMENT_HELD_BACK, mode,
                        f"the local amendment to skill `{winner.name}` was reviewed against "
                        f"{amendment.reviewed_hash} but SKILL.md is now "
                        f"{winner.content_hash}; it is not applied. Review the amendment "
                        "against the new body.", ref.location))
                break
        gate = gate_reason(dict(winner.availability), world.vm_type)
        if gate is not None:
            diags.append(diagnose(
                SKILL_GATED, mode,
                f"skill `{winner.name}` is not available in a {world.vm_type} VM ({gate}); "
                "it is not listed, not found and not loadable here.", ref.location))
        for problem in winner.flag_problems:
            diags.append(diagnose(
                SKILL_FLAG_MARKUP, mode,
                f"skill `{winner.name}`: feature-flag marker `{problem.flag}` is "
                f"{problem.code} (line {problem.line} of {SKILL_MD}). Fix the markup.",
                Location((str(winner.layer), winner.folder, SKILL_MD), problem.line, 1)))
        resolved.append(ResolvedSkill(
            winner, hidden, key in pinned, outcome, skill_location(winner, workspace),
            world.preference_state.preferred_for(PreferenceKind.SKILL, winner.name), gate))
    for pin in world.preferred:
        if ascii_fold(pin.strip()) not in seen:
            diags.append(diagnose(
                SKILL_PIN_NOT_GRANTED, mode,
                f"skill `{pin}` is pinned as preferred but not declared in `skills`; the pin "
                "grants nothing. Declare it to use it."))
    for pref in world.preference_state.preferences:
        if pref.kind is PreferenceKind.SKILL and ascii_fold(pref.name) not in seen:
            diags.append(diagnose(
                SKILL_PIN_NOT_GRANTED, mode,
                f"skill `{pref.name}` is preferred for task type `{pref.task_type}` but not "
                "declared in `skills`; the preference grants nothing."))
    return SkillResolution(tuple(resolved), tuple(diags), world.amendments,
                           world.feature_versions, world.preference_state, world.vm_type)


SKILLS_HEADING = "## Skills"
SKILLS_INTRO = ("Load a skill's instructions with use_skill before following it. Skills "
                "not listed here may still be found with skill_search.")
SKILLS_NONE_LISTED = "(No skill is listed; find your skills with skill_search.)"
# SKILL-09: the marker line of an entry preferred for task types (reference wording)
PREFERRED_MARKER = "preferred for"


def catalog_order(resolution: SkillResolution) -> list[ResolvedSkill]:
    """SKILL-04/09: the listed skills; those preferred for a task type first (the first
    choice is the first entry read), then the others, each group in declaration order."""
    listed = [s for s in resolution.skills if s.listed]
    return ([s for s in listed if s.preferred_for]
            + [s for s in listed if not s.preferred_for])


def skills_catalog_section(resolution: SkillResolution | None) -> str | None:
    """SKILL-04: exactly name / description / location per listed skill, declaration
    order, except that an entry preferred for a task type comes first and carries the
    marker line (SKILL-09). No section when skills are undeclared or none resolved."""
    if resolution is None or not resolution.skills:
        return None
    lines = [SKILLS_HEADING, SKILLS_INTRO]
    listed = catalog_order(resolution)
    for skill in listed:
        lines += [f"- name: {skill.package.name}",
                  f"  description: {skill.package.description}",
                  f"  location: {skill.location}"]
        if skill.preferred_for:
            lines.append(f"  {PREFERRED_MARKER}: {', '.join(skill.preferred_for)}")
    if not listed:
        lines.append(SKILLS_NONE_LISTED)
    return "\n".join(lines)


# --------------------------------------------------------------------------- tools

USE_SKILL_DESCRIPTION = (
    "Load the full instructions of a skill granted to you, by name, or with `reference` "
    "one of its reference files (a path relative to the skill's folder, e.g. "
    "references/api.md). Read a skill before following it."
)
USE_SKILL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "reference": {"type": "string", "minLength": 1},
    },
    "required": ["name"],
    "additionalProperties": False,
}
USE_SKILL_TOOL = ToolSpec("use_skill", USE_SKILL_DESCRIPTION, USE_SKILL_SCHEMA)


def skill_tools(resolution: SkillResolution | None) -> tuple[ToolSpec, ...]:
    """SKILL-02: use_skill and skill_search exist exactly when `skills` is declared."""
    return () if resolution is None else (USE_SKILL_TOOL, SKILL_SEARCH_TOOL)


def _bad_args(args: object, schema: dict[str, Any]) -> ToolResult | None:
    if not isinstance(args, dict):
        return failure("SKILL-BAD-ARGUMENTS", "arguments must be an object", {})
    extra = sorted(set(args) - set(schema["properties"]))
    if extra:
        return failure("SKILL-BAD-ARGUMENTS", f"unknown argument(s): {', '.join(extra)}",
                       {"unknown": extra, "allowed": sorted(schema["properties"])})
    return None


def _not_granted(resolution: SkillResolution, name: str) -> ToolResult:
    granted = [s.package.name for s in resolution.skills if s.unavailable is None]
    return failure("SKILL-NOT-GRANTED",
                   f"skill `{name}` is not granted to this subagent; granted: "
                   f"{', '.join(granted) or 'none'}",
                   {"name": name, "granted": granted}, terminal_for_attempt=False)


class ReferenceEscape(StrEnum):
    EMPTY = "empty"
    CONTROL = "control-character"
    BACKSLASH = "backslash"
    ABSOLUTE = "absolute"
    DRIVE = "drive-or-scheme"
    PARENT = "parent-segment"
    SYMLINK = "resolves-outside-skill-folder"


# SKILL-05: the lexical rules for a reference, tried in order (the first failing one is the
# reason). `resolves-outside-skill-folder` is checked on disk after these.
REFERENCE_RULES: tuple[tuple[ReferenceEscape, str, Callable[[str], bool]], ...] = (
    (ReferenceEscape.EMPTY, "empty or only whitespace", lambda r: r.strip() == ""),
    (ReferenceEscape.CONTROL, "any code point below U+0020, or U+007F (NUL included)",
     lambda r: any(ord(c) < 32 or ord(c) == 127 for c in r)),
    (ReferenceEscape.BACKSLASH, "contains `\\`", lambda r: "\\" in r),
    (ReferenceEscape.ABSOLUTE, "starts with `/`", lambda r: r.startswith("/")),
    (ReferenceEscape.DRIVE, "contains `:`", lambda r: ":" in r),
    (ReferenceEscape.PARENT, "a `/`-separated segment is `..`",
     lambda r: ".." in r.split("/")),
)
REFERENCE_ON_DISK_RULE = ("resolved from the skill folder, every symlink followed, the path "
                          "leaves the folder at some step (even to come back) or is the "
                          "folder itself")


def check_reference(reference: str) -> ReferenceEscape | None:
    """The lexical half of SKILL-05's "cannot escape"; containment of the resolved path
    is checked on disk by use_skill as well."""
    for reason, _rule, failed in REFERENCE_RULES:
        if failed(reference):
            return reason
    return None


def _layer_table() -> str:
    rows = ["| order | layer | default provenance |", "|---|---|---|"]
    rows += [f"| {i} | `{layer}` | {prov} |" for i, (layer, prov) in
             enumerate(LAYER_TABLE, start=1)]
    return "\n".join(rows)


def _reference_table() -> str:
    rows = ["| reason | rule |", "|---|---|"]
    rows += [f"| `{reason}` | {rule} |" for reason, rule, _ in REFERENCE_RULES]
    rows.append(f"| `{ReferenceEscape.SYMLINK}` | {REFERENCE_ON_DISK_RULE} |")
    return "\n".join(rows)


# Generated regions of SPEC.md (see capconf.simulator.spec_tables).
SPEC_TABLES: dict[str, Callable[[], str]] = {
    "skill-layers": _layer_table,
    "skill-reference-rules": _reference_table,
    "skill-offer-events": preferences.events_table,
    "skill-offer-rules": preferences.offer_table,
    "skill-gates": gate_table,
    "skill-flag-rules": flags.rules_table,
}


def _read_in_folder(folder: Path, rel: str, limit: int | None
                    ) -> tuple[bytes, int] | ReferenceEscape | None:
    """Read a file of a skill folder through the file layer: resolved from the folder's
    descriptor, links followed only while they stay inside the folder, decided and read
    on one descriptor, never blocking on a FIFO. At most ``limit`` bytes are read (all
    when None). Returns (bytes, size on disk), the escape reason, or None (no file)."""
    try:
        with Root.open(folder) as root:
            opened = root.open_file(rel, follow=True)
            try:
                want = opened.stat.st_size + 1 if limit is None else limit
                return read_fd(opened.fd, want), opened.stat.st_size
            finally:
                os.close(opened.fd)
    except FileAccessError as err:
        if err.reason in (Reason.OUTSIDE, Reason.LOOP):
            return ReferenceEscape.SYMLINK
        return None
    except OSError:
        return None


# What one use_skill call returns at most (the body, or a reference file), in UTF-8 bytes
# of the returned text: a skill is instructions, not a data set; a larger file would eat
# the context window it was meant to save. The cut is at a character boundary and is
# reported (`truncated`, `total_bytes`), never silent.
USE_SKILL_MAX_BYTES = 262_144


# A reference is read only up to the cap plus one code point's worth of bytes: enough to
# fill the cap (invalid bytes only grow when decoded) and to know the text is longer.
_REFERENCE_READ = USE_SKILL_MAX_BYTES + 4


def _capped(text: str) -> tuple[str, bool, int]:
    """(text cut to USE_SKILL_MAX_BYTES at a code-point boundary, truncated?, total)."""
    data = text.encode("utf-8")
    if len(data) <= USE_SKILL_MAX_BYTES:
        return text, False, len(data)
    return data[:USE_SKILL_MAX_BYTES].decode("utf-8", "ignore"), True, len(data)


def call_use_skill(resolution: SkillResolution, args: object) -> ToolResult:
    """Load a granted skill's body (amendment applied or held back, SKILL-08) or one of
    its reference files (never outside the skill folder, SKILL-05)."""
    bad = _bad_args(args, USE_SKILL_SCHEMA)
    if bad is not None:
        return bad
    assert isinstance(args, dict)
    name = args.get("name")
    reference = args.get("reference")
    if not isinstance(name, str) or (reference is not None and not isinstance(reference, str)):
        return failure("SKILL-BAD-ARGUMENTS", "`name` and `reference` must be strings", {})
    skill = resolution.find(name)
    if skill is None:
        return _not_granted(resolution, name)
    if skill.unavailable is not None:
        return failure("SKILL-UNAVAILABLE",
                       f"skill `{skill.package.name}` is not available in a "
                       f"{resolution.vm_type} VM ({skill.unavailable})",
                       {"name": skill.package.name, "reason": str(skill.unavailable),
                        "vm_type": str(resolution.vm_type)}, terminal_for_attempt=False)
    folder = skill.package.folder_path
    if reference is None:
        got = _read_in_folder(folder, SKILL_MD, None)
        raw = got[0] if isinstance(got, tuple) else None
        if raw is None:
            return failure("SKILL-BODY-UNAVAILABLE",
                           f"{SKILL_MD} of skill `{skill.package.name}` cannot be read",
                           {"name": skill.package.name})
        outcome = None
        for amendment in resolution.amendments:
            if ascii_fold(amendment.skill.strip()) == ascii_fold(skill.package.name):
                outcome = evaluate(amendment, content_hash(raw))
                break
        selection = flagged_body(raw, resolution.feature_versions)
        body, truncated, total = _capped(apply_outcome(selection.text, outcome))
        return success({
            "name": skill.package.name,
            "location": skill.location,
            "layer": str(skill.package.layer),
            "provenance": str(skill.package.provenance),
            "preferred": skill.preferred,
            "body": body,
            "truncated": truncated,
            "total_bytes": total,
            "amendment": None if outcome is None else outcome.to_json(),
            "flags": selection.to_json(),
        })
    reason = check_reference(reference)
    if reason is None and not [p for p in reference.split("/") if p not in ("", ".")]:
        reason = ReferenceEscape.SYMLINK  # the folder itself is not strictly inside it
    got = _read_in_folder(folder, reference, _REFERENCE_READ) if reason is None else None
    if isinstance(got, ReferenceEscape):
        reason = got
    if reason is not None:
        return failure("SKILL-REFERENCE-ESCAPE",
                       f"reference {reference!r} leaves the folder of skill "
                       f"`{skill.package.name}` ({reason}); references are paths relative "
                       "to the skill folder", {"name": skill.package.name,
                                               "reference": reference, "reason": str(reason)},
                       terminal_for_attempt=False)
    if not isinstance(got, tuple):
        return failure("SKILL-REFERENCE-NOT-FOUND",
                       f"skill `{skill.package.name}` has no file {reference!r}",
                       {"name": skill.package.name, "reference": reference})
    data, size = got
    text, truncated, total = _capped(data.decode("utf-8", "replace"))
    if size > len(data):  # the read stopped at the cap: the rest was never read
        truncated, total = True, size
    return success({
        "name": skill.package.name,
        "reference": reference,
        "text": text,
        "truncated": truncated,
        "total_bytes": total,
    })


def call_skill_search(resolution: SkillResolution, args: object) -> ToolResult:
    """SKILL-06: rank the granted skills (listed or not) by name + description."""
    bad = _bad_args(args, SKILL_SEARCH_SCHEMA)
    if bad is not None:
        return bad
    assert isinstance(args, dict)
    query = args.get("query")
    limit = args.get("limit", DEFAULT_LIMIT)
    if not isinstance(query, str) or not query.strip():
        return failure("SKILL-BAD-ARGUMENTS", "`query` must be a non-empty string",
                       {"field": "query"})
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return failure("SKILL-BAD-ARGUMENTS", f"`limit` must be an integer 1..{MAX_LIMIT}",
                       {"field": "limit"})
    available = [s for s in resolution.skills if s.unavailable is None]
    docs = [SearchDoc(s.package.name, s.package.description) for s in available]
    ranked = rank(docs, query)
    results = []
    for r in ranked[:limit]:
        skill = available[r.index]
        results.append({
            "name": skill.package.name,
            "description": skill.package.description,
            "location": skill.location,
            "score": r.score,
            "listed": skill.listed,
            "preferred": skill.preferred,
            "provenance": str(skill.package.provenance),
        })
    terms = set(tokenize(query))
    closed = [{"name": s.package.name, "reason": str(s.unavailable)}
              for s in resolution.skills if s.unavailable is not None
              and terms & set(tokenize(f"{s.package.name} {s.package.description}"))]
    return success({"query": query, "results": results, "total_matches": len(ranked),
                    "unavailable": closed})


def flagged_body(skill_md: bytes, feature_versions: Sequence[tuple[str, str]]
                 ) -> FlagSelection:
    """SKILL-10: the body with only the sections of the active versions."""
    body, first_line = skill_body_at(skill_md)
    return select_sections(body, dict(feature_versions), first_line)
