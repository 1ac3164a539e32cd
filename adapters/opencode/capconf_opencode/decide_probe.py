"""`approval.decide` answered by OpenCode's own evaluator, one real probe call per cell.

Why a probe: OpenCode's decision is its permission evaluator over the agent's rules and
the session's; it has no endpoint that evaluates a rule set without a call. So the
adapter keeps a private probe project (a workspace, a writable root and an outside
directory of its own), a probe agent that is granted every tool capconf's actions name,
and for each (tier, action, target) opens a session with that tier's ruleset
(`approval.session_rules`) and has the scripted model make the one call. OpenCode runs
it (allow), asks (ask: the adapter answers `reject`, nothing changes) or refuses it by a
rule (deny). Attendance and the never-ask policy only say that nobody could answer an
ask, so an ask is a deny there. Each cell is probed once per driver.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _driverkit.protocol import ProtoError

from . import agents, gated
from .approval import Policy, parse_policy, session_rules
from .vocabulary import TO_OPENCODE

if TYPE_CHECKING:
    from .driver import Driver

PROBE_AGENT = "capconf-probe"
PROBE_FILE = ("---\ndescription: capconf approval probe\nmode: subagent\npermission:\n"
              "  \"*\": deny\n  read: allow\n  edit: allow\n  bash: allow\n"
              "  webfetch: allow\n---\nProbe.\n")
ACTIONS = ("read", "write", "edit", "bash", "network")
NO_COUNTERPART = ("mcp", "config-tool")
TARGETS = ("inside-workspace", "inside-writable-root", "outside")
_n = itertools.count(1)


class Prober:
    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        base = driver.priv / "probe"
        self.dirs = {"inside-workspace": base / "ws", "inside-writable-root": base / "root",
                     "outside": base / "outside"}
        for d in self.dirs.values():
            d.mkdir(parents=True, exist_ok=True)
        self.ready = False
        self.cache: dict[tuple[str, str, str], tuple[str, str, str]] = {}

    def _prepare(self) -> None:
        if self.ready:
            return
        ws = self.dirs["inside-workspace"]
        folder = ws / ".opencode" / "agent"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{PROBE_AGENT}.md").write_text(PROBE_FILE)
        (ws / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json", "permission": {}}))
        agent, error = agents.find_agent(self.driver.runtime(), ws, PROBE_AGENT)
        if agent is None:
            raise ProtoError("internal", f"OpenCode did not load the probe agent: {error}")
        self.ready = True

    def _call(self, action: str, where: Path) -> tuple[str, dict[str, Any]]:
        n = next(_n)
        if action == "read":
            (where / f"r{n}.txt").write_text("probe\n")
            return "read", {"filePath": str(where / f"r{n}.txt")}
        if action == "write":
            return "write", {"filePath": str(where / f"w{n}.txt"), "content": "probe"}
        if action == "edit":
            (where / f"e{n}.txt").write_text("old")
            return "edit", {"filePath": str(where / f"e{n}.txt"), "oldString": "old",
                            "newString": "new"}
        if action == "bash":
            return "bash", {"command": "true", "workdir": str(where),
                            "description": "capconf probe"}
        model = self.driver.require_model()
        # `timeout` given: without it a pending webfetch ask breaks OpenCode's own
        # permission listing (a finding, repro/webfetch-ask-breaks-permission-list.py)
        return "webfetch", {"url": f"http://127.0.0.1:{model.port}/v1/models",
                            "format": "text", "timeout": 10}

    def _probe(self, tier: str, action: str, target: str) -> tuple[str, str, str]:
        key = (tier, action, "any" if action == "network" else target)
        if key in self.cache:
            return self.cache[key]
        self._prepare()
        oc = self.driver.runtime()
        ws = self.dirs["inside-workspace"]
        policy = Policy(tier, writable_roots=(str(self.dirs["inside-writable-root"]),))
        rules = session_rules(policy, list(TO_OPENCODE.values()), list(TO_OPENCODE.values()))
        session = agents.new_session(oc, ws, None, rules)
        turn = gated.start_turn(oc, self.driver.require_model(), ws, session, PROBE_AGENT,
                                self._call(action, self.dirs[target]))
        ask = gated.ask_or_end(oc, turn, ws, session, set())
        if ask is not None:
            oc.post(f"/permission/{ask['id']}/reply", {"reply": "reject"}, directory=str(ws))
            agents.wait_idle(oc, ws, session)
            got = ("ask", f"OpenCode asks for permission `{ask.get('permission')}`",
                   f"opencode-ask:{ask.get('permission')}")
        else:
            part = gated.last_part(oc, ws, session, 0)
            state = (part or {}).get("state") or {}
            if gated.stopped_by_permission(state) == "rule":
                got = ("deny", f"OpenCode refuses the call by a rule: {state.get('error')}"[:300],
                       "opencode-deny")
            elif part is None:
                raise ProtoError("internal", "OpenCode ran no probe call")
            else:
                got = ("allow", f"OpenCode ran the call ({state.get('status')})",
                       "opencode-allow")
        self.cache[key] = got
        return got

    def decide(self, args: dict[str, Any]) -> dict[str, Any]:
        action = args.get("action")
        if action == "mcp":
            raise ProtoError("not_implemented", "the adapter's decide probe has no MCP server "
                             "to call (an adapter gap; OpenCode decides real MCP calls, with "
                             "the tier and allow-list as its asks: tool.call)",
                             ["args", "action"])
        if action in NO_COUNTERPART:
            raise ProtoError("not_implemented", f"OpenCode has no tool of action `{action}` "
                             "(no configuration tool)", ["args", "action"])
        if action not in ACTIONS:
            raise ProtoError("bad_request", f"`action` is one of {', '.join(ACTIONS)}",
                             ["args", "action"])
        target = args.get("target", "outside")
        if target not in TARGETS:
            raise ProtoError("bad_request", f"`target` is one of {', '.join(TARGETS)}",
                             ["args", "target"])
        if "tier" not in args:
            raise ProtoError("bad_request", "`tier` is required", ["args", "tier"])
        policy = parse_policy({k: v for k, v in args.items()
                               if k in ("tier", "attendance", "ask_policy")})
        verdict, reason, rule = self._probe(policy.tier, action, target)
        if verdict == "ask" and policy.nobody_answers:
            why = "never-ask" if policy.ask_policy == "never-ask" else "unattended"
            return {"verdict": "deny", "rule": why,
                    "reason": f"{why}: nobody can answer, so the ask is rejected at once "
                              f"({reason})"}
        return {"verdict": verdict, "reason": reason, "rule": rule}
