"""KB-07: no knowledge glob reads a byte outside the workspace.

Every hostile pattern is tried three ways: the lexical check (the reason it is refused),
save-mode validation (an error), and a real search with the checks bypassed as far as the
API allows, while every open/scandir the process makes is recorded. The canary file
outside the workspace holds the query term; it must never be opened, listed or found.
"""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.simulator.core.diagnostics import Location, Mode, Severity
from capconf.simulator.definition.declarations import KnowledgeDeclaration
from capconf.simulator.knowledge.globs import GLOB_RULES, RejectReason, check_glob
from capconf.simulator.knowledge.kbsearch import call_kb_search, run_kb_search
from capconf.simulator.knowledge.sources import (
    KnowledgeResolution,
    KnowledgeSource,
    check_knowledge_requires_read,
    knowledge_catalog_section,
    parse_knowledge_world,
    resolve_knowledge,
    validate_declarations,
)
from capconf.simulator.knowledge.walk import walk_source

CANARY = "CANARYTOKEN"
R = RejectReason

# (pattern, reason the lexical check gives; None = lexically fine, the walk must stop it)
HOSTILE: list[tuple[str, RejectReason | None]] = [
    ("/etc/passwd", R.ABSOLUTE),
    ("/", R.ABSOLUTE),
    ("/**", R.ABSOLUTE),
    ("//server/share/x", R.ABSOLUTE),
    ("{outside}/canary.txt", R.BRACE),
    ("../outside/canary.txt", R.PARENT_SEGMENT),
    ("..", R.PARENT_SEGMENT),
    ("../**", R.PARENT_SEGMENT),
    ("docs/../../outside/*", R.PARENT_SEGMENT),
    ("./../outside/canary.txt", R.PARENT_SEGMENT),
    ("docs/**/../../outside/*", R.PARENT_SEGMENT),
    ("**/../*", R.PARENT_SEGMENT),
    ("docs/..", R.PARENT_SEGMENT),
    ("~/canary.txt", R.HOME),
    ("~", R.HOME),
    ("~root/.ssh/id_rsa", R.HOME),
    ("docs/~/x", R.HOME),
    ("C:/Windows/win.ini", R.DRIVE_OR_SCHEME),
    ("c:canary.txt", R.DRIVE_OR_SCHEME),
    ("file:///etc/passwd", R.DRIVE_OR_SCHEME),
    ("docs/a.md:stream", R.DRIVE_OR_SCHEME),
    ("..\\outside\\canary.txt", R.BACKSLASH),
    ("docs\\..\\..\\outside\\*", R.BACKSLASH),
    ("\\\\server\\share\\x", R.BACKSLASH),
    ("C:\\outside", R.BACKSLASH),
    ("docs/\\../x", R.BACKSLASH),
    ("docs/\x00/../x", R.CONTROL_CHARACTER),
    ("canary.txt\x00.md", R.CONTROL_CHARACTER),
    ("\n/etc/passwd", R.CONTROL_CHARACTER),
    ("docs/\r/x", R.CONTROL_CHARACTER),
    ("docs/\u202e/x", R.CONTROL_CHARACTER),
    ("docs/\u2028x", R.CONTROL_CHARACTER),
    ("%2e%2e/outside/canary.txt", R.PERCENT_ENCODING),
    ("%2E%2E%2Foutside", R.PERCENT_ENCODING),
    ("docs%2f..%2f..%2fx", R.PERCENT_ENCODING),
    ("\uff0e\uff0e/outside/canary.txt", R.UNICODE_LOOKALIKE),
    ("..\uff0foutside\uff0fcanary.txt", R.UNICODE_LOOKALIKE),
    ("\u2024\u2024/outside/x", R.UNICODE_LOOKALIKE),
    ("\uff0fetc/passwd", R.UNICODE_LOOKALIKE),
    ("\uff5e/x", R.UNICODE_LOOKALIKE),
    ("$HOME/canary.txt", R.ENV_VARIABLE),
    ("${HOME}/x", R.ENV_VARIABLE),
    (" /etc/passwd", R.WHITESPACE_EDGE),
    ("docs/*.md ", R.WHITESPACE_EDGE),
    ("{..,docs}/*", R.BRACE),
    ("docs/./../x", R.PARENT_SEGMENT),
    ("docs/./x", R.DOT_SEGMENT),
    ("docs/.../x", R.DOT_SEGMENT),
    ("docs//x", R.EMPTY_SEGMENT),
    ("docs/", R.EMPTY_SEGMENT),
    ("", R.EMPTY),
    ("./", R.EMPTY),
    ("x" * 1025, R.TOO_LONG),
    # lexically fine: only the walk stands between these and the outside
    ("link_dir/canary.txt", None),
    ("link_dir/**", None),
    ("abs_dir/*", None),
    ("link_file.txt", None),
    ("chain.txt", None),
    ("docs/deep.txt", None),
    ("zero.txt", None),
    ("loop.txt", None),
    ("**", None),
    ("**/*", None),
    ("*", None),
    ("*/*", None),
    ("[.][.]/outside/*", None),
    ("?./outside/*", None),
    ("back/**", None),
]


