"""A data-configured fake MCP server: real MCP (JSON-RPC 2.0 over stdio), scripted tools,
and a journal of every message it receives.

The journal is the point: "the undeclared server never saw the call" (MCP-02) and "the
unapproved tool never ran" (MCP-03) are checked by reading it, not by trusting the
gateway. The core is :class:`FakeServer`, a sans-IO state machine (one line in, a
:class:`ServerStep` out); :func:`main` is the thin stdio edge, so the in-process path and
the stdio path run the same code and write the same journal bytes.

Run as ``python -m capconf.simulator.mcp.fake_server CONFIG.json --journal FILE``.

Config (JSON)::

    {"name": "notion", "version": "1.0.0", "instructions": "...",
     "tools": [{"name": "search_pages", "description": "...",
                "inputSchema": {"type": "object", ...},
                "results": [STEP, ...]}],
     "on_list": STEP}

A tool's n-th call plays ``results[n]`` (the last step repeats; no steps means echo).
A STEP is one of ``{"text": "..."}``, ``{"content": [...], "isError": false}``,
``{"echo": true}`` (the arguments as canonical JSON), ``{"error": {"code": -32603,
"message": "..."}}`` (a JSON-RPC error), or ``{"fault": F}`` with F one of ``hang``
(never answer), ``die`` (exit mid-call), ``garbage`` (a line that is not JSON),
``oversized`` (a response over the size limit), ``wrong_id`` (a response to a request
never sent), ``bad_result`` (a result that is not an MCP result). ``on_list`` applies a
fault or error to ``tools/list`` instead of listing. Tool names are not checked and may
repeat (a hostile server lists what it likes); ``tools/call`` plays the first match.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from capconf.simulator.core.diagnostics import PathItem, WorldSetupError
from capconf.simulator.mcp.jsonrpc import (
    INVALID_PARAMS,
    MAX_MESSAGE_BYTES,
    METHOD_NOT_FOUND,
    ErrorResponse,
    FramingError,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    canonical_json,
    decode,
    encode,
    to_obj,
)

HANDSHAKE_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Revisions reachable through ``initialize``; an unknown request gets the newest, as
the MCP lifecycle prescribes, and the client decides whether it can live with it."""

LATEST_PROTOCOL_VERSION = HANDSHAKE_PROTOCOL_VERSIONS[-1]


@cache
def _jsonschema() -> Any:
    """jsonschema, imported on first use (a config's schemas, a call's arguments): a
    ``capconf driver`` whose world has no MCP server never pays its ~40 ms import.
    Imported dynamically so type checking does not depend on jsonschema's stub package."""
    return importlib.import_module("jsonschema")

FAULT_EXIT_STATUS = 70
"""Exit status of a ``die`` fault, so a test can tell it from a crash."""


class Fault(StrEnum):
    HANG = "hang"
    DIE = "die"
    GARBAGE = "garbage"
    OVERSIZED = "oversized"
    WRONG_ID = "wrong_id"
    BAD_RESULT = "bad_result"


@dataclass(frozen=True)
class Step:
    """What one call plays. Exactly one of the fields is set (``echo`` False otherwise)."""

    content: tuple[dict[str, Any], ...] | None = None
    is_error: bool = False
    echo: bool = False
    error: tuple[int, str] | None = None
    fault: Fault | None = None


ECHO = Step(echo=True)


@dataclass(frozen=True)
class FakeTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    steps: tuple[Step, ...] = ()

    def listing(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "inputSchema": self.input_schema}


@dataclass(frozen=True)
class FakeServerConfig:
    name: str
    version: str = "1.0.0"
    tools: tuple[FakeTool, ...] = ()
    instructions: str | None = None
    on_list: Step | None = None


# -- config parsing ------------------------------------------------------------------

def _fail(path: tuple[PathItem, ...], message: str) -> WorldSetupError:
    return WorldSetupError(path, message)


def _expect_keys(
    obj: object, path: tuple[PathItem, ...], allowed: frozenset[str], what: str
) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _fail(path, f"{what} must be a JSON object")
    extra = sorted(set(obj) - allowed)
    if extra:
        raise _fail((*path, extra[0]), f"unknown key {extra[0]!r} in {what}")
    return obj


