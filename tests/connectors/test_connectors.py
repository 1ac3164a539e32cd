"""Unit tests of the connector files, the permission rules and the response guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from capconf.simulator.approval.decision import Verdict
from capconf.simulator.connectors.guard import WITHHELD, guard_text
from capconf.simulator.connectors.model import (
    ActionGroup,
    ConnectorError,
    MethodPolicy,
    parse_connector,
)
from capconf.simulator.connectors.permissions import STRICTNESS, resolve

FIXTURE = Path(__file__).resolve().parent.parent.parent / "conformance/fixtures/connectors/gmail"


def _files() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(FIXTURE.iterdir())}


def test_the_fixture_parses_with_documented_commands_only() -> None:
    gmail = parse_connector(_files())
    assert "users.settings.filters.create" not in gmail.commands
    assert gmail.shortcuts["+send"] == "users.messages.send"
    assert gmail.manifest is not None and gmail.manifest.units_per_minute == 6000
    assert gmail.read_methods == ("users.messages.list", "users.messages.get")


@pytest.mark.parametrize(("file", "old", "new", "where"), [
    ("manifest.yaml", "units_per_minute_per_user: 6000", "units_per_minute_per_user: -1",
     ("request_quota", "units_per_minute_per_user")),
    ("manifest.yaml", "    default: allow\n    effect: read", "    default: maybe\n"
     "    effect: read", ("actions", "read", "default")),
    ("manifest.yaml", "    users.labels.list: 1\n", "", ("actions", "read", "methods",
                                                          "users.labels.list")),
    ("CONNECTOR.md", "- `+read` -> `users.messages.get`", "- `+read` -> `users.nope`",
     ("Commands", "+read")),
    ("CONNECTOR.md", "- `users.drafts.create`", "- `users.drafts.create`\n- `users.x.y`",
     ("actions",)),
    ("connector.yaml", "domain: email", "domain: ''", ("domain",)),
])
def test_a_bad_file_is_refused_with_file_and_path(file: str, old: str, new: str,
                                                  where: tuple[str, ...]) -> None:
    files = _files()
    assert old in files[file]
    files[file] = files[file].replace(old, new)
    with pytest.raises(ConnectorError) as info:
        parse_connector(files)
    assert info.value.path == where


def test_settings_only_narrow() -> None:
    for g in STRICTNESS:
        for m in (None, *STRICTNESS):
            base = resolve(ActionGroup("g", g, None, ()), MethodPolicy("m", "g", m, ()))
            assert base.verdict is (m or g)
            for s in STRICTNESS:
                got = resolve(ActionGroup("g", g, None, ()), MethodPolicy("m", "g", m, ()), s)
                assert STRICTNESS.index(got.verdict) == max(STRICTNESS.index(base.verdict),
                                                            STRICTNESS.index(s))
    assert Verdict.DENY in STRICTNESS


@pytest.mark.parametrize(("text", "hidden", "kept"), [
    ("Your verification code is 482913.", "482913", "Your verification code is"),
    ("验证码：6621，五分钟内有效", "6621", "五分钟"),
    ("OTP 123456 for login", "123456", "for login"),
    ("Invoice 2026-0042, total 1234 EUR", None, "Invoice 2026-0042, total 1234 EUR"),
    ("code\n1234", None, "1234"),
])
def test_the_guard_hides_codes_and_keeps_other_numbers(text: str, hidden: str | None,
                                                       kept: str) -> None:
    out, count = guard_text(text)
    assert kept in out
    if hidden is None:
        assert count == 0 and out == text
    else:
        assert hidden not in out and WITHHELD in out and count == 1
