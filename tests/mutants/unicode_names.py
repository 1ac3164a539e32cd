"""Mutants of the Unicode name rule (DEF-01, MEM-01, MEM-09, KB-01): each is a plausible
way to get "names in any script" wrong, and names the cases that must catch it."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable

from capconf.simulator.core import unicode_names
from capconf.simulator.memory import binding as memory_binding
from capconf.simulator.memory import names as memory_names
from mutants.base import Mutant

_REAL = unicode_names.unicode_reason


def _install(reason: Callable[[str, str], str | None]) -> None:
    """Every module that checks names reads the rule through one of these two names."""
    unicode_names.unicode_reason = reason
    memory_names.unicode_reason = reason  # type: ignore[attr-defined]


def _blind_to(drop: Callable[[str], bool]) -> Callable[[str, str], str | None]:
    """A checker that never looks at some characters (and stores them anyway)."""
    def reason(name: str, punctuation: str) -> str | None:
        return _REAL("".join(c for c in name if not drop(c)), punctuation)
    return reason


def _no_bidi() -> None:
    """Bidi formatting characters unknown to the checker: U+202E passes."""
    _install(_blind_to(lambda c: c in unicode_names.BIDI_CONTROLS))


def _no_invisible() -> None:
    """Zero-width and other default-ignorable characters skipped by the checker."""
    _install(_blind_to(lambda c: c in "\u200b\u200c\u200d\u2060\ufeff"))


def _no_control() -> None:
    """Control characters stripped before checking, kept in the name."""
    _install(_blind_to(lambda c: unicodedata.category(c) == "Cc"))


def _no_mixed_script() -> None:
    """Any letter of any script, mixed freely: Latin `a` + Cyrillic `а` passes."""
    def reason(name: str, punctuation: str) -> str | None:
        found = _REAL(name, punctuation)
        return None if found == "mixed_script" else found
    _install(reason)


def _normalise_then_check() -> None:
    """The classic: NFC applied before the check, the raw (NFD) name stored."""
    _install(lambda name, punctuation: _REAL(unicodedata.normalize("NFC", name), punctuation))


def _ascii_only() -> None:
    """The old rule: ASCII letters and digits only, so `翻译助手` and `笔记.md` fail."""
    _install(lambda name, punctuation: "charset" if not name.isascii()
             else _REAL(name, punctuation))


def _lossy_directory() -> None:
    """Private directory = the name with every non-ASCII character replaced by `_`."""
    real = memory_binding.private_directory_name

    def lossy(agent_name: str) -> str | None:
        if agent_name.isascii():
            return real(agent_name)
        return "u" + re.sub(r"[^A-Za-z0-9_-]", "_", agent_name).lower()
    memory_binding.private_directory_name = lossy


def _unicode_folded_directory() -> None:
    """Private directory hashed after full Unicode lower-casing: `Σοφία` and `σοφία`,
    two agents by the name rule, share one memory."""
    def folded(agent_name: str) -> str:
        return "_" + hashlib.sha256(agent_name.lower().encode()).hexdigest()[:32]
    memory_binding.unicode_directory_name = folded


MUTANTS: tuple[Mutant, ...] = (
    Mutant("names-bidi-allowed", "names may hold U+202E and other bidi controls",
           ("DEF-01", "MEM-09"), _no_bidi),
    Mutant("names-invisible-allowed", "names may hold a zero-width joiner",
           ("DEF-01", "MEM-09"), _no_invisible),
    Mutant("names-control-allowed", "names may hold control characters",
           ("DEF-01", "MEM-09"), _no_control),
    Mutant("names-mixed-script-allowed", "Latin mixed with Cyrillic look-alikes passes",
           ("DEF-01", "MEM-09", "KB-01", "SKILL-01"), _no_mixed_script),
    Mutant("names-normalised-not-checked", "an NFD name is normalised for the check and "
           "stored as written", ("DEF-01", "MEM-09"), _normalise_then_check),
    Mutant("names-ascii-only", "agent, skill, source and memory file names limited to ASCII",
           ("DEF-01", "MEM-09", "MEM-01", "SKILL-01", "KB-01"), _ascii_only),
    Mutant("memory-unicode-dir-lossy", "non-ASCII letters of an agent name dropped from "
           "its private directory", ("MEM-01", "MEM-04"), _lossy_directory),
    Mutant("memory-unicode-dir-case-folded", "Unicode case folded into the private "
           "directory", ("MEM-01", "MEM-04"), _unicode_folded_directory),
)
