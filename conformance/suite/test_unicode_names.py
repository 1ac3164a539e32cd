"""Names in any script (DEF-01, MEM-01, MEM-09, KB-01, SKILL-01): a Chinese product's
users name their agents and memory files in Chinese; names stay unambiguous.

Checked as behaviour, not wording: a Unicode name loads and saves without an error, its
private memory round-trips a Unicode file name, and each class of unsafe name (bidi
override, zero-width joiner, control character, mixed-script look-alike, NFD spelling)
is refused with a located diagnostic or a structured tool error. The private directory's
*name* is the reference's choice; the suite checks only that it is one directory under
the subagent root, distinct per agent, and shared by names equal up to ASCII case.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness

WORLD = default_world()
ROOT, MAIN = "mem/agents", "mem/main"
MEMORY_WORLD = {"subagent_root": ROOT, "main_dir": MAIN, "main_enabled": False}

# Written with JSON-style escapes so the suite's own source shows every invisible code point.
BAD_NAMES: list[tuple[str, str]] = [
    ("bidi-override", "ab\u202ecd"),          # RIGHT-TO-LEFT OVERRIDE
    ("zero-width-joiner", "ab\u200dcd"),      # ZERO WIDTH JOINER
    ("control", "ab\u0007cd"),                # BEL
    ("mixed-script", "p\u0430ypal"),          # Latin p, CYRILLIC SMALL LETTER A, Latin ypal
    ("not-nfc", "cafe\u0301"),                # e + COMBINING ACUTE ACCENT (NFD)
]


def case(prefix: str, rows: list[tuple[str, tuple[Any, ...]]]) -> list[Any]:
    return [pytest.param(*values, id=suffix, marks=pytest.mark.case(f"{prefix}.{suffix}"))
            for suffix, values in rows]


def quoted(text: str) -> str:
    """A YAML double-quoted scalar with every non-ASCII code point escaped."""
    body = "".join(c if c.isascii() and c.isprintable() and c not in '"\\'
                   else f"\\u{ord(c):04X}" for c in text)
    return f'"{body}"'


def definition(name: str, memory: str | None = None, markdown: bool = True) -> str:
    mem = f"memory: {memory}\n" if memory else ""
    if markdown:
        return (f"---\nname: {quoted(name)}\ndescription: translates\ntools: [read]\n{mem}"
                "---\nTranslate.\n")
    return f"name: {quoted(name)}\ndescription: translates\ntools: [read]\n{mem}prompt: T.\n"


def setup_memory(impl: Harness) -> None:
    for root in (ROOT, MAIN):
        (impl.workspace / root).mkdir(parents=True, exist_ok=True)
    impl.setup(**WORLD, memory=MEMORY_WORLD)


def spawn(impl: Harness, name: str) -> str:
    result = impl.driver.request("agent.spawn", {"source": definition(name, "private")})
    return str(result["agent"])


def call(impl: Harness, agent: str, tool: str, args: Any) -> dict[str, Any]:
    out: dict[str, Any] = impl.driver.request("tool.call",
                                              {"agent": agent, "tool": tool, "args": args})
    return out


def errors(diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in diagnostics if d["severity"] == "error"]


def files_under(top: Path) -> list[str]:
    return sorted(p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file())


# --- DEF-01: agent names -----------------------------------------------------------------

@pytest.mark.req("DEF-01", "DEF-02")
@pytest.mark.parametrize("markdown", case("def.name.unicode.saves", [
    ("markdown", (True,)), ("yaml", (False,))]))
def test_a_chinese_agent_name_loads_and_saves(impl: Harness, markdown: bool) -> None:
    """Bug: an ASCII-only name rule, so the product's own users cannot save `翻译助手`."""
    impl.setup(**WORLD)
    source = definition("翻译助手", markdown=markdown)
    parsed = impl.parse(source, mode="save")
    assert parsed["loaded"] is True
    assert parsed["definition"]["name"] == "翻译助手"
    assert not [d for d in parsed["diagnostics"] if d["code"] == "DEF-BAD-NAME"]
    saved = impl.save(source)
    assert saved["saved"] is True, errors(saved["diagnostics"])
    assert impl.parse(saved["document"])["definition"]["name"] == "翻译助手"


@pytest.mark.req("DEF-01", "DEF-02", "DEF-03")
@pytest.mark.parametrize("name", case("def.name.unicode.refused", [
    (suffix, (name,)) for suffix, name in BAD_NAMES]))
def test_unsafe_agent_names_are_refused_at_the_name(impl: Harness, name: str) -> None:
    """Bug: a rule that accepts "any letter" and lets invisible, reordering or look-alike
    characters make two different agents look the same."""
    impl.setup(**WORLD)
    source = definition(name)
    parsed = impl.parse(source)
    assert parsed["loaded"] is True
    bad = [d for d in parsed["diagnostics"] if d["code"] == "DEF-BAD-NAME"]
    assert [(d["severity"], d["path"], d["line"]) for d in bad] == [("warning", ["name"], 2)]
    saved = impl.save(source)
    assert saved["saved"] is False
    assert "DEF-BAD-NAME" in {d["code"] for d in errors(saved["diagnostics"])}


