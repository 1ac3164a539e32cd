"""The `capconf` command: exit statuses, exact prompt bytes, hostile files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from suite_runner import CliResult, run_cli

DEFINITIONS = Path(__file__).resolve().parent.parent / "definitions"


def capconf(*args: str, cwd: Path | None = None) -> CliResult[bytes]:
    return run_cli(args, cwd=cwd, env=dict(os.environ), timeout=120, text=False)


def test_validate_clean_warning_error_statuses(tmp_path: Path) -> None:
    clean = tmp_path / "clean.yaml"
    clean.write_text("name: ok\ndescription: fine\ntools: [read]\nprompt: Work.\n")
    assert capconf("validate", str(clean)).returncode == 0
    # a linter: warnings pass unless --strict; errors always fail
    assert capconf("validate", str(DEFINITIONS / "03-unknown-tools.md")).returncode == 0
    assert capconf("validate", "--strict",
                   str(DEFINITIONS / "03-unknown-tools.md")).returncode == 1
    assert capconf("validate", "--strict", str(clean)).returncode == 0
    assert capconf("validate", str(DEFINITIONS / "10-wrong-types.yaml"),
                   "--mode", "save").returncode == 2


def test_validate_json_lists_canonical_tools_and_located_diagnostics() -> None:
    proc = capconf("validate", str(DEFINITIONS / "02-mixed-case-tools.yaml"), "--json")
    out = json.loads(proc.stdout)
    assert out["tools"] == ["read", "WebFetch", "grep", "glob"]
    dup = [d for d in out["diagnostics"] if d["code"] == "TOOL-DUPLICATE"]
    assert dup and dup[0]["line"] == 3 and dup[0]["path"] == ["tools", 2]
    assert proc.returncode == 0 and out["status"] == 1  # warnings: reported, not failing


def test_validate_human_output_names_file_line_column() -> None:
    proc = capconf("validate", str(DEFINITIONS / "03-unknown-tools.md"))
    text = proc.stdout.decode()
    assert "03-unknown-tools.md:4:" in text and "TOOL-UNKNOWN" in text and "WebSearch" in text


def test_prompt_prints_exactly_the_prompt_bytes(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text("frame: Frame text.\n")
    definition = tmp_path / "d.md"
    definition.write_text("---\nname: d\ndescription: d\ntools: Read\n---\n\nBody é.\n\n")
    proc = capconf("prompt", str(definition), "--world", str(world))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Frame text.\n\nBody é.\n".encode()


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = capconf("validate", str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2
    assert b"cannot read" in proc.stderr and b"Traceback" not in proc.stderr


def test_fifty_megabyte_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as handle:
        handle.write(b"name: big\ndescription: big\nprompt: |\n")
        handle.write((b"  " + b"x" * 1022 + b"\n") * (50 * 1024))
    proc = capconf("validate", str(big), "--json")
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert [d["code"] for d in json.loads(proc.stdout)["diagnostics"]] == ["DEF-TOO-LARGE"]


def test_non_utf8_and_malformed_files_get_located_errors(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"name: x\ndescription: \xff\xfe\nprompt: y\n")
    out = json.loads(capconf("validate", str(bad), "--json").stdout)
    assert out["diagnostics"][0]["code"] == "DEF-ENCODING"
    assert (out["diagnostics"][0]["line"], out["diagnostics"][0]["column"]) == (2, 14)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\ntools: [read\nprompt: y\n")
    proc = capconf("validate", str(broken), "--json")
    diag = json.loads(proc.stdout)["diagnostics"][0]
    assert proc.returncode == 2 and diag["code"] == "DEF-YAML-SYNTAX" and diag["line"] == 3


def test_matrix_lists_every_requirement_and_passes_for_active_musts() -> None:
    proc = capconf("matrix")
    text = proc.stdout.decode()
    assert "| TOOL-02 | MUST |" in text and "tool.canonical.camel-lower" in text
    assert proc.returncode == 0, proc.stderr.decode()
    strict = capconf("matrix", "--strict")  # no requirement is planned or untested any more
    assert strict.returncode == 0, strict.stdout.decode()[-2000:]


def test_smoke_reports_the_handshake() -> None:
    proc = capconf("smoke")
    assert proc.returncode == 0 and b"capconf-reference-simulator" in proc.stdout
    assert b"`hello` and `world.setup` answered" in proc.stdout
    dead = capconf("smoke", "--impl", "false")
    assert dead.returncode == 2 and b"crashed" in dead.stderr
    assert b"failed the handshake (`hello`)" in dead.stderr
    assert b"smoke failed at `hello` (crashed)" in dead.stderr


def test_smoke_names_the_request_that_failed_after_hello() -> None:
    """`hello` answered, `world.setup` crashed: the message blames `world.setup`."""
    fake = Path(__file__).resolve().parent.parent / "fake_impls" / "misbehave.py"
    dead = capconf("smoke", "--impl", f"{sys.executable} {fake} crash world.setup")
    err = dead.stderr.decode()
    assert dead.returncode == 2, err
    assert "failed `world.setup` (after answering `hello`); smoke failed" in err
    assert "panic: simulated crash in world.setup" in err  # its stderr tail
    assert "smoke failed at `world.setup` (crashed)" in err


def test_kb_search_text_json_and_refusal(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha\nrefund policy: 30 days\nomega\n")
    (docs / "b.md").write_text("no match here\nREFUND window\n")
    text = capconf("kb-search", "--root", str(tmp_path), "--glob", "docs/**/*.md", "refund")
    assert text.returncode == 0, text.stderr
    assert text.stdout.decode().splitlines()[:2] == ["docs/a.md:2: refund policy: 30 days",
                                                     "docs/b.md:2: REFUND window"]
    out = json.loads(capconf("kb-search", "--root", str(tmp_path), "--glob", "docs/*.md",
                             "--json", "refund", "days").stdout)
    assert [(h["path"], h["line"]) for h in out["hits"]] == [("docs/a.md", 2), ("docs/b.md", 2)]
    assert out["hit_cap_reached"] is False and out["byte_budget_reached"] is False
    none = capconf("kb-search", "--root", str(tmp_path), "--glob", "docs/*.md", "zebra")
    assert none.returncode == 1
    escape = capconf("kb-search", "--root", str(tmp_path), "--glob", "../**/*", "refund")
    assert escape.returncode == 2 and b"KB-SOURCE-OUTSIDE-WORKSPACE" in escape.stderr


def test_kb_search_keeps_a_source_whose_glob_reaches_an_escaping_link(tmp_path: Path) -> None:
    """Issue 9: the glob merely reaching a symlink out of the workspace refused the whole
    search (exit 2, no hits), although KB-07 keeps such a source and searches the rest."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "docs").mkdir(parents=True)
    outside.mkdir()
    (ws / "docs" / "a.md").write_text("refund policy\n")
    (outside / "secret.md").write_text("refund SECRET\n")
    (ws / "docs" / "out.md").symlink_to(outside / "secret.md")
    out = capconf("kb-search", "--root", str(ws), "--glob", "docs/*.md", "refund")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().splitlines()[0] == "docs/a.md:1: refund policy"
    assert b"SECRET" not in out.stdout
    assert b"docs/out.md (symlink-outside-workspace)" in out.stdout
    assert b"KB-SOURCE-OUTSIDE-WORKSPACE" in out.stderr


