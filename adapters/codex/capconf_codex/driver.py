"""The capconf driver for Codex CLI: JSON Lines on stdin/stdout (SPEC.md section 2).

Why Python: the driver only translates and relays; Codex is a compiled Rust binary run
as `codex exec`, so Python keeps the adapter in the suite's own toolchain. Run it as
`python adapters/codex/driver.py`; it refuses to start without the real binary.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from _driverkit import serve
from _driverkit.protocol import ProtoError
from _driverkit.request import definition_args, tool_call_args
from _driverkit.source import BadSource, source_bytes

from . import approval, delegation
from .model_server import Call, Say, ScriptedModel
from .observe import Hop, Observation, observe
from .role import Role, normalised, translate
from .runtime import BinaryMissing, Homes, find_binary
from .vocabulary import capconf_names, codex_args, codex_tool, offered_names
from .world import World, parse_world

FEATURES = ["def", "tool", "prompt", "mcp", "delegation", "skills"]
SPEC_VERSION = "0.1.0"
# Codex's answer to a call of a tool it does not offer the agent (its router's
# "unsupported call: NAME"): exactly SPEC's `tool_not_mounted`
UNSUPPORTED = "unsupported call: "


def binary_version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                         timeout=60, check=False)
    return out.stdout.strip().removeprefix("codex-cli ") or "unknown"


@dataclass
class Agent:
    """A spawned agent: its role, the lineage Codex spawned it through, its grant."""

    role: Role
    chain: list[Hop]
    tools: list[str]
    parent: str | None = None
    background: bool = False


class Driver:
    def __init__(self, binary: Path, log: BinaryIO | Any) -> None:
        self.binary = binary
        self.log = log
        self.model = ScriptedModel()
        self.homes = Homes()
        self.world: World | None = None
        self.counter = 0
        self.cache: dict[str, tuple[Role, Observation]] = {}
        self.agents: dict[str, Agent] = {}
        self.deleg = delegation.State()
        self.sandbox: str | None = None
        self.sandbox_flags: list[str] = []
        self.policy: dict[str, Any] = {}
        self._version: str | None = None

    def close(self) -> None:
        self.model.close()
        self.homes.close()

    # -- helpers ----------------------------------------------------------------------
    def need_world(self) -> World:
        if self.world is None:
            raise ProtoError("no_world", "world.setup first")
        return self.world

    def role(self, args: dict[str, Any]) -> Role:
        raw, fmt, filename = definition_args(args, source_bytes, BadSource)
        self.counter += 1
        return translate(raw, fmt, filename, self.counter, self.need_world().mcp)

    def flags(self) -> list[str]:
        return (["-s", self.sandbox] if self.sandbox else []) + self.sandbox_flags

    def run(self, roles: list[Role], chain: list[Hop], **kw: Any) -> Observation:
        world = self.need_world()
        return observe(self.binary, self.model, self.homes, world.workspace, roles, chain,
                       self.deleg.limits_config(), self.flags(),
                       skill_layers=world.skill_layers, **kw)

    def probe(self, args: dict[str, Any]) -> tuple[Role, Observation]:
        """Codex loads the role and spawns it once; cached per (world, source)."""
        role = self.role(args)
        key = hashlib.sha256(repr((self.need_world().raw, role.toml, role.stem,
                                   role.agent_type, self.flags(),
                                   self.deleg.limits_config())).encode()).hexdigest()
        if key not in self.cache:
            roles = [role] if role.readable else []
            self.cache[key] = (role, self.run(roles, [Hop(role.agent_type, [Say("ok")])]))
        return self.cache[key]

    def granted(self, role: Role, obs: Observation) -> list[str]:
        """The tools Codex offered the agent, in capconf's names, declaration order
        first (capconf's names where the table has one, Codex's own otherwise)."""
        if not obs.loaded():
            return []
        names: list[str] = []
        for ns, name in offered_names(obs.target.seen[0].tools):
            for n in capconf_names(ns, name):
                if n not in names:
                    names.append(n)
        order = role.declared_tools or []
        return sorted(names, key=lambda n: (order.index(n) if n in order else len(order)))

    def extras(self, obs: Observation) -> dict[str, Any]:
        """Codex's own words about the run (open results: extra keys are free)."""
        return {"codex_messages": obs.messages(),
                "codex_spawn_output": obs.spawn_outputs[-1] if obs.spawn_outputs else None}

    def resolution(self, role: Role, granted: list[str]) -> list[dict[str, Any]]:
        return [{"declared": d, "canonical": d if d in granted else None,
                 "status": "granted" if d in granted else "unknown"}
                for d in role.declared_tools or []]

    @staticmethod
    def body(obs: Observation, role: Role) -> str | None:
        """The role's instructions as Codex put them in the agent's developer input."""
        if not obs.loaded():
            return None
        want = role.body or ""
        for text in obs.target.seen[0].developer:
            if text == want:
                return text
        return None

    # -- ops --------------------------------------------------------------------------
    def op_hello(self, args: dict[str, Any]) -> dict[str, Any]:
        if self._version is None:
            self._version = binary_version(self.binary)
        return {"implementation": {"name": "codex", "version": self._version,
                                   "language": "rust (compiled binary), driver: python"},
                "spec_version": SPEC_VERSION, "features": FEATURES}

    def op_world_setup(self, args: dict[str, Any]) -> dict[str, Any]:
        self.world = None
        self.agents.clear()
        self.deleg = delegation.State()
        self.sandbox = None
        self.sandbox_flags = []
        self.policy = {}
        self.world = parse_world(args)
        return {"registry": self.world.registry()}

    def op_registry_list(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.need_world().registry()

    def op_definition_parse(self, args: dict[str, Any]) -> dict[str, Any]:
        mode = args.get("mode", "parse")
        if mode not in ("parse", "save"):
            raise ProtoError("bad_request", "`mode` is parse or save", ["args", "mode"])
        if mode == "save":
            raise ProtoError("not_implemented", "Codex has no save-mode validation of a "
                             "role file")
        role, obs = self.probe(args)
        granted = self.granted(role, obs)
        return {"loaded": obs.loaded(), "definition": normalised(role, self.body(obs, role))
                if obs.loaded() else None,
                "tools": granted, "tool_resolution": self.resolution(role, granted),
                "diagnostics": [], **self.extras(obs)}

    def op_tools_mounted(self, args: dict[str, Any]) -> dict[str, Any]:
        role, obs = self.probe(args)
        tools = []
        if obs.loaded():
            offered = obs.target.seen[0].tools
            specs: dict[str, dict[str, Any]] = {}
            for t in offered:
                for x in (t.get("tools") or []) if t.get("type") == "namespace" else [t]:
                    for n in capconf_names(str(t.get("name")) if t.get("type") ==
                                           "namespace" else None,
                                           str(x.get("name") or x.get("type"))):
                        specs.setdefault(n, x)
            for name in self.granted(role, obs):
                spec = specs.get(name, {})
                tools.append({"name": name, "description": str(spec.get("description", "")),
                              "input_schema": spec.get("parameters") or {"type": "object"}})
        return {"tools": tools, "diagnostics": [], **self.extras(obs)}

    def op_prompt_assemble(self, args: dict[str, Any]) -> dict[str, Any]:
        """The developer input Codex sent the model for this agent; the role's own
        instructions are the body, the rest is Codex's frame (and its skills list)."""
        role, obs = self.probe(args)
        if not obs.loaded():
            return {"prompt": "", "parts": [], "diagnostics": [], **self.extras(obs)}
        texts = obs.target.seen[0].developer
        body = self.body(obs, role)
        parts = []
        for t in texts:
            if body is not None and t == body and not any(p["kind"] == "body" for p in parts):
                kind = "body"
            elif t.lstrip().startswith("<skills_instructions>"):
                kind = "catalog.skills"
            else:
                kind = "frame"
            parts.append({"kind": kind, "text": t})
        # Codex sends the items separately; capconf's prompt is its parts joined by a
        # blank line, ending in a newline (PROMPT-01's shape, no text added or removed)
        prompt = "\n\n".join(t.rstrip("\n") for t in texts) + "\n"
        return {"prompt": prompt, "parts": parts, "diagnostics": [],
                **self.extras(obs)}

    def op_agent_spawn(self, args: dict[str, Any]) -> dict[str, Any]:
        parent = args.get("parent")
        if parent is not None and parent not in self.agents:
            raise ProtoError("no_such_agent", f"no agent `{parent}`", ["args", "parent"])
        role, obs = self.probe(args)
        if not obs.loaded():
            # Codex ignored the role file (its loader's message is kept) or refused the
            # spawn: the definition cannot be loaded at all
            raise ProtoError("definition_invalid", "Codex did not load the role: "
                             + " | ".join([*obs.messages(), str(obs.spawn_outputs[-1])]))
        aid = f"agent-{len(self.agents) + 1}"
        tools = self.granted(role, obs)
        self.agents[aid] = Agent(role, [Hop(role.agent_type)], tools, parent,
                                 bool(args.get("background", False)))
        return {"agent": aid, "tools": tools, "diagnostics": [], **self.extras(obs)}

    def op_tool_call(self, args: dict[str, Any]) -> dict[str, Any]:
        aid, tool, targs = tool_call_args(args)
        agent = self.agents.get(aid)
        if agent is None:
            raise ProtoError("no_such_agent", f"no agent `{aid}`", ["args", "agent"])
        if tool in ("Task", "TaskStop"):
            return delegation.task_call(self, aid, agent, tool, targs)
        return self.call(agent, tool, targs)

    def call(self, agent: Agent, tool: str, targs: dict[str, Any]) -> dict[str, Any]:
        """The agent's thread calls the tool once; Codex runs it and its output is the
        answer."""
        ns, name = codex_tool(tool)
        call = Call(name, codex_args(name, tool, targs), ns)
        chain = [*agent.chain[:-1], Hop(agent.chain[-1].agent_type, [call, Say("done")])]
        roles = self.roles_for(agent)
        obs = self.run(roles, chain)
        return envelope(obs, agent.tools, tool)

    def roles_for(self, agent: Agent) -> list[Role]:
        roles = {r.stem: r for r in self.deleg.types.values()}
        roles[agent.role.stem] = agent.role
        return list(roles.values())

    def op_shutdown(self, args: dict[str, Any]) -> dict[str, Any]:
        return {}

    OPS: ClassVar[dict[str, Any]] = {
        "hello": op_hello, "world.setup": op_world_setup, "registry.list": op_registry_list,
        "definition.parse": op_definition_parse, "tools.mounted": op_tools_mounted,
        "prompt.assemble": op_prompt_assemble, "agent.spawn": op_agent_spawn,
        "tool.call": op_tool_call, "shutdown": op_shutdown, **delegation.OPS,
        **approval.OPS}

    def handle(self, line: bytes) -> dict[str, Any]:
        return serve.handle(self, line)


def envelope(obs: Observation, mounted: list[str], tool: str) -> dict[str, Any]:
    """Codex's tool output as a CALL-03 envelope; a run that never reached the call is
    reported as what Codex printed."""
    outs = obs.target.outputs
    out = outs[1] if len(outs) > 1 else None
    if out is None:
        if obs.run.timed_out:
            raise ProtoError("internal", "codex exec did not end: "
                             + " | ".join(obs.messages()))
        raise ProtoError("internal", "Codex never answered the call: "
                         + " | ".join([*obs.messages(), obs.run.stderr[-500:]]))
    if out.startswith(UNSUPPORTED):
        return {"ok": False, "error_code": "tool_not_mounted", "error_message": out,
                "error_detail": {"tool": tool, "mounted": mounted},
                "terminal_for_attempt": True, "retry_after_ms": None}
    return {"ok": True, "content": out}


def main() -> int:
    try:
        binary = find_binary()
    except BinaryMissing as e:
        print(f"capconf-codex: {e}", file=sys.stderr)
        return 2
    return serve.serve(lambda: Driver(binary, sys.stderr))
