"""The `capconf` command.

Every command except `driver` speaks the driver protocol, so `prompt`, `validate` and
`smoke` work against any implementation (`--impl CMD`), not only the bundled reference.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from capconf.conformance import cli_files
from capconf.conformance.client import DriverFailure, ImplementationError, kill_all
from capconf.conformance.driver import Driver
from capconf.conformance.locations import package_file, suite_dir
from capconf.conformance.report_cli import REPORT_HANDLERS, add_report_parsers
from capconf.conformance.spec_html import SPEC_HANDLERS, add_spec_parser
from capconf.conformance.worldfile import WorldFileError, load_world_file

READ_LIMIT = 1_048_576 + 1  # the spec's definition size limit, plus one byte to exceed it


def _driver(impl: str, timeout: float) -> Driver:
    from capconf.conformance.plugin import make_transport

    return Driver(make_transport(impl, timeout))


def _fail(message: str, status: int = 2) -> int:
    print(f"capconf: {message}", file=sys.stderr)
    return status


def _world_args(world_file: str | None, definition_path: Path | None) -> dict[str, Any]:
    args: dict[str, Any] = {}
    base = Path.cwd()
    if world_file:
        path = Path(world_file)
        try:
            args = load_world_file(path)
        except WorldFileError as exc:
            raise SystemExit(_fail(f"world file {world_file}: {exc}")) from None
        base = path.resolve().parent
    workspace = args.get("workspace")
    if workspace is not None and (not isinstance(workspace, str) or not workspace
                                  or "\x00" in workspace):
        raise SystemExit(_fail(f"world file {world_file}: `workspace` must be a directory "
                               f"path (a non-empty string), not {workspace!r:.80}"))
    if workspace is None:
        args["workspace"] = str(base.resolve())
    elif not os.path.isabs(workspace):
        args["workspace"] = str((base / workspace).resolve())
    return args


def _setup_world(driver: Driver, args: dict[str, Any], world_file: str | None) -> Any:
    """`world.setup`, with a refusal told at its place: the world file and the key path
    the implementation's error names (`grantable[1]`), not only its message."""
    try:
        return driver.request("world.setup", args)
    except ImplementationError as exc:
        path = exc.error.get("path")
        where = ""
        if isinstance(path, list) and path:
            keys = path[1:] if path[0] == "args" else path
            where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys
                            ).lstrip(".")
        source = f"world file {world_file}" if world_file else "the default world"
        at = f": `{where}`" if where else ""
        raise SystemExit(_fail(f"{source}{at}: {exc.error_message} ({exc.code})")) from None


def _read_definition(path_text: str) -> tuple[bytes, str]:
    try:
        return cli_files.read_prefix(path_text, "definition", READ_LIMIT), Path(path_text).name
    except cli_files.InputError as exc:
        raise SystemExit(_fail(str(exc))) from None


def _source(data: bytes, name: str) -> dict[str, Any]:
    return {"source_b64": base64.b64encode(data).decode("ascii"), "filename": name}


def cmd_prompt(ns: argparse.Namespace) -> int:
    data, name = _read_definition(ns.definition)
    driver = _driver(ns.impl, ns.timeout)
    try:
        _setup_world(driver, _world_args(ns.world, Path(ns.definition)), ns.world)
        result = driver.request("prompt.assemble", _source(data, name))
    except DriverFailure as exc:
        return _fail(exc.message)
    finally:
        driver.close()
    sys.stdout.buffer.write(result["prompt"].encode("utf-8"))
    return 0


def _format_diagnostic(file: str, d: dict[str, Any]) -> str:
    where = file
    if d.get("line") is not None:
        where += f":{d['line']}:{d['column']}"
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in d["path"]).lstrip(".")
    at = f" ({path})" if path else ""
    return f"{where}: {d['severity']} {d['code']}{at}: {d['message']}"


DEFINITION_SUFFIXES = (".md", ".yaml", ".yml", ".json")


