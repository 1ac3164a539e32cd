"""Names in any script: the rule shared by agent, skill, knowledge-source and memory
file names (DEF-01, SKILL, KB-01, MEM-09).

A name is shown to people and used as a key, so it must be one unambiguous string: the
same characters on screen mean the same name, and different names look different. The
rules, in checking order (the first failing rule is the reason):

- no control characters (Cc): they are invisible or move the cursor;
- no bidirectional formatting characters (Bidi_Control): U+202E turns ``txt.exe`` into a
  name that reads ``exe.txt`` ("Trojan Source");
- no other default-ignorable characters (zero-width joiner/space, BOM, variation
  selectors, Hangul fillers, soft hyphen): two names that render the same would differ;
- NFC, checked and not applied: normalising silently would make two byte-different
  spellings one name on one system and two on another (macOS writes NFD); refusing keeps
  "as written" and "as stored" the same bytes in every runtime;
- NFKC-stable: fullwidth ``Ｒｅａｄ``, ligatures (``ﬁ``) and superscripts are refused, since
  they are compatibility look-alikes of other names;
- only letters (L*), combining marks (M*) and decimal digits (Nd) plus a short ASCII
  punctuation set (``-`` and ``_``; ``.`` for skills, knowledge sources and files);
- a letter or digit first;
- every letter from a recommended script of UTS #31 Table 5 (no historic or limited-use
  scripts, which fonts rarely show and reviewers cannot read);
- one script, or a UTS #39 "highly restrictive" combination: Latin + Han + Hiragana +
  Katakana, Latin + Han + Bopomofo, Latin + Han + Hangul. This refuses the confusables that
  matter (Latin ``a`` with Cyrillic ``а``) with a table of scripts instead of the 6,000-line
  confusables list; whole-script confusables (an all-Cyrillic ``раураl``) are allowed,
  as browsers allow them in domain names under the same restriction level.

Comparison stays ASCII-only case-insensitive (``core.names.ascii_fold``): ``Σοφία`` and
``σοφία`` are two names, because Unicode case folding differs between runtimes and
Unicode versions, and ASCII folding is the same everywhere.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from capconf.simulator.core.scripts import COMMON, INHERITED, RECOMMENDED, script_of

BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt), as inclusive ranges.
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)

# UTS #39 section 5.2, "Highly Restrictive": the script sets a name may span.
ALLOWED_SCRIPT_SETS: tuple[frozenset[str], ...] = (
    frozenset({"Latn", "Hani", "Hira", "Kana"}),
    frozenset({"Latn", "Hani", "Bopo"}),
    frozenset({"Latn", "Hani", "Hang"}),
)


@dataclass(frozen=True)
class UnicodeRule:
    reason: str
    message: str


# The rule table in checking order (SPEC.md's table is generated from it).
UNICODE_RULES: tuple[UnicodeRule, ...] = (
    UnicodeRule("control", "contains a control character"),
    UnicodeRule("bidi", "contains a bidirectional formatting character (U+061C, U+200E, "
                        "U+200F, U+202A-U+202E, U+2066-U+2069)"),
    UnicodeRule("invisible", "contains an invisible (default-ignorable) character such as "
                             "U+200B zero-width space or U+200D zero-width joiner"),
    UnicodeRule("not_nfc", "is not in Unicode Normalization Form C"),
    UnicodeRule("compatibility", "contains a compatibility character that NFKC would "
                                 "change (fullwidth, ligature, superscript, circled)"),
    UnicodeRule("charset", "may use only letters, combining marks and decimal digits of "
                           "any script, and the ASCII punctuation allowed for it"),
    UnicodeRule("leading", "must start with a letter or digit"),
    UnicodeRule("script", "uses a letter of a script outside UTS #31's recommended scripts"),
    UnicodeRule("mixed_script", "mixes scripts (allowed: one script, or Latin with Han + "
                                "Hiragana + Katakana, Han + Bopomofo or Han + Hangul)"),
)
_RULES = {rule.reason: rule for rule in UNICODE_RULES}


def _ignorable(char: str) -> bool:
    cp = ord(char)
    return any(first <= cp <= last for first, last in DEFAULT_IGNORABLE)


def _name_char(char: str, punctuation: str) -> bool:
    if char.isascii():
        return char.isalnum() or char in punctuation
    category = unicodedata.category(char)
    return category[0] in "LM" or category == "Nd"


def scripts_of(name: str) -> frozenset[str]:
    """The scripts of a name's letters and digits, Common and Inherited left out."""
    found = (script_of(c) for c in name if c.isalnum() or unicodedata.category(c)[0] == "M")
    return frozenset(s for s in found if s is not None and s not in (COMMON, INHERITED))


