"""The `capconf` command.

Every command except `driver` speaks the driver protocol, so `prompt`, `validate` and
`smoke` work against any implementation (`--impl CMD`), not only the bundled reference.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from capconf.conformance.cache_dir import keep_hypothesis_out_of_cwd
from capconf.conformance.cli_common import (
    definition_files,
    fail,
    format_diagnostic,
    impl_options,
    make_driver,
    prepare_workspace,
    read_definition,
    setup_world,
    source,
    world_args,
)
from capconf.conformance.client import DriverFailure, kill_all
from capconf.conformance.driver import Driver
from capconf.conformance.locations import package_file, suite_dir
from capconf.conformance.report_cli import REPORT_HANDLERS, add_report_parsers
from capconf.conformance.safe_text import (
    console_value,
    file_name,
    is_utf8_name,
    json_console,
    raw_stream,
)
from capconf.conformance.spec_html import SPEC_HANDLERS, add_spec_parser

# Commands that live in modules of their own: each has `register(sub, impl_options)`,
# which adds its parsers with `set_defaults(handler=...)`. A new command is one line here.
COMMAND_MODULES = (
    "capconf.conformance.cli_editor",
    "capconf.conformance.cli_replay",
    "capconf.conformance.cli_baseline",
    "capconf.conformance.cli_differential",
)
_world_args = world_args  # the name benchmarks/bench_bombs.py uses
__all__ = ["build_parser", "main", "prepare_workspace"]

def cmd_prompt(ns: argparse.Namespace) -> int:
    data, name = read_definition(ns.definition)
    driver = make_driver(ns.impl, ns.timeout)
    try:
        setup_world(driver, world_args(ns.world, Path(ns.definition)), ns.world)
        result = driver.request("prompt.assemble", source(data, name))
    except DriverFailure as exc:
        return fail(exc.message)
    finally:
        driver.close()
    sys.stdout.buffer.write(result["prompt"].encode("utf-8"))
    return 0


def _skill_layer_file(d: dict[str, Any], world: dict[str, Any]) -> str | None:
    """A diagnostic about a skill package (path `[layer, folder]`) is located in that
    package's own file, not in the definition being validated."""
    path = d.get("path") or []
    layers = (world.get("skills") or {}).get("layers") if isinstance(world.get("skills"),
                                                                    dict) else None
    if not (d.get("code", "").startswith("SKILL-") and len(path) == 2
            and isinstance(layers, dict) and isinstance(layers.get(path[0]), str)):
        return None
    folder = Path(world["workspace"], layers[path[0]], str(path[1]))
    for name in ("SKILL.md", "skill.yaml"):
        if (folder / name).exists():
            return str(folder / name)
    return str(folder / "SKILL.md")


def _bad_name(file: str, ns: argparse.Namespace) -> tuple[int, dict[str, Any]]:
    """A file whose name is not UTF-8 (a folder may hold one): the protocol carries
    names as JSON strings, so it is not sent; it is one error of its own, and the other
    files are still validated (#38: one such name emptied the whole SARIF log)."""
    from capconf.conformance.lint_formats import BAD_NAME

    shown = file_name(file)
    message = (f"the file name {shown} is not valid UTF-8 (its undecodable bytes shown as "
               "\\xNN); the driver protocol carries names as UTF-8 JSON strings, so this "
               "file was not sent to the implementation nor validated; rename it")
    d: dict[str, Any] = {"code": BAD_NAME, "severity": "error", "path": [], "line": None,
                         "column": None, "message": message}
    if not ns.json and ns.format == "text":
        print(format_diagnostic(shown, d))
    return 2, {"file": shown, "mode": ns.mode, "loaded": False, "tools": [],
               "diagnostics": [d], "status": 2}