@pytest.mark.case("def.name.unicode.cjk-with-latin")
@pytest.mark.req("DEF-01")
def test_cjk_with_latin_and_japanese_mixes_are_one_name(impl: Harness) -> None:
    """Bug: a "single script" rule without UTS #39's CJK sets, refusing `データ分析bot`."""
    impl.setup(**WORLD)
    for name in ("データ分析bot", "翻译Bot", "한국어번역", "Σοφία"):
        saved = impl.save(definition(name))
        assert saved["saved"] is True, (name, errors(saved["diagnostics"]))


@pytest.mark.case("def.name.unicode.length-in-code-points")
@pytest.mark.req("DEF-01", "DEF-02")
def test_the_name_limit_counts_code_points_not_utf16_units(impl: Harness) -> None:
    """Bug: the 64 limit counted in UTF-16 code units (a JavaScript string's length), so a
    name of 33-64 CJK Extension B ideographs (two units each) is refused."""
    impl.setup(**WORLD)
    ideographs = "".join(chr(0x20000 + i) for i in range(65))  # U+20000.. (Han, Lo)
    for length, valid in ((40, True), (64, True), (65, False)):
        source = (f"---\nname: {ideographs[:length]}\ndescription: d\ntools: [read]\n"
                  "---\nWork.\n")
        saved = impl.save(source, filename="ext-b.md")
        bad = [d for d in saved["diagnostics"] if d["code"] == "DEF-BAD-NAME"]
        assert (saved["saved"], bool(bad)) == (valid, not valid), (length, bad)


# --- MEM-01 / MEM-09: private memory of a Unicode agent, Unicode file names ---------------

@pytest.mark.case("memory.unicode.round-trip")
@pytest.mark.req("MEM-01", "MEM-09", "MEM-03")
def test_chinese_agent_keeps_a_chinese_memory_file(impl: Harness) -> None:
    """Bug: the private directory derived from an ASCII-only name, so a Chinese agent gets
    no memory, or a file `笔记.md` refused by an ASCII-only file-name rule."""
    setup_memory(impl)
    source = definition("翻译助手", "private")
    assert not errors(impl.parse(source, mode="save")["diagnostics"])
    tools = [t["name"] for t in impl.mounted(source)["tools"]]
    assert {"memory_write", "memory_read", "memory_search"} <= set(tools)
    agent = spawn(impl, "翻译助手")
    wrote = call(impl, agent, "memory_write", {"file": "笔记.md", "content": "术语：能力层"})
    assert wrote["ok"] is True, wrote
    read = call(impl, agent, "memory_read", {"file": "笔记.md"})
    assert read["ok"] is True and "术语：能力层" in str(read["content"]), read
    found = call(impl, agent, "memory_search", {"query": "术语：能力层"})
    assert found["ok"] is True and "笔记.md" in str(found["content"]), found
    directory = impl.memory_dir(source)
    assert directory is not None and directory.startswith(ROOT + "/"), directory
    assert files_under(impl.workspace / ROOT) == [f"{directory[len(ROOT) + 1:]}/笔记.md"]
    assert directory.isascii() or unicodedata.is_normalized("NFC", directory)
    assert files_under(impl.workspace / MAIN) == []
    resident = [p["text"] for p in impl.prompt(source)["parts"] if p["kind"] == "catalog.memory"]
    assert resident and "术语：能力层" in resident[0]


@pytest.mark.case("memory.unicode.directories-distinct")
@pytest.mark.req("MEM-01", "MEM-04")
def test_unicode_agents_get_distinct_directories_ascii_case_shares(impl: Harness) -> None:
    """Bug: a lossy mapping (non-ASCII letters dropped or replaced by `_`), so `翻译助手`
    and `翻译助理` share one "private" memory; or non-ASCII case folded one way here and
    another way by the file system."""
    setup_memory(impl)
    names = ["翻译助手", "翻译助理", "Σοφία", "σοφία", "翻译Bot"]
    for index, name in enumerate(names):
        agent = spawn(impl, name)
        assert call(impl, agent, "memory_write", {"file": "id.md", "content": f"n{index}"})["ok"]
    other = spawn(impl, "翻译bot")  # equal to 翻译Bot up to ASCII case: the same agent
    read = call(impl, other, "memory_read", {"file": "id.md"})
    assert read["ok"] is True and "n4" in str(read["content"]), read
    directories = {impl.memory_dir(definition(name, "private")) for name in names}
    assert len(directories) == len(names) and None not in directories, directories
    written = {f"{d}/id.md"[len(ROOT) + 1:] for d in directories if d is not None}
    assert set(files_under(impl.workspace / ROOT)) == written


