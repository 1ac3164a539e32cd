"""Reading a file of a skill folder without ever leaving it (SKILL-05): the rules a
reference path is held to before any disk access, and the read itself, through the file
layer, on one descriptor."""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path

from capconf.simulator.files import FileAccessError, Reason, Root, read_fd


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


def read_in_folder(folder: Path, rel: str, limit: int | None
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
