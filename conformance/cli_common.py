"""What the `capconf` subcommands share: starting the implementation's driver, the world
a command runs in, reading a definition file, and failing with one clear line.

Every command module (``cli_*.py``) takes these from here, so a command module never
imports another, and ``cli.py`` stays the table of commands."""

from __future__ import annotations

import argparse
import base64
import os
import sys
from pathlib import Path
from typing import Any

from capconf.conformance import cli_files
from capconf.conformance.client import DriverFailure, ImplementationError
from capconf.conformance.driver import Driver
from capconf.conformance.safe_text import console, console_value
from capconf.conformance.worldfile import WorldFileError, load_world_file

READ_LIMIT = 1_048_576 + 1  # the spec's definition size limit, plus one byte to exceed it


def make_driver(impl: str, timeout: float) -> Driver:
    from capconf.conformance.plugin import make_transport

    return Driver(make_transport(impl, timeout))


def fail(message: str, status: int = 2) -> int:
    """``capconf: MESSAGE`` on stderr; the message's lines neutralised for a console
    (it may quote a file name or an implementation's words)."""
    print(console(f"capconf: {message}"), file=sys.stderr)
    return status


def world_args(world_file: str | None, definition_path: Path | None) -> dict[str, Any]:
    args: dict[str, Any] = {}
    base = Path.cwd()
    if world_file:
        path = Path(world_file)
        try:
            args = load_world_file(path)
        except WorldFileError as exc:
            raise SystemExit(fail(f"world file {world_file}: {exc}")) from None
        base = path.resolve().parent
    workspace = args.get("workspace")
    if workspace is not None and (not isinstance(workspace, str) or not workspace
                                  or "\x00" in workspace):
        raise SystemExit(fail(f"world file {world_file}: `workspace` must be a directory "
                               f"path (a non-empty string), not {workspace!r:.80}"))
    if workspace is None:
        args["workspace"] = str(base.resolve())
    elif not os.path.isabs(workspace):
        args["workspace"] = str((base / workspace).resolve())
    return args


def setup_world(driver: Driver, args: dict[str, Any], world_file: str | None) -> Any:
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
        raise SystemExit(fail(f"{source}{at}: {exc.error_message} ({exc.code})")) from None


def read_definition(path_text: str) -> tuple[bytes, str]:
    try:
        return cli_files.read_prefix(path_text, "definition", READ_LIMIT), Path(path_text).name
    except cli_files.InputError as exc:
        raise SystemExit(fail(str(exc))) from None


def source(data: bytes, name: str) -> dict[str, Any]:
    return {"source_b64": base64.b64encode(data).decode("ascii"), "filename": name}


def format_diagnostic(file: str, d: dict[str, Any]) -> str:
    """One diagnostic as a console line; every part may come from a hostile file or
    implementation, so each is neutralised for a terminal or CI log (safe_text.py)."""
    where = console_value(file)
    if d.get("line") is not None:
        where += f":{console_value(d['line'])}:{console_value(d['column'])}"
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in d["path"]).lstrip(".")
    at = f" ({console_value(path)})" if path else ""
    return (f"{where}: {console_value(d['severity'])} {console_value(d['code'])}{at}: "
            f"{console_value(d['message'])}")


def read_text(path_text: str, what: str) -> str:
    try:
        return cli_files.read_input_text(path_text, what)
    except cli_files.InputError as exc:
        raise SystemExit(fail(str(exc))) from None


def exchange_with(driver: Driver) -> Any:
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


def open_driver(ns: argparse.Namespace) -> Driver:
    try:
        return make_driver(ns.impl, ns.timeout)
    except Exception as exc:  # e.g. a python:MODULE:FACTORY that does not import
        raise SystemExit(fail(f"--impl {ns.impl}: {exc}")) from None



def impl_options(p: argparse.ArgumentParser) -> None:
    """`--impl` and `--timeout`, the options of every command that drives an
    implementation."""
    p.add_argument("--impl", default="reference",
                   help="driver command of the implementation (default: the bundled "
                        "reference simulator, in-process)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per request")


DEFINITION_SUFFIXES = (".md", ".yaml", ".yml", ".json")


def definition_files(arg: str) -> list[str]:
    """A file as given; a folder (`.claude/agents/`) as the definition files under it
    (by suffix, sorted, hidden folders skipped). Reading stays in ``read_definition``."""
    path = Path(arg)
    if not path.is_dir():
        return [arg]
    found = sorted(str(p) for p in path.rglob("*")
                   if p.suffix.lower() in DEFINITION_SUFFIXES and p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not found:
        raise SystemExit(fail(f"{arg}: no definition files ({', '.join(DEFINITION_SUFFIXES)})"
                               " in this folder"))
    return found
