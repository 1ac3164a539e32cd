"""Per-connection session state and the argument readers every op shares.

Every area's ``ops.py`` and the protocol's core ops take a ``Session``; it lives here,
below both, so that an area's ops need not import the protocol package that lists them.
"""

from __future__ import annotations

import base64
import binascii
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from capconf.simulator.compose.agent import AgentView
from capconf.simulator.compose.world import World
from capconf.simulator.core.diagnostics import Mode
from capconf.simulator.definition.document import SourceFormat


class ProtocolError(Exception):
    """Becomes an ``ok: false`` response; ``path`` points into the request."""

    def __init__(self, code: str, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path


@dataclass
class AgentRecord:
    agent_id: str
    view: AgentView
    background: bool = False
    parent: str | None = None


@dataclass
class Session:
    """The current world (None until ``world.setup``), spawned agents, and state that
    dimension modules keep under their own key in ``state``. Agent ids come from a
    counter, never from a clock or a random source."""

    features: tuple[str, ...]
    # the ops this connection serves, as `hello` reports them (set by the dispatcher)
    op_names: tuple[str, ...] = ()
    world: World | None = None
    agents: dict[str, AgentRecord] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    finished: bool = False
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def require_world(self) -> World:
        if self.world is None:
            raise ProtocolError("no_world", "call world.setup before this op")
        return self.world

    def reset(self, world: World | None) -> None:
        """A new world starts from nothing: no agents, no dimension state, ids from 1."""
        self.world = world
        self.agents = {}
        self.state = {}
        self._ids = itertools.count(1)

    def new_agent_id(self) -> str:
        return f"agent-{next(self._ids)}"

    def agent(self, args: Mapping[str, Any]) -> AgentRecord:
        agent_id = args.get("agent")
        if not isinstance(agent_id, str) or agent_id not in self.agents:
            raise ProtocolError("no_such_agent", f"no agent {agent_id!r}; spawn one with "
                                "agent.spawn", ("args", "agent"))
        return self.agents[agent_id]


Handler = Callable[[Session, Mapping[str, Any]], Any]


def read_source(args: Mapping[str, Any]) -> str | bytes:
    if "source" in args:
        if not isinstance(args["source"], str):
            raise ProtocolError("bad_request", "`source` must be a string", ("args", "source"))
        return str(args["source"])
    if "source_b64" in args:
        try:
            return base64.b64decode(str(args["source_b64"]), validate=True)
        except (binascii.Error, ValueError):
            raise ProtocolError("bad_request", "`source_b64` is not valid base64",
                                ("args", "source_b64")) from None
    raise ProtocolError("bad_request", "give the definition as `source` (text) or "
                        "`source_b64` (raw bytes)", ("args",))


def read_format(args: Mapping[str, Any]) -> SourceFormat | None:
    value = args.get("format", "auto")
    if value == "auto":
        return None
    try:
        return SourceFormat(value)
    except ValueError:
        raise ProtocolError("bad_request", "`format` must be auto, yaml or markdown",
                            ("args", "format")) from None


def read_mode(args: Mapping[str, Any], default: Mode = Mode.PARSE) -> Mode:
    value = args.get("mode", default.value)
    try:
        return Mode(value)
    except ValueError:
        raise ProtocolError("bad_request", "`mode` must be parse or save",
                            ("args", "mode")) from None


def read_filename(args: Mapping[str, Any]) -> str | None:
    filename = args.get("filename")
    if filename is not None and not isinstance(filename, str):
        raise ProtocolError("bad_request", "`filename` must be a string", ("args", "filename"))
    return filename
