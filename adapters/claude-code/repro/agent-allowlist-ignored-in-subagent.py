"""anthropics/claude-code#92259 on the pinned 2.1.328: a subagent whose definition says
`tools: Agent(worker), Read` starts an agent of another type (`other`). capconf's rule
(seeds; SPEC TOOL-03, DELEG): a delegation grant names what may be delegated to; a spawn
outside it is refused.

Standalone: the pinned npm package and Python's standard library. Prints REPRODUCED and
exits 0 when `other` started at depth 2 under the restricted agent.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cc import main_then, result_text, run, text, tool_use

FILES = {
    ".claude/agents/lead.md":
        "---\nname: lead\ndescription: may delegate to worker only\n"
        "tools: Agent(worker), Read\n---\nDelegate to worker only.\n",
    ".claude/agents/worker.md": "---\nname: worker\ndescription: w\n---\nW\n",
    ".claude/agents/other.md": "---\nname: other\ndescription: o\n---\nO\n",
}


def main() -> int:
    order: list[str | None] = []
    seen: dict[str, object] = {}

    def sub(req, n):  # type: ignore[no-untyped-def]
        if req.agent_id not in order:
            order.append(req.agent_id)
        who = order.index(req.agent_id)
        if n == 1 and who == 0:
            seen["lead_tools"] = req.tool_names()
            return [tool_use("t_spawn", "Agent", {"description": "d", "prompt": "p",
                                                  "subagent_type": "other"})]
        for b in req.tool_results():
            if b.get("tool_use_id") == "t_spawn":
                seen["spawn"] = (b.get("is_error"), result_text(b)[:200])
        return [text("done")]

    _, events, _ = run(FILES, main_then(
        {"description": "d", "prompt": "go", "subagent_type": "lead"}, sub))
    started = [(e.get("subagent_type"), e.get("spawn_depth")) for e in events
               if e.get("subtype") == "task_started"]
    print(f"lead's tools: {seen.get('lead_tools')}")
    print(f"task_started events (type, depth): {started}")
    print(f"lead's Agent result: {seen.get('spawn')!r}")
    if ("other", 2) in started:
        print("REPRODUCED: `Agent(worker)` did not stop the subagent from starting `other`")
        return 0
    print("not reproduced")
    return 1


if __name__ == "__main__":
    sys.exit(main())