def test_edit_prints_or_writes_the_spliced_document(tmp_path: Path) -> None:
    agent = tmp_path / "agent.md"
    source = b"---\r\nname: a  # keep\r\ndescription: d\r\ntools: Read, webfech\r\n---\r\nBody\r\n"
    agent.write_bytes(source)
    proc = capconf("edit", str(agent), "--set", "tools=read,WebFetch", "--unknown")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == source.replace(b"Read, webfech", b"read, WebFetch")
    assert agent.read_bytes() == source  # printed, not written
    proc = capconf("edit", str(agent), "--remove", "tools=1", "--write")
    assert proc.returncode == 0 and agent.read_bytes() == source.replace(b", webfech", b"")


def test_edit_reports_unknown_names_and_refusals(tmp_path: Path) -> None:
    agent = tmp_path / "agent.md"
    agent.write_text("---\nname: a\ndescription: d\ntools: [Grpe]\n---\nBody\n")
    proc = capconf("edit", str(agent), "--set", "memory=private", "--unknown")
    assert proc.returncode == 0
    assert "agent.md:4:9: unknown tools `Grpe`; nearest: grep" in proc.stderr.decode()
    proc = capconf("edit", str(agent), "--remove", "tools=3")
    assert proc.returncode == 3 and b"no_such_entry" in proc.stderr


def test_candidates_for_a_world_file(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text("grantable: [read, WebFetch]\nmcp:\n  mcpServers:\n"
                     "    crm: {command: crm, enabled: false}\n")
    proc = capconf("candidates", "--world", str(world), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [c["name"] for c in out["tools"]["candidates"]] == ["read", "WebFetch"]
    assert out["mcp"]["candidates"][0]["state"] == "disabled"
