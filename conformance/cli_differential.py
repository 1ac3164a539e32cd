"""`capconf differential --impl CMD FILES/FOLDERS`: every definition file through the
implementation's and the reference's file-only ops, each disagreement reported by
requirement with both answers (``differential`` judges them).

The usual report formats: the console lists each disagreement; `--report` writes JSON
Lines (one case line per file and op, or per disagreeing aspect, plus the requirement
records), `--report-md` and `--junit-xml` as `capconf run` does, so `capconf report` and
`capconf diff` read it too. Exit 0: no disagreement; 1: a disagreement (or the
implementation crashed, hung or answered garbage on a file); 2: bad arguments.
"""

from __future__ import annotations

import argparse
import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capconf.conformance import differential, outcomes
from capconf.conformance.cli_common import (
    definition_files,
    fail,
    make_driver,
    read_definition,
    setup_world,
    world_args,
)
from capconf.conformance.client import DriverFailure
from capconf.conformance.driver import Driver
from capconf.conformance.failures import Detail, jsonable
from capconf.conformance.report import CaseRecord, RunReport
from capconf.conformance.requirements import requirements

SHOWN_VALUE = 300


def _printable(text: str) -> str:
    """A file name or value on the console: control characters escaped (a hostile file
    name cannot move the cursor or forge a line)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _compact(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = _printable(text)
    return text if len(text) <= SHOWN_VALUE else text[:SHOWN_VALUE - 1] + "\u2026"


@dataclass
class _Side:
    """One implementation's driver, restarted (with its world set up again) after it
    crashed, hung or answered garbage."""

    impl: str
    timeout: float
    world: dict[str, Any]
    world_file: str | None
    driver: Driver | None = None

    def start(self) -> Driver:
        if self.driver is None:
            self.driver = make_driver(self.impl, self.timeout)
            setup_world(self.driver, self.world, self.world_file)
        return self.driver

    def send(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        driver = self.start()
        try:
            return driver.send(op, args)
        except DriverFailure:
            self.close()
            raise

    def close(self) -> None:
        if self.driver is not None:
            self.driver.close()
            self.driver = None


def _case_id(file: str, op: str, extra: dict[str, Any], aspect: str | None = None) -> str:
    name = differential.op_label(op, extra).replace(" (", "[").replace(" mode)", "]")
    return f"differential/{file}/{name}" + (f"/{aspect.replace(' ', '-')}" if aspect else "")


def _rule(rid: str, text: str) -> str:
    table = requirements()
    return f"{rid} ({table[rid].title}): {text}" if rid in table else f"{rid}: {text}"


def _compare_file(file: str, data: bytes, ref: _Side, impl: _Side) -> list[CaseRecord]:
    records: list[CaseRecord] = []
    source = {"source_b64": base64.b64encode(data).decode("ascii"),
              "filename": Path(file).name}
    for op, extra in differential.OPS:
        label = differential.op_label(op, extra)
        request = {"op": op, "args": {"filename": Path(file).name, **extra,
                                      "source_b64": f"<{len(data)} bytes of {file}>"}}
        reference = ref.send(op, {**source, **extra})
        try:
            answer = impl.send(op, {**source, **extra})
        except DriverFailure as exc:
            rids = differential.requirements_of(op)
            records.append(CaseRecord(
                _case_id(file, op, extra), "", rids, exc.outcome,
                f"{file}: `{label}`: {exc.message}",
                Detail(_rule(rids[0], f"`{label}` answers every readable file"), None, None,
                       [{"request": request, "response": None,
                         "failure": exc.message.split(chr(10), 1)[0]}],
                       f"`{op}`: {exc.outcome}")))
            continue
        found = differential.compare(op, reference, answer)
        if not found:
            records.append(CaseRecord(_case_id(file, op, extra), "",
                                      differential.requirements_of(op), outcomes.PASSED,
                                      "", Detail("")))
        for d in found:
            why = (f"the implementation and the reference disagree on the {d.aspect} of "
                   f"`{label}` for {file}")
            reason = (f"{file}: `{label}`: {d.what}\n  reference (expected): "
                      f"{_compact(d.reference)}\n  implementation (got): "
                      f"{_compact(d.implementation)}")
            records.append(CaseRecord(
                _case_id(file, op, extra, d.aspect), "", (d.requirement,), outcomes.FAILED,
                reason, Detail(_rule(d.requirement, why), jsonable(d.reference),
                               jsonable(d.implementation),
                               [{"request": request, "response": jsonable(answer)}],
                               f"`{op}`: {d.aspect} differ from the reference")))
    return records


_UNSAFE = frozenset("`|<>\\")


def safe_name(name: str) -> str:
    """A file name as reports carry it (a case ID, a reason): a character that is not
    printable or that ends a Markdown code span or table cell or starts markup
    (`` ` | < > \\ ``) is percent-encoded (and `%` itself), so a hostile file name cannot
    forge a line, a table cell or markup."""
    return "".join(c if c.isprintable() and c not in _UNSAFE and c != "%" else
                   "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
                   for c in name)


def _named_files(arg: str) -> list[tuple[str, str]]:
    """(path to read, name in the reports) for each definition file of ``arg``: a file
    as given; a folder's files relative to the folder's parent (`agents/x.md`), so
    reports of two checkouts name the same file the same way."""
    found = definition_files(arg)
    if not Path(arg).is_dir():
        return [(f, safe_name(f)) for f in found]
    parent = Path(arg).resolve().parent
    return [(f, safe_name(Path(f).resolve().relative_to(parent).as_posix())) for f in found]


def cmd_differential(ns: argparse.Namespace) -> int:
    files = [named for arg in ns.paths for named in _named_files(arg)]
    world = world_args(ns.world, None)
    ref = _Side("reference", ns.timeout, world, ns.world)
    impl = _Side(ns.impl, ns.timeout, world, ns.world)
    run = RunReport(impl=ns.impl)
    disagreeing: list[str] = []
    try:
        run.hello = impl.start().hello()
        for file, shown in files:
            data, _ = read_definition(file)
            records = _compare_file(shown, data, ref, impl)
            for record in records:
                run.record(record, "call")
            if any(r.outcome in outcomes.FAILING for r in records):
                disagreeing.append(shown)
    except DriverFailure as exc:
        side = "the reference" if ref.driver is None else f"--impl {ns.impl}"
        return fail(f"{side}: {exc.message}")
    finally:
        ref.close()
        impl.close()
    run.suite_cases = {}
    for case in run.cases.values():
        for rid in case.requirements:
            run.suite_cases[rid] = run.suite_cases.get(rid, 0) + 1
    _write_outputs(ns, run)
    bad = sorted((c for c in run.cases.values() if c.outcome in outcomes.FAILING),
                 key=lambda c: c.case)
    for case in bad:
        first, *rest = case.reason.split("\n")
        print(f"{', '.join(case.requirements)}: {_printable(first)}")
        for line in rest:
            print(f"  {_printable(line.strip())}")
    by_req: dict[str, int] = {}
    for case in bad:
        for rid in case.requirements:
            by_req[rid] = by_req.get(rid, 0) + 1
    print(f"{len(files)} file(s), {len(differential.OPS)} op(s) each, against the reference:"
          f" {len(bad)} disagreement(s) in {len(disagreeing)} file(s)"
          + ("; by requirement: " + ", ".join(f"{rid} {n}" for rid, n in sorted(by_req.items()))
             if by_req else ""))
    return 1 if bad else 0


def _write_outputs(ns: argparse.Namespace, run: RunReport) -> None:
    from capconf.conformance.junit import write_junit

    try:
        if ns.report:
            Path(ns.report).write_text(run.to_jsonl(), encoding="utf-8")
        if ns.report_md:
            Path(ns.report_md).write_text(run.to_markdown(), encoding="utf-8")
        if ns.junit_xml:
            write_junit(ns.junit_xml, run.to_jsonl())
    except OSError as exc:
        raise SystemExit(fail(f"cannot write a report: {exc.strerror or exc}")) from None


def register(sub: Any, impl_options: Any) -> None:
    p = sub.add_parser(
        "differential", help="every definition file through the implementation and the "
        "reference (parse, validate, save, prompt, mounted tools); each disagreement by "
        "requirement with both answers; exit 1 on a disagreement")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a definition file, or a folder of them (.md .yaml .yml .json)")
    p.add_argument("--world", help="world YAML (keys of world.setup), for both")
    p.add_argument("--report", help="JSON Lines report file")
    p.add_argument("--report-md", help="Markdown summary file")
    p.add_argument("--junit-xml", help="JUnit XML file")
    impl_options(p)
    p.set_defaults(handler=cmd_differential)