def _validate_one(driver: Driver, file: str, ns: argparse.Namespace,
                  world: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    if not is_utf8_name(file):
        return _bad_name(file, ns)
    data, name = read_definition(file)
    result = driver.request("definition.parse", {**source(data, name), "mode": ns.mode})
    severities = {d["severity"] for d in result["diagnostics"]}
    status = 2 if ("error" in severities or not result["loaded"]) else (
        1 if "warning" in severities else 0)
    located = [(_skill_layer_file(d, world), d) for d in result["diagnostics"]]
    diagnostics = [{**d, "file": elsewhere} if elsewhere else d for elsewhere, d in located]
    out = {"file": file, "mode": ns.mode, "loaded": result["loaded"],
           "tools": result["tools"], "diagnostics": diagnostics, "status": status}
    if not ns.json and ns.format == "text":
        for elsewhere, d in located:
            print(format_diagnostic(elsewhere or file, d))
        tools = ", ".join(console_value(t) for t in result["tools"]) or "(none)"
        print(f"{console_value(file)}: granted tools: {tools}")
    return status, out


def cmd_validate(ns: argparse.Namespace) -> int:
    """Every file (and every definition file in every folder) named, against one
    world; the exit status is the worst of them."""
    from capconf.conformance import lint_formats

    files = [f for arg in ns.definitions for f in definition_files(arg)]
    driver = make_driver(ns.impl, ns.timeout)
    results: list[dict[str, Any]] = []
    status = 0
    current: str | None = None  # the file being validated, for a failure's message
    try:
        world = world_args(ns.world, None)
        setup_world(driver, world, ns.world)
        for current in files:
            one, out = _validate_one(driver, current, ns, world)
            status = max(status, one)
            results.append(out)
    except DriverFailure as exc:
        return fail(f"{current}: {exc.message}" if current else exc.message)
    finally:
        driver.close()
    if ns.format in ("github", "sarif"):
        # the names as on disk: SARIF quotes their bytes into a URI that finds the file
        rendered = lint_formats.render(ns.format, list(zip(files, results, strict=True)))
        if ns.format == "github":  # annotations: escaped by lint_formats, written as they are
            raw_stream(sys.stdout).write(rendered)
        else:
            sys.stdout.write(json_console(rendered))
    elif ns.json or ns.format == "json":
        single = len(ns.definitions) == 1 and not Path(ns.definitions[0]).is_dir()
        shown: Any = results[0] if single else {"files": results, "status": status}
        print(json_console(json.dumps(shown, indent=2, ensure_ascii=False, sort_keys=True)))
    elif len(files) > 1:
        counts = [sum(1 for r in results if r["status"] == k) for k in (0, 1, 2)]
        print(f"{len(files)} files: {counts[0]} clean, {counts[1]} with warnings, "
              f"{counts[2]} with errors")
    return validate_exit(status, ns.strict)


def validate_exit(worst: int, strict: bool) -> int:
    """A linter's exit: 2 on an error (or a file the implementation did not load), 1 on
    warnings only under ``--strict``, else 0. Warnings pass by default because real agent
    files carry them as a matter of course (41 of the 158 agent files of
    ../shared/corpora/claude-code-agents, mostly TOOL-UNKNOWN), and a hook or CI gate
    that blocked them would be switched off. The output (and `--json`'s ``status``)
    still names the worst of every file."""
    if worst >= 2:
        return 2
    return 1 if worst == 1 and strict else 0


def _kb_definition(glob: str) -> str:
    return json.dumps({"name": "kb-search", "description": "capconf kb-search",
                       "tools": ["read"], "knowledge": [{"name": "cli", "glob": glob}],
                       "prompt": "Search."})


def _kb_text(content: dict[str, Any]) -> str:
    lines = [f"{console_value(h['path'])}:{console_value(h['line'])}: "
             f"{console_value(h['text'])}" for h in content.get("hits", [])]
    if content.get("hit_cap_reached"):
        lines.append(f"[cut: hit cap of {content.get('hit_cap')} reached; "
                     f"{content.get('matching_lines')} lines matched]")
    if content.get("byte_budget_reached"):
        cut = content.get("cut_file") or {}
        where = f" inside {cut['path']} after {cut['bytes_read']} bytes" if cut else ""
        lines.append(f"[cut: byte budget of {content.get('byte_budget')} bytes reached{where}; "
                     f"{content.get('files_not_read')} later file(s) not read]")
    lines += [f"[skipped: {s.get('path')} ({s.get('reason')})]" for s in content.get("skipped", [])]
    lines += [f"[rejected source: {r.get('glob')!r} ({r.get('reason')})]"
              for r in content.get("rejected_sources", [])]
    lines.append(f"-- {len(content.get('hits', []))} hit(s), {content.get('bytes_read')} bytes "
                 f"read, {content.get('files_searched')} file(s). {content.get('note', '')}")
    return "\n".join(lines) + "\n"


def cmd_kb_search(ns: argparse.Namespace) -> int:
    """The reference kb_search on real files: a one-source agent over ROOT, through the
    driver protocol (so `--impl` points it at any implementation)."""
    root = Path(ns.root)
    if not root.is_dir():
        return fail(f"--root {ns.root} is not a directory")
    driver = make_driver(ns.impl, ns.timeout)
    try:
        driver.request("world.setup", {"workspace": str(root.resolve())})
        agent = driver.request("agent.spawn", {"source": _kb_definition(ns.glob),
                                               "filename": "kb-search.yaml"})
        # naming the source: a runtime that dropped it answers KB-UNKNOWN-SOURCE
        result = driver.request("tool.call", {"agent": agent["agent"], "tool": "kb_search",
                                              "args": {"query": " ".join(ns.query),
                                                       "sources": ["cli"]}})
    except DriverFailure as exc:
        return fail(exc.message)
    finally:
        driver.close()
    # A warning (e.g. the glob reaches a symlink out of the workspace: KB-07 keeps the
    # source and skips the link) is shown and the search runs; only a source the runtime
    # dropped (kb_search then answers KB-UNKNOWN-SOURCE, or is not mounted) refuses it.
    noted = [d for d in agent["diagnostics"]
             if d["path"][:1] == ["knowledge"] and d["severity"] != "info"]
    for d in noted:
        print(f"capconf: {console_value(d['severity'])}: {console_value(d['code'])}: "
              f"{console_value(d['message'])}", file=sys.stderr)
    if "kb_search" not in agent.get("tools", ()) or any(
            d["severity"] == "error" for d in noted):
        return 2
    if not result["ok"]:
        print(json_console(json.dumps(result, indent=2, ensure_ascii=False)) if ns.json else
              f"capconf: {console_value(result['error_code'])}: "
              f"{console_value(result['error_message'])}",
              file=sys.stdout if ns.json else sys.stderr)
        return 2
    content = result["content"]
    if ns.json:
        print(json_console(json.dumps(content, indent=2, ensure_ascii=False, sort_keys=True)))
    else:
        sys.stdout.write(_kb_text(content))
    return 0 if content.get("hits") else 1


def cmd_smoke(ns: argparse.Namespace) -> int:
    """`hello`, then `world.setup` of an empty temporary workspace: the two requests every
    case starts with. A failure names the request that failed."""
    driver = make_driver(ns.impl, ns.timeout)
    op = "hello"
    try:
        hello = driver.hello()
        op = "world.setup"
        with tempfile.TemporaryDirectory() as tmp:
            driver.request("world.setup", {"workspace": os.path.realpath(tmp)})
    except DriverFailure as exc:
        from capconf.conformance.handshake import handshake_message

        print(handshake_message(ns.impl, driver.transport, exc, op, "smoke failed"),
              file=sys.stderr)
        return fail(f"smoke failed at `{op}` ({exc.outcome})")
    finally:
        driver.close()
    impl = hello["implementation"]
    features = ", ".join(console_value(f) for f in hello["features"])
    print(f"ok: {console_value(impl['name'])} {console_value(impl.get('version', ''))}, "
          f"spec {console_value(hello['spec_version'])}, "
          f"features: {features}; `hello` and `world.setup` answered")
    return 0


def cmd_driver(ns: argparse.Namespace) -> int:
    from capconf.conformance.reference import serve_stdio

    return serve_stdio()


def _last_failed(report: str | None) -> list[str]:
    """`--lf`: the cases that failed in the previous run's JSON Lines report (the
    suite's pytest keeps no cache, so the report is the memory of the last run)."""
    from capconf.conformance import outcomes
    from capconf.conformance.gates import GateError

    if not report:
        raise GateError("--lf reruns the failing cases of the previous run's report: give "
                        "the same --report FILE")
    from capconf.conformance.report_file import ReportFileError, load_report

    try:  # opened and checked as `capconf report` opens one (a FIFO is refused, not read)
        loaded = load_report(report)
    except ReportFileError as exc:
        raise GateError(f"--lf: cannot read the previous report: {exc}") from None
    return sorted(c.case for c in loaded.cases.values() if c.outcome in outcomes.FAILING)


def _run_args(ns: argparse.Namespace, extra: list[str]) -> list[str]:
    """pytest's arguments for the suite; every gate value is checked first (exit 2)."""
    from capconf.conformance.gates import (
        check_pytest_args,
        check_required_features,
        check_requirement_ids,
    )

    check_pytest_args(extra)
    check_required_features(ns.require_features)
    check_requirement_ids(ns.req or [])
    only = _last_failed(ns.report) if ns.lf else []
    if ns.lf and not only:
        print(f"capconf: --lf: {ns.report} records no failing case; running every selected "
              "case", file=sys.stderr)
    ini = Path(str(package_file() / "pytest.ini"))
    args = ["-c", str(ini), "--rootdir", str(suite_dir().parent.parent),
            "-p", "capconf.conformance.plugin", "--impl", ns.impl,
            "--impl-timeout", str(ns.timeout)]
    for option, value in (("--report", ns.report), ("--report-md", ns.report_md),
                          ("--expected-failures", ns.expected_failures),
                          ("--save-failures", ns.save_failures),
                          ("--capconf-junit-xml", ns.junit_xml)):
        if value:
            args += [option, value]
    for req in ns.req or []:
        args += ["--req", req]
    for case in only:
        args += ["--case", case]
    if ns.require_features:
        args += ["--require-features", ns.require_features]
    if not any(a.startswith("--color") for a in extra):
        # the console neutraliser (safe_text.py) shows any escape sequence as text, pytest's
        # colours too
        args.append("--color=no")
    if not any(a.startswith("-q") or a.startswith("-v") for a in extra):
        args.append("-q")
    # the failures are told by the capconf summary; pytest's own tracebacks of the
    # harness only when asked for (`--tb`, or `capconf run -- --tb=short`)
    if ns.tb is not None:
        args.append(f"--tb={ns.tb}")
    elif not any(a.startswith("--tb") for a in extra):
        args += ["--tb=no", "-rN"]
    return [*args, *extra, str(suite_dir())]


def cmd_run(ns: argparse.Namespace, extra: list[str]) -> int:
    import pytest

    from capconf.conformance.gates import GateError

    try:
        args = _run_args(ns, extra)
    except GateError as exc:
        return fail(str(exc))
    keep_hypothesis_out_of_cwd()  # no `.hypothesis/` in the user's working directory
    status = int(pytest.main(args))
    if TERMINATED:
        kill_all()
        return fail(f"terminated by signal {TERMINATED[0]}; the implementation's "
                     "processes were stopped and no verdict was reached", 128 + TERMINATED[0])
    return status


def cmd_matrix(ns: argparse.Namespace) -> int:
    from capconf.conformance.matrix import build_matrix, ledger_path, render_matrix, updated_ledger

    if ns.update_ledger:
        from capconf.conformance.source_tree import NotASourceTree, writable_suite_file

        try:
            path = writable_suite_file(Path(str(ledger_path())))
        except NotASourceTree as exc:
            return fail(f"matrix: {exc}")
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        cases = {c for row in build_matrix() for c in row.cases}
        path.write_text(updated_ledger(old, cases), encoding="utf-8")
        print(f"{path}: {len(cases)} active case IDs")
        return 0

    matrix = build_matrix()
    print(render_matrix(matrix))
    uncovered = [row for row in matrix if row.level == "MUST" and not row.cases
                 and (ns.strict or row.status == "active")]
    if uncovered:
        print(f"\n{len(uncovered)} MUST requirement(s) without a test: "
              + ", ".join(r.id for r in uncovered), file=sys.stderr)
        return 1
    return 0


class _VersionAction(argparse.Action):
    """`capconf --version`, printed as written (argparse's own version action re-wraps
    the text)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        from capconf.conformance.versions import version_text

        print(version_text())
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="capconf", description=__doc__)
    parser.add_argument("--version", action=_VersionAction, nargs=0,
                        help="print the suite, spec and driver-protocol versions")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the conformance suite (extra args go to pytest)")
    impl_options(run)
    run.add_argument("--report", help="JSON Lines report file")
    run.add_argument("--report-md", help="Markdown summary file")
    run.add_argument("--junit-xml", help="JUnit XML file (test cases named by case ID)")
    run.add_argument("--expected-failures", help="baseline of case IDs expected to fail")
    run.add_argument("--req", action="append", help="only cases citing this requirement")
    run.add_argument("--require-features", default="",
                     help="comma-separated feature groups that must be declared (their cases "
                          "fail instead of being 'not implemented')")
    run.add_argument("--lf", action="store_true",
                     help="rerun only the cases that failed in the previous --report file")
    run.add_argument("--save-failures", metavar="DIR",
                     help="write each failing case as a `capconf record` scenario in DIR")
    run.add_argument("--tb", choices=["auto", "long", "short", "line", "native", "no"],
                     help="show pytest's tracebacks of failing cases (default: none; the "
                          "capconf summary tells each failure)")

    sub.add_parser("driver", help="serve the reference simulator on stdio")

    prompt = sub.add_parser("prompt", help="print the assembled prompt bytes")
    prompt.add_argument("definition")
    prompt.add_argument("--world", help="world YAML (keys of world.setup)")
    impl_options(prompt)

    validate = sub.add_parser("validate", help="diagnostics of files and folders of "
                              "definitions; exit 2 on an error, 1 on warnings with --strict, "
                              "else 0")
    validate.add_argument("definitions", nargs="+", metavar="PATH",
                          help="a definition file, or a folder of them (.md .yaml .yml .json)")
    validate.add_argument("--mode", choices=["parse", "save"], default="parse")
    validate.add_argument("--json", action="store_true")
    validate.add_argument("--format", choices=["text", "json", "github", "sarif"],
                          default="text", help="github: workflow annotations; sarif: SARIF 2.1.0")
    validate.add_argument("--world", help="world YAML (keys of world.setup)")
    validate.add_argument("--strict", action="store_true",
                          help="fail on warnings too (exit 1); errors always fail (exit 2)")
    impl_options(validate)

    smoke = sub.add_parser("smoke", help="check that an implementation answers `hello` and "
                           "sets up an empty world (`world.setup`), the start of every case")
    impl_options(smoke)

    kb = sub.add_parser("kb-search", help="run kb_search on real files (exit 1: no hit)")
    kb.add_argument("--root", required=True, help="the workspace directory to search")
    kb.add_argument("--glob", required=True, help="workspace-relative glob, e.g. 'docs/**/*.md'")
    kb.add_argument("--json", action="store_true")
    kb.add_argument("query", nargs="+", help="terms; a line matches if it contains any")
    impl_options(kb)

    add_report_parsers(sub)
    for name, handler in REPORT_HANDLERS.items():
        sub.choices[name].set_defaults(handler=handler)
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(sub, impl_options)
    add_spec_parser(sub)
    for name, handler in SPEC_HANDLERS.items():
        sub.choices[name].set_defaults(handler=handler)

    matrix = sub.add_parser("matrix", help="requirement -> tests traceability")
    matrix.add_argument("--strict", action="store_true",
                        help="also fail on planned requirements without tests")
    matrix.add_argument("--update-ledger", action="store_true",
                        help="record new case IDs in conformance/case_ids.txt and retire "
                             "vanished ones")
    return parser


TERMINATED: list[int] = []


def _on_signal(number: int, frame: Any) -> None:
    """An outer kill (a CI job's timeout) stops the run as an interrupt, so every
    implementation process group is killed on the way out and the run says why."""
    from capconf.conformance.client import INTERRUPTS

    TERMINATED.append(number)
    if INTERRUPTS.interrupt_now():
        raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    import signal
    import threading

    # only the main thread may install handlers (an embedding caller may run us in another)
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, _on_signal)
    from capconf.conformance.safe_text import ConsoleStream

    # every line any command prints passes the console neutraliser (safe_text.py): what
    # an implementation, a report or a definition file says cannot become a workflow
    # command or a terminal escape in the CI log that shows it
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ConsoleStream(sys.stdout), ConsoleStream(sys.stderr)
    try:
        return _main(argv)
    except BrokenPipeError:  # `capconf validate dir/ | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        kill_all()
        number = TERMINATED[0] if TERMINATED else 2
        return fail(f"interrupted (signal {number}); the implementation's processes were "
                     "stopped", 128 + number)
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        sys.stdout, sys.stderr = saved


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    extra: list[str] = []
    if argv and argv[0] == "run":
        ns, extra = parser.parse_known_args(argv)
        if extra and extra[0] == "--":
            extra = extra[1:]
    else:
        ns = parser.parse_args(argv)
    if ns.command == "run":
        return cmd_run(ns, extra)
    handlers = {"prompt": cmd_prompt, "validate": cmd_validate, "smoke": cmd_smoke,
                "driver": cmd_driver, "matrix": cmd_matrix, "kb-search": cmd_kb_search}
    handler = handlers.get(ns.command) or ns.handler
    return int(handler(ns))


if __name__ == "__main__":
    sys.exit(main())
