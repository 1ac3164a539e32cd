"""Small JSON Lines run reports built in code, for the report readers' tests: an old
report (the fields before `rule`/`expected`/`got`/`exchange`/`cause`) and a new one."""

from __future__ import annotations

import json
from typing import Any


def header(impl: str = "reference", name: str = "capconf-reference-simulator",
           suite_version: str = "0.1.0") -> dict[str, Any]:
    return {"type": "header", "suite_version": suite_version, "spec_version": "0.1.0",
            "impl": impl, "implementation": {"name": name, "version": "0.1.0"},
            "features": ["def", "tool"], "hypothesis_profile": "ci"}


def case(cid: str, reqs: list[str], outcome: str = "passed", reason: str = "",
         **detail: Any) -> dict[str, Any]:
    line = {"type": "case", "case": cid, "nodeid": f"suite/test_x.py::{cid}",
            "requirements": reqs, "level": "MUST", "outcome": outcome, "reason": reason}
    line.update(detail)
    return line


def jsonl(head: dict[str, Any], *cases: dict[str, Any]) -> str:
    return "".join(json.dumps(x, sort_keys=True, ensure_ascii=False) + "\n"
                   for x in (head, *cases))


FAILED_DETAIL = {"rule": "a granted tool is mounted under its canonical name",
                 "expected": ["read", "WebFetch"], "got": ["read", "webfetch"],
                 "exchange": [{"request": {"id": 1, "op": "definition.parse", "args": {}},
                               "response": {"id": 1, "ok": True,
                                            "result": {"tools": ["read", "webfetch"]}}}],
                 "cause": None}


def reference_and_broken() -> tuple[str, str]:
    """The same suite run against a good and a broken implementation: TOOL-02 regresses
    (one case with the newer detail fields, one without), DEF-01 stays compliant,
    MEM-01 is not implemented by the broken one, KB-01 fails in both."""
    good = jsonl(header(),
                 case("def.doc.one", ["DEF-01"]),
                 case("tool.case.canonical", ["TOOL-02"]),
                 case("tool.case.mixed", ["TOOL-02", "TOOL-03"]),
                 case("mem.modes", ["MEM-01"]),
                 case("kb.glob", ["KB-01"], "failed", "KB-01: bug\n  expected: 1\n  got: 2"))
    bad = jsonl(header("python:mutants:dispatcher:x"),
                case("def.doc.one", ["DEF-01"]),
                case("tool.case.canonical", ["TOOL-02"], "failed",
                     "TOOL-02: names come out canonical\n  expected: WebFetch\n  got: webfetch",
                     **FAILED_DETAIL),
                case("tool.case.mixed", ["TOOL-02", "TOOL-03"], "crashed",
                     "the implementation exited with status 1; stderr: <boom> & \x07"),
                case("mem.modes", ["MEM-01"], "not implemented",
                     "not implemented: feature group(s) memory not declared"),
                case("kb.glob", ["KB-01"], "failed", "KB-01: bug\n  expected: 1\n  got: 2"))
    return good, bad
