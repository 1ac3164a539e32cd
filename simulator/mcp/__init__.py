"""The MCP dimension: fake MCP servers that speak real MCP (JSON-RPC 2.0 over stdio) with
a journal, a minimal client, and the scoped gateway a subagent gets instead of the
shared one.

The fake servers are real enough to fool the official SDK client, so an implementation
in another language can launch them with its own MCP client from the same world config
(``command`` + ``args`` per server) and the journals prove what each server received.

Requirements: MCP-01..05
Spec: SPEC.md section 8
Suite: conformance/suite/test_mcp.py
Golden: golden/mcp/
"""