def _definition_files(arg: str) -> list[str]:
    """A file as given; a folder (`.claude/agents/`) as the definition files under it
    (by suffix, sorted, hidden folders skipped). Reading stays in ``_read_definition``."""
    path = Path(arg)
    if not path.is_dir():
        return [arg]
    found = sorted(str(p) for p in path.rglob("*")
                   if p.suffix.lower() in DEFINITION_SUFFIXES and p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not found:
        raise SystemExit(_fail(f"{arg}: no definition files ({', '.join(DEFINITION_SUFFIXES)})"
                               " in this folder"))
    return found


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


def _validate_one(driver: Driver, file: str, ns: argparse.Namespace,
                  world: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    data, name = _read_definition(file)
    result = driver.request("definition.parse", {**_source(data, name), "mode": ns.mode})
    severities = {d["severity"] for d in result["diagnostics"]}
    status = 2 if ("error" in severities or not result["loaded"]) else (
        1 if "warning" in severities else 0)
    located = [(_skill_layer_file(d, world), d) for d in result["diagnostics"]]
    diagnostics = [{**d, "file": elsewhere} if elsewhere else d for elsewhere, d in located]
    out = {"file": file, "mode": ns.mode, "loaded": result["loaded"],
           "tools": result["tools"], "diagnostics": diagnostics, "status": status}
    if not ns.json and ns.format == "text":
        for elsewhere, d in located:
            print(_format_diagnostic(elsewhere or file, d))
        print(f"{file}: granted tools: {', '.join(result['tools']) or '(none)'}")
    return status, out


def cmd_validate(ns: argparse.Namespace) -> int:
    """Every file (and every definition file in every folder) named, against one
    world; the exit status is the worst of them."""
    from capconf.conformance import lint_formats

    files = [f for arg in ns.definitions for f in _definition_files(arg)]
    driver = _driver(ns.impl, ns.timeout)
    results: list[dict[str, Any]] = []
    status = 0
    current: str | None = None  # the file being validated, for a failure's message
    try:
        world = _world_args(ns.world, None)
        _setup_world(driver, world, ns.world)
        for current in files:
            one, out = _validate_one(driver, current, ns, world)
            status = max(status, one)
            results.append(out)
    except DriverFailure as exc:
        return _fail(f"{current}: {exc.message}" if current else exc.message)
    finally:
        driver.close()
    if ns.format in ("github", "sarif"):
        sys.stdout.write(lint_formats.render(ns.format, [(r["file"], r) for r in results]))
    elif ns.json or ns.format == "json":
        single = len(ns.definitions) == 1 and not Path(ns.definitions[0]).is_dir()
        shown: Any = results[0] if single else {"files": results, "status": status}
        print(json.dumps(shown, indent=2, ensure_ascii=False, sort_keys=True))
    elif len(files) > 1:
        counts = [sum(1 for r in results if r["status"] == k) for k in (0, 1, 2)]
        print(f"{len(files)} files: {counts[0]} clean, {counts[1]} with warnings, "
              f"{counts[2]} with errors")
    return status


def _kb_definition(glob: str) -> str:
    return json.dumps({"name": "kb-search", "description": "capconf kb-search",
                       "tools": ["read"], "knowledge": [{"name": "cli", "glob": glob}],
                       "prompt": "Search."})


def _kb_text(content: dict[str, Any]) -> str:
    lines = [f"{h['path']}:{h['line']}: {h['text']}" for h in content.get("hits", [])]
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
        return _fail(f"--root {ns.root} is not a directory")
    driver = _driver(ns.impl, ns.timeout)
    try:
        driver.request("world.setup", {"workspace": str(root.resolve())})
        agent = driver.request("agent.spawn", {"source": _kb_definition(ns.glob),
                                               "filename": "kb-search.yaml"})
        # naming the source: a runtime that dropped it answers KB-UNKNOWN-SOURCE
        result = driver.request("tool.call", {"agent": agent["agent"], "tool": "kb_search",
                                              "args": {"query": " ".join(ns.query),
                                                       "sources": ["cli"]}})
    except DriverFailure as exc:
        return _fail(exc.message)
    finally:
        driver.close()
    # A warning (e.g. the glob reaches a symlink out of the workspace: KB-07 keeps the
    # source and skips the link) is shown and the search runs; only a source the runtime
    # dropped (kb_search then answers KB-UNKNOWN-SOURCE, or is not mounted) refuses it.
    noted = [d for d in agent["diagnostics"]
             if d["path"][:1] == ["knowledge"] and d["severity"] != "info"]
    for d in noted:
        print(f"capconf: {d['severity']}: {d['code']}: {d['message']}", file=sys.stderr)
    if "kb_search" not in agent.get("tools", ()) or any(
            d["severity"] == "error" for d in noted):
        return 2
    if not result["ok"]:
        print(json.dumps(result, indent=2, ensure_ascii=False) if ns.json else
              f"capconf: {result['error_code']}: {result['error_message']}",
              file=sys.stdout if ns.json else sys.stderr)
        return 2
    content = result["content"]
    if ns.json:
        print(json.dumps(content, indent=2, ensure_ascii=False, sort_keys=True))
    else:
        sys.stdout.write(_kb_text(content))
    return 0 if content.get("hits") else 1


def cmd_smoke(ns: argparse.Namespace) -> int:
    driver = _driver(ns.impl, ns.timeout)
    try:
        hello = driver.hello()
        with tempfile.TemporaryDirectory() as tmp:
            driver.request("world.setup", {"workspace": os.path.realpath(tmp)})
    except DriverFailure as exc:
        from capconf.conformance.handshake import handshake_message

        print(handshake_message(ns.impl, driver.transport, exc), file=sys.stderr)
        return _fail(f"smoke failed ({exc.outcome})")
    finally:
        driver.close()
    impl = hello["implementation"]
    print(f"ok: {impl['name']} {impl.get('version', '')}, spec {hello['spec_version']}, "
          f"features: {', '.join(hello['features'])}")
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
    try:
        # lines end with \n only: a reason may hold U+2028 or U+0085 (report_file.py)
        lines = Path(report).read_text(encoding="utf-8").split("\n")
        rows = [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise GateError(f"--lf: cannot read the previous report {report}: "
                        f"{getattr(exc, 'strerror', None) or exc}") from None
    return sorted(r["case"] for r in rows if isinstance(r, dict) and r.get("type") == "case"
                  and r.get("outcome") in outcomes.FAILING)


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
        return _fail(str(exc))
    status = int(pytest.main(args))
    if TERMINATED:
        kill_all()
        return _fail(f"terminated by signal {TERMINATED[0]}; the implementation's "
                     "processes were stopped and no verdict was reached", 128 + TERMINATED[0])
    return status


def _read_text(path_text: str, what: str) -> str:
    try:
        return cli_files.read_input_text(path_text, what)
    except cli_files.InputError as exc:
        raise SystemExit(_fail(str(exc))) from None


def _exchange_with(driver: Driver) -> Any:
    from capconf.conformance.replay import NoAnswer

    def exchange(op: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            return driver.send(op, args)
        except DriverFailure as exc:
            raise NoAnswer(exc.outcome, exc.message) from None
        except Exception as exc:  # an in-process implementation that raised
            raise NoAnswer("raised an exception", f"{type(exc).__name__}: {exc}") from None
    return exchange


def prepare_workspace(files: dict[str, str], tmp: str) -> str:
    """The directory a scenario runs in: ``tmp`` with the scenario's files written."""
    workspace = os.path.realpath(tmp)
    for relative, text in files.items():
        target = Path(workspace, relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return workspace


def _open_driver(ns: argparse.Namespace) -> Driver:
    try:
        return _driver(ns.impl, ns.timeout)
    except Exception as exc:  # e.g. a python:MODULE:FACTORY that does not import
        raise SystemExit(_fail(f"--impl {ns.impl}: {exc}")) from None


def cmd_record(ns: argparse.Namespace) -> int:
    from capconf.conformance import replay

    try:
        scenario = replay.parse_scenario(_read_text(ns.scenario, "scenario"))
    except replay.LogError as exc:
        return _fail(f"{ns.scenario}:{exc.line}: {exc.message}")
    driver = _open_driver(ns)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = prepare_workspace(scenario.files, tmp)
            recording = replay.record(scenario, _exchange_with(driver), workspace, ns.impl)
    except replay.NoAnswer as exc:
        return _fail(f"recording failed: the implementation {exc.outcome}: {exc.message}", 1)
    finally:
        driver.close()
    try:
        cli_files.write_output(ns.out, replay.render_log(recording), "log")
    except cli_files.InputError as exc:
        return _fail(str(exc))
    print(f"recorded {len(recording.steps)} steps to {ns.out}")
    return 0


def cmd_replay(ns: argparse.Namespace) -> int:
    from capconf.conformance import replay

    try:
        recording = replay.parse_log(_read_text(ns.log, "log"))
    except replay.LogError as exc:
        return _fail(f"{ns.log}:{exc.line}: bad log: {exc.message}")
    driver = _open_driver(ns)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = prepare_workspace(recording.files, tmp)
            divergence = replay.replay(recording, _exchange_with(driver), workspace)
    finally:
        driver.close()
    if divergence is None:
        print(f"{ns.log}: {len(recording.steps)} steps, identical against {ns.impl}")
        return 0
    sys.stdout.write(replay.describe(divergence, ns.log, ns.impl))
    return 1


def cmd_matrix(ns: argparse.Namespace) -> int:
    from capconf.conformance.matrix import build_matrix, ledger_path, render_matrix, updated_ledger

    if ns.update_ledger:
        from capconf.conformance.source_tree import NotASourceTree, writable_suite_file

        try:
            path = writable_suite_file(Path(str(ledger_path())))
        except NotASourceTree as exc:
            return _fail(f"matrix: {exc}")
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


_EDIT_LIST_FIELDS = ("tools", "skills", "mcp.servers")


def _edit_arg(ns: argparse.Namespace) -> dict[str, Any]:
    """`--set tools=read,WebFetch`, `--set memory=private`, `--set memory=` (remove),
    `--set knowledge='[{"name": ..., "glob": ...}]'`, or `--remove tools=2`."""
    if ns.remove:
        field, _, index = ns.remove.partition("=")
        if not index.isdigit():
            raise SystemExit("capconf: --remove takes FIELD=INDEX, e.g. tools=2")
        return {"field": field, "remove": int(index)}
    field, eq, text = ns.set.partition("=")
    if not eq:
        raise SystemExit("capconf: --set takes FIELD=VALUE, e.g. tools=read,WebFetch")
    value: Any
    if text == "" and field not in ("description", "body", "name"):
        value = None
    elif field in _EDIT_LIST_FIELDS:
        value = [n.strip() for n in text.split(",")] if text.strip() else []
    elif field == "knowledge":
        value = cli_files.parse_json_option(text, "--set knowledge")
    elif field == "body" and text.startswith("@"):
        value = cli_files.option_file_text(text[1:], "--set body=@ file", READ_LIMIT)
    else:
        value = text
    return {"field": field, "value": value}


# -- the settings editor (EDIT-01..04) ---------------------------------------------

def cmd_candidates(ns: argparse.Namespace) -> int:
    driver = _driver(ns.impl, ns.timeout)
    try:
        _setup_world(driver, _world_args(ns.world, None), ns.world)
        result = driver.request("editor.candidates")
    except DriverFailure as exc:
        return _fail(exc.message)
    finally:
        driver.close()
    if ns.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    tools = result["tools"]
    print(f"tools ({tools['source']}):")
    for c in tools["candidates"]:
        print(f"  {c['name']}{'' if c['in_session'] else '  (not in this session)'}")
    print("skills:")
    for c in result["skills"]["candidates"]:
        hides = f"  hides {', '.join(c['shadowed'])}" if c["shadowed"] else ""
        print(f"  {c['name']}  [{c['layer']}]{hides}")
    print("mcp servers:")
    for c in result["mcp"]["candidates"]:
        print(f"  {c['name']}  ({c['state']})")
    return 0


def cmd_edit(ns: argparse.Namespace) -> int:
    """Print (or with --write, save) the document with one form edit applied; exit 3 when
    the edit is refused, 2 on errors."""
    path = Path(ns.definition)
    try:
        original = cli_files.snapshot(ns.definition, "definition", READ_LIMIT,
                                      follow=not ns.write)
        edit = _edit_arg(ns)
    except cli_files.InputError as exc:
        return _fail(str(exc))
    data = original.data
    driver = _driver(ns.impl, ns.timeout)
    try:
        _setup_world(driver, _world_args(ns.world, path), ns.world)
        result = driver.request("editor.edit", {
            "source_b64": base64.b64encode(data).decode("ascii"), "filename": path.name,
            "edit": edit})
        unknown = None
        if ns.unknown and result["applied"]:
            unknown = driver.request("editor.unknown_names", {
                "source_b64": result["document_b64"], "filename": path.name})["unknown"]
    except DriverFailure as exc:
        return _fail(exc.message)
    finally:
        driver.close()
    if not result["applied"]:
        r = result["refusal"]
        where = f"{path}:{r['line']}:{r['column']}" if r["line"] else str(path)
        print(f"{where}: refused ({r['code']}): {r['message']}", file=sys.stderr)
        return 3
    out = base64.b64decode(result["document_b64"])
    if ns.write:
        try:
            cli_files.write_back(original, out)
        except cli_files.InputError as exc:
            return _fail(str(exc))
    else:
        sys.stdout.buffer.write(out)
    for d in result["diagnostics"]:
        print(_format_diagnostic(str(path), d), file=sys.stderr)
    for u in unknown or ():
        near = f" nearest: {', '.join(u['nearest'])}" if u["nearest"] else ""
        print(f"{path}:{u['line']}:{u['column']}: unknown {u['field']} `{u['name']}`;{near} "
              f"(remove: --remove {u['field']}={u['index']})", file=sys.stderr)
    return 0


def _add_editor_parsers(sub: Any, impl_options: Any) -> None:
    candidates = sub.add_parser("candidates", help="the settings editor's selector "
                                "candidates (tools, skills, MCP servers) for a world")
    candidates.add_argument("--world", help="world YAML (keys of world.setup)")
    candidates.add_argument("--json", action="store_true")
    impl_options(candidates)

    edit = sub.add_parser("edit", help="apply one form edit to a definition file, keeping "
                          "every other byte (exit 3: refused)")
    edit.add_argument("definition")
    group = edit.add_mutually_exclusive_group(required=True)
    group.add_argument("--set", help="FIELD=VALUE: tools=read,WebFetch  memory=private  "
                       "memory= (remove)  body=@file.md  knowledge='[{\"name\":..,\"glob\":..}]'")
    group.add_argument("--remove", help="FIELD=INDEX: remove one entry, e.g. tools=2")
    edit.add_argument("--write", action="store_true", help="save the result to the file")
    edit.add_argument("--unknown", action="store_true",
                      help="also list unknown names in the result, with nearest candidates")
    edit.add_argument("--world", help="world YAML (keys of world.setup)")
    impl_options(edit)


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

    def impl_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--impl", default="reference",
                       help="driver command of the implementation (default: the bundled "
                            "reference simulator, in-process)")
        p.add_argument("--timeout", type=float, default=20.0, help="seconds per request")

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
                              "definitions; exit 0 clean, 1 warnings, 2 errors (the worst)")
    validate.add_argument("definitions", nargs="+", metavar="PATH",
                          help="a definition file, or a folder of them (.md .yaml .yml .json)")
    validate.add_argument("--mode", choices=["parse", "save"], default="parse")
    validate.add_argument("--json", action="store_true")
    validate.add_argument("--format", choices=["text", "json", "github", "sarif"],
                          default="text", help="github: workflow annotations; sarif: SARIF 2.1.0")
    validate.add_argument("--world", help="world YAML (keys of world.setup)")
    impl_options(validate)

    smoke = sub.add_parser("smoke", help="check that an implementation answers the handshake")
    impl_options(smoke)

    kb = sub.add_parser("kb-search", help="run kb_search on real files (exit 1: no hit)")
    kb.add_argument("--root", required=True, help="the workspace directory to search")
    kb.add_argument("--glob", required=True, help="workspace-relative glob, e.g. 'docs/**/*.md'")
    kb.add_argument("--json", action="store_true")
    kb.add_argument("query", nargs="+", help="terms; a line matches if it contains any")
    impl_options(kb)

    _add_editor_parsers(sub, impl_options)
    add_report_parsers(sub)
    add_spec_parser(sub)

    rec = sub.add_parser("record", help="run a scenario (JSON Lines of requests) and write "
                         "its log for `capconf replay`")
    rec.add_argument("scenario")
    rec.add_argument("--out", required=True, help="the log file to write")
    impl_options(rec)

    rep = sub.add_parser("replay", help="re-run a recorded log; exit 0 identical, 1 the "
                         "first divergence, 2 a bad log")
    rep.add_argument("log")
    impl_options(rep)

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
    try:
        return _main(argv)
    except BrokenPipeError:  # `capconf validate dir/ | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        kill_all()
        number = TERMINATED[0] if TERMINATED else 2
        return _fail(f"interrupted (signal {number}); the implementation's processes were "
                     "stopped", 128 + number)


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
    handlers = {"prompt": cmd_prompt, "validate": cmd_validate, "smoke": cmd_smoke,
                "driver": cmd_driver, "matrix": cmd_matrix, "kb-search": cmd_kb_search}
    handlers.update({"candidates": cmd_candidates, "edit": cmd_edit,
                     "record": cmd_record, "replay": cmd_replay})
    handlers.update(REPORT_HANDLERS)
    handlers.update(SPEC_HANDLERS)
    if ns.command == "run":
        return cmd_run(ns, extra)
    return int(handlers[ns.command](ns))


if __name__ == "__main__":
    sys.exit(main())
