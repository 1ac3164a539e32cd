"""A minimal MCP client over two interchangeable transports.

The in-process transport hands each line straight to a :class:`FakeServer` object (fast
and deterministic, the default); the stdio transport launches the server from its
``command`` + ``args`` exactly as a real MCP client would. Both feed the same client code
and the same journal writer, so a test can show they give byte-identical journals.

Every failure is a :class:`McpFailure` value. A failure that leaves the stream in an
unknown state (timeout, exit, garbage, oversized line, a response to a request never
sent) breaks the connection: the client closes it and answers every later request with
the same failure without sending anything, so a hostile server gets exactly one chance.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from capconf.simulator import IMPLEMENTATION_NAME, SPEC_VERSION
from capconf.simulator.mcp.fake_server import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    FakeServer,
    Fault,
    JournalWriter,
    load_fake_server_config,
)
from capconf.simulator.mcp.jsonrpc import (
    MAX_MESSAGE_BYTES,
    METHOD_NOT_FOUND,
    ErrorResponse,
    FramingError,
    Notification,
    Request,
    Response,
    decode,
    encode,
)

CLIENT_PROTOCOL_VERSION = "2025-06-18"
"""The revision the client offers; the fake servers and the official SDK both speak it."""

DEFAULT_TIMEOUT_MS = 10_000
"""Per-request timeout for the stdio transport; a server silent for longer is hung."""

MAX_LIST_PAGES = 100
"""A server whose tools/list cursor never ends is broken; stop following it here."""

FAKE_SERVER_MODULE = "capconf.simulator.mcp.fake_server"


class FailureKind(StrEnum):
    TIMEOUT = "timeout"
    EXITED = "exited"
    MALFORMED = "malformed"
    PROTOCOL = "protocol"
    RPC_ERROR = "rpc_error"


@dataclass(frozen=True)
class McpFailure:
    kind: FailureKind
    message: str
    rpc_code: int | None = None
    broken: bool = True


@dataclass(frozen=True)
class RemoteTool:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class CallResult:
    content: tuple[dict[str, Any], ...]
    is_error: bool


@dataclass(frozen=True)
class TransportFault:
    kind: FailureKind
    message: str


class Transport(Protocol):
    def send(self, line: str) -> TransportFault | None: ...
    def receive(self, timeout_s: float) -> bytes | TransportFault: ...
    def close(self) -> None: ...


class InProcessTransport:
    """Calls the server object directly. A ``hang`` fault answers the next receive with
    a timeout at once (waiting would prove nothing), a ``die`` with an exit."""

    def __init__(self, server: FakeServer, journal: JournalWriter) -> None:
        self._server = server
        self._journal = journal
        self._pending: deque[str] = deque()
        self._fault: Fault | None = None

    def send(self, line: str) -> TransportFault | None:
        if self._fault is Fault.DIE:
            return TransportFault(FailureKind.EXITED, "the server process has exited")
        if self._fault is Fault.HANG:
            return None  # a hung server still accepts bytes into its pipe
        step = self._server.handle_line(line)
        self._journal.append(step.journal)
        self._pending.extend(step.replies)
        self._fault = step.fault
        return None

    def receive(self, timeout_s: float) -> bytes | TransportFault:
        if self._pending:
            return self._pending.popleft().encode("utf-8")
        if self._fault is Fault.DIE:
            return TransportFault(FailureKind.EXITED, "the server exited before answering")
        return TransportFault(
            FailureKind.TIMEOUT, f"no answer within {int(timeout_s * 1000)} ms"
        )

    def close(self) -> None:
        self._fault = Fault.DIE


class StdioTransport:
    """Launches ``command args`` and speaks newline-delimited JSON-RPC over its pipes."""

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        full_env = {**os.environ, **(env or {})}
        self._proc = subprocess.Popen(
            [command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=full_env,
            cwd=cwd,
        )
        assert self._proc.stdout is not None
        self._fd = self._proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)

    def send(self, line: str) -> TransportFault | None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line.encode("utf-8") + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return TransportFault(FailureKind.EXITED, "the server process has exited")
        return None

    def receive(self, timeout_s: float) -> bytes | TransportFault:
        deadline = time.monotonic() + timeout_s
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                return line.rstrip(b"\r")
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                line, self._buffer = self._buffer, b""
                return line  # decodes as too large; the connection is then dropped
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return TransportFault(
                    FailureKind.TIMEOUT, f"no answer within {int(timeout_s * 1000)} ms"
                )
            if not self._selector.select(remaining):
                continue
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                return TransportFault(FailureKind.EXITED, "the server exited before answering")
            self._buffer += chunk

    def close(self) -> None:
        self._selector.close()
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


class McpClient:
    def __init__(self, transport: Transport, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        self._transport = transport
        self._timeout_s = timeout_ms / 1000
        self._next_id = 1
        self._broken: McpFailure | None = None

    @property
    def broken(self) -> McpFailure | None:
        return self._broken

    def initialize(self) -> dict[str, Any] | McpFailure:
        result = self._request(
            "initialize",
            {
                "protocolVersion": CLIENT_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": IMPLEMENTATION_NAME, "version": SPEC_VERSION},
            },
        )
        if isinstance(result, McpFailure):
            return result
        if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), str):
            return self._break(FailureKind.PROTOCOL, "initialize result has no protocolVersion")
        if result["protocolVersion"] not in HANDSHAKE_PROTOCOL_VERSIONS:
            return self._break(
                FailureKind.PROTOCOL,
                f"server chose unsupported protocol version {result['protocolVersion']!r}",
            )
        fault = self._transport.send(encode(Notification("notifications/initialized")))
        if fault is not None:
            return self._break(fault.kind, fault.message)
        return result

    def list_tools(self) -> tuple[RemoteTool, ...] | McpFailure:
        tools: list[RemoteTool] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            result = self._request("tools/list", {"cursor": cursor} if cursor else None)
            if isinstance(result, McpFailure):
                return result
            page = _parse_tool_page(result)
            if isinstance(page, str):
                return McpFailure(FailureKind.PROTOCOL, page, broken=False)
            tools.extend(page[0])
            cursor = page[1]
            if cursor is None:
                return tuple(tools)
        return McpFailure(
            FailureKind.PROTOCOL, f"tools/list did not end within {MAX_LIST_PAGES} pages",
            broken=False,
        )

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallResult | McpFailure:
        result = self._request("tools/call", {"name": name, "arguments": dict(arguments)})
        if isinstance(result, McpFailure):
            return result
        if not isinstance(result, dict):
            return McpFailure(FailureKind.PROTOCOL, "tools/call result is not an object",
                              broken=False)
        content = result.get("content")
        is_error = result.get("isError", False)
        if not isinstance(content, list) or not all(
            isinstance(c, dict) and isinstance(c.get("type"), str) for c in content
        ):
            return McpFailure(FailureKind.PROTOCOL, "tools/call result has no valid content",
                              broken=False)
        if not isinstance(is_error, bool):
            return McpFailure(FailureKind.PROTOCOL, "tools/call isError is not a boolean",
                              broken=False)
        return CallResult(tuple(content), is_error)

    def close(self) -> None:
        if self._broken is None:
            self._broken = McpFailure(FailureKind.EXITED, "the connection was closed")
        self._transport.close()

    def _break(self, kind: FailureKind, message: str) -> McpFailure:
        failure = McpFailure(kind, message)
        if self._broken is None:
            self._broken = failure
            self._transport.close()
        return failure

    def _request(self, method: str, params: dict[str, Any] | None) -> Any:
        if self._broken is not None:
            return self._broken
        rid = self._next_id
        self._next_id += 1
        fault = self._transport.send(encode(Request(rid, method, params)))
        if fault is not None:
            return self._break(fault.kind, fault.message)
        while True:
            raw = self._transport.receive(self._timeout_s)
            if isinstance(raw, TransportFault):
                return self._break(raw.kind, f"{method}: {raw.message}")
            message = decode(raw)
            if isinstance(message, FramingError):
                return self._break(FailureKind.MALFORMED, f"{method}: {message.message}")
            if isinstance(message, Notification):
                continue
            if isinstance(message, Request):
                # Server-initiated requests (sampling, roots...) are not offered.
                self._transport.send(encode(ErrorResponse(
                    message.id, METHOD_NOT_FOUND, f"Method not found: {message.method}"
                )))
                continue
            if message.id != rid:
                return self._break(
                    FailureKind.PROTOCOL,
                    f"{method}: response to request id {message.id!r}, which was never sent",
                )
            if isinstance(message, ErrorResponse):
                return McpFailure(
                    FailureKind.RPC_ERROR, f"{method}: {message.message}", message.code,
                    broken=False,
                )
            assert isinstance(message, Response)
            return message.result


def _parse_tool_page(
    result: object,
) -> tuple[list[RemoteTool], str | None] | str:
    if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
        return "tools/list result has no tools list"
    tools: list[RemoteTool] = []
    for i, entry in enumerate(result["tools"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            return f"tools/list entry {i} has no string name"
        schema = entry.get("inputSchema")
        if not isinstance(schema, dict):
            return f"tools/list entry {i} has no inputSchema object"
        description = entry.get("description", "")
        if not isinstance(description, str):
            return f"tools/list entry {i} has a description that is not a string"
        tools.append(RemoteTool(entry["name"], description, schema))
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        return "tools/list nextCursor is not a string"
    return tools, cursor


@dataclass(frozen=True)
class FakeInvocation:
    config: Path
    journal: Path | None


def fake_server_invocation(args: Sequence[str], cwd: Path) -> FakeInvocation | None:
    """Recognise ``-m capconf.simulator.mcp.fake_server CONFIG [--journal FILE]``: only then can
    the server run in-process. Anything else (a real server, other flags) goes to stdio."""
    if len(args) < 3 or list(args[:2]) != ["-m", FAKE_SERVER_MODULE]:
        return None
    rest = list(args[2:])
    if len(rest) == 1:
        return FakeInvocation(cwd / rest[0], None)
    if len(rest) == 3 and rest[1] == "--journal":
        return FakeInvocation(cwd / rest[0], cwd / rest[2])
    return None


def open_transport(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    *,
    in_process: bool,
) -> Transport:
    """The default in-process path when the command is the fake server, else stdio.
    A config the in-process path cannot load raises WorldSetupError."""
    invocation = fake_server_invocation(args, cwd) if in_process else None
    if invocation is not None:
        server = FakeServer(load_fake_server_config(invocation.config))
        return InProcessTransport(server, JournalWriter(invocation.journal))
    try:
        return StdioTransport(command, args, env, cwd)
    except OSError as exc:
        return DeadTransport(f"cannot start {command!r}: {exc.strerror or exc}")


class DeadTransport:
    """A server that could not even be started: every exchange reports it exited."""

    def __init__(self, message: str) -> None:
        self._message = message

    def send(self, line: str) -> TransportFault | None:
        return TransportFault(FailureKind.EXITED, self._message)

    def receive(self, timeout_s: float) -> bytes | TransportFault:
        return TransportFault(FailureKind.EXITED, self._message)

    def close(self) -> None:
        return None
