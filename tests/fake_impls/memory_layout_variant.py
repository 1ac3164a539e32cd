"""A CORRECT runtime with its own private-memory layout: the suite must pass it.

The reference spells a private directory `<subagent_root>/<lower-case name>` (TEXT-02).
A runtime may choose otherwise; here every agent lives two levels down, under a hash of
its ASCII-folded name (`<subagent_root>/by-name/<16 hex>/store`). Its `hello` leaves out
`reference-text`, as a runtime with its own layout would. The behaviour cases of MEM-01,
MEM-04 and the memory cases of DELEG-05 and the Unicode names must still pass: they ask
`memory.locate` instead of assuming the layout (tests/memory/test_memory_layout_variant.py).
"""

from __future__ import annotations

import hashlib
from typing import Any

from capconf.simulator.core.names import ascii_fold
from capconf.simulator.memory import binding
from capconf.simulator.protocol.op_tables import FEATURES

_REFERENCE = binding.private_directory_name


def _own_layout(agent_name: str) -> str | None:
    if _REFERENCE(agent_name) is None:  # the same names are usable; only the spelling differs
        return None
    digest = hashlib.sha256(ascii_fold(agent_name).encode("utf-8")).hexdigest()[:16]
    return f"by-name/{digest}/store"


def dispatcher(_: str = "") -> Any:
    from capconf.simulator.protocol.dispatcher import Dispatcher

    binding.private_directory_name = _own_layout
    return Dispatcher(features=tuple(f for f in FEATURES if f != "reference-text"))
