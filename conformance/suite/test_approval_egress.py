"""Every classified tool goes through the one decision (APPR-01), not only the file
tools: a mounted `WebFetch` is network egress and asks below full-access; `glob` and
`grep` are reads. Issue 39: the reference itself answered `not_simulated` for all three
in every tier, and no case called them, so a runtime that never gates egress passed.
Each case names the buggy implementation it is for.
"""

from __future__ import annotations

from typing import Any

import pytest

from capconf.conformance.harness import Harness, expect, expect_true
from capconf.conformance.suite.mcp_world import agent_def, call, cards, cases, decide, setup, spawn

TIERS = ["confirm-before-change", "auto-within-workspace", "auto-edit", "full-access"]
APPROVAL_CODES = ("APPROVAL-PENDING", "APPROVAL-DENIED", "AGENT-STOPPED")
EGRESS_TOOLS = "[read, glob, grep, WebFetch, Task]"
# A closed port on the loopback interface: a runtime that really fetches after an
# approval reaches nothing and sends nothing off the machine.
URL = "http://127.0.0.1:9/capconf-probe?q=workspace-secret"


def _card_ids(impl: Harness) -> list[str]:
    return [c["id"] for c in cards(impl)]


@pytest.mark.req("APPR-01")
@pytest.mark.parametrize("tier", cases("appr.webfetch.tier", [(t, t) for t in TIERS]))
def test_webfetch_is_decided_as_network_egress(impl: Harness, tier: str) -> None:
    """Bug: only read/write/edit/bash (and MCP) are wired to the approval decision, so a
    mounted WebFetch runs unasked in every tier and an unattended session sends workspace
    content off the machine. APPR-01: WebFetch is action `network`; below full-access it
    asks when attended (exactly one card, tool `WebFetch`, action `network`, nothing
    fetched until approved) and is denied at once unattended (no card); at full-access it
    runs without a card."""
    asks = tier != "full-access"
    for attendance in ("attended", "unattended"):
        setup(impl, tier=tier, attendance=attendance)
        agent = spawn(impl, agent_def(name="fetcher", tools=EGRESS_TOOLS))
        result = call(impl, agent, "WebFetch", url=URL)
        raised = cards(impl)
        where = f"{tier}, {attendance}"
        if not asks:
            expect_true(result.get("error_code") not in APPROVAL_CODES and raised == [],
                        f"APPR-01 ({where}): full-access runs WebFetch without a card",
                        {"result": result, "cards": raised})
        elif attendance == "unattended":
            expect((result.get("ok"), result.get("error_code")), (False, "APPROVAL-DENIED"),
                   f"APPR-01 ({where}): network egress asks below full-access, and an "
                   "unattended session denies at once instead of asking")
            expect(raised, [], f"APPR-01 ({where}): a denial raises no card")
        else:
            expect((result.get("ok"), result.get("error_code")),
                   (False, "APPROVAL-PENDING"),
                   f"APPR-01 ({where}): network egress asks below full-access")
            expect([(c["tool"], c["action"], c["state"]) for c in raised],
                   [("WebFetch", "network", "pending")],
                   f"APPR-01/APPR-02 ({where}): exactly one card, tool WebFetch, action "
                   "network")
            expect(raised[0]["origin"]["agent_id"], agent,
                   "APPR-02: the card names the agent that called WebFetch")
            outcome = decide(impl, raised[0]["id"], "approve")["result"]
            expect_true(outcome.get("error_code") not in APPROVAL_CODES,
                        "APPR-01: once approved the fetch is no longer refused by the "
                        "approval layer", outcome)


def _read_tools(impl: Harness, agent: str) -> dict[str, dict[str, Any]]:
    return {"glob": call(impl, agent, "glob", pattern="**/*.md"),
            "grep": call(impl, agent, "grep", pattern="needle"),
            "grep-glob": call(impl, agent, "grep", pattern="needle", glob="docs/*.md")}


@pytest.mark.req("APPR-01")
@pytest.mark.parametrize("tier", cases("appr.glob-grep.read-inside", [(t, t) for t in TIERS]))
def test_glob_and_grep_inside_the_workspace_are_reads(impl: Harness, tier: str) -> None:
    """Bug: glob and grep are unclassified and fall to a catch-all (treated as a change,
    or as a command like bash), so confirm-before-change asks for a workspace search and an
    unattended run cannot search at all; or the catch-all denies every tool it does not
    know. APPR-01: glob and grep are reads; a read inside the workspace is allowed in every
    tier and attendance, with no card."""
    impl.write("docs/a.md", "needle\n")
    for attendance in ("attended", "unattended"):
        setup(impl, tier=tier, attendance=attendance)
        agent = spawn(impl, agent_def(name="searcher", tools=EGRESS_TOOLS))
        before = _card_ids(impl)
        answers = {name: r.get("error_code") for name, r in _read_tools(impl, agent).items()}
        refused = {k: v for k, v in answers.items() if v in APPROVAL_CODES}
        expect(refused, {}, f"APPR-01 ({tier}, {attendance}): glob and grep inside the "
               "workspace are reads, allowed without approval")
        expect(_card_ids(impl), before, f"APPR-01 ({tier}, {attendance}): a read inside the "
               "workspace raises no card")
