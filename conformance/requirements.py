"""The requirement table (``requirements.yaml``) as values."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import yaml

from capconf.conformance.locations import package_file


@dataclass(frozen=True)
class Requirement:
    id: str
    level: str  # MUST | SHOULD | REFERENCE (the reference's own choice)
    group: str  # the feature group an implementation declares in `hello`
    status: str  # active | planned
    title: str


@cache
def requirements() -> dict[str, Requirement]:
    text = (package_file() / "requirements.yaml").read_text(encoding="utf-8")
    rows = yaml.safe_load(text)["requirements"]
    table = {r["id"]: Requirement(r["id"], r["level"], r["group"], r["status"], r["title"])
             for r in rows}
    if len(table) != len(rows):
        raise ValueError("requirements.yaml lists an ID twice")
    return table


def group_of(requirement_id: str) -> str:
    return requirements()[requirement_id].group
