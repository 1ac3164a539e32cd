"""Gates by region, VM type and channel (CONN-09), as a table checked in order.

A connector is *provisioned* (its files are on the host and its region is open for this
account), *revealed* (this VM type and this channel show it) and *usable* (connected and
permitted: the call's own checks). Each closed gate has its own reason code, is final for
the attempt (retrying cannot open it) and promises nothing (no link, no retry time). A
region-closed connector is not provisioned at all: no settings row, no catalog entry, no
registry entry, and every command answers the region code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from capconf.simulator.connectors.model import Connector


@dataclass(frozen=True)
class Environment:
    """Where the task runs; ``None`` means the runtime does not gate on it."""
    region: str | None = None
    vm: str = "standard"
    """``standard`` or ``confidential``."""
    channel: str | None = None


@dataclass(frozen=True)
class Gate:
    name: str
    code: str
    closes: str
    """The state the connector does not reach: ``provisioned`` or ``revealed``."""
    rule: str
    is_open: Callable[[Connector, Environment], bool]


GATES: tuple[Gate, ...] = (
    Gate("region", "region_unavailable", "provisioned",
         "`availability.regions` lists the account's region (absent: every region)",
         lambda c, env: not c.regions or env.region is None or env.region in c.regions),
    Gate("confidential_vm", "confidential_vm_unavailable", "revealed",
         "on a confidential VM, `availability.confidential_vm` is true (the default)",
         lambda c, env: env.vm != "confidential" or c.confidential_vm),
    Gate("channel", "channel_unrevealed", "revealed",
         "`availability.channels` lists the task's channel (absent: every channel)",
         lambda c, env: not c.channels or env.channel is None or env.channel in c.channels),
)


def closed_gate(connector: Connector, env: Environment) -> Gate | None:
    """The first gate that is closed, in table order, or None when all are open."""
    return next((gate for gate in GATES if not gate.is_open(connector, env)), None)


def provisioned(connector: Connector, env: Environment) -> bool:
    gate = closed_gate(connector, env)
    return gate is None or gate.closes != "provisioned"


def gates_markdown() -> str:
    lines = ["| gate | open when | closed: reason code | closed: the connector is not |",
             "|---|---|---|---|"]
    lines += [f"| `{g.name}` | {g.rule} | `{g.code}` | {g.closes} |" for g in GATES]
    return "\n".join(lines)


SPEC_TABLES: Mapping[str, Callable[[], str]] = {"connector-gates": gates_markdown}