@pytest.fixture()
def world(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "canary.txt").write_text(f"{CANARY} needle\n")
    (outside / "sub" / "canary.txt").write_text(f"{CANARY} needle\n")
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "inside.txt").write_text("inside needle\n")
    (ws / "link_dir").symlink_to("../outside")
    (ws / "abs_dir").symlink_to(outside)
    (ws / "link_file.txt").symlink_to("../outside/canary.txt")
    (ws / "chain2.txt").symlink_to(outside / "canary.txt")
    (ws / "chain.txt").symlink_to("chain2.txt")
    (ws / "docs" / "deep.txt").symlink_to("../../outside/canary.txt")
    (ws / "zero.txt").symlink_to("/dev/zero")
    (ws / "loop.txt").symlink_to("loop2.txt")
    (ws / "loop2.txt").symlink_to("loop.txt")
    (outside / "back").symlink_to(ws / "docs")
    (ws / "back").symlink_to("../outside/back")  # out and back in: still a way out
    (ws / "in_link.txt").symlink_to("docs/inside.txt")  # inside -> inside: allowed
    return ws


@contextmanager
def record_io() -> Iterator[list[tuple[str, str]]]:
    """Record every object the process opens or lists while searching. Opens are recorded
    by what was really opened (the descriptor's /proc/self/fd link, so a name opened
    relative to a directory descriptor is judged by its real location, and a refused
    open of a symlink records nothing); listings of a descriptor by that descriptor."""
    seen: list[tuple[str, str]] = []
    real_open, real_os_open = builtins.open, os.open
    real_scandir, real_listdir = os.scandir, os.listdir

    def _p(path: Any) -> str:
        if isinstance(path, int):
            return os.readlink(f"/proc/self/fd/{path}")
        return os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)

    def rec_open(file: Any, *a: Any, **k: Any) -> Any:
        seen.append(("open", _p(file)))
        return real_open(file, *a, **k)

    def rec_os_open(path: Any, *a: Any, **k: Any) -> int:
        fd = real_os_open(path, *a, **k)
        seen.append(("os.open", _p(fd)))
        return fd

    def rec_scandir(path: Any = ".") -> Any:
        seen.append(("scandir", _p(path)))
        return real_scandir(path)

    def rec_listdir(path: Any = ".") -> list[str]:
        seen.append(("listdir", _p(path)))
        return real_listdir(path)

    with mock.patch.object(builtins, "open", rec_open), \
            mock.patch.object(io, "open", rec_open), \
            mock.patch.object(os, "open", rec_os_open), \
            mock.patch.object(os, "scandir", rec_scandir), \
            mock.patch.object(os, "listdir", rec_listdir):
        yield seen


def _inside(path: str, root: Path) -> bool:
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    return real == base or real.startswith(base + os.sep)


def test_the_battery_is_large_enough() -> None:
    assert len(HOSTILE) >= 40
    assert len({p for p, _ in HOSTILE}) == len(HOSTILE)
    # every escape rule of the table is exercised by at least one pattern
    assert {r.reason for r in GLOB_RULES} <= {reason for _, reason in HOSTILE}


