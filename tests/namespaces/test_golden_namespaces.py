"""Goldens of the namespaces area: the deferred-vs-eager catalogue of the realistic
catalogue, and the side-chat surface at the start of a context.

Review: `git diff golden/namespaces/`; update:
`pytest tests/namespaces/test_golden_namespaces.py --snapshot-update`.
"""

from __future__ import annotations

import json
from typing import Any

from capconf.simulator.namespaces.catalog import realistic_catalog
from capconf.simulator.namespaces.surface import cost_markdown, surface


def test_deferred_vs_eager_catalogue(golden: Any) -> None:
    catalog = realistic_catalog()
    assert cost_markdown(catalog, catalog.channels) + "\n" == golden


def test_side_chat_surface_at_start(golden: Any) -> None:
    shown = surface(realistic_catalog(), "side", ())
    assert json.dumps(shown, indent=1, ensure_ascii=False) + "\n" == golden
