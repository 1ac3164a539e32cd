"""Layered discovery, the disk edge of the skills dimension: every valid package of each
layer, in layer order and folder-name byte order, with the diagnostics of the invalid
ones."""

from __future__ import annotations

import os
import stat
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from capconf.simulator.core.diagnostics import Diagnostic, Location, Mode, diagnose
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.files import FileAccessError, Kind, Root
from capconf.simulator.skills.folder import read_in_folder
from capconf.simulator.skills.packages import (
    SKILL_DUPLICATE_IN_LAYER,
    SKILL_MD,
    SKILL_PACKAGE_INVALID,
    SKILL_YAML,
    SkillPackage,
    parse_package,
)
from capconf.simulator.skills.world import SkillWorld


@dataclass(frozen=True)
class SkillDiscovery:
    """Every valid package per layer (layer order, folder-name byte order)."""

    packages: tuple[SkillPackage, ...]
    diagnostics: tuple[Diagnostic, ...]

    def by_layer(self, name: str) -> tuple[SkillPackage, ...]:
        key = ascii_fold(name)
        return tuple(p for p in self.packages if ascii_fold(p.name) == key)


def _read_optional(folder: Path, name: str) -> bytes | None:
    got = read_in_folder(folder, name, None)
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