@pytest.mark.parametrize("pattern,reason", HOSTILE, ids=[repr(p)[:40] for p, _ in HOSTILE])
def test_hostile_pattern_is_refused_lexically(pattern: str, reason: RejectReason | None
                                              ) -> None:
    rejection = check_glob(pattern)
    assert (None if rejection is None else rejection.reason) == reason


@pytest.mark.parametrize("pattern,reason", HOSTILE, ids=[repr(p)[:40] for p, _ in HOSTILE])
def test_hostile_pattern_never_reads_outside(world: Path, pattern: str,
                                             reason: RejectReason | None) -> None:
    source = KnowledgeDeclaration("kb", pattern, Location(("knowledge", 0)))
    with record_io() as seen:
        result = run_kb_search(world, [source], f"needle {CANARY}")
    outside = [(op, p) for op, p in seen if not _inside(p, world)]
    assert outside == []
    assert all(CANARY not in h.text for h in result.hits)
    assert all(_inside(str(world / h.path), world) for h in result.hits)
    if reason is not None:
        assert [(r.name, r.reason) for r in result.rejected_sources] == [("kb", str(reason))]
        assert result.files_searched == 0


# What save mode says about the patterns only the walk can stop. A pattern that reaches
# an escaping symlink is an error; one that can reach nothing outside (a loop, a dot
# class the walk never produces) merely matches nothing. A link whose resolution passes
# outside and comes back in (`back -> ../outside/back -> ws/docs`) leaves the workspace:
# the outside hop is not ours and may point anywhere by the time it is followed.
WALK_SAVE: dict[str, tuple[str, Severity]] = {
    "link_dir/canary.txt": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "link_dir/**": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "abs_dir/*": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "link_file.txt": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "chain.txt": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "docs/deep.txt": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "zero.txt": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "**": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "**/*": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "*": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "*/*": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
    "loop.txt": ("KB-SOURCE-MATCHES-NOTHING", Severity.WARNING),
    "[.][.]/outside/*": ("KB-SOURCE-MATCHES-NOTHING", Severity.WARNING),
    "?./outside/*": ("KB-SOURCE-MATCHES-NOTHING", Severity.WARNING),
    "back/**": ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.ERROR),
}


def test_every_walk_case_has_a_save_expectation() -> None:
    assert set(WALK_SAVE) == {p for p, r in HOSTILE if r is None}


@pytest.mark.parametrize("pattern,reason", HOSTILE, ids=[repr(p)[:40] for p, _ in HOSTILE])
def test_hostile_pattern_in_save_mode(world: Path, pattern: str,
                                      reason: RejectReason | None) -> None:
    source = KnowledgeDeclaration("kb", pattern, Location(("knowledge", 0)))
    with record_io() as seen:
        res = resolve_knowledge([source], world, Mode.SAVE)
    assert res is not None
    assert [(op, p) for op, p in seen if not _inside(p, world)] == []
    first = res.diagnostics[0]
    assert first.location.path == ("knowledge", 0, "glob")
    if reason is None:
        assert (first.code, first.severity) == WALK_SAVE[pattern]
        # KB-07: a source reaching an escaping symlink is kept in both modes (the link
        # is never followed); only a lexical rejection drops it.
        assert [s.name for s in res.sources] == ["kb"]
        return
    rejection = check_glob(pattern)
    assert rejection is not None
    assert first.code == ("KB-SOURCE-OUTSIDE-WORKSPACE" if rejection.escape
                          else "KB-GLOB-INVALID")
    assert first.severity is Severity.ERROR and res.sources == ()
    assert str(reason) in first.message


