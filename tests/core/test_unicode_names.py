"""The Unicode name rule and its script table (core.unicode_names, core.scripts)."""

from __future__ import annotations

import unicodedata

import pytest

from capconf.simulator.core import scripts
from capconf.simulator.core.unicode_names import UNICODE_RULES, name_reason
from capconf.simulator.definition.parse import _suggest_name
from capconf.simulator.memory.binding import private_directory_name


def test_script_table_is_sorted_and_disjoint() -> None:
    for (a, b, _), (c, _, _) in zip(scripts.RANGES, scripts.RANGES[1:], strict=False):
        assert a <= b < c
    assert {s for _, _, s in scripts.RANGES} <= scripts.RECOMMENDED | {"Zyyy", "Zinh"}


@pytest.mark.skipif(unicodedata.unidata_version != scripts.TABLE_UNICODE_VERSION,
                    reason="the table was generated with another Unicode version's categories "
                    f"({scripts.TABLE_UNICODE_VERSION}, this Python has "
                    f"{unicodedata.unidata_version})")
def test_script_table_is_what_the_generator_writes() -> None:
    """The table is data generated from fontTools' Script property (pinned in the test
    extras, so this runs wherever the tests do on the table's Unicode version)."""
    assert tuple(scripts.generate()) == scripts.RANGES


@pytest.mark.parametrize(("char", "script"), [
    ("a", "Latn"), ("\u0430", "Cyrl"), ("\u03b1", "Grek"), ("翻", "Hani"), ("々", "Hani"),
    ("デ", "Kana"), ("の", "Hira"), ("한", "Hang"), ("ㄅ", "Bopo"), ("ー", "Zyyy"),
    ("7", "Zyyy"), ("\u0301", "Zinh"), ("\U00010330", None)])
def test_script_of(char: str, script: str | None) -> None:
    assert scripts.script_of(char) == script


@pytest.mark.parametrize(("name", "reason"), [
    ("翻译助手", None), ("データ分析bot", None), ("한국어bot", None), ("ㄅㄆ漢字", None),
    ("Σοφία", None), ("सहायक", None), ("café", None), ("code-reviewer_2", None),
    ("", "empty"), ("a" * 65, "too_long"), ("翻" * 64, None),
    ("a\x07", "control"), ("a\u202e", "bidi"), ("a\u200d", "invisible"),
    ("a\u3164", "invisible"), ("cafe\u0301", "not_nfc"), ("ｒead", "compatibility"),
    ("\u212ab", "not_nfc"), ("a b", "charset"), ("a.b", "charset"), ("-a", "leading"),
    ("\u0301a", "leading"), ("\U00010330", "script"), ("p\u0430ypal", "mixed_script"),
    ("한국어デ", "mixed_script"), ("ㄅ한", "mixed_script")])
def test_agent_name_reasons(name: str, reason: str | None) -> None:
    assert name_reason(name) == reason


def test_every_rule_has_a_reason_row() -> None:
    assert [r.reason for r in UNICODE_RULES] == [
        "control", "bidi", "invisible", "not_nfc", "compatibility", "charset", "leading",
        "script", "mixed_script"]


@pytest.mark.parametrize(("name", "suggestion"), [
    ("My Agent!", "my-agent"), ("翻译 助手", "翻译-助手"), ("a\u202eb", "ab"),
    ("ｒead bot", "read-bot"), ("!!!", "my-agent")])
def test_suggested_names_are_valid(name: str, suggestion: str) -> None:
    assert _suggest_name(name) == suggestion
    assert name_reason(suggestion) is None


def test_private_directories_of_unicode_names() -> None:
    chinese = private_directory_name("翻译助手")
    assert chinese is not None and chinese.startswith("_") and len(chinese) == 33
    assert chinese.isascii()
    assert private_directory_name("翻译Bot") == private_directory_name("翻译bot")
    assert private_directory_name("Σοφία") != private_directory_name("σοφία")
    assert private_directory_name("p\u0430ypal") is None
