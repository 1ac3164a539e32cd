"""The capconf driver for Claude Code: JSON Lines on stdin/stdout (SPEC.md section 2).

Why Python: the driver only translates and relays; Claude Code is a native binary reached
through its command line and a model API the adapter serves, so Python keeps the adapter
in the suite's own toolchain (ruff, mypy, pytest). Run it as
`python adapters/claude-code/driver.py`; it refuses to start without the pinned binary.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from _driverkit import serve
from _driverkit.protocol import ProtoError
from _driverkit.request import definition_args, tool_call_args

from . import observe
from .approval import Policy, parse_policy
from .definition import BadSource, Translated, source_bytes, translate
from .runtime import find_binary
from .session import Session, Spawned
from .vocabulary import claude_args, claude_name
from .world import World, parse_world

FEATURES = ["def", "tool", "prompt", "skills", "mcp", "approval", "memory", "delegation"]
SPEC_VERSION = "0.1.0"


@dataclass
class Probe:
    """What one run of Claude Code showed about a definition."""

    translated: Translated
    listed: dict[str, str]        # Claude Code's agent types (name -> listing)
    agent_type: str | None        # the type the file defined, as Claude Code lists it
    spawned: Spawned | None


@dataclass
class Agent:
    session: Session
    claude_id: str
    tools: list[str]
    parent: str | None


class Driver:
    def __init__(self, binary: Path) -> None:
        self.binary = binary
        self.world: World | None = None
        self.priv = Path(tempfile.mkdtemp(prefix="capconf-claude-"))
        self.n = 0
        self.cache: dict[str, Probe] = {}
        self.agents: dict[str, Agent] = {}
        self.sessions: list[Session] = []
        self._version: str | None = None
        self._builtin: set[str] | None = None
        self.policy = Policy()

    # -- helpers ----------------------------------------------------------------------
    def need_world(self) -> World:
        if self.world is None:
            raise ProtoError("no_world", "world.setup first")
        return self.world

    def _translated(self, args: dict[str, Any]) -> Translated:
        raw, fmt, filename = definition_args(args, source_bytes, BadSource)
        self.n += 1
        return translate(raw, fmt, filename, self.n)

    def _home(self, t: Translated | None) -> Path:
        """A fresh private config directory holding the world's settings and, as a
        user-level agent file, the definition."""
        world = self.need_world()
        self.n += 1
        home = self.priv / f"home{self.n}"
        world.write_config(home)
        if t is not None:
            agents = home / ".claude" / "agents"
            agents.mkdir(parents=True, exist_ok=True)
            (agents / f"{t.stem}.md").write_bytes(t.text)
        return home

    def _session(self, home: Path) -> Session:
        world = self.need_world()
        s = Session(self.binary, world.workspace, home,
                    world.cli_args(home) + self.policy.cli_args())
        self.sessions.append(s)
        return s

    def _start(self, t: Translated, keep: bool) -> tuple[Session, Probe]:
        """Start Claude Code in a project with the agent file; its main agent delegates
        to the one agent type the file defined (the one Claude Code lists beyond its
        built-ins), or, when it lists none, to the name the file gives."""
        s = self._session(self._home(t))
        chooser = _Chooser(t, self.builtin_types())
        spawned = s.start_with(chooser.spawn_input)
        probe = Probe(t, chooser.listed, chooser.agent_type, spawned)
        if not keep:
            s.stop()
            self.sessions.remove(s)
        return s, probe

    def builtin_types(self) -> set[str]:
        """The agent types Claude Code lists in a project with no agent file (its
        built-ins), read once from a run of its own."""
        if self._builtin is None:
            s = self._session(self._home(None))
            seen: dict[str, str] = {}

            def choose(main: Any) -> dict[str, Any]:
                seen.update(observe.listed_agents(main))
                return {"description": "capconf", "prompt": "capconf",
                        "subagent_type": "general-purpose"}
            s.start_with(choose)
            s.stop()
            self.sessions.remove(s)
            self._builtin = set(seen)
        return self._builtin

    def probe(self, args: dict[str, Any]) -> Probe:
        world = self.need_world()
        t = self._translated(args)
        key = hashlib.sha256(world.fingerprint().encode() + t.text + t.stem.encode()
                             ).hexdigest()
        if key not in self.cache:
            self.cache[key] = self._start(t, keep=False)[1]
        return self.cache[key]

    # -- ops --------------------------------------------------------------------------
    def op_hello(self, args: dict[str, Any]) -> dict[str, Any]:
        if self._version is None:
            out = subprocess.run([str(self.binary), "--version"], capture_output=True,
                                 text=True, timeout=60, check=False)
            self._version = out.stdout.strip() or "unknown"
        return {"implementation": {"name": "claude-code", "version": self._version,
                                   "language": "native binary, driver: python"},
                "spec_version": SPEC_VERSION, "features": FEATURES}

    def op_world_setup(self, args: dict[str, Any]) -> dict[str, Any]:
        self.world = None  # a refused setup leaves no world behind (PROTO-02)
        self._stop_sessions()
        self.world = parse_world(args)
        self.policy = Policy()  # world.setup resets the approval policy (APPR)
        return {"registry": self.world.registry()}

    def op_approval_setup(self, args: dict[str, Any]) -> dict[str, Any]:
        self.need_world()
        self.policy = parse_policy(args)
        self.cache.clear()
        return {"policy": self.policy.json()}

    def op_registry_list(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.need_world().registry()

    def op_definition_parse(self, args: dict[str, Any]) -> dict[str, Any]:
        mode = args.get("mode", "parse")
        if mode not in ("parse", "save"):
            raise ProtoError("bad_request", "`mode` is parse or save", ["args", "mode"])
        if mode == "save":
            raise ProtoError("not_implemented",
                             "Claude Code has no save-mode validation of an agent file")
        p = self.probe(args)
        loaded = p.spawned is not None and p.spawned.request is not None
        tools = [m["name"] for m in observe.mounted(p.spawned.request)] \
            if loaded and p.spawned and p.spawned.request else []
        declared = p.translated.declared_tools
        definition: dict[str, Any] | None = None
        if p.agent_type is not None:
            definition = {
                "format": p.translated.form, "name": p.agent_type,
                "description": observe.split_description(p.listed.get(p.agent_type, "")),
                "body": (observe.body_of(p.spawned.request) or "")
                if p.spawned and p.spawned.request else "",
                "tools": observe.listed_tools(p.listed.get(p.agent_type, "")),
                "skills": None, "mcp": None, "knowledge": None,
                "memory": None, "extra": {}}
        rows = []
        for d in declared or []:
            hit = next((g for g in tools if claude_name(g) == claude_name(d) or g == d), None)
            rows.append({"declared": d, "canonical": hit,
                         "status": "granted" if hit else "unknown"})
        return {"loaded": loaded, "definition": definition, "tools": tools,
                "tool_resolution": rows, "diagnostics": []}

    def op_tools_mounted(self, args: dict[str, Any]) -> dict[str, Any]:
        p = self.probe(args)
        if p.spawned is None or p.spawned.request is None:
            raise ProtoError("definition_invalid", "Claude Code did not start the agent: "
                             f"{p.spawned.error if p.spawned else 'no agent type'}")
        return {"tools": observe.mounted(p.spawned.request), "diagnostics": []}

    def op_prompt_assemble(self, args: dict[str, Any]) -> dict[str, Any]:
        p = self.probe(args)
        if p.spawned is None or p.spawned.request is None:
            raise ProtoError("definition_invalid", "Claude Code did not start the agent: "
                             f"{p.spawned.error if p.spawned else 'no agent type'}")
        text, parts = observe.prompt_of(p.spawned.request)
        return {"prompt": text, "parts": parts, "diagnostics": []}

    def op_agent_spawn(self, args: dict[str, Any]) -> dict[str, Any]:
        self.need_world()
        parent = args.get("parent")
        if parent is not None and parent not in self.agents:
            raise ProtoError("no_such_agent", f"no agent `{parent}`", ["args", "parent"])
        t = self._translated(args)
        if parent is not None:
            return self._spawn_child(parent, t)
        s, p = self._start(t, keep=True)
        if p.spawned is None or p.spawned.request is None or p.spawned.agent_id is None:
            s.stop()
            raise ProtoError("definition_invalid", "Claude Code did not start the agent: "
                             f"{p.spawned.error if p.spawned else 'no agent type'}")
        tools = [m["name"] for m in observe.mounted(p.spawned.request)]
        aid = f"agent-{len(self.agents) + 1}"
        self.agents[aid] = Agent(s, p.spawned.agent_id, tools, None)
        return {"agent": aid, "tools": tools, "diagnostics": []}

    def _spawn_child(self, parent: str, t: Translated) -> dict[str, Any]:
        """A child of a live agent: its definition joins the parent's project (Claude
        Code reads agent files as they appear) and the parent's model calls `Agent`."""
        pa = self.agents[parent]
        agents_dir = pa.session.home / ".claude" / "agents"
        (agents_dir / f"{t.stem}.md").write_bytes(t.text)
        chooser = _Chooser(t, set())
        name = chooser.name_from_file() or t.stem
        spawned = pa.session.spawn_child(pa.claude_id, {
            "description": "capconf delegation", "prompt": "capconf", "subagent_type": name})
        if spawned.request is None or spawned.agent_id is None:
            raise ProtoError("definition_invalid",
                             f"Claude Code did not start the agent: {spawned.error}")
        tools = [m["name"] for m in observe.mounted(spawned.request)]
        aid = f"agent-{len(self.agents) + 1}"
        self.agents[aid] = Agent(pa.session, spawned.agent_id, tools, parent)
        return {"agent": aid, "tools": tools, "diagnostics": []}

    def op_tool_call(self, args: dict[str, Any]) -> dict[str, Any]:
        world = self.need_world()
        aid, tool, targs = tool_call_args(args)
        agent = self.agents.get(aid)
        if agent is None:
            raise ProtoError("no_such_agent", f"no agent `{aid}`", ["args", "agent"])
        name = claude_name(tool)
        block, _ = agent.session.call(agent.claude_id, name,
                                      claude_args(name, targs, str(world.workspace)))
        if block is None:
            raise ProtoError("internal", "Claude Code ended or hung before answering the call")
        return envelope(tool, block, agent.tools)

    def op_shutdown(self, args: dict[str, Any]) -> dict[str, Any]:
        return {}

    OPS: ClassVar[dict[str, Any]] = {
        "hello": op_hello, "world.setup": op_world_setup, "registry.list": op_registry_list,
        "definition.parse": op_definition_parse, "tools.mounted": op_tools_mounted,
        "prompt.assemble": op_prompt_assemble, "agent.spawn": op_agent_spawn,
        "tool.call": op_tool_call, "shutdown": op_shutdown,
        "approval.setup": op_approval_setup}

    def _stop_sessions(self) -> None:
        for s in self.sessions:
            s.stop()
        self.sessions.clear()
        self.agents.clear()

    def close(self) -> None:
        self._stop_sessions()
        shutil.rmtree(self.priv, ignore_errors=True)

    def handle(self, line: bytes) -> dict[str, Any]:
        return serve.handle(self, line)


