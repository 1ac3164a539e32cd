"""Conventions a team expects of the command: `--version`, `validate` over folders and
several files with one exit status, one did-you-mean rule, errors that keep their
location, no tracebacks from `edit`, a real `--lf`, and pinned verdict libraries."""

from __future__ import annotations

import json
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from suite_runner import CliResult, run_cli, run_suite

REPO = Path(__file__).resolve().parent.parent.parent
AGENT = "---\nname: a\ndescription: d\ntools: Read, Grpe\n---\nBody.\n"


def capconf(*args: str, cwd: Path) -> CliResult[str]:
    return run_cli(args, cwd=cwd, timeout=300)


def test_version_names_suite_spec_and_protocol(tmp_path: Path) -> None:
    from capconf.conformance.versions import SPEC_VERSION

    proc = capconf("--version", cwd=tmp_path)
    assert proc.returncode == 0
    first = proc.stdout.splitlines()[0]
    assert "suite 0.1.0" in first and f"spec {SPEC_VERSION}" in first
    assert "driver protocol" in first and "hypothesis" in proc.stdout
    assert f"Spec version: **{SPEC_VERSION}**" in (REPO / "SPEC.md").read_text()


def test_validate_takes_folders_and_files_with_one_exit_status(tmp_path: Path) -> None:
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "clean.md").write_text("---\nname: c\ndescription: d\ntools: Read\n---\nB.\n")
    (agents / "typo.md").write_text(AGENT)
    (agents / "notes.txt").write_text("not a definition")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\ntools: [read\nprompt: y\n")
    folder = capconf("validate", str(agents), cwd=tmp_path)
    assert folder.returncode == 0, folder.stdout + folder.stderr  # worst: a warning
    strict = capconf("validate", "--strict", str(agents), cwd=tmp_path)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "clean.md: granted tools: read" in folder.stdout
    assert "typo.md:4:" in folder.stdout and "notes.txt" not in folder.stdout
    both = capconf("validate", str(agents), str(broken), "--json", cwd=tmp_path)
    out = json.loads(both.stdout)
    assert both.returncode == 2 and out["status"] == 2
    assert [Path(f["file"]).name for f in out["files"]] == ["clean.md", "typo.md",
                                                           "broken.yaml"]
    empty = tmp_path / "empty"
    empty.mkdir()
    none = capconf("validate", str(empty), cwd=tmp_path)
    assert none.returncode == 2 and "no definition files" in none.stderr


def test_validate_and_edit_suggest_the_same_names(tmp_path: Path) -> None:
    agent = tmp_path / "agent.md"
    agent.write_text(AGENT)
    validate = capconf("validate", str(agent), cwd=tmp_path)
    assert "Did you mean `grep`?" in validate.stdout
    edit = capconf("edit", str(agent), "--set", "tools=Read,Grpe", "--unknown", cwd=tmp_path)
    assert "unknown tools `Grpe`; nearest: grep" in edit.stderr


def test_world_errors_keep_their_location(tmp_path: Path) -> None:
    agent = tmp_path / "agent.md"
    agent.write_text(AGENT)
    bad_value = tmp_path / "w1.yaml"
    bad_value.write_text("grantable: [read, 5]\n")
    proc = capconf("validate", "--world", str(bad_value), str(agent), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"world file {bad_value}: `grantable[1]`: must be a string" in proc.stderr
    bad_yaml = tmp_path / "w2.yaml"
    bad_yaml.write_text("grantable: [\n")
    proc = capconf("validate", "--world", str(bad_yaml), str(agent), cwd=tmp_path)
    assert proc.returncode == 2 and f"world file {bad_yaml}: invalid YAML at line 2" \
        in proc.stderr
    assert "<unicode string>" not in proc.stderr


def test_a_broken_skill_package_is_located_in_its_skill_md(tmp_path: Path) -> None:
    (tmp_path / "skills" / "bad").mkdir(parents=True)
    (tmp_path / "skills" / "bad" / "SKILL.md").write_text("---\nname: [broken\n---\nB\n")
    (tmp_path / "world.yaml").write_text("skills:\n  layers:\n    workspace: skills\n")
    agent = tmp_path / "agent.md"
    agent.write_text("---\nname: a\ndescription: d\nskills: [bad]\n---\nBody.\n")
    proc = capconf("validate", "--world", "world.yaml", str(agent), cwd=tmp_path)
    line = next(ln for ln in proc.stdout.splitlines() if "SKILL-PACKAGE-INVALID" in ln)
    assert line.startswith(f"{tmp_path / 'skills' / 'bad' / 'SKILL.md'}:"), line
    assert "<unicode string>" not in line


def test_edit_refuses_bad_json_and_a_missing_file_without_a_traceback(tmp_path: Path) -> None:
    agent = tmp_path / "agent.md"
    agent.write_text(AGENT)
    proc = capconf("edit", str(agent), "--set", 'knowledge=[{"name":', cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--set knowledge: not JSON" in proc.stderr and "column" in proc.stderr
    proc = capconf("edit", str(agent), "--set", "body=@missing.md", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "missing.md" in proc.stderr and "No such file" in proc.stderr


def test_lf_reruns_the_failures_of_the_previous_report(tmp_path: Path) -> None:
    lowering = "python:mutants:dispatcher:lowercase-resolver"
    # fail-fast: the same examples and verdicts as `ci`, a failure not shrunk (~20 s less)
    fail_fast = ("--", "--hypothesis-profile=fail-fast")
    first = run_suite(tmp_path, lowering, "--req", "TOOL-02", *fail_fast)
    failed = {c for c, o in first.outcomes().items() if o == "failed"}
    assert failed and len(failed) < len(first.cases)
    again = run_suite(tmp_path, lowering, "--lf", *fail_fast)  # same --report file
    assert set(again.cases) == failed and again.returncode == 1
    (tmp_path / "none").mkdir()
    refused = capconf("run", "--lf", cwd=tmp_path / "none")
    assert refused.returncode == 2 and "--report" in refused.stderr


def test_lf_reads_a_reason_holding_unicode_line_separators_as_one_line(
        tmp_path: Path) -> None:
    """A report keeps non-ASCII as is, so a reason may hold U+0085 or U+2028; `--lf`
    reads lines ending in \n only, as every reader of the report does."""
    from capconf.conformance.cli import _last_failed

    rows = [{"type": "header"},
            {"type": "case", "case": "a.b", "outcome": "failed", "reason": "x\u2028y\x85z"},
            {"type": "case", "case": "a.c", "outcome": "passed", "reason": ""}]
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                      encoding="utf-8")
    assert _last_failed(str(report)) == ["a.b"]


VERDICT_LIBRARIES = ("hypothesis", "jsonschema", "pytest", "pyyaml", "wcmatch")


def test_verdict_libraries_are_pinned_to_what_is_installed_and_tested() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime = {Requirement(r).name.lower(): Requirement(r) for r in project["dependencies"]}
    test = {Requirement(r).name.lower(): Requirement(r)
            for r in project["optional-dependencies"]["test"]}
    assert str(runtime["hypothesis"].specifier).startswith("==")
    for name in ("ruff", "mypy"):
        assert str(test[name].specifier).startswith("=="), name
    for name in VERDICT_LIBRARIES:
        spec = runtime[name].specifier
        assert any(s.operator in ("<", "==", "~=") for s in spec), f"{name} has no upper bound"
    for req in [*runtime.values(), test["ruff"], test["mypy"]]:
        assert metadata.version(req.name) in req.specifier, (req, metadata.version(req.name))
    tox = (REPO / "tox.ini").read_text()
    assert f"ruff{test['ruff'].specifier}" in tox and f"mypy{test['mypy'].specifier}" in tox


def test_the_report_header_names_the_versions(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "reference", "--case", "proto.hello.fields")
    versions = run.header["versions"]
    assert versions["hypothesis"] == metadata.version("hypothesis")
    assert {"suite", "spec", "protocol"} <= set(versions)
    case = run.cases["proto.hello.fields"]
    assert {"rule", "expected", "got", "exchange", "cause"} <= set(case)
    assert case["rule"].startswith("PROTO-01") and case["cause"] is None