def _parse_step(obj: object, path: tuple[PathItem, ...]) -> Step:
    step = _expect_keys(
        obj, path, frozenset({"text", "content", "isError", "echo", "error", "fault"}), "a step"
    )
    kinds = [k for k in ("text", "content", "echo", "error", "fault") if k in step]
    if len(kinds) != 1:
        raise _fail(path, "a step has exactly one of text, content, echo, error, fault")
    is_error = step.get("isError", False)
    if not isinstance(is_error, bool):
        raise _fail((*path, "isError"), "isError must be a boolean")
    kind = kinds[0]
    if kind == "text":
        if not isinstance(step["text"], str):
            raise _fail((*path, "text"), "text must be a string")
        return Step(content=({"type": "text", "text": step["text"]},), is_error=is_error)
    if kind == "content":
        content = step["content"]
        if not isinstance(content, list) or not all(
            isinstance(c, dict) and isinstance(c.get("type"), str) for c in content
        ):
            raise _fail((*path, "content"), "content must be a list of objects with a type")
        return Step(content=tuple(content), is_error=is_error)
    if kind == "echo":
        if step["echo"] is not True:
            raise _fail((*path, "echo"), "echo must be true")
        return ECHO
    if kind == "error":
        err = step["error"]
        if not (
            isinstance(err, dict)
            and isinstance(err.get("code"), int)
            and not isinstance(err.get("code"), bool)
            and isinstance(err.get("message"), str)
        ):
            raise _fail((*path, "error"), "error needs an integer code and a string message")
        return Step(error=(err["code"], err["message"]))
    try:
        return Step(fault=Fault(step["fault"]))
    except ValueError:
        choices = ", ".join(f.value for f in Fault)
        raise _fail((*path, "fault"), f"fault must be one of {choices}") from None


def _parse_tool(obj: object, path: tuple[PathItem, ...]) -> FakeTool:
    tool = _expect_keys(
        obj, path, frozenset({"name", "description", "inputSchema", "results"}), "a tool"
    )
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise _fail((*path, "name"), "a tool needs a non-empty string name")
    description = tool.get("description", "")
    if not isinstance(description, str):
        raise _fail((*path, "description"), "description must be a string")
    schema = tool.get("inputSchema", {"type": "object"})
    if not isinstance(schema, dict):
        raise _fail((*path, "inputSchema"), "inputSchema must be a JSON object")
    try:
        _jsonschema().Draft202012Validator.check_schema(schema)
    except _jsonschema().SchemaError as exc:
        raise _fail(
            (*path, "inputSchema"), f"inputSchema is not a JSON Schema: {exc.message}"
        ) from None
    results = tool.get("results", [])
    if not isinstance(results, list):
        raise _fail((*path, "results"), "results must be a list of steps")
    steps = tuple(_parse_step(s, (*path, "results", i)) for i, s in enumerate(results))
    return FakeTool(name, description, schema, steps)


def parse_fake_server_config(obj: object) -> FakeServerConfig:
    """Validate a fake server config; raises WorldSetupError with the JSON path."""
    cfg = _expect_keys(
        obj, (), frozenset({"name", "version", "tools", "instructions", "on_list"}),
        "a fake server config",
    )
    name = cfg.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(("name",), "a fake server needs a non-empty string name")
    version = cfg.get("version", "1.0.0")
    if not isinstance(version, str):
        raise _fail(("version",), "version must be a string")
    instructions = cfg.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise _fail(("instructions",), "instructions must be a string")
    tools_obj = cfg.get("tools", [])
    if not isinstance(tools_obj, list):
        raise _fail(("tools",), "tools must be a list")
    tools = tuple(_parse_tool(t, ("tools", i)) for i, t in enumerate(tools_obj))
    on_list = _parse_step(cfg["on_list"], ("on_list",)) if "on_list" in cfg else None
    return FakeServerConfig(name, version, tools, instructions, on_list)


