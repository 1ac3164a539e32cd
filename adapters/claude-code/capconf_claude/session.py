"""One run of the real `claude -p`, with its model requests handed to the driver.

Why held requests: a capconf agent lives across several ops (`agent.spawn`, then
`tool.call`s). Claude Code's subagent is alive exactly while its model request is
unanswered, so the session keeps each subagent's latest request and answers it only
when the driver has the next call for that agent. The main agent's turns are scripted:
its first turn delegates (Claude Code's `Agent` tool) and every later one ends the turn.
Which agent a request belongs to is Claude Code's own `x-claude-code-agent-id` header.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import runtime
from .model_server import ModelRequest, ScriptedModel, text_block, tool_use_block
from .prompts import Ask, PromptRelay

WAIT = 60.0  # seconds a spawn may take before the session counts as hung
CALL_WAIT = 30.0  # seconds a tool call may take (a call Claude Code never ends costs this)


@dataclass
class Spawned:
    """What Claude Code did with one `Agent` call: the subagent's first model request,
    or the error its `Agent` tool answered."""

    agent_id: str | None
    request: ModelRequest | None
    error: str | None


@dataclass
class Session:
    binary: Path
    project: Path
    home: Path
    extra_args: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    main_requests: list[ModelRequest] = field(default_factory=list)
    prompts: PromptRelay | None = None  # the permission-prompt tool's relay, if attended

    def __post_init__(self) -> None:
        self.model = ScriptedModel(hold_seconds=600.0)
        self.held: dict[str, queue.Queue[ModelRequest]] = {}
        self.new_agents: queue.Queue[str] = queue.Queue()
        self.main_turns: queue.Queue[ModelRequest] = queue.Queue()
        self.first_spawn: Callable[[ModelRequest], dict[str, Any]] | None = None
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr = b""
        self.n = 0

    # -- lifecycle --------------------------------------------------------------------
    def start_with(self, choose: Callable[[ModelRequest], dict[str, Any]]) -> Spawned:
        """Start `claude` whose main agent delegates at once; `choose` reads the main
        agent's first model request and returns the `Agent` input."""
        self.first_spawn = choose
        self.proc = runtime.start(self.binary, self.project, self.model.port, self.home,
                                  "capconf", self.extra_args)
        threading.Thread(target=self._read_events, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        threading.Thread(target=self._pump, daemon=True).start()
        return self._await_spawn(toolu="toolu_main_1")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
        self.model.close()
        if self.prompts is not None:
            self.prompts.close()

    # -- threads ----------------------------------------------------------------------
    def _read_events(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict):
                with self.lock:
                    self.events.append(ev)

    def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()[-4000:]

    def _pump(self) -> None:
        while True:
            req = self.model.next_request(1.0)
            if req is None:
                if not self.alive():
                    return
                continue
            agent = req.headers.get("x-claude-code-agent-id")
            if agent is None and not req.is_subagent:
                self.main_requests.append(req)
                if len(self.main_requests) == 1 and self.first_spawn is not None:
                    req.answer([tool_use_block("toolu_main_1", "Agent", self.first_spawn(req))])
                else:
                    self.main_turns.put(req)
                    req.answer([text_block("ok")])
                continue
            key = agent or "?"
            with self.lock:
                fresh = key not in self.held
                if fresh:
                    self.held[key] = queue.Queue()
            self.held[key].put(req)
            if fresh:
                self.new_agents.put(key)

    # -- steps ------------------------------------------------------------------------
    def _await_spawn(self, toolu: str, parent: str | None = None) -> Spawned:
        """Wait for the subagent an `Agent` call (tool_use id `toolu`) started, or for
        the answer that says it did not start."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                aid = self.new_agents.get(timeout=0.2)
            except queue.Empty:
                aid = None
            if aid is not None:
                req = self.held[aid].get(timeout=WAIT)
                self.held[aid].put(req)  # still the agent's current turn
                return Spawned(aid, req, None)
            err = self._agent_error(toolu, parent)
            if err is not None:
                return Spawned(None, None, err)
            if not self.alive():
                time.sleep(0.2)  # the last requests may still be in the pump
                err = self._agent_error(toolu, parent)
                return Spawned(None, None, err or "claude exited: "
                               + self.stderr.decode("utf-8", "replace")[-500:])
        return Spawned(None, None, "no subagent started within the time limit")

    def _agent_error(self, toolu: str, parent: str | None) -> str | None:
        """The `Agent` call's own result when it is an error (the type was not found...),
        read from the caller's next model request."""
        if parent is None:
            reqs = list(self.main_requests[1:])
        else:
            q = self.held.get(parent)
            reqs = list(q.queue) if q is not None else []
        for r in reqs:
            for b in r.last_tool_results():
                if b.get("tool_use_id") == toolu and b.get("is_error"):
                    return result_text(b)
        with self.lock:  # the same result in stream-json, when no model request followed
            events = list(self.events)
        for e in events:
            content = (e.get("message") or {}).get("content") if e.get("type") == "user" \
                else None
            for b in content if isinstance(content, list) else []:
                if isinstance(b, dict) and b.get("tool_use_id") == toolu \
                        and b.get("is_error"):
                    return result_text(b)
        tasks = {e.get("task_id") for e in events
                 if e.get("subtype") == "task_started" and e.get("tool_use_id") == toolu}
        for e in events:  # the agent failed before its first model request
            raw = e.get("patch")
            patch: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if e.get("subtype") == "task_updated" and e.get("task_id") in tasks \
                    and patch.get("status") == "failed":
                return str(patch.get("error") or "the agent's task failed")
        for e in events:
            if e.get("type") == "result" and e.get("is_error"):
                return f"claude ended the session: {str(e.get('result'))[:500]}"
        return None

    def spawn_child(self, parent: str, spawn: dict[str, Any]) -> Spawned:
        """The parent agent calls `Agent`; the child is the next new agent id."""
        req = self.held[parent].get(timeout=WAIT)
        self.n += 1
        toolu = f"toolu_spawn_{self.n}"
        req.answer([tool_use_block(toolu, "Agent", spawn)])
        return self._await_spawn(toolu, parent)

    def call(self, agent: str, name: str, tool_input: dict[str, Any],
             timeout: float = CALL_WAIT) -> tuple[str, dict[str, Any] | None, Ask | None]:
        """The agent's model calls one tool (tool_use id returned first); Claude Code
        runs it, refuses it, or asks the permission-prompt tool (see `outcome`)."""
        q = self.held[agent]
        req = q.get(timeout=WAIT)
        self.n += 1
        toolu = f"toolu_call_{self.n}"
        req.answer([tool_use_block(toolu, name, tool_input)])
        block, ask = self.outcome(agent, toolu, timeout)
        return toolu, block, ask

    def outcome(self, agent: str, toolu: str, timeout: float = CALL_WAIT
                ) -> tuple[dict[str, Any] | None, Ask | None]:
        """What Claude Code did with the call `toolu`: its `tool_result` (read from the
        agent's next model request, which stays the agent's current turn), or the ask
        it sent the permission-prompt tool and now waits on; (None, None) when it ended
        or hung."""
        q = self.held[agent]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.prompts is not None:
                ask = self.prompts.take(toolu)
                if ask is not None:
                    return None, ask
            try:
                nxt = q.get(timeout=0.2)
            except queue.Empty:
                if not self.alive():
                    return None, None
                continue
            for b in nxt.last_tool_results():
                if b.get("tool_use_id") == toolu:
                    # put it back: it is the agent's current turn
                    q.put(nxt)
                    return b, None
            q.put(nxt)
            time.sleep(0.05)
        return None, None

    def at_turn(self, agent: str, wait: float = 2.0) -> bool:
        """Whether the agent's model has a request waiting (it can make a call): Claude
        Code sends none while the agent waits on a permission prompt."""
        q = self.held.get(agent)
        deadline = time.monotonic() + wait
        while q is not None:
            if not q.empty():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return False

    def finish(self, agent: str, text: str = "done") -> None:
        q = self.held.get(agent)
        if q is None:
            return
        try:
            req = q.get_nowait()
        except queue.Empty:
            return
        req.answer([text_block(text)])

    def events_of(self, subtype: str) -> list[dict[str, Any]]:
        with self.lock:
            return [e for e in self.events if e.get("subtype") == subtype]


def result_text(block: dict[str, Any]) -> str:
    c = block.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(str(x.get("text", "")) for x in c if isinstance(x, dict))
    return ""
