"""anthropics/claude-code#78063 on the pinned 2.1.328: an agent whose definition says
`disallowedTools: Bash` delegates to a child agent (no `tools` key), and the child runs
Bash. capconf's rule (seeds; SPEC DELEG/APPR "escalation through delegation"): a child
never holds what its parent is denied.

Standalone: the pinned npm package and Python's standard library (`_cc.py` is the shared
scripted Messages API). Prints REPRODUCED and exits 0 when the child's Bash ran.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cc import main_then, result_text, run, text, tool_use

FILES = {
    ".claude/agents/parent.md":
        "---\nname: parent\ndescription: may not run shell commands\n"
        "disallowedTools: Bash\n---\nYou never run shell commands.\n",
    ".claude/agents/child.md": "---\nname: child\ndescription: a helper\n---\nHelp.\n",
}


def main() -> int:
    order: list[str | None] = []
    seen: dict[str, object] = {}

    def sub(req, n):  # type: ignore[no-untyped-def]
        if req.agent_id not in order:
            order.append(req.agent_id)
        who = order.index(req.agent_id)
        if n == 1:
            seen[f"tools{who}"] = req.tool_names()
            if who == 0:
                return [tool_use("t_spawn", "Agent", {"description": "delegate",
                                                      "prompt": "run it",
                                                      "subagent_type": "child"})]
            return [tool_use("t_bash", "Bash", {"command": "echo CHILD-RAN-BASH",
                                                "description": "probe"})]
        for b in req.tool_results():
            if b.get("tool_use_id") == "t_bash":
                seen["bash"] = (b.get("is_error"), result_text(b))
        return [text("done")]

    run(FILES, main_then({"description": "d", "prompt": "go", "subagent_type": "parent"},
                         sub))
    parent_tools = seen.get("tools0", [])
    child_tools = seen.get("tools1", [])
    bash = seen.get("bash")
    print(f"parent's tools: {parent_tools}")
    print(f"child's tools: {child_tools}")
    print(f"child's Bash result: {bash!r}"[:400])
    if "Bash" not in parent_tools and isinstance(bash, tuple) and not bash[0] \
            and "CHILD-RAN-BASH" in bash[1]:
        print("REPRODUCED: the parent is denied Bash, its child ran Bash")
        return 0
    print("not reproduced")
    return 1


if __name__ == "__main__":
    sys.exit(main())
