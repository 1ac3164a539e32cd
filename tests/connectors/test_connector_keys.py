"""The connector files' key layout (SPEC.md CONN-01, "the files' keys"): a key of the
wrong type is refused with its file and path, never read as if it were right (a list
where a mapping goes used to answer ``internal``), and never silently coerced
(``include_in_prompt: maybe`` used to be true)."""

from __future__ import annotations

from pathlib import Path

import pytest

from capconf.simulator.connectors.guard import GUARDS
from capconf.simulator.connectors.model import RESPONSE_GUARDS, ConnectorError, parse_connector

FIXTURE = Path(__file__).resolve().parent.parent.parent / "conformance/fixtures/connectors/gmail"

MISTYPED = {
    "sync-list": ("connector.yaml", "sync:\n  fetch_kind", "sync: [x]\nold:\n  fetch_kind",
                  ("sync",)),
    "include-in-prompt-text": ("connector.yaml", "include_in_prompt: true",
                               "include_in_prompt: maybe", ("include_in_prompt",)),
    "availability-list": ("connector.yaml", "availability: { confidential_vm: true }",
                          "availability: [true]", ("availability",)),
    "methods-list": ("manifest.yaml", "    methods:\n      users.messages.list",
                     "    methods: [x]\n    old:\n      users.messages.list",
                     ("actions", "read", "methods")),
    "oauth-list": ("manifest.yaml", "oauth:\n  provider: google",
                   "oauth: [google]\nold:\n  provider: google", ("oauth",)),
    "phrase-number": ("manifest.yaml", 'approval_phrase: "send this email in Gmail"',
                      "approval_phrase: 42",
                      ("actions", "write", "methods", "users.messages.send", "approval_phrase")),
    "unknown-guard": ("manifest.yaml", "response_guard: verification_codes",
                      "response_guard: credit_cards", ("actions", "read", "response_guard")),
}


def _files() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(FIXTURE.iterdir())}


@pytest.mark.parametrize("name", sorted(MISTYPED))
def test_a_mistyped_key_is_refused_with_its_path(name: str) -> None:
    file, old, new, path = MISTYPED[name]
    files = _files()
    assert old in files[file], (file, old)
    files[file] = files[file].replace(old, new, 1)
    with pytest.raises(ConnectorError) as caught:
        parse_connector(files)
    assert (caught.value.file, caught.value.path) == (file, path)


def test_the_fixture_still_loads_and_every_named_guard_has_a_filter() -> None:
    assert parse_connector(_files()).include_in_prompt is True
    assert set(RESPONSE_GUARDS) == set(GUARDS)
