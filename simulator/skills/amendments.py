"""Local amendments to skills, applied only to the body they were reviewed against (SKILL-08).

An amendment is a user-level patch read alongside a (typically system) skill. The skill
may be updated after the patch was reviewed; applying the old patch to the new body could
override the newer instructions. So each amendment records the content hash of the
SKILL.md it was reviewed against, and it is applied only while the current SKILL.md has
exactly that hash. Otherwise it is held back and reported, never silently dropped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

HASH_PREFIX = "sha256:"
AMENDMENT_HEADING = "## Local amendment"


def content_hash(skill_md: bytes) -> str:
    """The hash of the SKILL.md file bytes, exactly as on disk (front matter included):
    any change to the file, even to whitespace, invalidates a review. Metadata in
    skill.yaml is not hashed: it does not change the instructions the patch amends."""
    return HASH_PREFIX + hashlib.sha256(skill_md).hexdigest()


class AmendmentStatus(StrEnum):
    APPLIED = "applied"
    HELD_BACK = "held-back"


@dataclass(frozen=True)
class Amendment:
    skill: str
    reviewed_hash: str
    text: str


@dataclass(frozen=True)
class AmendmentOutcome:
    amendment: Amendment
    status: AmendmentStatus
    current_hash: str

    def to_json(self) -> dict[str, str]:
        return {
            "status": str(self.status),
            "reviewed_hash": self.amendment.reviewed_hash,
            "current_hash": self.current_hash,
        }


def evaluate(amendment: Amendment, current_hash: str) -> AmendmentOutcome:
    status = (AmendmentStatus.APPLIED if amendment.reviewed_hash == current_hash
              else AmendmentStatus.HELD_BACK)
    return AmendmentOutcome(amendment, status, current_hash)


def apply_outcome(body: str, outcome: AmendmentOutcome | None) -> str:
    """The body the model sees: unchanged, or followed by the amendment under a fixed
    heading (appended, so the reviewed body is never rewritten in place)."""
    if outcome is None or outcome.status is not AmendmentStatus.APPLIED:
        return body
    return (body.rstrip("\n") + "\n\n" + AMENDMENT_HEADING + "\n\n"
            + outcome.amendment.text.rstrip("\n") + "\n")