# Claude Code's tool_result texts that mean exactly a capconf outcome (README: Vocabulary)
NOT_MOUNTED = "No such tool available"
DENIED = ("requested permissions to use", "Permission to use", "permission denied",
          "has been denied")


def envelope(tool: str, block: dict[str, Any], mounted: list[str]) -> dict[str, Any]:
    """A Claude Code `tool_result` -> capconf's CALL-03 envelope (fixed table)."""
    text = observe.result_text(block)
    if not block.get("is_error"):
        return {"ok": True, "content": text}
    detail: dict[str, Any] = {"claude_code_result": text}
    if NOT_MOUNTED in text:
        return {"ok": False, "error_code": "tool_not_mounted", "error_message": text,
                "error_detail": {"tool": tool, "mounted": mounted},
                "terminal_for_attempt": True, "retry_after_ms": None}
    if any(d in text for d in DENIED):
        return {"ok": False, "error_code": "APPROVAL-DENIED", "error_message": text,
                "error_detail": detail, "terminal_for_attempt": True, "retry_after_ms": None}
    return {"ok": False, "error_code": "tool_use_error", "error_message": text,
            "error_detail": detail, "terminal_for_attempt": None, "retry_after_ms": None}


class _Chooser:
    """Picks the `Agent` input for the main agent's first turn from Claude Code's own
    listing of agent types: the one type the project's single agent file added."""

    def __init__(self, t: Translated, builtin: set[str]) -> None:
        self.t = t
        self.builtin = builtin
        self.listed: dict[str, str] = {}
        self.agent_type: str | None = None

    def name_from_file(self) -> str | None:
        import yaml
        try:
            text = self.t.text.decode("utf-8")
            head = text.split("\n---", 2)[0].removeprefix("---")
            data = yaml.load(head, Loader=yaml.BaseLoader)
        except (UnicodeDecodeError, yaml.YAMLError):
            return None
        name = data.get("name") if isinstance(data, dict) else None
        return name if isinstance(name, str) else None

    def spawn_input(self, main: Any) -> dict[str, Any]:
        self.listed = observe.listed_agents(main)
        own = [n for n in self.listed if n not in self.builtin]
        self.agent_type = own[0] if len(own) == 1 else None
        return {"description": "capconf probe", "prompt": "capconf",
                "subagent_type": self.agent_type or self.name_from_file() or self.t.stem}


def main() -> int:
    try:
        binary = find_binary()
    except RuntimeError as e:
        print(f"capconf-claude-code: {e}", file=sys.stderr)
        return 2
    return serve.serve(lambda: Driver(binary))
