"""The capconf driver for Claude Code: JSON Lines on stdin/stdout (SPEC.md section 2).

Why Python: the driver only translates and relays; Claude Code is a native binary reached
through its command line and a model API the adapter serves, so Python keeps the adapter
in the suite's own toolchain (ruff, mypy, pytest). Run it as
`python adapters/claude-code/driver.py`; it refuses to start without the pinned binary.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from _driverkit import serve
from _driverkit.protocol import ProtoError
from _driverkit.request import card_arg, definition_args, tool_call_args

from . import observe
from .approval import Policy, parse_policy
from .cards import Card, Sent, capconf_arguments
from .definition import BadSource, Translated, source_bytes, translate
from .prompts import Ask, PromptRelay, allow, deny
from .runtime import find_binary
from .session import Session, Spawned
from .vocabulary import capconf_name, claude_args, claude_name
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
    name: str = ""
    background: bool = False


@dataclass
class Board:
    """The cards of this world: Claude Code's asks, in the order they came."""

    cards: list[Card] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    parent_live: bool = True

    def pending(self, agent: str | None = None) -> list[Card]:
        return [c for c in self.cards
                if c.state == "pending" and (agent is None or c.agent == agent)]


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
        self.board = Board()

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

    def _session(self, home: Path, prompts: bool = False) -> Session:
        """A Claude Code session; with `prompts` (a session whose agents make calls)
        and a policy under which somebody answers asks, Claude Code also gets the
        adapter's permission-prompt tool, so its asks become cards."""
        world = self.need_world()
        relay = None
        config = None
        if prompts and self.policy.asks_a_person:
            relay = PromptRelay()
            config = home / "approval-mcp.json"
            config.write_text(json.dumps(relay.mcp_config(), indent=1))
        s = Session(self.binary, world.workspace, home,
                    world.cli_args(home) + self.policy.cli_args(config), prompts=relay)
        self.sessions.append(s)
        return s

    def _start(self, t: Translated, keep: bool) -> tuple[Session, Probe]:
        """Start Claude Code in a project with the agent file; its main agent delegates
        to the one agent type the file defined (the one Claude Code lists beyond its
        built-ins), or, when it lists none, to the name the file gives."""
        s = self._session(self._home(t), prompts=keep)
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
        self.board = Board()
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
            return self._spawn_child(parent, t, args.get("background") is True)
        s, p = self._start(t, keep=True)
        if p.spawned is None or p.spawned.request is None or p.spawned.agent_id is None:
            s.stop()
            raise ProtoError("definition_invalid", "Claude Code did not start the agent: "
                             f"{p.spawned.error if p.spawned else 'no agent type'}")
        tools = [m["name"] for m in observe.mounted(p.spawned.request)]
        aid = f"agent-{len(self.agents) + 1}"
        name = p.agent_type or _Chooser(t, set()).name_from_file() or t.stem
        self.agents[aid] = Agent(s, p.spawned.agent_id, tools, None, name,
                                 args.get("background") is True)
        return {"agent": aid, "tools": tools, "diagnostics": []}

    def _spawn_child(self, parent: str, t: Translated, background: bool) -> dict[str, Any]:
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
        self.agents[aid] = Agent(pa.session, spawned.agent_id, tools, parent, name,
                                 background)
        return {"agent": aid, "tools": tools, "diagnostics": []}

    def op_tool_call(self, args: dict[str, Any]) -> dict[str, Any]:
        world = self.need_world()
        aid, tool, targs = tool_call_args(args)
        agent = self.agents.get(aid)
        if agent is None:
            raise ProtoError("no_such_agent", f"no agent `{aid}`", ["args", "agent"])
        if aid in self.board.stopped:
            raise ProtoError("no_such_agent", f"agent `{aid}` was stopped: its Claude Code "
                             "subagent's asks were answered deny and its turn ended, so "
                             "it makes no further call", ["args", "agent"])
        waiting = self.board.pending(aid)
        if waiting and not agent.session.at_turn(agent.claude_id):
            # SPEC has no code for an agent that takes no call while its ask waits; the
            # answer says what Claude Code does (`not_implemented`: not an operation
            # Claude Code supports, as the Gemini adapter answers the same), never
            # `internal`, which would call it a bug of the adapter
            raise ProtoError("not_implemented", f"Claude Code's agent `{aid}` sent no model "
                             "request since it asked its permission prompt "
                             f"({waiting[0].id}, still unanswered): it makes no other call "
                             "until that is answered")
        name = claude_name(tool)
        cin = claude_args(name, targs, str(world.workspace))
        toolu, block, ask = agent.session.call(agent.claude_id, name, cin)
        return self._answer(aid, agent, Sent(tool, targs, cin), toolu, block, ask)

    def _answer(self, aid: str, agent: Agent, sent: Sent, toolu: str,
                block: dict[str, Any] | None, ask: Ask | None,
                prompt_denied: bool = False) -> dict[str, Any]:
        """What Claude Code did with a call, in capconf's words: an ask it sent the
        permission-prompt tool is a new card (`APPROVAL-PENDING`), a `tool_result` is
        the envelope (fixed table)."""
        if ask is not None:
            card = Card(f"card-{len(self.board.cards) + 1}", ask, aid, agent.name,
                        capconf_name(ask.tool_name), capconf_arguments(ask, sent), toolu,
                        sent=sent)
            self.board.cards.append(card)
            return {"ok": False, "error_code": "APPROVAL-PENDING",
                    "error_message": f"Claude Code asks for permission to use "
                                     f"`{ask.tool_name}`",
                    "error_detail": {"tool": sent.tool, "card": card.json()},
                    "terminal_for_attempt": False, "retry_after_ms": None}
        if block is None:
            raise ProtoError("internal", "Claude Code ended or hung before answering the call")
        return envelope(sent.tool, block, agent.tools, prompt_denied)

    # -- cards (Claude Code's asks to the permission-prompt tool) ----------------------
    def _card(self, args: dict[str, Any]) -> Card:
        return card_arg(self.board.cards, args)

    def _settle(self, card: Card, answer: dict[str, Any], state: str, by: str
                ) -> dict[str, Any]:
        """Answer Claude Code's pending prompt call and read what it then did."""
        agent = self.agents[card.agent]
        assert agent.session.prompts is not None
        agent.session.prompts.answer(card.ask, answer)
        card.state, card.settled_by = state, by
        block, ask = agent.session.outcome(agent.claude_id, card.toolu)
        sent = card.sent or Sent(card.tool, card.arguments, card.ask.input)
        result = self._answer(card.agent, agent, sent, card.toolu, block, ask,
                              prompt_denied=state == "denied")
        card.result = result
        return result

    def op_card_decide(self, args: dict[str, Any]) -> dict[str, Any]:
        self.need_world()
        card = self._card(args)
        decision = args.get("decision")
        if decision not in ("approve", "deny"):
            raise ProtoError("bad_request", "`decision` is approve or deny",
                             ["args", "decision"])
        if card.state != "pending":
            raise ProtoError("CARD-ALREADY-SETTLED", f"card `{card.id}` is {card.state}: "
                             "Claude Code's prompt call was already answered",
                             ["args", "card"])
        if decision == "approve":
            result = self._settle(card, allow(card.ask), "approved", "user")
        else:
            result = self._settle(card, deny(f"The user denied permission to use "
                                             f"{card.ask.tool_name}."), "denied", "user")
        return {"card": card.json(), "result": result}

    def _status(self, aid: str) -> str:
        if self.board.pending(aid):
            return "suspended"
        return "stopped" if aid in self.board.stopped else "running"

    def op_cards_list(self, args: dict[str, Any]) -> dict[str, Any]:
        self.need_world()
        return {"cards": [c.json() for c in self.board.cards],
                "agents": [{"agent": aid, "name": a.name, "background": a.background,
                            "status": self._status(aid)} for aid, a in self.agents.items()],
                "parent_live": self.board.parent_live, "policy": self.policy.json()}

    def _subtree(self, aid: str) -> list[str]:
        """The agent and the agents spawned under it, children before parents."""
        out: list[str] = []
        for child, a in self.agents.items():
            if a.parent == aid:
                out += self._subtree(child)
        return [*out, aid]

    def op_task_stop(self, args: dict[str, Any]) -> dict[str, Any]:
        """capconf's TaskStop in Claude Code's terms: every pending ask of the agent and
        its subtree is answered deny, then each agent's model turn ends."""
        self.need_world()
        aid = args.get("agent")
        if not isinstance(aid, str) or aid not in self.agents:
            raise ProtoError("no_such_agent", f"no agent `{aid}`", ["args", "agent"])
        settled, results, stopped = [], [], []
        for a in self._subtree(aid):
            if a in self.board.stopped:
                continue
            for card in self.board.pending(a):
                results.append(self._settle(card, deny(
                    f"The agent was stopped; permission to use {card.ask.tool_name} "
                    "is denied."), "denied", "task-stop"))
                settled.append(card.json())
            agent = self.agents[a]
            agent.session.finish(agent.claude_id, "stopped")
            self.board.stopped.append(a)
            stopped.append(a)
        return {"settled": settled, "results": results, "stopped": stopped}

    def op_snapshot_pull(self, args: dict[str, Any]) -> dict[str, Any]:
        # Claude Code sends every ask to the permission-prompt tool when it asks: no
        # card waits for a pull
        self.need_world()
        return {"delivered": []}

    def op_parent_request_start(self, args: dict[str, Any]) -> dict[str, Any]:
        self.need_world()
        if self.board.parent_live:
            raise ProtoError("PARENT-REQUEST-LIVE", "a parent request is live")
        self.board.parent_live = True
        return {"delivered": []}

    def op_parent_request_end(self, args: dict[str, Any]) -> dict[str, Any]:
        self.need_world()
        if not self.board.parent_live:
            raise ProtoError("PARENT-REQUEST-NOT-LIVE", "no parent request is live")
        self.board.parent_live = False
        return {"parent_live": False}

    def op_shutdown(self, args: dict[str, Any]) -> dict[str, Any]:
        return {}

    OPS: ClassVar[dict[str, Any]] = {
        "hello": op_hello, "world.setup": op_world_setup, "registry.list": op_registry_list,
        "definition.parse": op_definition_parse, "tools.mounted": op_tools_mounted,
        "prompt.assemble": op_prompt_assemble, "agent.spawn": op_agent_spawn,
        "tool.call": op_tool_call, "shutdown": op_shutdown,
        "approval.setup": op_approval_setup, "cards.list": op_cards_list,
        "card.decide": op_card_decide, "task.stop": op_task_stop,
        "snapshot.pull": op_snapshot_pull, "parent.request.start": op_parent_request_start,
        "parent.request.end": op_parent_request_end}

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


def envelope(tool: str, block: dict[str, Any], mounted: list[str],
             prompt_denied: bool = False) -> dict[str, Any]:
    """A Claude Code `tool_result` -> capconf's CALL-03 envelope (fixed table).
    `prompt_denied`: the call's permission prompt was answered deny."""
    text = observe.result_text(block)
    if not block.get("is_error"):
        return {"ok": True, "content": text}
    detail: dict[str, Any] = {"claude_code_result": text}
    if NOT_MOUNTED in text:
        return {"ok": False, "error_code": "tool_not_mounted", "error_message": text,
                "error_detail": {"tool": tool, "mounted": mounted},
                "terminal_for_attempt": True, "retry_after_ms": None}
    if prompt_denied or any(d in text for d in DENIED):
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
