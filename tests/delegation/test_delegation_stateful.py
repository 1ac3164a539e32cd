"""A state machine over spawn / delegate / fork / out-of-process / follow-up / resume /
stop / parent policy change / approval requests, checking after every step what must
always hold: depth is monotonic and within the limit, fan-out holds, a child's pinned
permissions never change, a stopped child never runs again, no delegated child ever
raises a card (nothing hangs), every card is settled at most once."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

from delegation_support import Driver, agent_type
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from capconf.conformance.cases import default_world

TYPE = agent_type("w", "[read, write, bash, Task, TaskStop]")
TIERS = ["confirm-before-change", "auto-within-workspace", "auto-edit", "full-access"]
MAX_DEPTH, MAX_FANOUT = 3, 3


class DelegationMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ws = tempfile.mkdtemp()
        self.outside = tempfile.mkdtemp()
        self.d = Driver()
        self.d("world.setup", **default_world(), workspace=self.ws, frame="F")
        self.d("delegation.setup", agent_types=[TYPE], max_depth=MAX_DEPTH,
               max_fanout=MAX_FANOUT)
        self.roots = [self.d("agent.spawn", source=TYPE)["agent"]]
        self.seen: dict[str, dict[str, Any]] = {}
        self.stopped: set[str] = set()
        self.settled: dict[str, str] = {}

    def teardown(self) -> None:
        self.d("shutdown")
        shutil.rmtree(self.ws, ignore_errors=True)
        shutil.rmtree(self.outside, ignore_errors=True)

    def nodes(self) -> dict[str, dict[str, Any]]:
        return {n["agent"]: n for n in self.d("delegation.tree")["nodes"]}

    def agents(self) -> list[str]:
        return self.roots + list(self.nodes())

    @rule(data=st.data(), implementer=st.sampled_from(["fresh", "fork", "out-of-process"]),
          background=st.booleans())
    def delegate(self, data: st.DataObject, implementer: str, background: bool) -> None:
        parent = data.draw(st.sampled_from(self.agents()))
        result = self.d.tool(parent, "Task", subagent="w", prompt="p",
                             implementer=implementer, background=background)
        if not result["ok"]:
            assert result["error_code"] in ("DELEGATION-DEPTH", "DELEGATION-FANOUT",
                                            "AGENT-STOPPED"), result

    @rule(data=st.data(), status=st.sampled_from(["completed", "blocked"]))
    def complete(self, data: st.DataObject, status: str) -> None:
        running = [a for a, n in self.nodes().items() if n["status"] == "running"]
        if running:
            self.d("child.complete", agent=data.draw(st.sampled_from(running)),
                   status=status, report={"r": 1})

    @rule(data=st.data(), option=st.one_of(st.none(), st.integers(0, 4)))
    def resume(self, data: st.DataObject, option: int | None) -> None:
        done = [a for a, n in self.nodes().items() if n["status"] in ("completed", "blocked")]
        if done:
            agent = data.draw(st.sampled_from(done))
            args: dict[str, Any] = {"agent": agent, "prompt": "again"}
            if option is not None:
                args["depth_option"] = option
            response = self.d.dispatcher.handle({"id": 0, "op": "child.resume", "args": args})
            assert response["ok"] or response["error"]["code"] == "DELEGATION-FANOUT"

    @rule(data=st.data())
    def stop(self, data: st.DataObject) -> None:
        nodes = self.nodes()
        if nodes:
            agent = data.draw(st.sampled_from(sorted(nodes)))
            self.d.tool(nodes[agent]["parent"], "TaskStop", task_id=agent)

    @rule(tier=st.sampled_from(TIERS), attendance=st.sampled_from(["attended", "unattended"]))
    def parent_policy_change(self, tier: str, attendance: str) -> None:
        self.d("approval.setup", tier=tier, attendance=attendance)

    @rule(data=st.data(), tool=st.sampled_from(["write", "bash"]))
    def gated_call(self, data: st.DataObject, tool: str) -> None:
        agent = data.draw(st.sampled_from(self.agents()))
        if tool == "write":
            result = self.d.tool(agent, "write", path=f"{self.outside}/x.txt", content="x")
        else:
            result = self.d.tool(agent, "bash", command="true", cwd=self.outside)
        if agent not in self.roots:
            assert result.get("error_code") != "APPROVAL-PENDING", result

    @rule(data=st.data(), approve=st.booleans())
    def answer_card(self, data: st.DataObject, approve: bool) -> None:
        pending = [c["id"] for c in self.d("cards.list")["cards"] if c["state"] == "pending"]
        if pending:
            self.d("card.decide", card=data.draw(st.sampled_from(pending)),
                   decision="approve" if approve else "deny")

    @invariant()
    def everything_holds(self) -> None:
        nodes = self.nodes()
        running: dict[str, int] = {}
        for agent, n in nodes.items():
            parent_depth = nodes[n["parent"]]["depth"] if n["parent"] in nodes else 0
            assert n["depth"] >= parent_depth + 1
            assert n["permissions"]["ask_policy"] == "never-ask"
            before = self.seen.get(agent)
            if before is not None:
                assert n["depth"] >= before["depth"]
                assert n["permissions"] == before["permissions"]
                if before["status"] == "stopped":
                    assert n["status"] == "stopped"
            if n["status"] == "running":
                running[n["parent"]] = running.get(n["parent"], 0) + 1
            self.seen[agent] = n
        assert all(count <= MAX_FANOUT for count in running.values()), running
        for card in self.d("cards.list")["cards"]:
            assert card["origin"]["agent_id"] not in nodes, card
            if card["state"] != "pending":
                assert self.settled.setdefault(card["id"], card["state"]) == card["state"]


DelegationMachine.TestCase.settings = settings(max_examples=8, stateful_step_count=12,
                                               deadline=None)
TestDelegationMachine = DelegationMachine.TestCase
