"""The shared pool of MCP server connections: one client per server, opened only when a
gateway that was granted that server asks, and the journal of what each was asked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from capconf.simulator.mcp.client import (
    CallResult,
    FailureKind,
    McpClient,
    McpFailure,
    RemoteTool,
    open_transport,
)
from capconf.simulator.mcp.world import McpServerEntry, McpWorld


@dataclass
class _Connection:
    client: McpClient | None = None
    failure: McpFailure | None = None
    tools: tuple[RemoteTool, ...] | None = None


@dataclass
class ServerPool:
    """The shared connections to the world's servers, opened lazily on first use.
    Only a gateway decides which server to ask about; the pool knows no scopes."""

    world: McpWorld
    _connections: dict[str, _Connection] = field(default_factory=dict)

    def _connect(self, entry: McpServerEntry) -> _Connection:
        conn = self._connections.get(entry.name)
        if conn is not None:
            return conn
        if not entry.command:
            conn = _Connection(None, McpFailure(
                FailureKind.EXITED, f"cannot start MCP server {entry.name!r}: no command"))
            self._connections[entry.name] = conn
            return conn
        transport = open_transport(
            entry.command, entry.args, dict(entry.env), entry.cwd,
            in_process=self.world.in_process,
        )
        client = McpClient(transport, self.world.timeout_ms)
        init = client.initialize()
        conn = _Connection(client, init if isinstance(init, McpFailure) else None)
        self._connections[entry.name] = conn
        return conn

    def tools(self, entry: McpServerEntry) -> tuple[RemoteTool, ...] | McpFailure:
        conn = self._connect(entry)
        if conn.failure is not None:
            return conn.failure
        if conn.tools is None:
            assert conn.client is not None
            listed = conn.client.list_tools()
            if isinstance(listed, McpFailure):
                if listed.broken:
                    conn.failure = listed
                return listed
            conn.tools = listed
        return conn.tools

    def call(
        self, entry: McpServerEntry, tool: str, arguments: Mapping[str, Any]
    ) -> CallResult | McpFailure:
        conn = self._connect(entry)
        if conn.failure is not None:
            return conn.failure
        assert conn.client is not None
        result = conn.client.call_tool(tool, arguments)
        if isinstance(result, McpFailure) and result.broken:
            conn.failure = result
        return result

    def close(self) -> None:
        for name in sorted(self._connections):
            client = self._connections[name].client
            if client is not None:
                client.close()
        self._connections.clear()