def test_parse_mode_keeps_a_source_with_an_escaping_symlink_but_warns(world: Path) -> None:
    source = KnowledgeDeclaration("kb", "*.txt", Location(("knowledge", 0)))
    res = resolve_knowledge([source], world, Mode.PARSE)
    assert res is not None and [s.name for s in res.sources] == ["kb"]
    codes = [(d.code, d.severity) for d in res.diagnostics]
    assert ("KB-SOURCE-OUTSIDE-WORKSPACE", Severity.WARNING) in codes
    r = run_kb_search(world, res.sources, "needle")
    assert [h.path for h in r.hits] == ["in_link.txt"]
    assert {(s.path, str(s.reason)) for s in r.skipped} == {
        ("chain.txt", "symlink-outside-workspace"),
        ("chain2.txt", "symlink-outside-workspace"),
        ("link_file.txt", "symlink-outside-workspace"),
        ("zero.txt", "symlink-outside-workspace"),
        ("loop.txt", "symlink-broken"),
        ("loop2.txt", "symlink-broken"),
    }
    assert "skipped: zero.txt (symlink-outside-workspace)" in r.to_text()


def test_lexically_bad_source_in_a_stale_resolution_is_refused_at_search_time(
        world: Path) -> None:
    stale = KnowledgeResolution(
        (KnowledgeSource("kb", "../outside/*", "../outside/*", Location(("knowledge", 0))),),
        ())
    with record_io() as seen:
        result = call_kb_search(stale, world, {"query": "needle"})
    assert [p for _, p in seen if not _inside(p, world)] == []
    body = result.to_json()
    assert body["ok"] is True and body["content"]["files_searched"] == 0
    assert body["content"]["hits"] == [] and "rejected_sources" not in body["content"]


def test_directory_symlink_inside_the_workspace_is_not_descended(world: Path) -> None:
    (world / "docs_link").symlink_to("docs")
    walk = walk_source(world, "docs_link/*")
    assert walk.files == ()
    assert [(s.path, str(s.reason)) for s in walk.skipped] == [
        ("docs_link", "directory-symlink-not-followed")]


