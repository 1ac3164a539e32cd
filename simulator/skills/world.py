"""The skills part of ``world.setup``: the layer folders, preferences, amendments, the VM
type and feature versions, validated with the path of a bad argument."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from capconf.simulator.core.diagnostics import WorldSetupError
from capconf.simulator.core.names import trim_name
from capconf.simulator.skills.amendments import Amendment
from capconf.simulator.skills.flags import FEATURE_RE, VERSION_RE
from capconf.simulator.skills.gating import VmType
from capconf.simulator.skills.packages import LAYER_ORDER, SkillLayer
from capconf.simulator.skills.preferences import Preference, PreferenceKind, PreferenceState


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
    return isinstance(value, str) and bool(trim_name(value))


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
            Preference(trim_name(row["task_type"]), PreferenceKind(row["kind"]),
                       trim_name(row["name"])))
    asked = args.get("offers_asked", [])
    if not isinstance(asked, list):
        raise WorldSetupError(("skills", "offers_asked"), "must be a list of task types")
    for i, task_type in enumerate(asked):
        if not _nonempty(task_type):
            raise WorldSetupError(("skills", "offers_asked", i), "must be a non-empty string")
    return replace(state, offers_asked=tuple(trim_name(t) for t in asked))


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
