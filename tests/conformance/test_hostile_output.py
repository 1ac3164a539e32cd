"""Issue 38, end to end: an implementation (tests/fake_impls/hostile.py), a report file
or a definition file says hostile things, and no command turns them into a workflow
command, a terminal escape or live Markdown: `validate` (text, json, github, sarif),
`smoke`, the handshake-failure message, `run`'s console, `--report-md`,
`report --markdown`, `diff`."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from output_checks import assert_console_safe, assert_markdown_safe
from suite_runner import run_cli, run_suite

from capconf.conformance.cli import main

TESTS = Path(__file__).resolve().parent.parent
HOSTILE = "python:fake_impls.hostile:dispatcher"
AGENT = "---\nname: a\ndescription: d\ntools: [read]\n---\nWork.\n"
NAMES = ["x\n::warning::pwn.md", "##[error]x.md", "\x1b]52;c;ZWNobw==\x07.md",
         "\x1b[2J.md", "a|b\n|c|.md", "\u202egnp.md"]


def hostile_driver(mode: str = "words") -> str:
    return (f"{shlex.quote(sys.executable)} "
            f"{shlex.quote(str(TESTS / 'fake_impls' / 'hostile.py'))} {mode}")


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    folder = tmp_path / "agents"
    folder.mkdir()
    for name in NAMES:
        (folder / name).write_text(AGENT, encoding="utf-8")
    # a YAML value that the reference's diagnostics quote back
    (folder / "values.md").write_text(
        "---\nname: a\ndescription: d\ntools: [\"x\\n::error::y\", \"##[error]z\", "
        "\"\\e[2J\"]\n---\nWork.\n", encoding="utf-8")
    return folder


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_text_output_of_hostile_names_values_and_diagnostics(
        capsys: pytest.CaptureFixture[str], agents: Path) -> None:
    code, out, err = _cli(capsys, "validate", str(agents), "--impl", HOSTILE, "--strict")
    assert code == 1, err  # the hostile implementation adds a warning to every file
    assert_console_safe(out + err)
    assert "x\\n::warning::pwn.md" in out  # the name, shown escaped
    assert "\\x1b]52;c;ZWNobw==\\x07" in out


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_validate_json_and_sarif_on_the_console(capsys: pytest.CaptureFixture[str],
                                                agents: Path, fmt: str) -> None:
    code, out, err = _cli(capsys, "validate", str(agents), "--impl", HOSTILE, "--format", fmt,
                          "--strict")
    assert code == 1, err
    assert_console_safe(out + err)
    # escaped for the console, the same values for a JSON reader
    assert any("\x1b]52;c;ZWNobw==\x07" in text for text in _strings(json.loads(out)))


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else (
        value if isinstance(value, list) else [])
    return [s for item in items for s in _strings(item)]


def test_validate_github_annotations(capsys: pytest.CaptureFixture[str], agents: Path) -> None:
    code, out, err = _cli(capsys, "validate", str(agents), "--impl", HOSTILE,
                          "--format", "github", "--strict")
    assert code == 1, err
    assert out.startswith("::warning file=")  # annotations are written as annotations
    assert_console_safe(out, annotations=True)
    assert_console_safe(err)


def test_smoke_prints_a_hostile_name_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, "smoke", "--impl", HOSTILE)
    assert code == 0, err
    assert_console_safe(out + err)
    assert "\\x1b[2J" in out and "#\\x23[error]x" in out


def test_the_handshake_failure_message_of_a_hostile_driver(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, "smoke", "--impl", hostile_driver("crash-at-hello"))
    assert code == 2
    assert "stderr tail:" in err and "\\x1b]52;c;ZWNobw==\\x07" in err
    assert_console_safe(out + err)


def test_validate_of_a_driver_that_crashes_with_hostile_stderr(
        capsys: pytest.CaptureFixture[str], agents: Path) -> None:
    code, out, err = _cli(capsys, "validate", str(agents / "values.md"),
                          "--impl", hostile_driver("crash-at-parse"))
    assert code == 2
    assert_console_safe(out + err)


CASES = ("--case", "tool.canonical.camel-lower", "--case", "def.entry.empty-in-comma-string",
         "--case", "tool.mounted.matches-grant")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    tmp = tmp_path_factory.mktemp("hostile-run")
    run = run_suite(tmp, HOSTILE, *CASES, "--report-md", str(tmp / "report.md"),
                    "--junit-xml", str(tmp / "junit.xml"))
    return tmp, run.output, run.returncode


def test_run_console_of_a_hostile_implementation(hostile_run: tuple[Path, str, int]) -> None:
    _, output, code = hostile_run
    assert code == 1, output
    assert "failures:" in output  # the cases failed on the hostile tools, and say so
    assert_console_safe(output)


def test_run_markdown_report_of_a_hostile_implementation(
        hostile_run: tuple[Path, str, int]) -> None:
    tmp, _, _ = hostile_run
    markdown = (tmp / "report.md").read_text(encoding="utf-8")
    assert "## Failures" in markdown
    assert_markdown_safe(markdown)
    assert (tmp / "junit.xml").exists()


def test_report_markdown_and_diff_of_a_hostile_report(
        hostile_run: tuple[Path, str, int]) -> None:
    tmp, _, _ = hostile_run
    report = tmp / "report.jsonl"
    out = run_cli(["report", str(report), "--markdown", str(tmp / "again.md")], cwd=tmp)
    assert out.returncode == 0, out.stderr
    assert_markdown_safe((tmp / "again.md").read_text(encoding="utf-8"))
    assert_console_safe(out.stdout + out.stderr)
    clean = tmp / "clean.jsonl"
    lines = report.read_text(encoding="utf-8").split("\n")
    rows = [json.loads(ln) for ln in lines if ln.strip()]
    for row in rows:
        if row.get("type") == "case":
            row["outcome"], row["reason"] = "passed", ""
    clean.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    diff = run_cli(["diff", str(clean), str(report)], cwd=tmp)
    assert diff.returncode == 1, diff.stdout + diff.stderr  # the regression is found
    assert "regressed" in diff.stdout
    assert_console_safe(diff.stdout + diff.stderr)


def _forged_report(path: Path) -> Path:
    """A report file from elsewhere, every string in it hostile."""
    evil = "x\n::warning::pwn ##[error]y \x1b]52;c;ZWNobw==\x07 ![x](http://t/p.png) " \
           "[a](javascript:alert(1)) <script>alert(1)</script> a|b\n|c|"
    header = {"type": "header", "suite_version": evil, "spec_version": evil, "impl": evil,
              "implementation": {"name": evil, "version": evil}}
    case = {"type": "case", "case": "def." + evil, "requirements": ["DEF-01"],
            "outcome": "failed", "level": "MUST", "reason": evil, "rule": evil,
            "expected": [evil], "got": [evil], "cause": evil,
            "exchange": [{"request": {"op": evil}, "response": {"x": evil}}]}
    path.write_text(json.dumps(header) + "\n" + json.dumps(case) + "\n", encoding="utf-8")
    return path


def test_a_forged_report_file_rendered(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    report = _forged_report(tmp_path / "forged.jsonl")
    md = tmp_path / "out.md"
    code, out, err = _cli(capsys, "report", str(report), "--markdown", str(md))
    assert code == 0, err
    assert_markdown_safe(md.read_text(encoding="utf-8"))
    assert_console_safe(out + err)
    code, out, err = _cli(capsys, "diff", str(report), str(report))
    assert code == 0, err
    assert_console_safe(out + err)


@pytest.mark.parametrize("mode", ["surrogate-at-hello", "surrogate-in-parse"])
def test_a_lone_surrogate_is_refused_and_every_report_is_written(tmp_path: Path,
                                                                 mode: str) -> None:
    """SPEC.md PROTO-03: no lone surrogate in a response line, raw or escaped. Before,
    `hello` with one was accepted and the run died writing --report-md."""
    md, xml = tmp_path / "r.md", tmp_path / "r.xml"
    run = run_suite(tmp_path, hostile_driver(mode), *CASES, "--report-md", str(md),
                    "--junit-xml", str(xml))
    assert "Traceback" not in run.output and "UnicodeEncodeError" not in run.output
    if mode == "surrogate-at-hello":
        assert run.returncode == 3, run.output
        assert "lone surrogate" in run.header["handshake_error"]
        assert "result/note" in run.header["handshake_error"]
    else:
        assert run.returncode == 1, run.output
        assert {c["outcome"] for c in run.cases.values()} == {"errored"}
        assert all("lone surrogate" in c["reason"] for c in run.cases.values())
    assert md.exists() and xml.exists()
    assert_console_safe(run.output)
    report = tmp_path / "report.jsonl"
    rendered = run_cli(["report", str(report), "--markdown", str(tmp_path / "again.md")],
                       cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr
    diff = run_cli(["diff", str(report), str(report)], cwd=tmp_path)
    assert diff.returncode == 0, diff.stderr
