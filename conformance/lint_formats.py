"""`capconf validate` as a linter: its diagnostics as GitHub workflow annotations and as
SARIF 2.1.0, the two formats CI systems and code-scanning pages read.

Pure functions over the `definition.parse` results of one or more files; the command
line reads the files and prints. Severity maps error -> error, warning -> warning,
info -> notice (GitHub) / note (SARIF). A file that did not load without naming an
error diagnostic still gets one error, so no annotation stream can be silently clean
for a file the runtime refused.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from capconf.conformance.safe_text import file_name, github_data, github_property

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
NOT_LOADED = "CAPCONF-NOT-LOADED"  # the rule of the synthetic "did not load" result
BAD_NAME = "CAPCONF-FILE-NAME"  # a file whose name is not UTF-8: never sent, one error
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


@dataclass(frozen=True)
class FileResult:
    """One file's `definition.parse` answer, as the linter needs it."""

    file: str
    loaded: bool
    diagnostics: tuple[dict[str, Any], ...]

    def all_diagnostics(self) -> tuple[dict[str, Any], ...]:
        if self.loaded or any(d.get("severity") == "error" for d in self.diagnostics):
            return self.diagnostics
        return (*self.diagnostics, {"code": NOT_LOADED, "severity": "error", "path": [],
                                    "line": None, "column": None,
                                    "message": "the implementation did not load this "
                                               "definition"})


def json_path(path: list[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


# -- GitHub workflow commands --------------------------------------------------------

# the runner's escapes, and what they leave (``##[``, terminal controls): safe_text.py
_gh_data, _gh_property = github_data, github_property


def render_github(results: list[FileResult]) -> str:
    """``::error file=F,line=L,col=C,title=CODE::message`` lines, one per diagnostic."""
    lines = []
    for result in results:
        for d in result.all_diagnostics():
            props = [f"file={_gh_property(file_name(result.file))}"]
            if d.get("line") is not None:
                props.append(f"line={d['line']}")
                if d.get("column") is not None:
                    props.append(f"col={d['column']}")
            props.append(f"title={_gh_property(str(d['code']))}")
            where = json_path(list(d.get("path") or []))
            message = f"{d['code']}{f' ({where})' if where else ''}: {d['message']}"
            level = _GITHUB_LEVEL.get(str(d.get("severity")), "warning")
            lines.append(f"::{level} {','.join(props)}::{_gh_data(message)}")
    return "".join(line + "\n" for line in lines)


# -- SARIF 2.1.0 ---------------------------------------------------------------------------

def _uri(file: str) -> str:
    """A URI reference for the file as it was named: relative stays relative (code
    scanning resolves it against the checkout), absolute becomes ``file://``. The name's
    bytes are quoted, so a name that is not UTF-8 (held as surrogates) still points at
    its file."""
    path = PurePath(file)
    quoted = urllib.parse.quote(path.as_posix().encode("utf-8", "surrogateescape"))
    return "file://" + quoted if path.is_absolute() else quoted


def _rule(code: str, first_message: str, help_table: Mapping[str, tuple[str, str]]
          ) -> dict[str, Any]:
    requirement, meaning = help_table.get(code, ("", ""))
    if code == NOT_LOADED:
        meaning = "the implementation refused to load the definition"
    if code == BAD_NAME:
        meaning = "the file name is not valid UTF-8, so it cannot be sent to an implementation"
    short = meaning or first_message
    text = (f"{code}: {meaning}. Defined by requirement {requirement} of the capconf "
            "specification (SPEC.md, section 12 lists every diagnostic code)."
            if requirement else f"{code}: {short}")
    rule: dict[str, Any] = {"id": code, "shortDescription": {"text": short},
                            "help": {"text": text}}
    if requirement:
        rule["properties"] = {"requirement": requirement}
    return rule


def render_sarif(results: list[FileResult], tool_version: str,
                 help_table: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """One SARIF log, one run, one result per diagnostic: rule = diagnostic code,
    level from its severity, a region when the diagnostic has a line."""
    rules: dict[str, dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for result in results:
        for d in result.all_diagnostics():
            code = str(d["code"])
            if code not in rules:
                rules[code] = _rule(code, str(d["message"]), help_table)
            location: dict[str, Any] = {"artifactLocation": {"uri": _uri(result.file)}}
            if isinstance(d.get("line"), int) and d["line"] >= 1:
                region = {"startLine": d["line"]}
                if isinstance(d.get("column"), int) and d["column"] >= 1:
                    region["startColumn"] = d["column"]
                location["region"] = region
            entry: dict[str, Any] = {
                "ruleId": code, "ruleIndex": list(rules).index(code),
                "level": _SARIF_LEVEL.get(str(d.get("severity")), "warning"),
                "message": {"text": str(d["message"])},
                "locations": [{"physicalLocation": location}]}
            where = json_path(list(d.get("path") or []))
            if where:
                entry["properties"] = {"path": where}
            out.append(entry)
    driver = {"name": "capconf", "version": tool_version, "rules": list(rules.values())}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "results": out}]}


FORMATS = ("text", "json", "github", "sarif")


def render(fmt: str, parsed: list[tuple[str, dict[str, Any]]]) -> str:
    """`capconf validate --format github|sarif` output for (file, parse result) pairs."""
    import json

    from capconf.conformance import SUITE_VERSION
    from capconf.conformance.reference import diagnostic_help

    results = [FileResult(f, bool(r.get("loaded")), tuple(r.get("diagnostics") or ()))
               for f, r in parsed]
    if fmt == "github":
        return render_github(results)
    log = render_sarif(results, SUITE_VERSION, diagnostic_help())
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
