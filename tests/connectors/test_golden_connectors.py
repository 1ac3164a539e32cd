"""Goldens of the connectors area: a connector approval card built from the mail
fixture's manifest, and the permission resolution table.

Review: `git diff golden/connectors/`; update:
`pytest tests/connectors/test_golden_connectors.py --snapshot-update`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capconf.simulator.connectors.model import parse_connector
from capconf.simulator.connectors.permissions import resolution_table_markdown
from capconf.simulator.connectors.runtime import Account, ConnectorRuntime

FIXTURE = Path(__file__).resolve().parent.parent.parent / "conformance/fixtures/connectors/gmail"


def _runtime() -> ConnectorRuntime:
    gmail = parse_connector({p.name: p.read_text(encoding="utf-8")
                             for p in sorted(FIXTURE.iterdir())})
    scopes = frozenset({"gmail.readonly", "gmail.send", "gmail.compose", "gmail.modify"})
    return ConnectorRuntime({"gmail": gmail}, {"gmail": Account(True, scopes)})


def test_connector_approval_card(golden: Any) -> None:
    runtime = _runtime()
    cards = [runtime.call("gmail", command, params).to_json() for command, params in (
        ("+send", {"to": ["ana@example.com"], "subject": "Invoice", "body": "Attached."}),
        ("users.messages.forward", {"id": "m-42", "to": ["books@example.com"]}),
        ("users.messages.modify", {"id": "m-42", "addLabelIds": ["Paid"]}),
    )]
    assert json.dumps(cards, indent=1, ensure_ascii=False) + "\n" == golden


def test_permission_resolution_table(golden: Any) -> None:
    assert resolution_table_markdown() + "\n" == golden
