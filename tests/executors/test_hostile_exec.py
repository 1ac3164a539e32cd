"""Executors (BIN-02, issue 21): ``--params`` is model-written JSON, read with the
request's rules, so NaN, a lone surrogate, deep nesting and a huge integer are the
caller's ``invalid_arguments`` (never ``internal``, never a value the envelope cannot
carry)."""

from __future__ import annotations

from typing import Any

import pytest
from hostile_support import Driver

SCHEMA = {"type": "object", "properties": {"id": {}}, "required": ["id"]}
HOST = {"broker": "broker",
        "executors": [{"name": "gws_cli", "provisioned": True, "channels": ["main"],
                       "worker": "w", "connector": None,
                       "methods": {"users.messages.get": SCHEMA}}],
        "workers": [{"name": "w", "acl": ["broker"]}], "connected": {}}

HOSTILE = {
    "nan": '{"id": NaN}',
    "infinity": '{"id": -Infinity}',
    "lone-surrogate": '{"id": "a\\ud800b"}',
    "surrogate-key": '{"\\udc00": 1, "id": 1}',
    "deep": '{"id": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "deep-but-parses": '{"id": ' + "[" * 200 + "]" * 200 + "}",
    "huge-int": '{"id": ' + "9" * 100_000 + "}",
    "big-float": '{"id": 1e999}',
}


def run(driver: Driver, params: str) -> dict[str, Any]:
    result: dict[str, Any] = driver.ok("exec.run", channel="main", executor="gws_cli",
                                       argv=["users.messages.get", "--params", params])
    return result


@pytest.mark.parametrize("params", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_params_are_invalid_arguments(params: str) -> None:
    driver = Driver()
    driver.ok("exec.setup", **HOST)
    result = run(driver, params)
    assert result["ok"] is False and result["error_code"] == "invalid_arguments", result


def test_plain_params_still_pass() -> None:
    driver = Driver()
    driver.ok("exec.setup", **HOST)
    result = run(driver, '{"id": "m1", "n": [1, 2.5, null, "\\u00e9"]}')
    assert result["ok"] is True, result
    assert result["content"]["params"] == {"id": "m1", "n": [1, 2.5, None, "é"]}
