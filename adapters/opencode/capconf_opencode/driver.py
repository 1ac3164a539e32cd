"""The capconf driver for OpenCode: JSON Lines on stdin/stdout (SPEC.md section 2).

Why Python: the driver only translates and relays; OpenCode is a compiled binary reached
over its HTTP API, so nothing is gained by Node, and Python keeps the adapter in the
suite's own toolchain (ruff, mypy, pytest). Run it as
`python adapters/opencode/driver.py`; it refuses to start without the real binary.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from _driverkit import serve
from _driverkit.protocol import ProtoError
from _driverkit.request import definition_args, tool_call_args
from _driverkit.source import BadSource, source_bytes

from . import agents, approval_ops
from .decide_probe import Prober
from .definition import Translated, normalised, translate
from .model_server import ScriptedModel
from .prompt import prompt_parts
from .runtime import OpenCode, find_binary
from .vocabulary import TO_OPENCODE, capconf_name, opencode_id
from .world import World, parse_world

FEATURES = ["def", "tool", "prompt", "call", "skills", "approval", "mcp"]
SPEC_VERSION = "0.1.0"


def binary_version(binary: Path) -> str:
    """`opencode --version` of the very binary the driver runs."""
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                         timeout=60, check=False)
    return out.stdout.strip() or "unknown"


@dataclass
class Agent:
    """A spawned agent: its OpenCode name, directory, session and offered tools."""

    name: str
    directory: Path
    session: str
    offered: list[dict[str, Any]]
    parent: str | None = None
    background: bool = False


class Driver:
    def __init__(self, binary: Path, log: BinaryIO | Any) -> None:
        self.binary = binary
        self.log = log
        self.model: ScriptedModel | None = None
        self.oc: OpenCode | None = None
        self.world: World | None = None
        self.priv = Path(tempfile.mkdtemp(prefix="capconf-opencode-work-"))
        self.probes = 0
        self.def_dirs = 0
        self.loads = 0  # each load's config marker (agents.load)
        self.def_config: str | None = None  # the world config the directory was set up for
        self.cache: dict[str, tuple[Translated, agents.Loaded]] = {}
        self.agents: dict[str, Agent] = {}
        self.spawned_in_workspace = False
        self._version: str | None = None
        self.board = approval_ops.Board()
        self.prober: Prober | None = None

    # -- process lifecycle ------------------------------------------------------------
    def runtime(self) -> OpenCode:
        """The model server and `opencode serve`, started on first use from the main
        thread (PR_SET_PDEATHSIG is bound to the starting thread); restarted when an
        instance stopped answering, so one file OpenCode chokes on costs one case."""
        if self.oc is not None and self.oc.wedged:
            self.oc.stop()
            self.oc = None
            if self.model is not None:
                self.model.close()
            self.spawned_in_workspace = False
        if self.oc is None:
            self.model = ScriptedModel()
            self.oc = OpenCode(self.binary, self.model.port, self.log)
        return self.oc

    def close(self) -> None:
        if self.oc is not None:
            self.oc.stop()
        if self.model is not None:
            self.model.close()
        shutil.rmtree(self.priv, ignore_errors=True)

    # -- ops --------------------------------------------------------------------------
    def op_hello(self, args: dict[str, Any]) -> dict[str, Any]:
        if self._version is None:
            self._version = binary_version(self.binary)
        return {"implementation": {"name": "opencode", "version": self._version,
                                   "language": "typescript (compiled binary), driver: python"},
                "spec_version": SPEC_VERSION, "features": FEATURES}

    def op_world_setup(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.oc is not None and self.oc.stuck:
            self.oc.wedged = True  # a thread of it hangs for good: a fresh server
        if self.world is not None and self.spawned_in_workspace and self.oc is not None \
                and not self.oc.wedged:
            # the last world's agents are gone: OpenCode may drop that instance. Asks
            # still waiting there would never be answered and keep their sessions (and
            # the dispose) from ending: OpenCode then answers 503 for that directory, so
            # the next world's first agent could not load. Nobody attends a world that
            # is gone, so its asks are answered `reject` (as OpenCode's headless `run`
            # does); nothing is reported from them.
            ws = str(self.world.workspace)
            asks = self.oc.get("/permission", directory=ws)
            for ask in asks if isinstance(asks, list) else []:
                self.oc.post(f"/permission/{ask['id']}/reply", {"reply": "reject"},
                             directory=ws)
            agents.dispose(self.oc, self.world.workspace)
        self.world = None  # a refused setup leaves no world behind (PROTO-02)
        self.agents.clear()
        self.world = parse_world(args)
        self.board = approval_ops.Board()  # confirm-before-change, attended (APPR, PROTO-02)
        self.spawned_in_workspace = False
        return {"registry": self.world.registry()}

    def op_registry_list(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.need_world().registry()

    def need_world(self) -> World:
        if self.world is None:
            raise ProtoError("no_world", "world.setup first")
        return self.world

    def _translated(self, args: dict[str, Any]) -> Translated:
        raw, fmt, filename = definition_args(args, source_bytes, BadSource)
        self.probes += 1
        return translate(raw, fmt, filename, self.probes)

    def probe(self, args: dict[str, Any]) -> tuple[Translated, agents.Loaded]:
        world = self.need_world()
        t = self._translated(args)
        config = json.dumps(world.config(), sort_keys=True)
        if self.def_config is not None and config != self.def_config:
            # Another world's config (its skills paths...): a directory of its own, so no
            # instance OpenCode may still hold for the last config is ever asked again.
            self.def_dirs += 1
        self.def_config = config
        # The directory is part of the key: OpenCode's prompt names it, so an answer
        # cached from an earlier directory (before a refusal moved the loads on) would
        # differ from a fresh load of the same file in the current one by the adapter's
        # choice of directory alone, never by anything OpenCode decided.
        key = hashlib.sha256(config.encode() + t.text + t.fmt.encode()
                             + str(self.def_dirs).encode()).hexdigest()
        if key in self.cache:
            return self.cache[key]
        # One project directory for every definition: OpenCode's system prompt names the
        # session's working directory, so two loads of one agent see the same text; the
        # instance is disposed after each load (its answer is cached), so OpenCode reads
        # the next agent file afresh and keeps no instance per definition alive.
        # A file OpenCode refuses leaves its config error cached for that directory (a
        # dispose does not clear it), so the next definition gets a directory of its own.
        for _attempt in range(2):
            directory = self.priv / f"def{self.def_dirs}"
            shutil.rmtree(directory / ".opencode", ignore_errors=True)
            directory.mkdir(exist_ok=True)
            self.loads += 1
            marker = f"capconf-load-{self.loads}"
            world.write_config(directory, marker)
            oc = self.runtime()
            disposed = False
            try:
                # The turn settles before the dispose: a session still finishing its turn
                # brings the directory's instance back after the dispose, with the agent
                # files it read, and the next file loaded there was answered by that stale
                # instance (the previous definition's agent under the same name).
                loaded = agents.load(oc, self.require_model(), directory, t, settle=True,
                                     marker=marker)
            finally:
                if not oc.wedged:
                    disposed = agents.dispose(oc, directory)
            # A refused file leaves its error cached for the directory, and an instance
            # OpenCode did not confirm disposing may still hold this file's agents: either
            # way the next definition is loaded in a directory of its own.
            if loaded.agent is None or not disposed:
                self.def_dirs += 1
            # An instance that answered with an earlier file's agent read nothing of this
            # file: the load is made again, once, in the fresh directory.
            if not loaded.stale:
                break
        self.cache[key] = (t, loaded)
        return t, loaded

    def require_model(self) -> ScriptedModel:
        self.runtime()
        assert self.model is not None
        return self.model

    def granted(self, t: Translated, offered: list[dict[str, Any]]) -> list[str]:
        """OpenCode's offered tools in capconf's names, in declaration order."""
        ids = [str(o.get("function", {}).get("name")) for o in offered]
        names = [capconf_name(i) or i for i in ids]
        order = t.declared_tools or []

        def rank(name: str) -> tuple[int, int]:
            spellings = {name, opencode_id(name)}
            for i, d in enumerate(order):
                if d in spellings:
                    return (0, i)
            table = list(TO_OPENCODE)
            return (1, table.index(name) if name in table else len(table))
        return sorted(names, key=rank)

    @staticmethod
    def loaded_or_refused(loaded: agents.Loaded) -> dict[str, Any]:
        """OpenCode reports no diagnostics: a file it loads has none, and a file it
        refuses (its config error, a file it skips, an agent it will not run) is the
        protocol's `definition_invalid` with OpenCode's own message. Never a made-up
        diagnostic code."""
        if loaded.agent is None or loaded.error is not None:
            raise ProtoError("definition_invalid",
                             f"OpenCode did not load the agent: {loaded.error}")
        return loaded.agent

    def resolution(self, t: Translated, granted: list[str]) -> list[dict[str, Any]]:
        rows = []
        for d in t.declared_tools or []:
            hit = next((g for g in granted if d in (g, opencode_id(g))), None)
            rows.append({"declared": d, "canonical": hit,
                         "status": "granted" if hit else "unknown"})
        return rows

    def op_definition_parse(self, args: dict[str, Any]) -> dict[str, Any]:
        mode = args.get("mode", "parse")
        if mode not in ("parse", "save"):
            raise ProtoError("bad_request", "`mode` is parse or save", ["args", "mode"])
        if mode == "save":
            raise ProtoError("not_implemented",
                             "OpenCode has no save-mode validation of an agent file")
        t, loaded = self.probe(args)
        agent = self.loaded_or_refused(loaded)
        granted = self.granted(t, loaded.offered)
        return {"loaded": True, "definition": normalised(t, agent), "tools": granted,
                "tool_resolution": self.resolution(t, granted), "diagnostics": []}

    def op_tools_mounted(self, args: dict[str, Any]) -> dict[str, Any]:
        t, loaded = self.probe(args)
        self.loaded_or_refused(loaded)
        tools = []
        by_name = {str(o.get("function", {}).get("name")): o for o in loaded.offered}
        for name in self.granted(t, loaded.offered):
            fn = by_name.get(opencode_id(name), {}).get("function", {})
            tools.append({"name": name, "description": str(fn.get("description", "")),
                          "input_schema": fn.get("parameters") or {"type": "object"}})
        return {"tools": tools, "diagnostics": []}

    def op_prompt_assemble(self, args: dict[str, Any]) -> dict[str, Any]:
        """The system prompt OpenCode sent the model for this agent, split where the
        agent's own prompt sits in it (OpenCode's text around it is its frame)."""
        _, loaded = self.probe(args)
        agent = self.loaded_or_refused(loaded)
        system = loaded.system
        body = str(agent.get("prompt") or "")
        return {"prompt": system, "parts": prompt_parts(system, body), "diagnostics": []}

    def op_agent_spawn(self, args: dict[str, Any]) -> dict[str, Any]:
        world = self.need_world()
        t = self._translated(args)
        oc = self.runtime()
        ws = world.workspace
        for _attempt in range(2):
            if self.spawned_in_workspace:
                oc.post("/instance/dispose", directory=str(ws))  # OpenCode re-reads agents
            self.loads += 1
            marker = f"capconf-load-{self.loads}"
            world.write_config(ws, marker)
            self.spawned_in_workspace = True
            # the load's own turn need not settle: the agent's calls run in sessions of
            # their own. A stale instance (agents.load) is disposed and asked again, once.
            loaded = agents.load(oc, self.require_model(), ws, t, settle=False, marker=marker)
            if not loaded.stale:
                break
        self.loaded_or_refused(loaded)
        parent = args.get("parent")
        if parent is not None and parent not in self.agents:
            raise ProtoError("no_such_agent", f"no agent `{parent}`", ["args", "parent"])
        aid = f"agent-{len(self.agents) + 1}"
        agent = Agent(str(loaded.agent["name"]), ws, "", loaded.offered, parent,
                      bool(args.get("background", False)))
        # the agent's session is a child of its parent's in OpenCode's session tree
        agent.session = approval_ops.open_session(
            self, aid, agent, self.agents[parent].session if parent else None)
        self.agents[aid] = agent
        return {"agent": aid, "tools": self.granted(t, loaded.offered), "diagnostics": []}

    def op_tool_call(self, args: dict[str, Any]) -> dict[str, Any]:
        aid, tool, targs = tool_call_args(args)
        agent = self.agents.get(aid)
        if agent is None:
            raise ProtoError("no_such_agent", f"no agent `{aid}`", ["args", "agent"])
        return approval_ops.tool_call(self, aid, agent, tool, targs)

    def op_approval_decide(self, args: dict[str, Any]) -> dict[str, Any]:
        self.need_world()
        if self.prober is None:
            self.prober = Prober(self)
        return self.prober.decide(args)

    def op_shutdown(self, args: dict[str, Any]) -> dict[str, Any]:
        return {}

    OPS: ClassVar[dict[str, Any]] = {
           "hello": op_hello, "world.setup": op_world_setup, "registry.list": op_registry_list,
           "definition.parse": op_definition_parse, "tools.mounted": op_tools_mounted,
           "prompt.assemble": op_prompt_assemble,
           "agent.spawn": op_agent_spawn, "tool.call": op_tool_call, "shutdown": op_shutdown,
           "approval.decide": op_approval_decide,
           **approval_ops.OPS}

    def handle(self, line: bytes) -> dict[str, Any]:
        return serve.handle(self, line)


def main() -> int:
    try:
        binary = find_binary()
    except RuntimeError as e:
        print(f"capconf-opencode: {e}", file=sys.stderr)
        return 2
    return serve.serve(lambda: Driver(binary, sys.stderr))
