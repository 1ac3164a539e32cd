"""`capconf candidates` and `capconf edit`: the settings editor (EDIT-01..04) on real
files, through the driver protocol."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

from capconf.conformance import cli_files
from capconf.conformance.cli_common import (
    READ_LIMIT,
    fail,
    format_diagnostic,
    make_driver,
    setup_world,
    world_args,
)
from capconf.conformance.client import DriverFailure

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
    driver = make_driver(ns.impl, ns.timeout)
    try:
        setup_world(driver, world_args(ns.world, None), ns.world)
        result = driver.request("editor.candidates")
    except DriverFailure as exc:
        return fail(exc.message)
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
        return fail(str(exc))
    data = original.data
    driver = make_driver(ns.impl, ns.timeout)
    try:
        setup_world(driver, world_args(ns.world, path), ns.world)
        result = driver.request("editor.edit", {
            "source_b64": base64.b64encode(data).decode("ascii"), "filename": path.name,
            "edit": edit})
        unknown = None
        if ns.unknown and result["applied"]:
            unknown = driver.request("editor.unknown_names", {
                "source_b64": result["document_b64"], "filename": path.name})["unknown"]
    except DriverFailure as exc:
        return fail(exc.message)
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
            return fail(str(exc))
    else:
        sys.stdout.buffer.write(out)
    for d in result["diagnostics"]:
        print(format_diagnostic(str(path), d), file=sys.stderr)
    for u in unknown or ():
        near = f" nearest: {', '.join(u['nearest'])}" if u["nearest"] else ""
        print(f"{path}:{u['line']}:{u['column']}: unknown {u['field']} `{u['name']}`;{near} "
              f"(remove: --remove {u['field']}={u['index']})", file=sys.stderr)
    return 0


def register(sub: Any, impl_options: Any) -> None:
    candidates = sub.add_parser("candidates", help="the settings editor's selector "
                                "candidates (tools, skills, MCP servers) for a world")
    candidates.add_argument("--world", help="world YAML (keys of world.setup)")
    candidates.add_argument("--json", action="store_true")
    impl_options(candidates)
    candidates.set_defaults(handler=cmd_candidates)

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
    edit.set_defaults(handler=cmd_edit)