def load_fake_server_config(path: Path) -> FakeServerConfig:
    """Edge: read and parse a config file; unreadable or non-JSON files are setup errors."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _fail((), f"cannot read fake server config {path}: {exc}") from None
    return parse_fake_server_config(obj)


# -- the server state machine --------------------------------------------------------

@dataclass(frozen=True)
class JournalEntry:
    """One received line. Valid messages are recorded as parsed (canonical), so the
    in-process and stdio paths give byte-identical journals."""

    seq: int
    message: dict[str, Any] | None = None
    invalid: str | None = None

    def to_line(self) -> str:
        if self.message is not None:
            return canonical_json({"seq": self.seq, "received": self.message})
        return canonical_json({"seq": self.seq, "invalid": self.invalid})


@dataclass(frozen=True)
class ServerStep:
    """What the server does after one line: lines to write, and whether it then hangs
    (stops answering) or dies (exits)."""

    replies: tuple[str, ...] = ()
    fault: Fault | None = None
    journal: JournalEntry | None = None


@dataclass
class FakeServer:
    config: FakeServerConfig
    journal: list[JournalEntry] = field(default_factory=list)
    _initialized: bool = False
    _calls: dict[str, int] = field(default_factory=dict)

    def handle_line(self, line: bytes | str) -> ServerStep:
        message = decode(line)
        entry = JournalEntry(
            seq=len(self.journal) + 1,
            message=None if isinstance(message, FramingError) else to_obj(message),
            invalid=message.problem.value if isinstance(message, FramingError) else None,
        )
        self.journal.append(entry)
        replies, fault = self._respond(message)
        return ServerStep(replies, fault, entry)

    def _respond(self, message: Message | FramingError) -> tuple[tuple[str, ...], Fault | None]:
        if isinstance(message, FramingError):
            return (encode(ErrorResponse(None, message.code, message.message)),), None
        if isinstance(message, Notification):
            if message.method == "notifications/initialized":
                self._initialized = True
            return (), None
        if not isinstance(message, Request):
            return (), None  # responses to requests we never send: nothing to do
        return self._request(message)

    def _request(self, req: Request) -> tuple[tuple[str, ...], Fault | None]:
        params = req.params or {}
        if req.method == "initialize":
            return (encode(Response(req.id, self._initialize_result(params))),), None
        if req.method == "ping":
            return (encode(Response(req.id, {})),), None
        if req.method == "tools/list":
            if self.config.on_list is not None:
                return self._play(req.id, self.config.on_list, {})
            tools = [t.listing() for t in self.config.tools]
            return (encode(Response(req.id, {"tools": tools})),), None
        if req.method == "tools/call":
            return self._call(req.id, params)
        return _error(req.id, METHOD_NOT_FOUND, f"Method not found: {req.method}"), None

    def _initialize_result(self, params: Mapping[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        version = (
            requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        )
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": self.config.name, "version": self.config.version},
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        return result

    def _call(
        self, rid: RequestId, params: Mapping[str, Any]
    ) -> tuple[tuple[str, ...], Fault | None]:
        name = params.get("name")
        if not isinstance(name, str):
            return _error(rid, INVALID_PARAMS, 'tools/call needs a string "name"'), None
        tool = next((t for t in self.config.tools if t.name == name), None)
        if tool is None:
            return _error(rid, INVALID_PARAMS, f"Unknown tool: {name}"), None
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            return _error(rid, INVALID_PARAMS, '"arguments" must be an object'), None
        validator = _jsonschema().Draft202012Validator(tool.input_schema)
        problem = _jsonschema().exceptions.best_match(validator.iter_errors(arguments))
        if problem is not None:
            # Since MCP 2025-11-25 input validation failures are tool errors the model
            # can correct, not protocol errors.
            text = f"Invalid arguments for {name}: {problem.message}"
            result = {"content": [{"type": "text", "text": text}], "isError": True}
            return (encode(Response(rid, result)),), None
        count = self._calls.get(name, 0)
        self._calls[name] = count + 1
        step = tool.steps[min(count, len(tool.steps) - 1)] if tool.steps else ECHO
        return self._play(rid, step, arguments)

    def _play(
        self, rid: RequestId, step: Step, arguments: Mapping[str, Any]
    ) -> tuple[tuple[str, ...], Fault | None]:
        if step.fault is not None:
            return _fault_replies(rid, step.fault), step.fault
        if step.error is not None:
            return _error(rid, step.error[0], step.error[1]), None
        if step.echo:
            content: Sequence[dict[str, Any]] = (
                {"type": "text", "text": canonical_json(dict(arguments))},
            )
        else:
            content = step.content or ()
        result = {"content": list(content), "isError": step.is_error}
        return (encode(Response(rid, result)),), None


def _error(rid: RequestId | None, code: int, message: str) -> tuple[str, ...]:
    return (encode(ErrorResponse(rid, code, message)),)


def _fault_replies(rid: RequestId, fault: Fault) -> tuple[str, ...]:
    if fault is Fault.GARBAGE:
        return ("this is not JSON-RPC {",)
    if fault is Fault.OVERSIZED:
        text = "x" * (MAX_MESSAGE_BYTES + 1)
        return (encode(Response(rid, {"content": [{"type": "text", "text": text}]})),)
    if fault is Fault.WRONG_ID:
        wrong: RequestId = f"{rid}-never-sent"
        return (encode(Response(wrong, {"content": [], "isError": False})),)
    if fault is Fault.BAD_RESULT:
        return (encode(Response(rid, "not an MCP result")),)
    return ()  # hang and die write nothing


# -- the stdio edge ------------------------------------------------------------------

class JournalWriter:
    """Appends journal lines to a file, one open/close per line so a ``die`` fault or a
    kill loses nothing already received."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def append(self, entry: JournalEntry | None) -> None:
        if self.path is None or entry is None:
            return
        with self.path.open("ab") as fh:
            fh.write(utf8_line(entry.to_line()))