@pytest.mark.req("MEM-09")
@pytest.mark.parametrize(("name", "reason"), case("memory.names.unicode", [
    ("bidi-override", ("ab\u202ecd.md", "bidi")),
    ("zero-width-joiner", ("ab\u200dcd.md", "invisible")),
    ("control", ("ab\u0007cd.md", "control")),
    ("mixed-script", ("p\u0430y.md", "mixed_script")),
    ("not-nfc", ("cafe\u0301.md", "not_nfc")),
    ("fullwidth", ("\uff41.md", "compatibility")),
    ("too-long-bytes", ("笔" * 21 + ".md", "too_long"))]))
def test_unsafe_unicode_file_names_get_a_structured_error(impl: Harness, name: str,
                                                          reason: str) -> None:
    """Bug: Unicode allowed by "is it a letter?" alone, so an invisible or reordering
    character makes two memory files look the same, or 64 is counted in characters."""
    setup_memory(impl)
    agent = spawn(impl, "reviewer")
    result = call(impl, agent, "memory_write", {"file": name, "content": "x"})
    assert result["ok"] is False, f"{name!r} must be refused ({reason}); got {result}"
    assert (result["error_code"], result["error_detail"]["reason"]) == (
        "MEM-BAD-FILE-NAME", reason)
    assert files_under(impl.workspace / ROOT) == []


@pytest.mark.case("memory.names.unicode-accepted")
@pytest.mark.req("MEM-09")
def test_unicode_file_names_of_one_script_are_accepted(impl: Harness) -> None:
    """Bug: only CJK special-cased; Cyrillic or Greek names with the Latin `.md` suffix
    refused as "mixed script"."""
    setup_memory(impl)
    agent = spawn(impl, "reviewer")
    for name in ("笔记.md", "заметки.md", "Σημειώσεις.md", "café.md", "メモ-1.md"):
        result = call(impl, agent, "memory_write", {"file": name, "content": "x"})
        assert result["ok"] is True, (name, result)


# --- KB-01 / SKILL-01: knowledge-source and skill names ----------------------------------

def kb_definition(name: str) -> str:
    return (f"name: reader\ndescription: reads\ntools: [read]\nknowledge:\n"
            f"  - {{name: {quoted(name)}, glob: 'docs/*.md'}}\nprompt: Read.\n")


@pytest.mark.req("KB-01")
@pytest.mark.parametrize(("name", "valid"), case("kb.source.name-unicode", [
    ("chinese", ("产品手册", True)), ("mixed-script", ("m\u0430nual", False)),
    ("bidi-override", ("a\u202eb", False))]))
def test_knowledge_source_names_in_any_script(impl: Harness, name: str, valid: bool) -> None:
    """Bug: an ASCII-only source-name rule, or one that lets a look-alike through."""
    impl.setup(**WORLD)
    (impl.workspace / "docs").mkdir(exist_ok=True)
    (impl.workspace / "docs" / "a.md").write_text("needle\n", encoding="utf-8")
    parsed = impl.parse(kb_definition(name))
    bad = [d["path"] for d in parsed["diagnostics"] if d["code"] == "KB-SOURCE-NAME-INVALID"]
    assert bad == ([] if valid else [["knowledge", 0]])
    assert impl.save(kb_definition(name))["saved"] is valid


@pytest.mark.req("SKILL-01", "SKILL-04")
@pytest.mark.parametrize(("name", "valid"), case("skill.name-unicode", [
    ("chinese", ("翻译规范", True)), ("mixed-script", ("p\u0430ypal", False))]))
def test_skill_names_in_any_script(impl: Harness, tmp_path: Path, name: str,
                                   valid: bool) -> None:
    """Bug: an ASCII-only skill-name rule (a Chinese skill is never found), or one that
    lets a Latin/Cyrillic look-alike of another skill into the catalog."""
    layer = tmp_path / "system"
    (layer / "s").mkdir(parents=True)
    (layer / "s" / "SKILL.md").write_text(
        f"---\nname: {quoted(name)}\ndescription: house style\n---\nBody.\n", encoding="utf-8")
    impl.setup(**WORLD, skills={"layers": {"system": str(layer)}})
    source = ("name: writer\ndescription: writes\ntools: [read]\n"
              f"skills: [{quoted(name)}]\nprompt: W.\n")
    agent = str(impl.driver.request("agent.spawn", {"source": source})["agent"])
    resolved = impl.driver.request("skills.resolved", {"agent": agent})["skills"]
    assert [s["name"] for s in resolved] == ([name] if valid else [])
    used = call(impl, agent, "use_skill", {"name": name})
    assert used["ok"] is valid, used