def test_a_workspace_that_is_itself_a_symlink_works(world: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(world)
    r = run_kb_search(alias, [KnowledgeDeclaration("kb", "docs/*.txt", Location())], "needle")
    assert [h.path for h in r.hits] == ["docs/inside.txt"]


def test_valid_globs_pass() -> None:
    for glob in ("docs/**/*.md", "./docs/*.md", "*.txt", "a/b/c.md", "docs/[ab]*.md",
                 "notes/2024-??.md", "docs/a..b.md", "docs/.hidden/*.md"):
        assert check_glob(glob) is None, glob


def test_source_names_and_duplicates() -> None:
    decls = [KnowledgeDeclaration(n, "docs/*.md", Location(("knowledge", i)))
             for i, n in enumerate(["docs", "bad name", "docs", "-x", "ok.v2"])]
    sources, diags = validate_declarations(decls, Mode.SAVE)
    assert [s.name for s in sources] == ["docs", "ok.v2"]
    assert [(d.code, d.location.path) for d in diags] == [
        ("KB-SOURCE-NAME-INVALID", ("knowledge", 1)),
        ("KB-SOURCE-DUPLICATE", ("knowledge", 2)),
        ("KB-SOURCE-NAME-INVALID", ("knowledge", 3)),
    ]
    assert [d.severity for d in diags] == [Severity.ERROR, Severity.WARNING, Severity.ERROR]


def test_source_matching_nothing_is_reported(tmp_path: Path) -> None:
    res = resolve_knowledge([KnowledgeDeclaration("kb", "nothing/*.md", Location())],
                            tmp_path, Mode.PARSE)
    assert res is not None and [s.name for s in res.sources] == ["kb"]
    assert [(d.code, d.severity) for d in res.diagnostics] == [
        ("KB-SOURCE-MATCHES-NOTHING", Severity.INFO)]


def test_catalog_has_one_line_per_source_and_no_content(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("SECRET CONTENT\n")
    decls = [KnowledgeDeclaration("manual", "./docs/**/*.md", Location()),
             KnowledgeDeclaration("policy", "policy/*.md", Location())]
    with record_io() as seen:
        res = resolve_knowledge(decls, tmp_path, Mode.PARSE)
    # never preloaded: directories are opened to be listed, no file is opened
    assert not [p for op, p in seen if op in ("open", "os.open") and not os.path.isdir(p)]
    section = knowledge_catalog_section(res)
    assert section == (
        "## Knowledge sources\n"
        "Search these with kb_search; a hit is a line, not an answer: open the file with "
        "read.\n"
        "- manual: ./docs/**/*.md\n"
        "- policy: policy/*.md")


@pytest.mark.parametrize("declared", [None, []])
def test_undeclared_knowledge_has_no_section(tmp_path: Path, declared: Any) -> None:
    assert resolve_knowledge(declared, tmp_path, Mode.SAVE) is None
    assert knowledge_catalog_section(None) is None


def test_all_sources_rejected_gives_no_section(tmp_path: Path) -> None:
    res = resolve_knowledge([KnowledgeDeclaration("kb", "/etc/*", Location())], tmp_path,
                            Mode.PARSE)
    assert res is not None and res.sources == ()
    assert knowledge_catalog_section(res) is None


@pytest.mark.parametrize("mode,severity", [(Mode.PARSE, Severity.WARNING),
                                           (Mode.SAVE, Severity.ERROR)])
def test_knowledge_without_read(mode: Mode, severity: Severity) -> None:
    loc = Location(("knowledge",), 4, 1)
    diag = check_knowledge_requires_read(True, False, mode, loc)
    assert diag is not None
    assert (diag.code, diag.severity, diag.requirement, diag.location) == (
        "KB-REQUIRES-READ", severity, "KB-08", loc)
    assert "Add `read` to `tools`" in diag.message
    assert check_knowledge_requires_read(True, True, mode, loc) is None
    assert check_knowledge_requires_read(False, False, mode, loc) is None


def test_knowledge_world_accepts_nothing_else(tmp_path: Path) -> None:
    from capconf.simulator.core.diagnostics import WorldSetupError

    assert parse_knowledge_world(None, tmp_path).workspace == tmp_path
    assert parse_knowledge_world({}, tmp_path).workspace == tmp_path
    with pytest.raises(WorldSetupError) as err:
        parse_knowledge_world({"root": "/"}, tmp_path)
    assert err.value.path == ("knowledge", "root")


def test_tool_arguments_are_checked(world: Path) -> None:
    res = resolve_knowledge([KnowledgeDeclaration("kb", "docs/*.txt", Location())], world,
                            Mode.PARSE)
    assert res is not None
    cases = [
        ({"query": "needle", "scope": "global"}, "KB-BAD-ARGUMENTS"),
        ({"query": 3}, "KB-BAD-ARGUMENTS"),
        ({"query": "   "}, "KB-BAD-QUERY"),
        ({"query": "needle", "sources": ["nope"]}, "KB-UNKNOWN-SOURCE"),
        ({"query": "needle", "sources": "kb"}, "KB-BAD-ARGUMENTS"),
        ("needle", "KB-BAD-ARGUMENTS"),
    ]
    for args, code in cases:
        out = call_kb_search(res, world, args).to_json()
        assert (out["ok"], out["error_code"]) == (False, code), args
    ok = call_kb_search(res, world, {"query": "needle", "sources": ["kb"]}).to_json()
    assert ok["ok"] is True
    assert [(h["path"], h["line"]) for h in ok["content"]["hits"]] == [("docs/inside.txt", 1)]


SEG = st.sampled_from(["docs", "a", ".h", "x.md", "A.MD", "b.txt", "*", "*.md", "?.md",
                       "[ab]*", "**", ".*"])
NAME = st.sampled_from(["docs", "a", ".h", "x.md", "A.MD", "b.txt", "a.md", "é.md", "x\n"])


@settings(max_examples=150, deadline=None)
@given(st.lists(SEG, min_size=1, max_size=4), st.lists(NAME, min_size=1, max_size=4))
def test_property_compiled_pattern_agrees_with_wcmatch(segs: list[str],
                                                       names: list[str]) -> None:
    from wcmatch import glob as wc_glob

    from capconf.simulator.knowledge.globs import GLOB_FLAGS
    from capconf.simulator.knowledge.walk import compile_pattern

    pattern, path = "/".join(segs), "/".join(names)
    assert compile_pattern(pattern).match(path) == wc_glob.globmatch(path, pattern,
                                                                     flags=GLOB_FLAGS)