def _mixed(scripts: frozenset[str]) -> bool:
    return len(scripts) > 1 and not any(scripts <= allowed for allowed in ALLOWED_SCRIPT_SETS)


def unicode_reason(name: str, punctuation: str) -> str | None:
    """The first Unicode rule ``name`` breaks (a reason of ``UNICODE_RULES``), or None.
    Emptiness and length are the caller's (their units differ: code points or bytes)."""
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "control"
    if any(c in BIDI_CONTROLS for c in name):
        return "bidi"
    if any(_ignorable(c) for c in name):
        return "invisible"
    if unicodedata.normalize("NFC", name) != name:
        return "not_nfc"
    if unicodedata.normalize("NFKC", name) != name:
        return "compatibility"
    if not all(_name_char(c, punctuation) for c in name):
        return "charset"
    if name and not (name[0].isalpha() or unicodedata.category(name[0]) == "Nd"):
        return "leading"
    letters = [c for c in name if not c.isascii() or c.isalnum()]
    if any(script_of(c) is None for c in letters):
        return "script"
    if _mixed(scripts_of(name)):
        return "mixed_script"
    return None


def unicode_rule(reason: str) -> UnicodeRule:
    return _RULES[reason]


MAX_NAME_CHARS = 64


def name_problem(name: str, punctuation: str = "-_") -> str | None:
    """A sentence saying why ``name`` is not a valid agent/skill/source name, or None.
    At most 64 code points (not bytes: a Chinese name of 22 characters is as short to a
    reader as an English one of 22)."""
    if name == "":
        return "the name is empty"
    if len(name) > MAX_NAME_CHARS:
        return f"the name is longer than {MAX_NAME_CHARS} characters"
    reason = unicode_reason(name, punctuation)
    return None if reason is None else f"the name {_RULES[reason].message}"


FILE_NAME_PUNCTUATION = "._-"
"""A name that is also a folder's or a file's name (a skill package, a knowledge source, a
memory file) may hold a dot besides ``-`` and ``_``: one rule for all of them."""


def file_name_problem(name: str) -> str | None:
    """``name_problem`` for a name that is also a folder or file name."""
    return name_problem(name, FILE_NAME_PUNCTUATION)


def name_reason(name: str, punctuation: str = "-_") -> str | None:
    """Like ``name_problem`` but the reason code (``empty``, ``too_long`` or a rule)."""
    if name == "":
        return "empty"
    if len(name) > MAX_NAME_CHARS:
        return "too_long"
    return unicode_reason(name, punctuation)


# --- SPEC.md tables, generated from the code tables (``capconf.simulator.spec_tables``) ----

def _rules_table() -> str:
    rows = ["| order | reason | a name is refused when it ... |", "|---|---|---|"]
    rows += [f"| {i} | `{rule.reason}` | {rule.message} |"
             for i, rule in enumerate(UNICODE_RULES, 1)]
    return "\n".join(rows)


def _scripts_table() -> str:
    rows = ["| allowed script sets (UTS #39 highly restrictive) |", "|---|"]
    rows += ["| any one recommended script |"]
    rows += ["| " + " + ".join(sorted(s)) + " (any subset) |" for s in ALLOWED_SCRIPT_SETS]
    rows += ["", "Recommended scripts (UTS #31 Table 5, ISO 15924): "
             + ", ".join(f"`{s}`" for s in sorted(RECOMMENDED)) + "."]
    return "\n".join(rows)


SPEC_TABLES = {
    "unicode-name-rules": _rules_table,
    "unicode-script-sets": _scripts_table,
}
