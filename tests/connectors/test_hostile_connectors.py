"""Connector files and custom endpoints under hostile input (CONN-01, CONN-10, issue 21):
connector files get a definition's limits (1 MiB, 32 levels, 20,000 nodes, no aliases) and
a bounded command list, refused with the file and path, never ``internal`` and never a
scan that takes half a minute; a custom endpoint is refused for a path parameter
(``..;/``), a host longer than a DNS name can be, or a URL longer than 2,048 characters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hostile_support import Driver

from capconf.simulator.connectors.custom import check_endpoint
from capconf.simulator.connectors.model import ConnectorError, parse_connector

FIXTURE = Path(__file__).resolve().parent.parent.parent / "conformance/fixtures/connectors/gmail"


def _files() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(FIXTURE.iterdir())}


def _commands(n: int) -> str:
    return "# Many\n\n## Commands\n\n" + "".join(f"- `m{i}.get`\n" for i in range(n))


HOSTILE_FILES = {
    "manifest-deep": ("manifest.yaml", "a:\n" + "".join(" " * (i + 1) + "- \n"
                                                         for i in range(200))),
    "manifest-flow-deep": ("manifest.yaml", "a: " + "[" * 20_000 + "]" * 20_000 + "\n"),
    "manifest-alias": ("manifest.yaml", "a: &x [1, 2]\nb: *x\n"),
    "manifest-nodes": ("manifest.yaml", "a: [" + ", ".join(["1"] * 30_000) + "]\n"),
    "manifest-huge": ("manifest.yaml", "a: '" + "x" * (1 << 21) + "'\n"),
    "connector-deep": ("connector.yaml", "id: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n"),
    "commands-100k": ("CONNECTOR.md", _commands(100_000)),
    "commands-huge": ("CONNECTOR.md", "# x\n\n" + "y" * (1 << 21) + "\n"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_hostile_connector_files_are_refused_with_their_file(name: str) -> None:
    """Bug: a manifest nested 20,000 levels answers `internal`; a CONNECTOR.md with
    100,000 commands takes 33 s to refuse; connector files have no size cap."""
    file, text = HOSTILE_FILES[name]
    files = {**_files(), file: text}
    with pytest.raises(ConnectorError) as info:
        parse_connector(files)
    assert info.value.file == file


@pytest.mark.parametrize("name", sorted(HOSTILE_FILES))
def test_hostile_connector_files_over_the_driver(name: str) -> None:
    file, text = HOSTILE_FILES[name]
    driver = Driver()
    response = driver.send("conn.setup", connectors=[{"files": {**_files(), file: text}}])
    assert response["ok"] is False, response
    assert file in response["error"]["path"], response


def test_the_fixture_and_a_long_but_bounded_command_list_still_parse() -> None:
    files = _files()
    assert parse_connector(files).commands
    many = parse_connector({**{k: v for k, v in files.items() if k != "manifest.yaml"},
                            "CONNECTOR.md": _commands(1_500)})
    assert len(many.commands) == 1_500 and many.commands[0] == "m0.get"


HOSTILE_ENDPOINTS = {
    "path-parameter-traversal": "https://api.example.com/..;/admin",
    "path-parameter": "https://api.example.com/mcp;jsessionid=1",
    "huge-host": "https://" + ".".join(["a" * 60] * 7000) + ".example.com/",
    "long-host": "https://" + ".".join(["a" * 60] * 5) + ".com/",
    "huge-path": "https://api.example.com/" + "a" * (4 << 20),
    "long-path": "https://api.example.com/" + "a" * 3000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_ENDPOINTS))
def test_hostile_custom_endpoints_are_refused(name: str) -> None:
    """Bug: `..;/admin`, a 400 KB host name and a 4 MiB path were accepted."""
    assert check_endpoint(HOSTILE_ENDPOINTS[name]) is not None
    driver = Driver()
    driver.ok("conn.setup", connectors=[{"files": _files()}])
    result: dict[str, Any] = driver.ok("conn.custom.register", provider="custom.acme",
                                       endpoint=HOSTILE_ENDPOINTS[name],
                                       allowed_tools=["search"])
    assert result["ok"] is False, result


@pytest.mark.parametrize("endpoint", ["https://api.example.com/mcp",
                                      "https://" + "a" * 63 + ".example.com/v1/x"])
def test_plain_endpoints_still_register(endpoint: str) -> None:
    assert check_endpoint(endpoint) is None


def test_custom_connector_files_have_the_file_limits() -> None:
    driver = Driver()
    driver.ok("conn.setup", connectors=[{"files": _files()}])
    response = driver.send("conn.custom.register", provider="custom.acme",
                           endpoint="https://api.example.com/mcp", allowed_tools=["search"],
                           files={"CONNECTOR.md": "x" * (2 << 20)})
    assert response["ok"] is False and response["error"]["path"] == [
        "args", "files", "CONNECTOR.md"], response