def utf8_line(text: str) -> bytes:
    """A JSON line as UTF-8 bytes, newline included. A lone surrogate received in a
    ``\\ud800`` escape has no UTF-8 form; such a line is written with every non-ASCII
    character escaped instead, so the journal and the replies record exactly what was
    received and stay valid UTF-8 JSON (the server must never die of its input)."""
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        escaped = json.dumps(json.loads(text), ensure_ascii=True, separators=(",", ":"))
        return (escaped + "\n").encode("ascii")


def _read_line(stdin: Any) -> bytes | None:
    """One line without its newline; an over-long line is cut to the limit + 1 byte (so
    it decodes as too large) and its rest is discarded."""
    line: bytes = stdin.readline(MAX_MESSAGE_BYTES + 2)
    if not line:
        return None
    if line.endswith(b"\n"):
        return line.rstrip(b"\r\n")
    if len(line) > MAX_MESSAGE_BYTES:
        while True:
            rest: bytes = stdin.readline(65536)
            if not rest or rest.endswith(b"\n"):
                break
    return line


def serve(config: FakeServerConfig, journal: JournalWriter, stdin: Any, stdout: Any) -> int:
    server = FakeServer(config)
    while (line := _read_line(stdin)) is not None:
        if not line.strip():
            continue
        step = server.handle_line(line)
        journal.append(step.journal)
        for reply in step.replies:
            stdout.write(utf8_line(reply))
        stdout.flush()
        if step.fault is Fault.DIE:
            os._exit(FAULT_EXIT_STATUS)
        if step.fault is Fault.HANG:
            while stdin.readline(65536):
                pass  # hung: read and ignore until the client closes stdin
            return 0
    return 0


MODULE = "capconf.simulator.mcp.fake_server"


def launch_spec(config: Path, journal: Path | None = None) -> dict[str, Any]:
    """The ``command`` / ``args`` / ``env`` a real MCP client needs to start a fake
    server (the world config's per-server entry). PYTHONPATH points at this checkout so
    the module is found from any working directory."""
    args = ["-m", MODULE, str(config)]
    if journal is not None:
        args += ["--journal", str(journal)]
    return {
        "command": sys.executable,
        "args": args,
        "env": {"PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capconf.simulator.mcp.fake_server")
    parser.add_argument("config", type=Path)
    parser.add_argument("--journal", type=Path, default=None)
    ns = parser.parse_args(argv)
    try:
        config = load_fake_server_config(ns.config)
    except WorldSetupError as exc:
        print(f"fake_server: bad config at {list(exc.path)}: {exc.message}", file=sys.stderr)
        return 2
    return serve(config, JournalWriter(ns.journal), sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    raise SystemExit(main())
