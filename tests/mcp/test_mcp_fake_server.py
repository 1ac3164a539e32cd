"""The fake MCP server speaks real MCP, journals every line, and both transports agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.simulator.core.diagnostics import WorldSetupError
from capconf.simulator.mcp import jsonrpc
from capconf.simulator.mcp.client import (
    CallResult,
    FailureKind,
    InProcessTransport,
    McpClient,
    McpFailure,
    StdioTransport,
    fake_server_invocation,
    open_transport,
)
from capconf.simulator.mcp.fake_server import (
    LATEST_PROTOCOL_VERSION,
    FakeServer,
    JournalWriter,
    launch_spec,
    main,
    parse_fake_server_config,
)

NOTION: dict[str, Any] = {
    "name": "notion",
    "version": "2.1.0",
    "tools": [
        {
            "name": "search_pages",
            "description": "Search pages by text",
            "inputSchema": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            },
            "results": [{"text": "first"}, {"text": "second"}],
        },
        {"name": "echo", "description": "Echo", "inputSchema": {"type": "object"}},
        {
            "name": "broken",
            "inputSchema": {"type": "object"},
            "results": [{"error": {"code": -32603, "message": "backend down"}}],
        },
        {
            "name": "fails",
            "inputSchema": {"type": "object"},
            "results": [{"text": "quota exceeded", "isError": True}],
        },
    ],
}


def write_config(tmp_path: Path, config: dict[str, Any], name: str = "server.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def server() -> FakeServer:
    return FakeServer(parse_fake_server_config(NOTION))


def request(srv: FakeServer, rid: int, method: str, params: dict[str, Any] | None = None) -> Any:
    step = srv.handle_line(jsonrpc.encode(jsonrpc.Request(rid, method, params)))
    assert len(step.replies) == 1
    return jsonrpc.decode(step.replies[0])


# -- framing -------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)
ids = st.integers(-(2**31), 2**31) | st.text(max_size=10)
params = st.none() | st.dictionaries(st.text(max_size=8), json_values, max_size=4)
messages = st.one_of(
    st.builds(jsonrpc.Request, ids, st.text(min_size=1, max_size=12), params),
    st.builds(jsonrpc.Notification, st.text(min_size=1, max_size=12), params),
    st.builds(jsonrpc.Response, ids, json_values),
    st.builds(jsonrpc.ErrorResponse, ids | st.none(), st.integers(-40000, 40000),
              st.text(max_size=12), json_values),
)


@settings(max_examples=150)
@given(messages)
def test_encode_decode_round_trip(message: jsonrpc.Message) -> None:
    line = jsonrpc.encode(message)
    assert "\n" not in line
    decoded = jsonrpc.decode(line)
    assert decoded == message
    assert not isinstance(decoded, jsonrpc.FramingError)
    assert jsonrpc.encode(decoded) == line


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"\xff\xfe{}", jsonrpc.FramingProblem.NOT_UTF8),
        ("{not json", jsonrpc.FramingProblem.NOT_JSON),
        ('{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":NaN}}',
         jsonrpc.FramingProblem.NOT_JSON),
        ('{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}', jsonrpc.FramingProblem.NOT_JSON),
        ('[{"jsonrpc":"2.0","id":1,"method":"x"}]', jsonrpc.FramingProblem.NOT_OBJECT),
        ('"hello"', jsonrpc.FramingProblem.NOT_OBJECT),
        ('{"jsonrpc":"1.0","id":1,"method":"x"}', jsonrpc.FramingProblem.BAD_VERSION),
        ('{"id":1,"method":"x"}', jsonrpc.FramingProblem.BAD_VERSION),
        ('{"jsonrpc":"2.0","id":true,"method":"x"}', jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","id":null,"method":"x"}', jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","id":1.5,"method":"x"}', jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}', jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","id":1,"method":""}', jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","id":1,"method":"x","extra":1}', jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}',
         jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","id":1}', jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","result":1}', jsonrpc.FramingProblem.BAD_SHAPE),
        ('{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}',
         jsonrpc.FramingProblem.BAD_SHAPE),
        ("[" * 65 + "]" * 65, jsonrpc.FramingProblem.TOO_DEEP),
        ('{"a":' * 100_000, jsonrpc.FramingProblem.TOO_DEEP),
    ],
)
def test_decode_rejects_malformed(line: bytes | str, problem: jsonrpc.FramingProblem) -> None:
    result = jsonrpc.decode(line)
    assert isinstance(result, jsonrpc.FramingError)
    assert result.problem is problem
    assert result.message


def test_size_limit_is_exact() -> None:
    body = '{"jsonrpc":"2.0","method":"n","params":{"t":"'
    tail = '"}}'
    fill = jsonrpc.MAX_MESSAGE_BYTES - len(body) - len(tail)
    at_limit = body + "x" * fill + tail
    assert len(at_limit.encode()) == jsonrpc.MAX_MESSAGE_BYTES
    assert isinstance(jsonrpc.decode(at_limit), jsonrpc.Notification)
    over = body + "x" * (fill + 1) + tail
    result = jsonrpc.decode(over)
    assert isinstance(result, jsonrpc.FramingError)
    assert result.problem is jsonrpc.FramingProblem.TOO_LARGE
    assert result.code == jsonrpc.INVALID_REQUEST


def test_depth_limit_is_exact() -> None:
    ok = "[" * jsonrpc.MAX_JSON_DEPTH + "]" * jsonrpc.MAX_JSON_DEPTH
    line = '{"jsonrpc":"2.0","id":1,"result":' + ok[2:-2] + "}"
    assert isinstance(jsonrpc.decode(line), jsonrpc.Response)
    brackets_in_strings = '{"jsonrpc":"2.0","id":1,"result":"' + "[" * 500 + '"}'
    assert isinstance(jsonrpc.decode(brackets_in_strings), jsonrpc.Response)


def test_error_codes_follow_json_rpc() -> None:
    not_json = jsonrpc.decode("{")
    assert isinstance(not_json, jsonrpc.FramingError) and not_json.code == -32700
    bad = jsonrpc.decode("{}")
    assert isinstance(bad, jsonrpc.FramingError) and bad.code == -32600


# -- the server state machine --------------------------------------------------------

def test_initialize_negotiates_the_protocol_version() -> None:
    srv = server()
    known = request(srv, 1, "initialize", {"protocolVersion": "2025-03-26"})
    assert isinstance(known, jsonrpc.Response)
    assert known.result["protocolVersion"] == "2025-03-26"
    assert known.result["serverInfo"] == {"name": "notion", "version": "2.1.0"}
    assert known.result["capabilities"] == {"tools": {"listChanged": False}}
    unknown = request(srv, 2, "initialize", {"protocolVersion": "1999-01-01"})
    assert isinstance(unknown, jsonrpc.Response)
    assert unknown.result["protocolVersion"] == LATEST_PROTOCOL_VERSION


def test_tools_list_lists_every_configured_tool_with_schema() -> None:
    reply = request(server(), 1, "tools/list")
    assert isinstance(reply, jsonrpc.Response)
    names = [t["name"] for t in reply.result["tools"]]
    assert names == ["search_pages", "echo", "broken", "fails"]
    assert reply.result["tools"][0]["inputSchema"]["required"] == ["q"]
    assert reply.result["tools"][0]["description"] == "Search pages by text"


def test_scripted_results_play_in_order_and_the_last_repeats() -> None:
    srv = server()
    texts = []
    for rid in range(1, 4):
        reply = request(srv, rid, "tools/call", {"name": "search_pages", "arguments": {"q": "a"}})
        assert isinstance(reply, jsonrpc.Response)
        texts.append(reply.result["content"][0]["text"])
    assert texts == ["first", "second", "second"]


def test_echo_returns_canonical_arguments() -> None:
    reply = request(server(), 1, "tools/call", {"name": "echo", "arguments": {"b": 1, "a": "é"}})
    assert isinstance(reply, jsonrpc.Response)
    assert reply.result == {"content": [{"type": "text", "text": '{"a":"é","b":1}'}],
                            "isError": False}


def test_tool_errors_and_rpc_errors_are_distinct() -> None:
    srv = server()
    tool_error = request(srv, 1, "tools/call", {"name": "fails", "arguments": {}})
    assert isinstance(tool_error, jsonrpc.Response) and tool_error.result["isError"] is True
    rpc_error = request(srv, 2, "tools/call", {"name": "broken", "arguments": {}})
    assert isinstance(rpc_error, jsonrpc.ErrorResponse)
    assert (rpc_error.code, rpc_error.message) == (-32603, "backend down")


@pytest.mark.parametrize(
    ("method", "call_params", "code"),
    [
        ("tools/call", {"name": "nope", "arguments": {}}, jsonrpc.INVALID_PARAMS),
        ("tools/call", {"arguments": {}}, jsonrpc.INVALID_PARAMS),
        ("tools/call", {"name": "echo", "arguments": [1]}, jsonrpc.INVALID_PARAMS),
        ("resources/list", None, jsonrpc.METHOD_NOT_FOUND),
        ("server/discover", None, jsonrpc.METHOD_NOT_FOUND),
    ],
)
def test_protocol_errors_use_mcp_codes(
    method: str, call_params: dict[str, Any] | None, code: int
) -> None:
    reply = request(server(), 7, method, call_params)
    assert isinstance(reply, jsonrpc.ErrorResponse)
    assert reply.id == 7
    assert reply.code == code


def test_invalid_arguments_are_a_tool_error_the_model_can_fix() -> None:
    reply = request(server(), 1, "tools/call", {"name": "search_pages", "arguments": {"q": 3}})
    assert isinstance(reply, jsonrpc.Response)
    assert reply.result["isError"] is True
    assert "search_pages" in reply.result["content"][0]["text"]


def test_every_line_is_journaled_including_invalid_ones() -> None:
    srv = server()
    srv.handle_line(jsonrpc.encode(jsonrpc.Request(1, "ping")))
    note = srv.handle_line(jsonrpc.encode(jsonrpc.Notification("notifications/initialized")))
    assert note.replies == ()
    bad = srv.handle_line("{oops")
    reply = jsonrpc.decode(bad.replies[0])
    assert isinstance(reply, jsonrpc.ErrorResponse)
    assert (reply.id, reply.code) == (None, jsonrpc.PARSE_ERROR)
    lines = [e.to_line() for e in srv.journal]
    assert [json.loads(x)["seq"] for x in lines] == [1, 2, 3]
    assert json.loads(lines[0])["received"]["method"] == "ping"
    assert json.loads(lines[2]) == {"seq": 3, "invalid": "not_json"}


# -- config validation ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("config", "path"),
    [
        ([], ()),
        ({"tools": []}, ("name",)),
        ({"name": "x", "colour": 1}, ("colour",)),
        ({"name": "x", "tools": [{"name": "t", "bogus": 1}]}, ("tools", 0, "bogus")),
        ({"name": "x", "tools": [{"name": "t", "inputSchema": {"type": 5}}]},
         ("tools", 0, "inputSchema")),
        ({"name": "x", "tools": [{"name": "t", "results": [{"fault": "explode"}]}]},
         ("tools", 0, "results", 0, "fault")),
        ({"name": "x", "tools": [{"name": "t", "results": [{"text": "a", "echo": True}]}]},
         ("tools", 0, "results", 0)),
        ({"name": "x", "tools": [{"name": "t", "results": [{"error": {"code": "x"}}]}]},
         ("tools", 0, "results", 0, "error")),
    ],
)
def test_bad_config_is_a_setup_error_with_a_path(config: Any, path: tuple[Any, ...]) -> None:
    with pytest.raises(WorldSetupError) as info:
        parse_fake_server_config(config)
    assert info.value.path == path
    assert info.value.message


def test_main_reports_a_bad_config_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, {"name": 3})
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert "bad config" in err and "Traceback" not in err


# -- transports ----------------------------------------------------------------------

def run_script(client: McpClient) -> list[object]:
    outcomes: list[object] = [
        client.initialize(),
        client.list_tools(),
        client.call_tool("search_pages", {"q": "ünïcode"}),
        client.call_tool("search_pages", {}),
        client.call_tool("broken", {}),
        client.call_tool("fails", {}),
        client.call_tool("nope", {"x": 1}),
        client.call_tool("echo", {"z": [1, 2], "a": None}),
    ]
    client.close()
    return outcomes


def test_in_process_and_stdio_give_identical_journals_and_results(tmp_path: Path) -> None:
    config = write_config(tmp_path, NOTION)
    results = {}
    for mode in ("in-process", "stdio"):
        journal = tmp_path / f"{mode}.jsonl"
        spec = launch_spec(config, journal)
        transport = open_transport(spec["command"], spec["args"], spec["env"], tmp_path,
                                   in_process=mode == "in-process")
        expected_type = InProcessTransport if mode == "in-process" else StdioTransport
        assert isinstance(transport, expected_type)
        results[mode] = run_script(McpClient(transport, timeout_ms=5000))
    assert results["in-process"] == results["stdio"]
    in_process = (tmp_path / "in-process.jsonl").read_bytes()
    assert in_process == (tmp_path / "stdio.jsonl").read_bytes()
    methods = [json.loads(line)["received"]["method"] for line in in_process.splitlines()]
    assert methods == ["initialize", "notifications/initialized", "tools/list"] + [
        "tools/call"
    ] * 6
    assert results["stdio"][2] == CallResult(({"type": "text", "text": "first"},), False)
    assert isinstance(results["stdio"][4], McpFailure)
    assert results["stdio"][4].kind is FailureKind.RPC_ERROR


def test_fake_server_invocation_is_recognised_only_exactly(tmp_path: Path) -> None:
    mod = "capconf.simulator.mcp.fake_server"
    assert fake_server_invocation(["-m", mod, "c.json"], tmp_path) is not None
    found = fake_server_invocation(["-m", mod, "c.json", "--journal", "j"], tmp_path)
    assert found is not None and found.journal == tmp_path / "j"
    for args in (["-m", mod], ["-m", "other", "c.json"], ["-m", mod, "c", "--verbose"],
                 [mod, "-m", "c"]):
        assert fake_server_invocation(args, tmp_path) is None


def test_stdio_server_answers_a_raw_oversized_line_and_keeps_serving(tmp_path: Path) -> None:
    config = write_config(tmp_path, NOTION)
    journal = tmp_path / "j.jsonl"
    spec = launch_spec(config, journal)
    proc = subprocess.run(
        [spec["command"], *spec["args"]],
        input=b"x" * (jsonrpc.MAX_MESSAGE_BYTES + 10) + b"\n"
        + jsonrpc.encode(jsonrpc.Request(1, "ping")).encode() + b"\n",
        capture_output=True, env={**spec["env"]}, timeout=30, check=True,
    )
    replies = [jsonrpc.decode(x) for x in proc.stdout.splitlines()]
    assert isinstance(replies[0], jsonrpc.ErrorResponse) and replies[0].id is None
    assert replies[1] == jsonrpc.Response(1, {})
    entries = [json.loads(x) for x in journal.read_text().splitlines()]
    assert entries[0] == {"seq": 1, "invalid": "too_large"}
    assert entries[1]["received"]["method"] == "ping"


def test_module_entry_point_runs(tmp_path: Path) -> None:
    spec = launch_spec(write_config(tmp_path, NOTION))
    proc = subprocess.run(
        [sys.executable, *spec["args"]],
        input=jsonrpc.encode(jsonrpc.Request(1, "tools/list")).encode() + b"\n",
        capture_output=True, env=spec["env"], timeout=30, check=True,
    )
    reply = jsonrpc.decode(proc.stdout.strip())
    assert isinstance(reply, jsonrpc.Response) and len(reply.result["tools"]) == 4


def test_journal_writer_appends_without_losing_lines(tmp_path: Path) -> None:
    srv = server()
    writer = JournalWriter(tmp_path / "j.jsonl")
    for rid in (1, 2):
        writer.append(srv.handle_line(jsonrpc.encode(jsonrpc.Request(rid, "ping"))).journal)
    assert len((tmp_path / "j.jsonl").read_text().splitlines()) == 2


# -- the official SDK ----------------------------------------------------------------

def test_official_mcp_sdk_client_lists_and_calls_tools(tmp_path: Path) -> None:
    mcp = pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    journal = tmp_path / "sdk.jsonl"
    spec = launch_spec(write_config(tmp_path, NOTION), journal)

    async def drive() -> tuple[list[str], Any, Any]:
        params = mcp.StdioServerParameters(command=spec["command"], args=spec["args"],
                                           env=spec["env"])
        async with mcp.stdio_client(params) as (read, write), \
                mcp.ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            called = await session.call_tool("search_pages", {"q": "roadmap"})
            failed = await session.call_tool("fails", {})
            return [t.name for t in listed.tools], called, failed

    names, called, failed = anyio.run(drive)
    assert names == ["search_pages", "echo", "broken", "fails"]
    assert called.is_error is False and called.content[0].text == "first"
    assert failed.is_error is True
    received = [json.loads(x)["received"] for x in journal.read_text().splitlines()]
    assert [r["method"] for r in received] == [
        "initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call",
    ]
    assert received[3]["params"] == {"name": "search_pages", "arguments": {"q": "roadmap"}}
