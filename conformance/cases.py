"""Data cases: YAML files under ``conformance/cases/``, readable without Python.

Each case has a stable ``id`` (never reused; see ``case_ids.txt``), the requirement IDs it
checks, a definition, optional world overrides and the expectations. ``check_case``
holds the meaning of every expectation key, so a team porting the suite to another test
runner has one function to read.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

from capconf.conformance.locations import package_file

EXPECTATION_KEYS = frozenset({
    "loaded", "tools", "diagnostics", "no_diagnostics_at", "definition", "saved", "document",
    "document_contains", "document_not_contains", "prompt", "parts", "prompt_endswith",
    "part_contains", "statuses", "resaved_tools", "resaved_definition",
})


CATALOG_GROUPS = {"catalog.skills": "skills", "catalog.knowledge": "knowledge",
                  "catalog.mcp": "mcp", "catalog.memory": "memory"}
"""A dimension's catalog section is served by the dimension's group (SPEC.md section 2,
"Which group serves an op"): a case that expects one uses that group."""


@dataclass(frozen=True)
class Case:
    id: str
    requirements: tuple[str, ...]
    title: str
    definition: str
    expect: dict[str, Any]
    op: str = "parse"
    mode: str = "parse"
    filename: str | None = None
    world: dict[str, Any] = field(default_factory=dict)
    source_file: str = ""

    @property
    def uses(self) -> tuple[str, ...]:
        """The groups of the dimension catalogs the case expects in the prompt: a runtime
        that declares `prompt` but not `skills` is not asked to discover skills."""
        shown = [*(self.expect.get("parts") or []), *(self.expect.get("part_contains") or {})]
        return tuple(sorted({CATALOG_GROUPS[p] for p in shown if p in CATALOG_GROUPS}))


def default_world() -> dict[str, Any]:
    """The suite's default world, a fresh copy each time (a case may change its own): the
    file is read and parsed once per process, not once per case (106 cases ask)."""
    return copy.deepcopy(_default_world())


@cache
def _default_world() -> dict[str, Any]:
    text = (package_file() / "cases" / "_world.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def load_cases() -> list[Case]:
    folder = package_file() / "cases"
    cases: list[Case] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml") or entry.name.startswith("_"):
            continue
        for row in yaml.safe_load(entry.read_text("utf-8")) or []:
            unknown = set(row.get("expect", {})) - EXPECTATION_KEYS
            if unknown:
                raise ValueError(f"{entry.name}: case {row.get('id')}: unknown expectation "
                                 f"keys {sorted(unknown)}")
            cases.append(Case(
                id=row["id"], requirements=tuple(row["requirements"]), title=row["title"],
                definition=row["definition"], expect=row.get("expect", {}),
                op=row.get("op", "parse"), mode=row.get("mode", "parse"),
                filename=row.get("filename"), world=row.get("world", {}),
                source_file=entry.name))
    return cases


def _matches(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    """Every given key equal; `message_contains` is a substring of the message."""
    for key, value in expected.items():
        if key == "message_contains":
            if value not in str(actual.get("message", "")):
                return False
        elif actual.get(key) != value:
            return False
    return True


def _subset(expected: Any, actual: Any) -> bool:
    """Every key given in ``expected`` has that value in ``actual`` (recursively for
    mappings; lists and scalars compare exactly)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _subset(v, actual[k]) for k, v in expected.items())
    return bool(expected == actual)


def check_case(case: Case, result: dict[str, Any]) -> list[str]:
    """Every unmet expectation, as a sentence naming expected and actual values."""
    exp = case.expect
    problems: list[str] = []
    diags = result.get("diagnostics", [])
    if "loaded" in exp and result.get("loaded") != exp["loaded"]:
        problems.append(f"loaded: expected {exp['loaded']}, got {result.get('loaded')}")
    if "statuses" in exp:
        got = [r.get("status") for r in result.get("tool_resolution", [])]
        if got != exp["statuses"]:
            problems.append(f"tool_resolution statuses: expected {exp['statuses']}, got {got}")
    if "tools" in exp and result.get("tools") != exp["tools"]:
        problems.append(f"granted tools: expected {exp['tools']}, got {result.get('tools')}")
    for want in exp.get("diagnostics", []):
        if not any(_matches(want, d) for d in diags):
            got = [{k: d.get(k) for k in ("code", "path", "line", "column", "severity")}
                   for d in diags]
            problems.append(f"no diagnostic matches {want}; got {got}")
    for path in exp.get("no_diagnostics_at", []):
        hits = [d["code"] for d in diags if d.get("path") == path]
        if hits:
            problems.append(f"unexpected diagnostics at {path}: {hits}")
    if "definition" in exp and not _subset(exp["definition"], result.get("definition")):
        problems.append(f"definition: expected to contain {exp['definition']}, got "
                        f"{result.get('definition')}")
    if "saved" in exp and result.get("saved") != exp["saved"]:
        problems.append(f"saved: expected {exp['saved']}, got {result.get('saved')}")
    if "document" in exp and result.get("document") != exp["document"]:
        problems.append(f"document: expected {exp['document']!r}, got {result.get('document')!r}")
    document = result.get("document") or ""
    for text in exp.get("document_contains", []):
        if text not in document:
            problems.append(f"saved document lacks {text!r}:\n{document}")
    for text in exp.get("document_not_contains", []):
        if text in document:
            problems.append(f"saved document contains {text!r}:\n{document}")
    resaved = result.get("resaved", {})
    if "resaved_tools" in exp and resaved.get("tools") != exp["resaved_tools"]:
        problems.append(f"the saved document parses to tools {resaved.get('tools')}, "
                        f"expected {exp['resaved_tools']}:\n{document}")
    if "resaved_definition" in exp and not _subset(exp["resaved_definition"],
                                                    resaved.get("definition")):
        problems.append(f"the saved document parses to {resaved.get('definition')}, "
                        f"expected it to contain {exp['resaved_definition']}")
    if "prompt" in exp and result.get("prompt") != exp["prompt"]:
        problems.append(f"prompt bytes differ:\nexpected {exp['prompt']!r}\n"
                        f"got      {result.get('prompt')!r}")
    if "prompt_endswith" in exp and not str(result.get("prompt", "")).endswith(
            exp["prompt_endswith"]):
        problems.append(f"prompt does not end with {exp['prompt_endswith']!r}")
    parts = result.get("parts", [])
    if "parts" in exp and [p["kind"] for p in parts] != exp["parts"]:
        problems.append(f"prompt parts: expected {exp['parts']}, got {[p['kind'] for p in parts]}")
    for kind, needles in exp.get("part_contains", {}).items():
        texts = [p["text"] for p in parts if p["kind"] == kind]
        if len(texts) != 1:
            problems.append(f"expected exactly one {kind} part, got {len(texts)}")
            continue
        problems += [f"{kind} lacks {n!r}" for n in needles if n not in texts[0]]
    return problems
